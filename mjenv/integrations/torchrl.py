"""TorchRL: a TorchRL env over the single-learner vector env.

Specification in mjenv
----------------------
``make_env(num_envs, opponents="random", seed=None, seat=0, device=None, **env_kwargs)`` returns a TorchRL
``TransformedEnv`` of batch size ``[num_envs]`` over one :class:`mjenv.gym_vector.MahjongVectorEnv` (its
keyword arguments in ``env_kwargs``): TorchRL's own ``GymWrapper`` of Gymnasium vector envs, with

* ``"observation"`` ``float32[N, OBS_SIZE]``, ``"action"`` an index (``Categorical(109)``: the wrapper's
  ``categorical_action_encoding=True``), ``"reward"`` ``float32[N, 1]``, ``"done"`` / ``"terminated"`` /
  ``"truncated"`` ``bool[N, 1]`` (truncated always False);
* ``"action_mask"`` ``bool[N, 109]``, ``"seat"`` and ``"illegal"`` read from the Gymnasium infos, and an
  ``ActionMask`` transform: the action spec's mask follows ``"action_mask"``, so ``rand_step``, ``rollout``
  without a policy and ``MaskedCategorical`` policies take legal actions;
* same-step autoreset mapped to TorchRL's convention by the wrapper's ``VecGymEnvTransform``: where a hand
  ends, ``("next", "observation")`` is the learner's observation of the finished table (Gymnasium's
  ``final_obs``) and the root observation after TorchRL's partial reset is the next hand's first decision.

``seed`` seeds the env (``env.set_seed``: the whole vector env is derived from it); making the env keeps
torch's thread count as it was (:mod:`mjenv.integrations._threads`). ``TypeError`` / ``ValueError`` for bad
arguments.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from torchrl.envs import ActionMask, GymWrapper, TransformedEnv

from mjenv.gym_vector import MahjongVectorEnv
from mjenv.integrations._threads import keep_torch_threads


def make_env(
    num_envs: int,
    opponents: object = "random",
    seed: int | None = None,
    *,
    seat: int | str = 0,
    device: Any = None,
    **env_kwargs: Any,
) -> TransformedEnv:
    """A TorchRL env of ``num_envs`` tables with one learner each (see the module docstring)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    venv = MahjongVectorEnv(num_envs, opponents, seat, **env_kwargs)
    keep_torch_threads()
    env = GymWrapper(venv, categorical_action_encoding=True, device=device)
    env.append_transform(ActionMask())
    if seed is not None:
        env.set_seed(int(seed))
    return env
