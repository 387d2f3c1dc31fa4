"""Differential test: mjenv.compat.mahjonggb.MahjongFanCalculator vs the reference PyMahjongGB 1.4.0.

Usage: ``PYTHONPATH=. python scripts/diff_fans.py --hands 1000000 [--seed 0] [--show 20] [--workers 8]``

Draws cases with :func:`mjenv.testing.fan_gen.random_case` and compares the verbose output (fans, counts,
order) or the TypeError message of both calculators; prints the mismatches and a fan coverage table. The
corpus is split in chunks of 50k cases, chunk k drawn from ``SeedSequence(seed).spawn(...)[k]``, so the
result does not depend on ``--workers``.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

import MahjongGB
import numpy as np
from tqdm import tqdm

from mjenv.compat import mahjonggb as ours
from mjenv.fans import FAN_NAME_ZH
from mjenv.testing.fan_gen import random_case

CHUNK = 50_000


def run(kw, fn):
    try:
        return fn(**kw, verbose=True)
    except TypeError as e:
        return f"TypeError: {e}"


def check_chunk(job):
    """Compare one chunk; returns (n, mismatches (first few), n_bad, fan Counter, error Counter)."""
    seed_seq, n, show, progress = job
    rng = np.random.default_rng(seed_seq)
    seen = collections.Counter()
    errors = collections.Counter()
    shown = []
    bad = 0
    for _ in tqdm(range(n), mininterval=2.0, disable=not progress):
        kw = random_case(rng)
        ref = run(kw, MahjongGB.MahjongFanCalculator)
        got = run(kw, ours.MahjongFanCalculator)
        if isinstance(ref, str):
            errors[ref] += 1
        else:
            seen.update(fan[2] for fan in ref)
        if ref != got:
            bad += 1
            if len(shown) < show:
                shown.append(f"MISMATCH {kw}\n  ref {ref}\n  got {got}")
    return n, shown, bad, seen, errors


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=20, help="print at most this many mismatches")
    ap.add_argument("--workers", type=int, default=1)
    args = ap.parse_args(argv)
    sizes = [CHUNK] * (args.hands // CHUNK) + ([args.hands % CHUNK] if args.hands % CHUNK else [])
    seqs = np.random.SeedSequence(args.seed).spawn(len(sizes))
    jobs = [(sq, n, args.show, args.workers == 1) for sq, n in zip(seqs, sizes)]
    seen = collections.Counter()
    errors = collections.Counter()
    bad = 0
    shown = []
    t0 = time.perf_counter()
    if args.workers > 1:
        import multiprocessing as mp

        from mjenv.fans import warmup

        warmup()  # compile once before forking

        with mp.get_context("fork").Pool(args.workers) as pool:
            results = list(tqdm(pool.imap_unordered(check_chunk, jobs), total=len(jobs)))
    else:
        results = [check_chunk(j) for j in jobs]
    for _, sh, b, se, er in results:
        bad += b
        shown += sh
        seen.update(se)
        errors.update(er)
    for line in shown[: args.show]:
        print(line)
    dt = time.perf_counter() - t0
    print(
        f"{args.hands} hands, seed {args.seed}: {bad} mismatches "
        f"({100 * (1 - bad / args.hands):.4f}% identical)"
        f" in {dt:.0f} s"
    )
    print("errors:", dict(errors))
    missing = [n for n in FAN_NAME_ZH if seen[n] == 0]
    print("fan coverage:", " ".join(f"{n}:{seen[n]}" for n in FAN_NAME_ZH))
    print("fans never produced:", missing or "none")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
