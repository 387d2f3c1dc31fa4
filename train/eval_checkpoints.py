"""Offline evaluation of PPO candidates: ``python -m train.eval_checkpoints CKPT... --walls 1000 --seed 100``.

Each checkpoint (an :mod:`agents.nn` file: ``run_dir/policy.safetensors``, the ``run_dir/evals/policy_uNNNNNN
.safetensors`` that ``train.ppo`` keeps, or any other) plays 1v3 duplicate against the rule agent
(:func:`mjenv.arena.run_arena`, greedy, ``walls`` walls of ``seed``: ``4 * walls`` hands), one after the other
with a tqdm bar. The result is a CSV (``--out``) with one row per checkpoint: its points per hand and 95% CI,
and, with ``--progress-csv`` (the run's ``progress.csv``), the update it was written at (read from the
``policy_uNNNNNN`` name) and the run's training seconds at that update, so that :mod:`train.plot_curve` draws
the offline evaluations as the learning curve (``python -m train.plot_curve OUT.csv``). A markdown table goes to
stdout.

Choose a candidate on one seed and confirm it on walls it was not chosen on (another ``--seed``): the best of
several noisy evaluations is biased upwards.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
import time
from pathlib import Path
from typing import Any

FIELDS = (
    "checkpoint",
    "update",
    "seconds",
    "seed",
    "walls",
    "hands",
    "eval_mean",
    "eval_ci_lo",
    "eval_ci_hi",
)
_UPDATE = re.compile(r"_u(\d+)\.safetensors$")


def _seconds_at(progress_csv: str | Path) -> dict[int, float]:
    with Path(progress_csv).open(newline="") as f:
        return {int(r["update"]): float(r["seconds"]) for r in csv.DictReader(f)}


def evaluate(
    checkpoints: list[str | Path], walls: int, seed: int, progress_csv: str | Path | None = None,
    threads: int | None = None, progress: bool = True,
) -> list[dict[str, Any]]:  # fmt: skip
    """One row per checkpoint (see the module docstring); ``ValueError``/``FileNotFoundError`` before any play
    for a bad size, a missing file, or (with ``progress_csv``) a name without ``_uNNNNNN`` or an update the CSV
    does not hold."""
    from tqdm import tqdm

    from mjenv.arena import run_arena

    if isinstance(walls, bool) or not isinstance(walls, int) or walls < 1:
        raise ValueError(f"walls must be an int >= 1, got {walls!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")
    if not checkpoints:
        raise ValueError("no checkpoints given")
    paths = [Path(c) for c in checkpoints]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(f"no checkpoint at {p}")
    secs = _seconds_at(progress_csv) if progress_csv is not None else {}
    updates: list[int | None] = []
    for p in paths:
        m = _UPDATE.search(p.name)
        u = int(m.group(1)) if m else None
        if progress_csv is not None and (u is None or u not in secs):
            raise ValueError(f"{p}: no update in its name (policy_uNNNNNN) or not in {progress_csv}")
        updates.append(u)
    rows = []
    for p, u in tqdm(list(zip(paths, updates, strict=True)), desc="checkpoints", disable=not progress):
        rep = run_arena(
            {"ppo": "agents.nn:make", "rule": "agents.rule:make"}, "1v3", walls=walls, seed=seed, threads=threads,
            agent_kwargs={"ppo": {"checkpoint": str(p), "greedy": True}}, records=0, illegal_records=0,
            record_info=False, progress=False,
        )  # fmt: skip
        a = rep["agents"]["ppo"]["points_per_hand"]
        rows.append({
            "checkpoint": str(p), "update": "" if u is None else u, "seconds": secs.get(u, ""),
            "seed": seed, "walls": walls, "hands": rep["agents"]["ppo"]["hands"], "eval_mean": a["mean"], "eval_ci_lo": a["ci95"][0],
            "eval_ci_hi": a["ci95"][1],
        })  # fmt: skip
    return rows


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+", help="agents.nn checkpoint files")
    ap.add_argument("--walls", type=int, default=1000, help="walls of the duplicate (4 hands each)")
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--progress-csv", default=None, help="the run's progress.csv (adds update and seconds)")
    ap.add_argument("--out", default=None, help="CSV to write (default: none)")
    ap.add_argument("--threads", type=int, default=None, help="Numba threads of the arena (default: all)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    try:
        rows = evaluate(args.checkpoints, args.walls, args.seed, args.progress_csv, args.threads)
    except (ValueError, FileNotFoundError) as e:
        raise SystemExit(f"train.eval_checkpoints: error: {e}") from None
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        with open(args.out, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=FIELDS)
            w.writeheader()
            w.writerows(rows)
    print(f"1v3 duplicate against agents.rule:make, {args.walls} walls of seed {args.seed} "
          f"({4 * args.walls} hands each), greedy; {time.perf_counter() - t0:.0f} s")  # fmt: skip
    print("| checkpoint | points per hand | 95% CI |\n|---|---:|---|")
    for r in rows:
        print(
            f"| {r['checkpoint']} | {r['eval_mean']:+.2f} | [{r['eval_ci_lo']:+.2f}, {r['eval_ci_hi']:+.2f}] |"
        )
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
