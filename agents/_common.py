"""Argument checks shared by the agent factories."""

from __future__ import annotations

import numpy as np


def check_factory_args(num_envs: object, seed: object) -> tuple[int, int]:
    """``(num_envs, seed)`` as ints, or a clear ``TypeError``/``ValueError``."""
    for name, v in (("num_envs", num_envs), ("seed", seed)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if int(num_envs) < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    if int(seed) < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return int(num_envs), int(seed)
