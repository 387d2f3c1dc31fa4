"""
# Mahjong (Chinese Official, MCR / 国标麻将)

| Import             | `from mjenv.pettingzoo_env import env` (or `pettingzoo.make("aec", "mjenv/mahjong-v0")`) |
|--------------------|------------------------------------------------------------------------------------------|
| Actions            | Discrete                                                                                 |
| Parallel API       | No                                                                                       |
| Manual Control     | No                                                                                       |
| Agents             | `agents= ['player_0', 'player_1', 'player_2', 'player_3']`                               |
| Agents             | 4                                                                                        |
| Action Shape       | (1,)                                                                                     |
| Action Values      | Discrete(109)                                                                            |
| Observation Shape  | (1562,) plus a (109,) action mask                                                        |
| Observation Values | [-42, 144]                                                                               |

Four players play one hand (or a 16-hand match) of Chinese Official Mahjong with every table rule of
``docs/rules.md``: seeded wall and dice, flowers replaced from the back, chow / pung / exposed, added and
concealed kongs, robbing an added kong, claim priority win > pung/kong > chow with head-bump, the last discard
only for a win, the 8-fan minimum without flowers and the MCR payments. The rules live in Numba kernels
(:mod:`mjenv.game`); this module is a thin AEC front over them.

## Rules
Chinese Official Mahjong (MCR) as specified in ``docs/rules.md`` (from source texts 000, 001, 002, 004).

## Specification in mjenv

### Agents and seats
``player_i`` sits at chair ``i`` in a single hand (the dealer is chair ``dealer``, default 0, so ``player_0`` is
East). In a match (``match=True``) the dealer moves every hand and players change chairs between rounds
(:data:`mjenv.rules.SEATING`). ``reset(options={"dealer": d, "prevalent_wind": w})`` overrides the single hand's
winds.

### Turn order and claim windows
``agent_selection`` is the seat to act. After a discard only the players with a legal claim are asked, one at a
time in play order after the discarder; nobody sees another's answer (the observation carries no pending claim)
until all have answered, then priority decides. The same holds for robbing an added kong. Only the player being
asked sees the window open (phase, tile on offer); the others see the table as it will be if nobody claims (the
next player has drawn and is to play), what they see after a discard nobody can claim. Two things still leak in
this default mode (docs/rules.md, "Claim windows reveal nothing"): a flower drawn right after a discard is seen
only when no window opened, and the player who would draw next sees the discard with no window instead of its
own turn; and ``agent_selection`` shows who is asked. With ``RuleConfig(claim_windows="all")`` every other player
is asked in every window (pass-only masks for players without a claim), as on Botzone, so that neither the
observations nor ``agent_selection`` depend on the hidden hands.

### Observation Space
``observe(agent)`` returns ``{"observation": float32[OBS_SIZE], "action_mask": int8[109]}`` (plus
``"global_state"`` when ``global_state=True``). The observation holds what the player legally knows, seats
relative to the player (0 self, 1 next, 2 across, 3 previous); the layout is :mod:`mjenv.observation`
(``FEATURES_VERSION = "v0"``; ``mjenv.observation.views(obs)`` names the pieces): own hand, just-drawn tile,
melds, discards (counts and in order, claimed ones marked), flowers, concealed tile counts, winds, wall count,
tile on offer and who offered it, phase, whose turn. Hidden: other hands, the wall order, pending claims, the
face of other players' concealed kongs.

``global_state`` (off by default; for centralised critics): ``float32[4 * OBS_SIZE + 42]``, the observations of
all four players relative to this one, then the counts of the 42 tile kinds (flowers last) left in the wall.

### Legal Actions Mask
``action_mask[a] = 1`` for the legal actions of ``agent_selection``; all zeros for every other agent and after
the hand ends.

### Action Space
| offset | size | action |
|--------|------|--------|
| 0 | 34 | discard tile t |
| 34 | 3 | chow the offered tile as lowest / middle / highest tile of the run |
| 37 | 1 | pung |
| 38 | 1 | exposed kong on a discard |
| 39 | 34 | concealed kong of tile t |
| 73 | 34 | added kong of tile t |
| 107 | 1 | win (self-drawn, on a discard, or robbing a kong) |
| 108 | 1 | pass (claim and robbing windows only) |

``mjenv.actions.action_to_str(a)`` names an action (``"discard W5"``, ``"chow mid"``, ``"added_kong B5"``).

### Rewards
Per-hand score deltas, at the step that ends the hand: self-drawn win with F fan: +3(8+F) / -(8+F) each;
win on a discard or a robbed kong: winner +(8+F)+16, discarder -(8+F), the other two -8; exhaustive draw 0.
At the end of a hand ``infos[agent]["result"]`` holds the winner (agent name or None), win type (``self_drawn``,
``discard``, ``robbed_kong``, ``draw``, ``illegal``), total fan, fan breakdown, payments per agent, and the
winner's final hand in Botzone codes (``hand``: the keyword arguments of ``MahjongGB.MahjongFanCalculator``).

Illegal actions (``illegal=``): ``"terminate"`` (default, the PettingZoo convention with Botzone's amounts:
the offender gets -30, every other player +10, the episode ends; ``env()`` does not add PettingZoo's
``TerminateIllegalWrapper`` because that one cannot reward the other players), ``"raise"`` (``ValueError``, the
state is unchanged), ``"penalty"`` (competition rules: a false win pays 10 to each other player, any other
illegal action costs nothing; either way the offender loses the right to win this hand and must act again).
An action is an integer: a Python or numpy integer or a 0-d integer array (``tensor.numpy()``); any other type
(``"5"``, ``3.0``, ``[5]``, a bool, ``None`` for an agent still playing) is a ``TypeError`` and an integer
beyond int64 a ``ValueError``, in every illegal mode, with nothing changed (a caller's bug is not a move).

### Game records
``env.unwrapped.hand_log(i)`` exports hand ``i`` of the episode as a JSON-able log (:mod:`mjenv.record`);
``mjenv.record.replay(log)`` reproduces every state.

### Version History
* v0: initial release (mjenv 0.1.0, 2026-12-07, `f98e335`); unchanged in mjenv 0.2.0 (same rules, observation
  layout, action space and rewards: records and agents of 0.1.0 play identically).
"""

