"""Compile (or load from numba's on-disk cache) the baseline agents' kernels: ``python -m agents.warmup``.

The rule agent's and the network features' kernels are the largest compiles after mjenv's own (cold, with
mjenv's kernels cached: about 50 and 30 CPU-s); they compile lazily on the first call, so this is optional.
:func:`warmup` compiles them for the argument types the agents call them with (float32 and uint8 observations)
by running them on zero rows: no decision is computed, so it is also safe in a compile-only process whose mjenv
shared kernels are stubs (``tests/_prewarm.py``, which the test suite's controller runs beside
:func:`mjenv.warmup`).
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def warmup(verbose: bool = False, parts=("rule", "features")) -> float:
    """Compile or load the kernels of :mod:`agents.rule` (``"rule"`` in ``parts``) and :mod:`agents.features`
    (``"features"``); returns the seconds."""
    bad = set(parts) - {"rule", "features"}
    if bad:
        raise ValueError(f"unknown parts {sorted(bad)}: the parts are 'rule' and 'features'")
    t0 = time.perf_counter()
    from agents import features as F
    from agents import rule as R
    from mjenv import actions as A
    from mjenv import observation as O

    masks = np.zeros((0, A.NUM_ACTIONS), np.bool_)
    if "rule" in parts:
        policy = R.RulePolicy(1)
        for dtype in (np.float32, np.uint8):  # uint8 rows go through widen_kernel to the float32 kernel
            policy(np.zeros((0, O.OBS_SIZE), dtype), masks)
    if "features" in parts:  # nn_features returns before its kernel on zero rows: call the kernel itself
        tabs, shapes = R.agent_tables()
        F.row_kernel()
        F.nn_features_kernel(
            np.zeros((0, O.OBS_SIZE), np.uint8),
            masks,
            np.zeros((0, 34, F.NUM_TILE_FEATURES), np.float32),
            np.zeros((0, F.NUM_GLOBAL_FEATURES), np.float32),
            tabs,
            shapes,
        )
    dt = time.perf_counter() - t0
    if verbose:
        print(f"agents kernels: {dt:.1f} s")
    return dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.parse_args(argv)
    warmup(verbose=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
