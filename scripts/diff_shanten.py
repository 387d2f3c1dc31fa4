"""Differential run of mjenv's shanten / useful tiles / win detection against PyMahjongGB on many hands.

Compares, on seeded random hands of every size (1, 4, 7, 10, 13 standing tiles, with random packs for
``MahjongShanten``) and every shape bias of :mod:`mjenv.testing.hands`: ``MahjongShanten`` and the five per-shape
functions (shanten and useful tiles, through both the batch kernels and ``mjenv.compat.mahjonggb``), and win
detection (hand + each tile is a win iff a ready shape lists the tile as useful).

    python scripts/diff_shanten.py --hands 1000000
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from tqdm import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.reference.diff_mahjonggb import compare, make_hands


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=100_000, help="number of hands")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=5000)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    checks = 0
    bad: list = []
    done = 0
    with tqdm(total=args.hands, unit="hand") as bar:
        while done < args.hands:
            n = min(args.chunk, args.hands - done)
            st = compare(make_hands(rng, n), rng)
            checks += st["checks"]
            bad += st["mismatches"]
            done += n
            bar.update(n)
            bar.set_postfix(checks=checks, mismatches=len(bad))
    dt = time.perf_counter() - t0
    print(f"hands {done}  checks {checks}  mismatches {len(bad)}  time {dt:.1f} s  seed {args.seed}")
    if bad:
        print(Counter(b[0] for b in bad))
        for b in bad[:20]:
            print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
