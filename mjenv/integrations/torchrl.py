"""TorchRL: a TorchRL env over the single-learner vector env.

Specification in mjenv
----------------------
``make_env(num_envs, opponents="random", seed=None, seat=0, device=None, **env_kwargs)`` returns a
:class:`MahjongTorchRLEnv` of batch size ``[num_envs]``: a ``torchrl.envs.EnvBase`` over one
:class:`mjenv.gym_vector.MahjongVectorEnv` (its keyword arguments in ``env_kwargs``), with

* ``"observation"`` ``float32[N, OBS_SIZE]``, ``"action"`` an index (``Categorical(109)``), ``"reward"``
  ``float32[N, 1]``, ``"done"`` / ``"terminated"`` / ``"truncated"`` ``bool[N, 1]`` (truncated always False);
* ``"action_mask"`` ``bool[N, 109]`` (the learners' legal actions, what TorchRL's ``MaskedCategorical`` and
  ``ActionMask`` read), ``"seat"`` ``int32[N]`` (the learner's chair) and ``"illegal"`` ``bool[N]`` (the
  learner's last action was illegal: ``illegal="terminate"`` / ``"penalty"``);
* ``rand_action`` (so ``rand_step`` and ``rollout`` without a policy) draws a uniformly random legal action at
  every table, with one uniform per table from torch's generator (``torch.manual_seed`` makes it
  reproducible) scaled over the table's legal actions (:func:`mjenv.policy.random_legal_actions`);
* same-step autoreset in TorchRL's convention: where a hand ends, ``("next", "observation")`` is the learner's
  observation of the finished table (the Gymnasium env's ``final_obs``) and the root observation after
  TorchRL's partial reset (``"_reset"``) is the next hand's first decision; a reset without ``"_reset"`` deals
  new hands at every table.

The specs are built once; a step converts the vector env's arrays with ``torch.from_numpy`` (one copy of the
observations, which TorchRL keeps), and TorchRL's spec checks run only with ``run_type_checks=True``.
``seed`` seeds the env (``env.set_seed``: the whole vector env is derived from it); making the env keeps
torch's thread count as it was (:mod:`mjenv.integrations._threads`). ``TypeError`` / ``ValueError`` for bad
arguments.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase
from torchrl.data import Binary, Bounded, Categorical, Composite, Unbounded
from torchrl.envs import EnvBase

from mjenv.actions import NUM_ACTIONS
from mjenv.gym_vector import MahjongVectorEnv
from mjenv.integrations._threads import keep_torch_threads
from mjenv.observation import OBS_SIZE
from mjenv.policy import random_legal_actions

# the entries of a step's step_mdp (what maybe_reset is given after a step)
_STEP_MDP_KEYS = {"observation", "action_mask", "seat", "illegal", "done", "terminated", "truncated"}


class _TorchUniforms:
    """``random(n)``: ``n`` float64 uniforms from torch's default generator (for ``random_legal_actions``)."""

    @staticmethod
    def random(n: int) -> np.ndarray:
        return torch.rand(n, dtype=torch.float64).numpy()