from __future__ import annotations

import dataclasses

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers

from mjenv import actions as A
from mjenv import game as G
from mjenv import observation as O
from mjenv.record import make_log
from mjenv.render import render_table
from mjenv.rules import RuleConfig, chair_of_player

ENV_ID = "mjenv/mahjong-v0"
GLOBAL_SIZE = 4 * O.OBS_SIZE + 42
_OK = G.OK
_front_step = G.front_step_kernel
_observe_mask = O.observe_mask_kernel
_OBS_SIZE, _NUM_ACTIONS = O.OBS_SIZE, A.NUM_ACTIONS
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def env(**kwargs) -> AECEnv:
    """The AEC env with PettingZoo's classic wrappers (out-of-bounds assertion, order enforcing)."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e


class raw_env(AECEnv):
    """Chinese Official Mahjong as a PettingZoo AEC env (see the module docstring).

    Parameters
    ----------
    render_mode : {None, "human", "ansi", "rgb_array"}
        ``"rgb_array"``: :meth:`render` returns a ``uint8[H, W, 3]`` image of the table
        (:func:`mjenv.viewer.raster.render_rgb`, needs Pillow).
    rules : RuleConfig, optional
        Table options; alternatively pass its fields as keyword arguments (``match``, ``prevalent_wind``,
        ``dealer``, ``min_fan``, ``illegal``, ``flowers``, ``claim_windows``, payment amounts).
    global_state : bool
        Add the perfect-information ``"global_state"`` entry to observations.
    """

    metadata = {
        "render_modes": ["human", "ansi", "rgb_array"],
        "name": "mahjong_v0",
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        render_mode: str | None = None,
        rules: RuleConfig | None = None,
        global_state: bool = False,
        **rule_kwargs,
    ):
        super().__init__()
        if rules is not None and rule_kwargs:
            raise ValueError("pass either rules=RuleConfig(...) or its fields as keyword arguments, not both")
        if rules is not None and not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a RuleConfig, got {type(rules).__name__}")
        self.rules = rules if rules is not None else RuleConfig(**rule_kwargs)
        self._rules_block = self.rules.encode()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None")
        self.render_mode = render_mode
        self.global_state = bool(global_state)
        self.possible_agents = [f"player_{i}" for i in range(4)]
        self._index = {a: i for i, a in enumerate(self.possible_agents)}
        self.agents = self.possible_agents[:]
        obs_space = {
            "observation": spaces.Box(-42.0, 144.0, (O.OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (A.NUM_ACTIONS,), np.int8),
        }
        if self.global_state:
            obs_space["global_state"] = spaces.Box(-42.0, 144.0, (GLOBAL_SIZE,), np.float32)
        self.observation_spaces = {a: spaces.Dict(obs_space) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(A.NUM_ACTIONS) for a in self.possible_agents}
        self.state_array = G.new_state()
        self._tab = G.win_tables()
        self._rew = np.zeros(4, np.float32)
        self._mask = np.zeros(A.NUM_ACTIONS, np.bool_)
        self._seed_rng = np.random.default_rng()
        self._hands: list[tuple] = []
        self._ops: list[list] = []
        self._over = True

    # ------------------------------------------------------------------------------------------ spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is None:
            seed = int(self._seed_rng.integers(0, 2**63 - 1))
        seed = G.check_seed(seed)
        options = dict(options or {})
        # other keys are ignored (pettingzoo's api_test passes arbitrary options); these two are validated by
        # RuleConfig itself (ints 0..3, numpy integers normalised)
        winds = {k: options[k] for k in ("dealer", "prevalent_wind") if k in options}
        single = dataclasses.replace(self.rules, **winds) if winds else self.rules
        self._single = (single.prevalent_wind, single.dealer)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._zero_rewards = True  # self.rewards holds only zeros (then a step without payments keeps it)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self._fresh_infos = False
        self.match_scores = [0] * 4
        self._hands = []
        self._start_hand(0, seed)

    def _start_hand(self, index: int, seed: int) -> None:
        if self.rules.match:
            prevalent, dealer = index // 4, index % 4
            self._chair = [chair_of_player(index // 4, p) for p in range(4)]
        else:
            prevalent, dealer = self._single
            self._chair = [0, 1, 2, 3]
        self._player = [0] * 4
        for p, c in enumerate(self._chair):
            self._player[c] = p
        self._hand_index = index
        G.reset_kernel(self.state_array, seed, dealer, prevalent, self._rules_block, *self._tab)
        self._ops = []
        self._hands.append((seed, dealer, prevalent, self._ops, list(self._chair)))
        self._over = False
        self.agent_selection = self.possible_agents[self._player[int(self.state_array[G.CUR])]]

    # ------------------------------------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict:
        if not self._hands:
            raise RuntimeError("observe() before reset(): call reset() first")
        seat = self._chair[self._index[agent]]
        obs = np.empty(_OBS_SIZE, np.float32)
        mask = np.empty(_NUM_ACTIONS, np.int8)
        _observe_mask(self.state_array, seat, not self._over and agent == self.agent_selection, obs, mask)
        out = {"observation": obs, "action_mask": mask}
        if self.global_state:
            out["global_state"] = self._global(seat)
        return out

    def _global(self, seat: int) -> np.ndarray:
        g = np.zeros(GLOBAL_SIZE, np.float32)
        for r in range(4):
            s = (seat + r) % 4
            O.observe_kernel(self.state_array, s, g[r * O.OBS_SIZE : (r + 1) * O.OBS_SIZE])
        st = self.state_array
        g[4 * O.OBS_SIZE :] = np.bincount(np.asarray(G.wall_tiles(st), np.int64), minlength=42)
        return g

    # ------------------------------------------------------------------------------------------ step
    def step(self, action) -> None:
        if not self._hands:
            raise RuntimeError("step() before reset(): call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        if type(action) is not int or not _INT64_MIN <= action <= _INT64_MAX:
            action = A.as_action(action)  # TypeError / ValueError before anything changes
        self._cumulative_rewards[agent] = 0.0
        if self._fresh_infos:
            self.infos = {a: {} for a in self.agents}
            self._fresh_infos = False
        seat = self._chair[self._index[agent]]
        st = self.state_array
        nxt = _front_step(st, action, self._rew, *self._tab)
        err = _OK if nxt >= 0 else nxt
        if err == _OK:
            self._ops.append(("act", seat, action))
        elif self.rules.illegal == "raise":
            what = A.action_to_str(action) if 0 <= action < A.NUM_ACTIONS else repr(action)
            raise ValueError(f"illegal action {what} for {agent}")
        else:
            mode = G.penalty_kind_kernel(st, action)
            G.penalize_kernel(st, seat, mode, self._rew)
            self._ops.append(("penalty", seat, mode))
            nxt = 4 if st[G.PHASE] == G.PH_OVER else int(st[G.CUR])
        over = nxt == 4
        if over or err != _OK:  # payments and penalties are the only non-zero rewards
            rew = self._rew
            self.rewards = {a: float(rew[self._chair[i]]) for i, a in enumerate(self.possible_agents)}
            self._zero_rewards = False
            self._accumulate_rewards()
        elif not self._zero_rewards:
            self.rewards = dict.fromkeys(self.possible_agents, 0.0)
            self._zero_rewards = True
        if over:
            self._end_hand(illegal=err != _OK)
        else:
            self.agent_selection = self.possible_agents[self._player[nxt]]
        if self.render_mode == "human":
            self.render()

    def _end_hand(self, illegal: bool) -> None:
        st = self.state_array
        r = G.result(st)
        names = self.possible_agents
        pay = {names[p]: r["payments"][self._chair[p]] for p in range(4)}
        for p in range(4):
            self.match_scores[p] += r["payments"][self._chair[p]]
        res = {
            "hand_index": self._hand_index,
            "winner": None if r["winner"] is None else names[self._player[r["winner"]]],
            "loser": None if r["loser"] is None else names[self._player[r["loser"]]],
            "win_type": "illegal" if illegal else r["win_type"],
            "fan_total": r["fan_total"],
            "fans": r["fans"],
            "payments": pay,
            "hand": r["hand"],
            "seats": {names[p]: self._chair[p] for p in range(4)},
            "match_scores": dict(zip(names, self.match_scores)),
        }
        for a in names:
            self.infos[a] = {"result": res}
        self._fresh_infos = True
        if self.rules.match and not illegal and self._hand_index + 1 < self.rules.num_hands:
            self._start_hand(self._hand_index + 1, int(G.next_seed_kernel(st)))
            return
        self._over = True
        self.terminations = dict.fromkeys(self.agents, True)

    # ------------------------------------------------------------------------------------------ extras
    def hand_log(self, index: int = -1) -> dict:
        """The JSON-able log of hand ``index`` of this episode (:mod:`mjenv.record`), with the seating."""
        if not self._hands:
            raise ValueError("no hand played yet; call reset()")
        seed, dealer, prevalent, ops, chairs = self._hands[index]
        log = make_log(seed, dealer, prevalent, self.rules, ops)
        log["players"] = {self.possible_agents[p]: chairs[p] for p in range(4)}
        return log

    def action_mask(self, agent: str | None = None) -> np.ndarray:
        """``int8[109]`` legal-action mask of ``agent`` (default: ``agent_selection``)."""
        if not self._hands:
            raise RuntimeError("action_mask() before reset(): call reset() first")
        return self.observe(agent or self.agent_selection)["action_mask"]

    def render(self) -> str | None:
        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("You are calling render method without specifying any render mode.")
            return None
        if not self._hands:
            raise RuntimeError("render() before reset(): call reset() first")
        names = [self.possible_agents[self._player[c]] for c in range(4)]
        if self.render_mode == "rgb_array":
            from mjenv.viewer.raster import render_rgb

            return render_rgb(self.state_array, names)
        text = render_table(self.state_array, names)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass


def _register() -> None:
    from pettingzoo.env_registry.registration import aec_registry, register

    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point="mjenv.pettingzoo_env:env")


_register()
