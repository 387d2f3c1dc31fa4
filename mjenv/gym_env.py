"""Single-agent Gymnasium wrapper: one learning player against injected opponent policies.

Rules
-----
The table of :mod:`mjenv.pettingzoo_env` (Chinese Official Mahjong, ``docs/rules.md``).

Specification in mjenv
----------------------
``gymnasium.make("mjenv/Mahjong-v0", opponents=..., seat=0)`` (registered on ``import mjenv``). The learning
player is ``player_<seat>`` (``seat="random"`` draws it per episode from the env's RNG). ``step`` applies the
learner's action, then lets the opponents act until the learner must decide again or the episode ends.

* ``observation_space``: ``Box(float32, (OBS_SIZE,))``, the learner's observation (:mod:`mjenv.observation`).
* ``action_space``: ``Discrete(109)`` (:mod:`mjenv.actions`). ``info["action_mask"]`` (``bool[109]``) and
  :meth:`MahjongGymEnv.action_masks` give the legal actions (sb3-contrib ``MaskablePPO`` reads the latter).
* reward: the learner's score delta of the hand (0 on every other step); ``terminated`` at the end of the
  episode (one hand, or 16 in a match); ``info["result"]`` then holds the hand result.
* ``opponents``: ``"random"`` (uniform over legal actions), one callable used for all three, or a list of
  three (in seat order after the learner). A callable gets ``(observation, action_mask, rng)`` with
  ``action_mask`` a ``bool[109]`` array and ``rng`` a ``numpy.random.Generator``, and returns an action id (an
  integer, a numpy integer or a 0-d integer array).
* ``step(action)`` takes the same action types as the AEC env: another type (a float, a str, a bool, a
  sequence) is a ``TypeError`` and nothing moves.
* Further keyword arguments (``match``, ``prevalent_wind``, ``dealer``, ``min_fan``, ``illegal``,
  ``global_state``) go to :class:`mjenv.pettingzoo_env.raw_env`.
"""

from __future__ import annotations

from collections.abc import Callable

import gymnasium
import numpy as np
from gymnasium import spaces

from mjenv import actions as A
from mjenv import observation as O
from mjenv.pettingzoo_env import raw_env

Policy = Callable[[np.ndarray, np.ndarray, np.random.Generator], int]


def random_policy(observation: np.ndarray, action_mask: np.ndarray, rng: np.random.Generator) -> int:
    """Uniform random legal action."""
    legal = np.flatnonzero(action_mask)
    return int(legal[rng.integers(len(legal))])


class MahjongGymEnv(gymnasium.Env):
    """One learning seat at an MCR table (see the module docstring)."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        opponents: str | Policy | list = "random",
        seat: int | str = 0,
        render_mode: str | None = None,
        **env_kwargs,
    ):
        if seat != "random" and (
            isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3
        ):
            raise ValueError(f"seat must be 0..3 or 'random', got {seat!r}")
        self._seat_option = seat
        self._opponents = self._check_opponents(opponents)
        self.render_mode = render_mode
        aec_mode = None if render_mode is None else ("rgb_array" if render_mode == "rgb_array" else "ansi")
        self.aec = raw_env(render_mode=aec_mode, **env_kwargs)
        self.observation_space = spaces.Box(-42.0, 144.0, (O.OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(A.NUM_ACTIONS)
        self.learner = "player_0"
        self._mask = np.zeros(A.NUM_ACTIONS, np.bool_)

    @staticmethod
    def _check_opponents(opponents) -> list[Policy]:
        if isinstance(opponents, str):
            if opponents != "random":
                raise ValueError(
                    f"opponents must be 'random', a callable or a list of 3 callables, got {opponents!r}"
                )
            return [random_policy] * 3
        if callable(opponents):
            return [opponents] * 3
        if isinstance(opponents, (list, tuple)) and len(opponents) == 3:
            out = [random_policy if p == "random" else p for p in opponents]
            if all(callable(p) for p in out):
                return out
        raise TypeError(
            "opponents must be 'random', a callable (obs, mask, rng) -> action, or a list of 3 of them"
        )

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if self._seat_option == "random":
            self.learner = f"player_{int(self.np_random.integers(4))}"
        else:
            self.learner = f"player_{int(self._seat_option)}"
        self.aec.reset(seed=int(self.np_random.integers(0, 2**63 - 1)), options=options)
        self._reward = 0.0
        self._play_opponents()
        return self._obs(), self._info()

    def _play_opponents(self) -> None:
        aec = self.aec
        me = self.learner
        k = int(me[-1])
        while not aec.terminations[me] and aec.agent_selection != me:
            agent = aec.agent_selection
            o = aec.observe(agent)
            policy = self._opponents[(int(agent[-1]) - k - 1) % 4]
            aec.step(policy(o["observation"], o["action_mask"].astype(bool), self.np_random))
            self._reward += aec.rewards[me]

    def _obs(self) -> np.ndarray:
        o = self.aec.observe(self.learner)
        self._mask[:] = o["action_mask"].astype(bool)
        return o["observation"]

    def _info(self) -> dict:
        info = {"action_mask": self._mask.copy()}
        if "result" in self.aec.infos.get(self.learner, {}):
            info["result"] = self.aec.infos[self.learner]["result"]
        return info

    def step(self, action):
        aec = self.aec
        if not aec._hands:
            raise RuntimeError("step() before reset(): call reset() first")
        if aec.terminations[self.learner]:
            raise RuntimeError("step() called after the episode ended; call reset()")
        action = A.as_action(action)  # a wrong type is the caller's bug (TypeError), as in the AEC env
        self._reward = 0.0
        aec.step(action)
        self._reward += aec.rewards[self.learner]
        self._play_opponents()
        terminated = bool(aec.terminations[self.learner])
        obs = self._obs()
        return obs, float(self._reward), terminated, False, self._info()

    def action_masks(self) -> np.ndarray:
        """``bool[109]`` legal actions of the learner now (for sb3-contrib's MaskablePPO)."""
        return self._mask.copy()

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        text = self.aec.render()  # an image for "rgb_array"
        if self.render_mode == "human":
            print(text)
            return None
        return text
