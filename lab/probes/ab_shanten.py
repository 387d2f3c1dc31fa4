"""A/B benchmark of ``batch_shanten``: this tree against ``mjenv/shanten.py`` of a git revision, in one process.

    PYTHONPATH=. python lab/probes/ab_shanten.py [--rev main | --old-file path/hand.py] [--hands 200000] [--repeats 15]

Loads the old ``mjenv/shanten.py`` (``git show REV:mjenv/shanten.py``; ``hand.py`` for revisions from before the
split) as a separate module beside the current one,
deals one corpus of uniform random 13-tile hands (as ``bench_hand.py``), checks both give the same shanten,
then times, interleaved, each side's kernel alone (preallocated output) and its public ``batch_shanten``.
Times are the process CPU time (``time.process_time``), so other jobs on a shared machine count less; the
median and the minimum over the repeats are printed as hands/s.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_hand import _deal  # noqa: E402 (after the sys.path entry)


def _load_old(rev: str, folder: str, old_file: str = "", module: str = "hand"):
    """``mjenv/{module}.py`` of ``rev`` (or ``old_file``) loaded as a module of its own (it imports the other
    ``mjenv`` modules of this tree). ``module="shanten"`` falls back to ``hand.py`` for revisions from before
    ``mjenv/shanten.py`` was split out of it."""
    if old_file:
        text = Path(old_file).read_text()
    else:
        for name in dict.fromkeys((module, "hand")):
            git = ["git", "show", f"{rev}:mjenv/{name}.py"]
            r = subprocess.run(git, cwd=ROOT, capture_output=True, text=True)
            if r.returncode == 0:
                break
        else:
            raise SystemExit(f"no mjenv/{module}.py or mjenv/hand.py at {rev}: {r.stderr.strip()}")
        text = r.stdout
    path = Path(folder) / f"{module}_old.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"{module}_old", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kernel_call(mod, counts: np.ndarray):
    """A closure running ``mod``'s batch shanten kernel on ``counts`` with preallocated arguments."""
    n_melds = np.zeros(len(counts), np.int8)
    out = np.empty(len(counts), np.int8)
    suit, honor, _, _ = mod.load_tables()
    if hasattr(mod, "load_shanten_tables"):
        args = (suit, honor, *mod.load_shanten_tables())
    else:
        args = (suit, honor, mod.KNITS, mod.ORPHANS, mod._POW5)
    return lambda: mod._batch_shanten(counts, n_melds, out, *args)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="main", help="git revision of the old hand.py")
    ap.add_argument("--old-file", default="", help="a hand.py file to compare against instead of --rev")
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    from mjenv import shanten as new

    with tempfile.TemporaryDirectory() as d:
        old = _load_old(args.rev, d, args.old_file, "shanten")
        counts = _deal(np.random.default_rng(0), args.hands, 13)
        if not np.array_equal(old.batch_shanten(counts), new.batch_shanten(counts)):
            raise SystemExit("old and new batch_shanten disagree")
        fns = {
            f"kernel {args.rev}": _kernel_call(old, counts),
            "kernel new": _kernel_call(new, counts),
            f"batch_shanten {args.rev}": lambda: old.batch_shanten(counts),
            "batch_shanten new": lambda: new.batch_shanten(counts),
        }
        times: dict[str, list[float]] = {k: [] for k in fns}
        for f in fns.values():
            f()  # compile / load, warm up
        for _ in range(args.repeats):
            for k, f in fns.items():
                t = time.process_time()
                f()
                times[k].append(time.process_time() - t)
    print(f"{args.hands} hands of 13 tiles, {args.repeats} interleaved repeats, process CPU time")
    for k, v in times.items():
        med, best = statistics.median(v), min(v)
        print(f"{k:28s} median {args.hands / med / 1e6:6.3f} M/s   best {args.hands / best / 1e6:6.3f} M/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