class MahjongTorchRLEnv(EnvBase):
    """TorchRL env of ``venv.num_envs`` tables with one learner each (see the module docstring)."""

    def __init__(self, venv: MahjongVectorEnv, *, device: Any = None, run_type_checks: bool = False) -> None:
        if not isinstance(venv, MahjongVectorEnv):
            raise TypeError(f"venv must be a mjenv.gym_vector.MahjongVectorEnv, got {type(venv).__name__}")
        n = venv.num_envs
        super().__init__(device=device, batch_size=torch.Size([n]), run_type_checks=run_type_checks)
        venv.copy = False  # this env copies what it hands out, once
        self.venv = venv
        self.observation_spec = Composite(
            observation=(
                Bounded(0, 255, shape=(n, OBS_SIZE), dtype=torch.uint8, device=self.device)
                if venv.single_observation_space.dtype == np.uint8
                else Bounded(-42.0, 144.0, shape=(n, OBS_SIZE), dtype=torch.float32, device=self.device)
            ),
            action_mask=Binary(n=NUM_ACTIONS, shape=(n, NUM_ACTIONS), dtype=torch.bool, device=self.device),
            seat=Bounded(0, 3, shape=(n,), dtype=torch.int32, device=self.device),
            illegal=Categorical(2, shape=(n,), dtype=torch.bool, device=self.device),
            shape=(n,),
            device=self.device,
        )
        self.action_spec = Categorical(NUM_ACTIONS, shape=(n,), dtype=torch.int64, device=self.device)
        self.reward_spec = Unbounded(shape=(n, 1), dtype=torch.float32, device=self.device)
        self.done_spec = Composite(
            done=Categorical(2, shape=(n, 1), dtype=torch.bool, device=self.device),
            terminated=Categorical(2, shape=(n, 1), dtype=torch.bool, device=self.device),
            truncated=Categorical(2, shape=(n, 1), dtype=torch.bool, device=self.device),
            shape=(n,),
            device=self.device,
        )
        self._cpu = self.device is None or self.device.type == "cpu"
        self._root: dict[str, torch.Tensor] | None = None  # the learners' decisions now (after the last step)
        # the new hands' first observations, at the rows that ended
        self._reset_obs = torch.zeros(n, OBS_SIZE, dtype=self.observation_spec["observation"].dtype)
        self._ended = np.zeros(n, np.bool_)
        self._uniforms = _TorchUniforms()

    # ---------------------------------------------------------------------------------------- helpers
    def _to(self, x: torch.Tensor) -> torch.Tensor:
        return x if self._cpu else x.to(self.device)

    def _dones(self, terminated: np.ndarray) -> dict[str, torch.Tensor]:
        term = self._to(torch.from_numpy(terminated).unsqueeze(-1))
        return {"done": term, "terminated": term.clone(), "truncated": torch.zeros_like(term)}

    def _decisions(self, obs: torch.Tensor, infos: dict) -> dict[str, torch.Tensor]:
        """The root entries of the learners' decisions (``infos``: the Gymnasium env's, fresh arrays)."""
        return {
            "observation": obs,
            "action_mask": self._to(torch.from_numpy(infos["action_mask"])),
            "seat": self._to(torch.from_numpy(infos["seat"])),
            "illegal": self._to(torch.from_numpy(infos["illegal"])),
        }

    # ---------------------------------------------------------------------------------------- EnvBase
    def _reset(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> TensorDictBase:
        n = self.num_envs
        partial = tensordict is not None and "_reset" in tensordict.keys() and self._root is not None
        if partial:  # TorchRL's reset of the tables whose hand ended: their next hand's first decision
            root = dict(self._root)
            if self._ended.all():  # the whole batch is taken as it is: a tensor of its own
                root["observation"] = self._to(self._reset_obs.clone())
            else:  # only the ended rows are read (torch.where), the others are stale
                root["observation"] = self._to(self._reset_obs)
        else:
            obs, infos = self.venv.reset()
            root = self._decisions(self._to(torch.from_numpy(obs.copy())), infos)
            self._root = root
            self._ended[:] = False
        out = {**root, **self._dones(np.zeros(n, np.bool_))}
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        action = tensordict.get("action")
        if not self._cpu:
            action = action.cpu()
        obs, rewards, terminated, _, infos = self.venv.step(action.numpy())
        next_obs = torch.from_numpy(obs.copy())  # the buffer is the vector env's; TorchRL keeps this one
        np.copyto(self._ended, terminated)
        if terminated.any():
            rows = np.flatnonzero(terminated)
            self._reset_obs[rows] = next_obs[rows]  # the new hands' first observations, for TorchRL's reset
            next_obs[rows] = torch.from_numpy(np.stack(infos["final_obs"][rows]))
        root = self._decisions(self._to(next_obs), infos)
        self._root = dict(root, observation=None)
        out = {
            **root,
            "reward": self._to(torch.from_numpy(rewards.astype(np.float32)).unsqueeze(-1)),
            **self._dones(terminated),
        }
        return TensorDict(out, batch_size=self.batch_size, device=self.device)

    def maybe_reset(self, tensordict: TensorDictBase) -> TensorDictBase:
        """TorchRL's partial reset after :meth:`step` (``step_and_maybe_reset``, ``rollout``), at the cost of the
        ended rows only: where the hands of the last step ended (and only when ``tensordict``'s done flags are
        exactly those), a copy of its observation with those rows set to the new hands' first observations, a
        copy of ``"action"`` (when present) with those rows 0, and done flags all False; the other entries are
        already the next decisions'. ``EnvBase.maybe_reset``'s result (tested equal), without its ``torch.where``
        over every entry. Any other ``tensordict`` takes ``EnvBase.maybe_reset``."""
        done = tensordict.get("done", None)
        if (
            self._root is None
            or done is None
            or done.device.type != "cpu"
            or not self._ended.any()
            or not _STEP_MDP_KEYS <= set(tensordict.keys()) <= _STEP_MDP_KEYS | {"action"}
            or not np.array_equal(done.reshape(-1).numpy(), self._ended)
        ):
            return super().maybe_reset(tensordict)
        rows = torch.from_numpy(np.flatnonzero(self._ended))
        obs = tensordict.get("observation").clone()
        obs[rows] = self._to(self._reset_obs[rows])
        tensordict.set("observation", obs)
        action = tensordict.get("action", None)
        if action is not None:  # as EnvBase's reset leaves it: 0 where the hand ended (a policy sets it anew)
            action = action.clone()
            action[rows] = 0
            tensordict.set("action", action)
        for key, value in self._dones(np.zeros(self.num_envs, np.bool_)).items():
            tensordict.set(key, value)
        return tensordict

    def _set_seed(self, seed: int | None) -> None:
        if seed is not None:
            obs, infos = self.venv.reset(seed=int(seed))
            self._root = self._decisions(self._to(torch.from_numpy(obs.copy())), infos)
            self._ended[:] = False

    def rand_action(self, tensordict: TensorDictBase | None = None) -> TensorDictBase:
        """A uniformly random legal action at every table (see the module docstring), as ``"action"`` of
        ``tensordict`` (or of a new one)."""
        env = self.venv.vector_env
        acts = random_legal_actions(env.masks, self._uniforms, env.n_legal, env.legal_actions)
        action = self._to(torch.from_numpy(acts))
        if tensordict is None:
            return TensorDict({"action": action}, batch_size=self.batch_size, device=self.device)
        tensordict.set("action", action)
        return tensordict

    @property
    def num_envs(self) -> int:
        return self.venv.num_envs

    def close(self, *, raise_if_closed: bool = True) -> None:
        self.is_closed = True
        self.venv.close()


def make_env(
    num_envs: int,
    opponents: object = "random",
    seed: int | None = None,
    *,
    seat: int | str = 0,
    device: Any = None,
    **env_kwargs: Any,
) -> MahjongTorchRLEnv:
    """A TorchRL env of ``num_envs`` tables with one learner each (see the module docstring)."""
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0):
        raise ValueError(f"seed must be a non-negative int or None, got {seed!r}")
    venv = MahjongVectorEnv(num_envs, opponents, seat, **env_kwargs)
    keep_torch_threads()
    env = MahjongTorchRLEnv(venv, device=device)
    if seed is not None:
        env.set_seed(int(seed))
    return env
