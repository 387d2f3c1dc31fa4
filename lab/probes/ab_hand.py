"""A/B benchmark of the batch hand kernels: this tree against ``mjenv/hand.py`` of a git revision, in one process.

    PYTHONPATH=. python lab/probes/ab_hand.py [--rev main | --old-file path/hand.py] [--hands 200000] [--repeats 9]

Loads the old ``mjenv/hand.py`` (``git show REV:mjenv/hand.py``) as a separate module beside the current one
(it compiles cold, in a temporary folder; a ``hand.py`` from after the split of ``mjenv/shanten.py`` imports
this tree's shanten, so its shanten cases compare this tree with itself: use ``ab_shanten.py`` for those), deals
one corpus of uniform random hands (as ``bench_hand.py``: 14 tiles for the win tests, 13 for shanten, waits and
useful tiles), checks that both sides give the same results, then times each side's public batch function, interleaved. Times are the process CPU time
(``time.process_time``), so other jobs on a shared machine count less; the median and the best over the repeats
are printed as hands/s, with the ratio new / old of the medians. ``lab/probes/ab_shanten.py`` does the same for
the shanten kernel alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from benchmarks.bench_hand import _deal  # noqa: E402
from lab.probes.ab_shanten import _load_old  # noqa: E402 (after the sys.path entry)

#: (name, tiles per hand, call(module, counts))
CASES = (
    ("batch_is_win", 14, lambda m, c: m.batch_is_win(c)),
    ("batch_win_shapes", 14, lambda m, c: m.batch_win_shapes(c)),
    ("batch_shanten", 13, lambda m, c: m.batch_shanten(c)),
    ("batch_shanten_by_shape", 13, lambda m, c: m.batch_shanten_by_shape(c)),
    ("batch_waits", 13, lambda m, c: m.batch_waits(c)),
    ("batch_useful", 13, lambda m, c: m.batch_useful(c, m.REGULAR)),
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rev", default="main", help="git revision of the old hand.py")
    ap.add_argument("--old-file", default="", help="a hand.py file to compare against instead of --rev")
    ap.add_argument("--hands", type=int, default=200_000)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--only", action="append", help="time only these cases (repeatable)")
    args = ap.parse_args(argv)
    if args.hands < 1 or args.repeats < 1:
        ap.error("--hands and --repeats must be >= 1")
    from mjenv import hand as new

    cases = [c for c in CASES if not args.only or c[0] in args.only]
    if not cases:
        ap.error(f"--only: none of {args.only} is a case ({', '.join(c[0] for c in CASES)})")
    rng = np.random.default_rng(0)
    corpus = {n: _deal(rng, args.hands, n) for n in sorted({c[1] for c in cases})}
    with tempfile.TemporaryDirectory() as d:
        old = _load_old(args.rev, d, args.old_file)
        fns = {}
        for name, n, call in cases:
            c = corpus[n]
            a, b = call(old, c), call(new, c)  # compile / load, warm up
            same = all(map(np.array_equal, a, b)) if isinstance(a, tuple) else np.array_equal(a, b)
            if not same:
                raise SystemExit(f"old and new {name} disagree")
            fns[(name, "old")] = lambda call=call, c=c: call(old, c)
            fns[(name, "new")] = lambda call=call, c=c: call(new, c)
        times: dict[tuple[str, str], list[float]] = {k: [] for k in fns}
        for _ in range(args.repeats):
            for k, f in fns.items():
                t = time.process_time()
                f()
                times[k].append(time.process_time() - t)
    label = args.old_file or args.rev
    print(f"{args.hands} hands, {args.repeats} interleaved repeats, process CPU time; old = {label}")
    print(f"{'case':24s} {'old M/s':>9s} {'new M/s':>9s} {'new/old':>8s}   (best old / new)")
    for name, _, _ in cases:
        mo, mn = statistics.median(times[(name, "old")]), statistics.median(times[(name, "new")])
        bo, bn = min(times[(name, "old")]), min(times[(name, "new")])
        print(
            f"{name:24s} {args.hands / mo / 1e6:9.3f} {args.hands / mn / 1e6:9.3f} {mo / mn:8.3f}"
            f"   ({args.hands / bo / 1e6:.3f} / {args.hands / bn / 1e6:.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
