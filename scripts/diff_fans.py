"""Differential test: mjenv.compat.mahjonggb.MahjongFanCalculator vs the reference PyMahjongGB 1.4.0.

Usage: ``PYTHONPATH=. python scripts/diff_fans.py --hands 1000000 [--seed 0] [--show 20]``

Draws cases with :func:`mjenv.testing.fan_gen.random_case` and compares the verbose output (fans, counts,
order) or the TypeError message of both calculators; prints the mismatches and a fan coverage table.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time

import numpy as np
from tqdm import tqdm

import MahjongGB
from mjenv.compat import mahjonggb as ours
from mjenv.fans import FAN_NAME_ZH
from mjenv.testing.fan_gen import random_case


def run(kw, fn):
    try:
        return fn(**kw, verbose=True)
    except TypeError as e:
        return f"TypeError: {e}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=20, help="print at most this many mismatches")
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    seen = collections.Counter()
    errors = collections.Counter()
    bad = 0
    t0 = time.perf_counter()
    for _ in tqdm(range(args.hands), mininterval=2.0):
        kw = random_case(rng)
        ref = run(kw, MahjongGB.MahjongFanCalculator)
        got = run(kw, ours.MahjongFanCalculator)
        if isinstance(ref, str):
            errors[ref] += 1
        else:
            for fan in ref:
                seen[fan[2]] += 1
        if ref != got:
            bad += 1
            if bad <= args.show:
                tqdm.write(f"MISMATCH {kw}\n  ref {ref}\n  got {got}")
    dt = time.perf_counter() - t0
    print(f"{args.hands} hands, seed {args.seed}: {bad} mismatches ({100 * (1 - bad / args.hands):.4f}% identical)"
          f" in {dt:.0f} s")
    print("errors:", dict(errors))
    missing = [n for n in FAN_NAME_ZH if seen[n] == 0]
    print("fan coverage:", " ".join(f"{n}:{seen[n]}" for n in FAN_NAME_ZH))
    print("fans never produced:", missing or "none")
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main())
