"""Uniformly random legal actions: ``agents.random:make`` (the baseline every agent must beat).

A thin factory over :class:`mjenv.policy.RandomPolicy` (one uniform per row, scaled by the row's number of
legal actions). It reads only the masks (``needs_observations = False``), so it runs in the VectorEnv's fast
masks-only mode too.
"""

from __future__ import annotations

from typing import Any

from agents._common import check_factory_args
from mjenv.policy import RandomPolicy


def make(num_envs: int, seed: int, *, env: Any = None) -> RandomPolicy:
    """A :class:`~mjenv.policy.RandomPolicy` seeded with ``seed``.

    Parameters
    ----------
    num_envs : int
        Largest batch the policy will see (any batch size works; checked to be a positive int).
    seed : int
        Seed of its random generator: the same seed gives the same actions for the same masks.
    env : mjenv.vector.VectorEnv, optional
        Lets calls on that env's own ``masks`` draw from its legal-action lists (the same actions, faster).
    """
    _, seed = check_factory_args(num_envs, seed)
    return RandomPolicy(seed, env=env)
