"""Tianshou: its PettingZoo path over the four-player AEC env ``mjenv.env()`` (tianshou extra).

Specification in mjenv
----------------------
``make_env(**env_kwargs)`` returns a :class:`MahjongPettingZooEnv`: Tianshou's own
``tianshou.env.PettingZooEnv`` over ``mjenv.env(**env_kwargs)`` (keyword arguments of
:class:`mjenv.pettingzoo_env.raw_env`: rule options, ``global_state``, ...), for Tianshou's
``MultiAgentOffPolicyAlgorithm`` / ``MultiAgentOnPolicyAlgorithm``. As Tianshou's wrapper makes them,

* an observation is ``{"agent_id": the player to act, "obs": float32[OBS_SIZE], "mask": its legal actions}``
  (masked algorithms, e.g. DQN and ``MARLRandomDiscreteMaskedOffPolicyAlgorithm``, act legally);
* the reward is a row of the four players' rewards of the step (``player_i`` in column ``i``); the hand's
  payments (or an illegal action's penalty) come at the step that ends it, and each player's algorithm reads
  its own column;
* ``terminated`` is True at the end of the hand (of a match with ``match=True``), ``truncated`` never.

The one difference is the info. Tianshou keeps every step's info in its replay buffer, and its trainers stop
at a buffer with missing values (``MalformedBufferError: Encountered NaNs in buffer``); the AEC env's
``infos[agent]["result"]`` at a hand's end holds ``None`` (no winner in a draw), strings and per-hand sets of
fan names, and is absent at the other steps (the buffer pads it with ``None``). So the info is the same numbers
at every step:

* ``hand_over`` (bool): the step ended a hand; the others are 0 / -1 at the other steps;
* ``winner`` / ``loser`` (int): the player index (``player_i`` is ``i``), -1 for none;
* ``win_type`` (int): an index into :data:`WIN_TYPES`, -1 while the hand goes on;
* ``fan_total`` (int) and ``payments`` (``int64[4]``, by player index: the hand's points).

The full result stays on the AEC env: ``env.env.unwrapped.hand_log()``, or ``mjenv.env()`` itself.

Deals: ``mjenv.env()`` deals a fresh hand at a reset without a seed, and Tianshou's collectors reset so (their
``venv.seed(s)`` reaches only the env's next reset). Here the deals are a sequence instead: ``make_env(seed=s)``,
``reset(seed=s)`` or ``seed(s)`` (Tianshou's ``venv.seed(s)`` gives env ``i`` the seed ``s + i``) starts it
from ``s`` (that hand is ``mjenv.env().reset(seed=s)``'s), and each later reset without a seed deals the
sequence's next hand. Together with ``torch.manual_seed`` and ``np.random.seed`` (Tianshou's random policies
and exploration draw from numpy's global generator), a run is then reproducible. ``seed=None`` (the default)
starts an unseeded sequence.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tianshou.env import PettingZooEnv

from mjenv.game import check_seed
from mjenv.pettingzoo_env import env as aec_env

#: ``info["win_type"]`` is an index into this tuple (the AEC env's ``result["win_type"]`` names)
WIN_TYPES = ("self_drawn", "discard", "robbed_kong", "draw", "illegal", "aborted")


class MahjongPettingZooEnv(PettingZooEnv):
    """``tianshou.env.PettingZooEnv`` of an mjenv AEC env, with numeric infos and seeded deals (see the module
    docstring)."""

    def __init__(self, env: Any, seed: int | None = None):
        seed = _check_seed(seed)
        self._player_index = {a: i for i, a in enumerate(env.possible_agents)}
        self._deals = np.random.default_rng()
        super().__init__(env)  # resets the env
        if seed is not None:
            self.reset(seed=seed)

    def reset(self, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is None:
            seed = int(self._deals.integers(0, 2**63 - 1))
        else:
            self._deals = np.random.default_rng(_check_seed(seed))
        obs, info = super().reset(seed=seed, options=options)
        return obs, self._info(info)

    def seed(self, seed: int | None = None) -> None:
        """Tianshou's ``venv.seed(s)``: restart the sequence of deals from ``s`` (``None``: an unseeded one) and
        deal its first hand."""
        if seed is None:
            self._deals = np.random.default_rng()
        self.reset(seed=seed)

    def step(self, action: Any) -> tuple[dict, list, bool, bool, dict]:
        obs, rew, term, trunc, info = super().step(action)
        return obs, rew, term, trunc, self._info(info)

    def _info(self, info: dict) -> dict:
        result = info.get("result")
        if result is None:
            return {
                "hand_over": False,
                "winner": -1,
                "loser": -1,
                "win_type": -1,
                "fan_total": 0,
                "payments": np.zeros(4, np.int64),
            }
        index = self._player_index
        return {
            "hand_over": True,
            "winner": -1 if result["winner"] is None else index[result["winner"]],
            "loser": -1 if result["loser"] is None else index[result["loser"]],
            "win_type": WIN_TYPES.index(result["win_type"]),
            "fan_total": int(result["fan_total"]),
            "payments": np.array([result["payments"][a] for a in self.env.possible_agents], np.int64),
        }


def _check_seed(seed: Any) -> int | None:
    return None if seed is None else check_seed(seed)  # ValueError unless an int in [0, 2**63)


def make_env(seed: int | None = None, **env_kwargs: Any) -> MahjongPettingZooEnv:
    """Tianshou's PettingZoo env of ``mjenv.env(**env_kwargs)``, reset once (see the module docstring)."""
    return MahjongPettingZooEnv(aec_env(**env_kwargs), seed=seed)
