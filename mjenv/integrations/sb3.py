"""Stable-Baselines3 / sb3-contrib: an SB3 ``VecEnv`` over the single-learner vector env.

Specification in mjenv
----------------------
``make_vec_env(num_envs, opponents="random", seed=None, seat=0, monitor=True, **env_kwargs)`` returns an SB3
``VecEnv`` (:class:`MahjongSB3VecEnv`, inside SB3's ``VecMonitor`` when ``monitor``, so that SB3 logs the
episodes' rewards and lengths) over one :class:`mjenv.gym_vector.MahjongVectorEnv` of ``num_envs`` tables
(``env_kwargs``: its keyword arguments, e.g. ``illegal="raise"``). sb3-contrib's ``MaskablePPO`` trains on it
directly::

    model = MaskablePPO("MlpPolicy", make_vec_env(64, seed=0), seed=0)

* Masks: ``env_method("action_masks")`` returns the learners' masks, one ``bool[109]`` per table (what
  sb3-contrib's ``get_action_masks`` stacks); ``has_attr("action_masks")`` is true.
* ``step_wait`` returns ``(obs float32[N, OBS_SIZE], rewards float32[N], dones bool[N], infos)`` with SB3's
  same-step reset: where ``dones[i]``, ``obs[i]`` is the next hand's first observation and
  ``infos[i]["terminal_observation"]`` the finished hand's last one; ``infos[i]["TimeLimit.truncated"]`` is
  False (a hand always ends); ``infos[i]["result"]`` holds the hand's outcome (``final_info`` of the Gymnasium
  env for that table).
* Seeding: SB3's ``seed(s)`` (``MaskablePPO(seed=s)`` calls it) seeds the next reset with ``s``: the whole env
  is derived from it (:mod:`mjenv.gym_vector`), so a run is reproducible. ``set_options`` passes the Gymnasium
  env's reset options (one dict for every table).
* Threads: making the env starts numba's threading layer and keeps torch's thread count as it was (numba's
  OpenMP layer would otherwise reset it to the core count at the first step); set ``torch.set_num_threads``
  before or after, and the env's own Numba threads with ``threads=`` (default 1, see :mod:`mjenv.gym_vector`;
  the learner's inference and update are most of the time: a tenth was the env's in ``benchmarks/sb3.py``).
* ``get_attr`` / ``set_attr`` / ``env_method`` reach the one vector env (its attributes are shared by all
  tables: ``get_attr`` gives the value once per index, ``set_attr`` needs all indices); ``env_is_wrapped`` is
  False (the tables are not Gymnasium envs that could be wrapped).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecMonitor

from mjenv.gym_vector import MahjongVectorEnv
from mjenv.integrations._threads import keep_torch_threads


class MahjongSB3VecEnv(VecEnv):
    """SB3 ``VecEnv`` over a :class:`mjenv.gym_vector.MahjongVectorEnv` (see the module docstring)."""

    def __init__(self, venv: MahjongVectorEnv) -> None:
        if not isinstance(venv, MahjongVectorEnv):
            raise TypeError(f"venv must be a mjenv.gym_vector.MahjongVectorEnv, got {type(venv).__name__}")
        self.venv = venv
        self._actions: np.ndarray | None = None
        keep_torch_threads()
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    def _indices(self, indices: None | int | Iterable[int]) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            indices = [indices]
        out = [int(i) for i in indices]
        bad = [i for i in out if not 0 <= i < self.num_envs]
        if bad:
            raise ValueError(f"env indices must be in 0..{self.num_envs - 1}, got {bad}")
        return out

    def reset(self) -> np.ndarray:
        seed = self._seeds[0]  # SB3's seed(s) sets s, s + 1, ...: s seeds the whole env
        options = self._options[0] or None
        if any(o != self._options[0] for o in self._options):
            raise ValueError("the tables share one reset: set_options takes one dict for every table")
        obs, infos = self.venv.reset(seed=seed, options=options)
        self._reset_seeds()
        self._reset_options()
        self.reset_infos = [{} for _ in range(self.num_envs)]
        return obs if self.venv.copy else obs.copy()

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = actions

    def step_wait(self):
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        obs, rewards, terminations, truncations, infos = self.venv.step(actions)
        dones = terminations | truncations
        out = [{"TimeLimit.truncated": False} for _ in range(self.num_envs)]
        if dones.any():
            final = infos["final_info"]
            keys = [k for k in final if not k.startswith("_")]
            for i in np.flatnonzero(dones):
                out[i]["terminal_observation"] = infos["final_obs"][i]
                out[i]["result"] = {k: final[k][i] for k in keys}
        return (obs if self.venv.copy else obs.copy()), rewards.astype(np.float32), dones, out

    def close(self) -> None:
        self.venv.close()

    def get_attr(self, attr_name: str, indices=None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value] * len(self._indices(indices))

    def set_attr(self, attr_name: str, value: Any, indices=None) -> None:
        if len(set(self._indices(indices))) != self.num_envs:
            raise ValueError(
                "the tables share one env: set_attr sets an attribute for all of them (indices=None)"
            )
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list[Any]:
        idx = self._indices(indices)
        if method_name == "action_masks":  # one row per table
            masks = self.venv.action_masks(*method_args, **method_kwargs)
            return [masks[i] for i in idx]
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        return [result] * len(idx)

    def env_is_wrapped(self, wrapper_class: type, indices=None) -> list[bool]:
        return [False] * len(self._indices(indices))


def make_vec_env(
    num_envs: int,
    opponents: object = "random",
    seed: int | None = None,
    *,
    seat: int | str = 0,
    monitor: bool = True,
    **env_kwargs: Any,
) -> VecEnv:
    """An SB3 ``VecEnv`` of ``num_envs`` tables with one learner each (see the module docstring).

    ``seed`` seeds the first reset (as ``VecEnv.seed``); ``monitor`` wraps it in SB3's ``VecMonitor``.
    ``TypeError`` / ``ValueError`` for bad arguments (from :class:`mjenv.gym_vector.MahjongVectorEnv`).
    """
    if not isinstance(monitor, bool):
        raise TypeError(f"monitor must be a bool, got {type(monitor).__name__}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    env = MahjongSB3VecEnv(MahjongVectorEnv(num_envs, opponents, seat, **env_kwargs))
    if seed is not None:
        env.seed(int(seed))
    return VecMonitor(env) if monitor else env
