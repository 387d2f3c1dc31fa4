"""Gymnasium vector env: one learning chair per table at N tables, the other chairs played by given opponents.

Rules
-----
The tables of :mod:`mjenv.vector` (single hands of Chinese Official Mahjong, ``docs/rules.md``).

Specification in mjenv
----------------------
``MahjongVectorEnv(num_envs, opponents="random", seat=0)``, also
``gymnasium.make_vec("mjenv/Mahjong-v0", num_envs=N, opponents=...)`` (the id's ``vector_entry_point``; the
default vectorization mode, or ``vectorization_mode="vector_entry_point"``). A ``gymnasium.vector.VectorEnv``
over one :class:`mjenv.vector.VectorEnv` (not N copies of :class:`mjenv.gym_env.MahjongGymEnv`): every step
applies the learners' actions at all tables in one kernel call, then steps only the tables where an opponent is
to act (``VectorEnv.step(rows=)``; the others do not move) with the opponents' actions batched across tables,
until the learner is to act at every table. The kernel writes observations only where the learner is to act
(``watch=``: an opponent's observation is built only for an opponent policy that reads observations) and a
finished hand's last observation of the learner as it ends (``final_obs=``). An episode is one hand, as in the
one-table wrapper.

* ``single_observation_space``: ``Box(-42, 144, (OBS_SIZE,), float32)``, the learner's observation
  (:mod:`mjenv.observation`; the one-table wrapper's space); ``observation_space``: its batch ``(N, OBS_SIZE)``.
* ``single_action_space``: ``Discrete(109)`` (:mod:`mjenv.actions`); ``action_space``: ``MultiDiscrete([109] * N)``.
* ``reset(seed=, options=) -> (obs, infos)``; ``step(actions) -> (obs, rewards, terminations, truncations,
  infos)``: ``obs`` ``float32[N, OBS_SIZE]``, ``rewards`` ``float64[N]``, ``terminations`` ``bool[N]``,
  ``truncations`` ``bool[N]`` (always False: a hand always ends).
* ``infos["action_mask"]``: ``bool[N, 109]``, the learner's legal actions (also :meth:`action_masks`);
  ``infos["seat"]``: ``int32[N]``, the learner's chair at each table; ``infos["illegal"]``: ``bool[N]``, the
  learner's action of this step was illegal (only with ``illegal="terminate"`` or ``"penalty"``; see below).
* Autoreset: same step (``metadata["autoreset_mode"] = AutoresetMode.SAME_STEP``). Where a hand ended, the
  returned row is the learner's first decision of the next hand and, as Gymnasium 1.x's same-step convention
  has it, ``infos["final_obs"]`` (an object array, None at the other rows) holds the learner's observation of the
  finished table, ``infos["final_info"]`` the hand's outcome (``seat``, ``winner``, ``loser``, ``fan_total``,
  ``scores`` ``int32[4]`` by chair, ``hand_steps``, ``seed``, ``aborted``), and ``infos["_final_obs"]`` /
  ``infos["_final_info"]`` mark those rows.
* Reward: the learner's score delta of the step (its payments; 0 on most steps), as the one-table wrapper gives
  it: over an episode the rewards add up to ``final_info["scores"][seat]``. A payment to the learner while the
  opponents open a new hand (a penalty in ``"penalty"`` mode) is counted in that hand's first step. A hand that
  ends before the learner's first decision in it (an opponent's heavenly win, an opponent's illegal action in
  ``"terminate"`` mode) is no episode of the learner: it is not reported and its payments are not counted
  (:attr:`MahjongVectorEnv.skipped_hands` counts them).
* ``opponents``: ``"random"`` (uniform over legal actions, from the env's seeded generator), a batched policy
  (:mod:`mjenv.policy`: ``policy(obs, masks, seats) -> int64[k]``, called with the rows of the tables where it
  is to act), an agent import string ``"module:factory"`` (built by :func:`mjenv.policy.load_policy` with
  ``num_envs`` and a seed drawn from the env's generator at every seeded reset), or a list of three of these, in
  seat order after the learner. The same object in several places is called once per step for all its rows.
  (The one-table wrapper's opponents are per-agent callables ``(obs, mask, rng) -> action``; these are batched.)
* ``seat``: the learner's chair (0..3), or ``"random"``: drawn per table for every hand from the env's generator.
* Seeding: ``reset(seed=s)`` with an int derives every table's deal, the learners' chairs and the random
  opponents' draws from ``s`` (two envs reset with the same seed and given the same actions give the same
  results); a list of ``num_envs`` ints in [0, 2**63) gives the tables' first deals directly. ``reset()``
  without a seed deals new hands from the env's generator.
* ``options``: ``{"dealer": d, "prevalent_wind": w}`` (ints 0..3 or ``int[N]``, as the AEC env's options);
  another key is a ``ValueError`` (``reset_mask``: tables reset themselves, there is no partial reset).
* Further keyword arguments: ``rules`` (a :class:`mjenv.rules.RuleConfig`) or its fields (``illegal``,
  ``min_fan``, ``dealer``, ...; ``match`` is not supported); default ``illegal="terminate"``, as the one-table
  wrapper: an illegal learner action costs 30 and ends the hand (``"penalty"``: competition rules, the learner
  chooses again; ``"raise"``: a ``ValueError`` and nothing moves). ``threads``: Numba threads of the
  :class:`mjenv.vector.VectorEnv` (default 1: a step is a few kernel calls on fewer and fewer tables, and
  numba's OpenMP threads alternating with a learner's torch threads slowed both down: MaskablePPO on 256 tables
  of a loaded 2-core machine ran 11.2k learner steps/s with 1 Numba and 1 torch thread, 1.8k with 2 and 1).
  ``copy``: return copies of the observations (default True, as Gymnasium's vector envs); False returns the
  env's own buffer, overwritten by the next step. ``obs_dtype``: ``np.float32`` (default) or ``np.uint8``, the
  compact encoding of :mod:`mjenv.observation` (4x fewer bytes, the same information; the space becomes
  ``Box(0, 255, (OBS_SIZE,), uint8)``); opponents that read observations get them in that encoding.
* Bad input (actions of another shape or dtype, a bad seed or option) is a ``TypeError`` / ``ValueError`` and
  nothing moves. An opponent policy that returns an illegal action in ``"raise"`` mode, or a malformed batch,
  raises and leaves the env to be reset.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode
from gymnasium.vector.utils import batch_space

from mjenv._jit import njit
from mjenv.actions import NUM_ACTIONS
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.policy import load_policy, needs_observations, random_legal_actions_at
from mjenv.rules import RuleConfig, check_rules
from mjenv.vector import VectorEnv

#: inner steps (opponents' decisions) one step may take before the env gives up (a hand takes a few hundred)
MAX_INNER_STEPS = 10_000
_RULE_FIELDS = frozenset(f.name for f in dataclasses.fields(RuleConfig))
_OPTIONS = ("dealer", "prevalent_wind")
_FINAL_KEYS = ("seat", "winner", "loser", "fan_total", "scores", "hand_steps", "seed", "aborted")


@njit
def _collect(rows, learner, acted, paid, terminated, seats, rewards, carry, next_rows):
    """After a step of tables ``rows``: add each one's payment to the learner (``paid[i, learner[i]]``) to
    ``rewards`` where the learner has acted in the hand (``acted``), else to ``carry``; write the tables still
    waiting for an opponent (the chair to act is not the learner's) into ``next_rows``. Returns ``(how many
    tables wait, how many hands ended)``."""
    ended = 0
    k = 0
    for j in range(rows.shape[0]):
        i = rows[j]
        p = np.float64(paid[i, learner[i]])
        if acted[i]:
            rewards[i] += p
        else:
            carry[i] += p
        ended += terminated[i]
        if seats[i] != learner[i]:
            next_rows[k] = i
            k += 1
    return k, ended


@njit
def _observe_rows(states, rows, seats, obs):
    """``obs[i]`` = the observation of chair ``seats[i]`` at table ``i``, for ``i`` in ``rows``."""
    for i in rows:
        observe_kernel(states[i], seats[i], obs[i])


def _opponent_slots(opponents: object) -> list[object]:
    """The three opponents (seat order after the learner) as given: "random", an import string or a callable."""
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != 3:
            raise ValueError(
                f"opponents must be a list of 3 (seat order after the learner), got {len(opponents)}"
            )
        slots = list(opponents)
    else:
        slots = [opponents] * 3
    for p in slots:
        if isinstance(p, str):
            if p != "random" and p.count(":") != 1:
                raise ValueError(
                    f"an opponent is 'random', a 'module:factory' import string or a batched policy, got {p!r}"
                )
        elif not callable(p):
            raise TypeError(
                "opponents must be 'random', a 'module:factory' string, a batched policy "
                f"(obs, masks, seats) -> actions, or a list of 3 of them; got {type(p).__name__}"
            )
    return slots


class MahjongVectorEnv(gymnasium.vector.VectorEnv):
    """One learning chair at each of ``num_envs`` MCR tables (see the module docstring)."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}
    #: as gymnasium's own vector envs have it too (TorchRL's GymWrapper reads this attribute)
    autoreset_mode = AutoresetMode.SAME_STEP

    def __init__(
        self,
        num_envs: int = 1,
        opponents: object = "random",
        seat: int | str = 0,
        *,
        rules: RuleConfig | None = None,
        threads: int | None = 1,
        copy: bool = True,
        obs_dtype: type | np.dtype = np.float32,
        **rule_options: Any,
    ) -> None:
        if seat != "random" and (
            isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat <= 3
        ):
            raise ValueError(f"seat must be 0..3 or 'random', got {seat!r}")
        unknown = sorted(set(rule_options) - _RULE_FIELDS)
        if unknown:
            raise TypeError(
                f"unexpected keyword argument(s) {unknown}; rule options are {sorted(_RULE_FIELDS)}"
            )
        if not isinstance(copy, bool):
            raise TypeError(f"copy must be a bool, got {type(copy).__name__}")
        rules = check_rules(rules, **rule_options)
        if rules.match:  # a learner here is a chair; in a match players change chairs between rounds
            raise ValueError(
                "MahjongVectorEnv plays single hands (RuleConfig(match=False)); for matches use "
                "mjenv.VectorEnv(rules=RuleConfig(match=True)) and its chairs / player_rewards()"
            )
        self._slots = _opponent_slots(opponents)
        self._env = VectorEnv(
            num_envs, 0, rules=rules, observations=True, threads=threads, obs_dtype=obs_dtype
        )
        n = self._env.num_envs
        self.num_envs = n
        self.rules = rules
        self.copy = copy
        self._seat_option = seat if seat == "random" else int(seat)
        self.single_observation_space = self._env.single_observation_space
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, n)
        self.action_space = batch_space(self.single_action_space, n)
        # import strings are built now (an error shows at once) and again at every seeded reset
        self._policies, self._groups = self._build_policies(0)
        self._learner = np.zeros(n, np.int32)
        self._carry = np.zeros(n, np.float64)  # payments to the learner before its first decision of a hand
        self._acts = np.zeros(n, np.int64)  # the opponents' actions of an inner step, one per stepped table
        self._rows = np.zeros(n, np.int64)  # the tables where an opponent is to act
        # the learners' step moves every table: as a subset of all rows (the kernel's compiled variant for rows)
        self._all_rows = np.arange(n, dtype=np.int64)
        # the kernel's final observations (watch=)
        self._final_buf = np.zeros((n, OBS_SIZE), self._env.obs_dtype)
        self._acted = np.zeros(n, np.bool_)
        # an opponent that reads observations needs them at its chairs (else only the learners' are written)
        self._opp_obs = False
        self._opp_rng = np.random.default_rng(0)
        self._begin_step()
        self._started = False
        #: hands that ended before the learner's first decision in them (not episodes; see the module docstring)
        self.skipped_hands = 0
        #: engine decisions taken so far, every chair's (the learners' and the opponents', claim-window passes
        #: included: one per table moved by a kernel call), for throughput figures
        self.decisions = 0

    # ---------------------------------------------------------------------------------------- helpers
    def _build_policies(self, seed: int) -> tuple[list[object], list[tuple[object, tuple[int, ...]]]]:
        """One object per opponent slot (None for "random", else the policy; a string is loaded once per
        string), and the groups of slots that share an object (:meth:`_group`)."""
        built: dict[str, object] = {}
        out = []
        for p in self._slots:
            if isinstance(p, str):
                if p == "random":
                    out.append(None)
                    continue
                if p not in built:
                    built[p] = load_policy(p, self.num_envs, seed)
                out.append(built[p])
            else:
                out.append(p)
        self._opp_obs = any(p is not None and needs_observations(p) for p in out)
        return out, self._group(out)

    @staticmethod
    def _group(policies: list[object]) -> list[tuple[object, tuple[int, ...]]]:
        """``(policy, slots)`` with every policy once (None: the random opponent)."""
        groups: list[tuple[object, list[int]]] = []
        for k, p in enumerate(policies):
            for q, slots in groups:
                if q is p:
                    slots.append(k)
                    break
            else:
                groups.append((p, [k]))
        return [(p, tuple(s)) for p, s in groups]

    def _check_seed(self, seed: object) -> np.ndarray | int | None:
        if seed is None:
            return None
        if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            if seed < 0:
                raise ValueError(f"seed must be a non-negative int, got {seed}")
            return int(seed)
        if isinstance(seed, (list, tuple, np.ndarray)):
            arr = np.asarray(seed)
            if arr.shape != (self.num_envs,) or not np.issubdtype(arr.dtype, np.integer):
                raise ValueError(
                    f"a list of seeds must hold {self.num_envs} ints (one per table), got {seed!r}"
                )
            if (arr < 0).any() or (arr.astype(np.uint64) >= np.uint64(2**63)).any():
                raise ValueError("per-table seeds must be in [0, 2**63)")
            return arr.astype(np.int64)
        raise TypeError(
            f"seed must be an int, a list of {self.num_envs} ints or None, got {type(seed).__name__}"
        )

    def _check_options(self, options: object) -> dict[str, np.ndarray]:
        if options is None:
            return {}
        if not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        unknown = sorted(set(options) - set(_OPTIONS))
        if unknown:
            raise ValueError(
                f"unknown reset option(s) {unknown}; options are {list(_OPTIONS)} (tables reset themselves in "
                "the step that ends their hand: there is no partial reset)"
            )
        return {k: VectorEnv._winds(v, k, (self.num_envs,)) for k, v in options.items()}

    def _draw_seats(self, rows: np.ndarray) -> None:
        if self._seat_option == "random":
            self._learner[rows] = self.np_random.integers(4, size=rows.size)
        else:
            self._learner[rows] = self._seat_option

    def _opponent_actions(self, rows: np.ndarray) -> np.ndarray:
        """The opponents' actions at tables ``rows`` (an opponent is to act there), one per row."""
        env = self._env
        acts = self._acts[: rows.size]
        if self._opp_obs:  # the kernel wrote only the learners' observations (watch=)
            _observe_rows(env.states, rows, env.seats, env.obs)
        if len(self._groups) == 1:  # one object plays every opponent's chair
            policy = self._groups[0][0]
            acts[:] = self._policy_actions(policy, rows)
            return acts
        rel = (env.seats[rows] - self._learner[rows] - 1) % 4  # 0..2: the opponent's slot
        for policy, slots in self._groups:
            pos = np.flatnonzero(np.isin(rel, slots))
            if pos.size:
                acts[pos] = self._policy_actions(policy, rows[pos])
        return acts

    def _policy_actions(self, policy: object, sel: np.ndarray) -> np.ndarray:
        """The actions of ``policy`` (None: the random opponent) at tables ``sel``."""
        env = self._env
        if policy is None:
            return random_legal_actions_at(sel, self._opp_rng, env.n_legal, env.legal_actions)
        masks = env.masks[sel]
        obs = env.obs[sel] if needs_observations(policy) else None
        try:
            out = np.asarray(policy(obs, masks, env.seats[sel]))
        except Exception as e:
            e.add_note(
                "mjenv.gym_vector calls an opponent as a batched policy, policy(obs[k, OBS_SIZE], "
                "masks[k, 109], seats[k]) -> int64[k]; the one-table env's per-agent opponents "
                "(obs, mask, rng) -> action do not fit"
            )
            raise
        if out.shape != (sel.size,) or not np.issubdtype(out.dtype, np.integer):
            raise ValueError(
                f"opponent {policy!r} returned {out.dtype}{out.shape} for {sel.size} tables; a batched policy "
                f"returns one integer action per row, int64[{sel.size}]"
            )
        return out

    def _advance(self, rewards: np.ndarray, acted: np.ndarray, rows: np.ndarray) -> None:
        """Step the tables ``rows`` (where an opponent is to act; the others do not move) until the learner is to
        act everywhere.

        Payments to the learner go to ``rewards`` where it has acted in the hand (``acted``), else to the carry;
        hands that end where it has acted are recorded (:meth:`_finish`)."""
        env = self._env
        for _ in range(MAX_INNER_STEPS):
            if rows.size == 0:
                return
            acts = self._opponent_actions(rows)
            env._step(acts, rows, self._learner, self._final_buf)  # only these tables move
            self.decisions += rows.size
            k, ended = _collect(
                rows, self._learner, acted, env.rewards, env.terminated, env.seats, rewards, self._carry,
                self._rows,
            )  # fmt: skip
            if ended:
                done = rows[env.terminated[rows]]
                a = acted[done]
                self._finish(done[a])
                skipped = done[~a]
                self._carry[skipped] = 0
                self.skipped_hands += int(skipped.size)
                acted[done] = False
                self._draw_seats(done)
                # the learners were drawn anew where a hand began: the tables that wait for an opponent are
                # among those stepped (the others' learner is to act and did not move)
                rows = rows[env.seats[rows] != self._learner[rows]]
            else:
                rows = self._rows[:k].copy()
        raise RuntimeError(
            f"the opponents took {MAX_INNER_STEPS} decisions without reaching the learner (an opponent policy "
            "that repeats an illegal action in 'penalty' mode?); reset the env"
        )

    def _finish(self, rows: np.ndarray) -> None:
        """Record the learner's final observation and the outcome of the hands just ended at ``rows``."""
        if rows.size == 0:
            return
        if self._final is None:
            self._new_finals()
        env = self._env
        r = env.results
        self._final_obs[rows] = list(self._final_buf[rows])
        f = self._final
        f["seat"][rows] = self._learner[rows]
        for key in ("winner", "loser", "fan_total", "hand_steps", "seed"):
            f[key][rows] = getattr(r, key)[rows]
        f["scores"][rows] = r.scores[rows]
        f["aborted"][rows] = r.aborted[rows]
        self._done[rows] = True

    def _begin_step(self) -> None:
        """Nothing finished yet in this step (the finals are made when a hand ends: :meth:`_finish`)."""
        self._done = np.zeros(self.num_envs, np.bool_)
        self._final = None

    def _new_finals(self) -> None:
        n = self.num_envs
        self._final_obs = np.full(n, None, dtype=object)
        self._final = {
            "seat": np.zeros(n, np.int32),
            "winner": np.full(n, -1, np.int32),
            "loser": np.full(n, -1, np.int32),
            "fan_total": np.zeros(n, np.int32),
            "scores": np.zeros((n, 4), np.int32),
            "hand_steps": np.zeros(n, np.int32),
            "seed": np.full(n, -1, np.int64),
            "aborted": np.zeros(n, np.bool_),
        }

    def _infos(self, illegal: np.ndarray) -> dict[str, Any]:
        env = self._env
        infos: dict[str, Any] = {
            "action_mask": env.masks.copy(),
            "seat": self._learner.copy(),
            "illegal": illegal,
        }
        done = self._done
        if self._final is not None:
            infos["final_obs"] = self._final_obs
            infos["_final_obs"] = done
            info = {}
            for key in _FINAL_KEYS:
                info[key] = self._final[key]
                info[f"_{key}"] = done
            infos["final_info"] = info
            infos["_final_info"] = done
        return infos

    def _check_open(self) -> None:
        if self.closed:
            raise RuntimeError("the env is closed")

    # ---------------------------------------------------------------------------------------- API
    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """Deal a new hand at every table; returns ``(obs, infos)`` at the learners' first decisions."""
        self._check_open()
        seed = self._check_seed(seed)
        winds = self._check_options(options)
        if isinstance(seed, int):
            self._np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
            self._np_random_seed = seed
        elif seed is not None:
            self._np_random = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed.tolist())))
            self._np_random_seed = -1
        rng = self.np_random
        deals = seed if isinstance(seed, np.ndarray) else rng.integers(0, 2**63 - 1, self.num_envs, np.int64)
        self._opp_rng = np.random.default_rng(int(rng.integers(0, 2**63 - 1)))
        if seed is not None and any(isinstance(p, str) and p != "random" for p in self._slots):
            self._policies, self._groups = self._build_policies(int(rng.integers(0, 2**31 - 1)))
        self._started = False
        self._env.reset(deals, dealers=winds.get("dealer"), prevalents=winds.get("prevalent_wind"))
        self._draw_seats(np.arange(self.num_envs))
        self._carry[:] = 0
        self._begin_step()
        acted = self._acted
        acted[:] = False
        env = self._env
        self._advance(np.zeros(self.num_envs), acted, np.flatnonzero(env.seats != self._learner))
        self._begin_step()  # nothing to report at a reset (a hand that ended here was skipped)
        self._started = True
        obs = self._env.obs
        return (obs.copy() if self.copy else obs), self._infos(np.zeros(self.num_envs, np.bool_))

    def step(self, actions):
        """Apply the learners' actions, play the opponents until the learners are to act again."""
        self._check_open()
        if not self._started:
            raise RuntimeError("step() before reset() (or after an error inside a step): call reset() first")
        env = self._env
        acts = env._check_actions(actions)  # a bad batch raises and nothing moves
        # every table moves (the learner is to act at each); observations only where the learner is to act next.
        # Raise mode: an illegal action raises here and nothing moves
        env._step(acts, self._all_rows, self._learner, self._final_buf)
        self.decisions += self.num_envs
        self._started = False  # until this step completes
        n = self.num_envs
        illegal = env.illegal.copy()
        rewards = self._carry.copy()
        self._carry[:] = 0
        rewards += env.rewards[np.arange(n), self._learner]
        self._begin_step()
        ended = env.terminated
        acted = self._acted
        if ended.any():
            rows = np.flatnonzero(ended)
            self._finish(rows)
            self._draw_seats(rows)
            np.logical_not(ended, out=acted)
        else:
            acted[:] = True
        self._advance(rewards, acted, np.flatnonzero(env.seats != self._learner))
        self._started = True
        obs = env.obs
        terminations = self._done.copy()
        return (
            obs.copy() if self.copy else obs,
            rewards,
            terminations,
            np.zeros(n, np.bool_),
            self._infos(illegal),
        )

    def action_masks(self) -> np.ndarray:
        """``bool[N, 109]``: the learners' legal actions now (sb3-contrib's MaskablePPO reads it)."""
        return self._env.masks.copy()

    @property
    def vector_env(self) -> VectorEnv:
        """The :class:`mjenv.vector.VectorEnv` underneath (read, do not step it; its ``obs`` rows are the
        learners' observations: the opponents' are not written there unless an opponent policy reads them)."""
        return self._env

    def close_extras(self, **kwargs: Any) -> None:
        self._started = False
