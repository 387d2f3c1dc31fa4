"""Compile (or load from the cache) the baseline agents' kernels without running them: the rule agent's decision
kernel (float32 observations, and the uint8 widening) and the nn agent's feature kernel, for the argument types
their policies call them with.

Run by ``tests/conftest.py`` on the xdist controller, in a process of its own beside the parallel
:func:`mjenv.warmup`, so that the test workers load these kernels instead of each compiling them (the rule
agent's decision kernel alone is ~70 CPU-s cold, the largest single compile of the suite). Compile-only, so the
shared kernels of mjenv are stubbed (``mjenv._jit.stub_modules``): the mjenv workers compile those.
"""

from __future__ import annotations

from mjenv import _jit

_jit.stub_modules = frozenset({"mjenv.hand", "mjenv.fans", "mjenv.game"})

import numba  # noqa: E402
import numpy as np  # noqa: E402

from agents import features, rule  # noqa: E402
from mjenv import actions as A  # noqa: E402
from mjenv import observation as O  # noqa: E402


def main() -> None:
    n = 4
    policy = rule.make(n, 0)
    obs = np.zeros((n, O.OBS_SIZE), np.float32)
    obs8 = np.zeros((n, O.OBS_SIZE), np.uint8)
    masks = np.zeros((n, A.NUM_ACTIONS), np.bool_)
    out = np.zeros(n, np.int64)
    args = (obs, masks, out, policy.danger_wall, policy.max_eval, policy._tabs, policy._shapes)
    rule.rule_actions_kernel.compile(tuple(numba.typeof(a) for a in args))
    rule.widen_kernel.compile((numba.typeof(obs8), numba.typeof(obs)))
    tabs, shapes = features._tables()
    tile = np.empty((n, 34, features.NUM_TILE_FEATURES), np.float32)
    glob = np.empty((n, features.NUM_GLOBAL_FEATURES), np.float32)
    features.nn_features_kernel.compile(
        tuple(numba.typeof(a) for a in (obs8, masks, tile, glob, tabs, shapes))
    )


if __name__ == "__main__":
    main()
