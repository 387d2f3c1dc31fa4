"""Game records: a JSON log of one hand (seed, wall, every event) and a replay that reproduces the states.

Rules
-----
MCR (``docs/rules.md``): a hand is fully determined by the shuffled wall (from the seed), the dice,
the dealer and prevailing wind, and the players' decisions; draws, flower and kong replacements follow from them.

Specification in mjenv
----------------------
A log is a plain dict (``json.dumps``-able)::

    {"format": "mjenv-hand-v2", "seed": int, "dealer": chair, "prevalent_wind": 0..3,
     "rules": RuleConfig.to_dict() (min_fan, flowers, payments, illegal mode, ...),
     "dice": [d1, d2], "wall": ["W1", ...144 (136 without flowers) Botzone codes, front first],
     "deal": {"hands": [[codes] x4], "flowers": [[codes] x4]},
     "ops": [["act", seat, action] | ["penalty", seat, mode], ...],      # what replay() re-applies
     "events": [{"seat": s, "action": "discard W5"} | {"draw": s, "tile": "B3", "from": "front|back"}
                | {"flower": s, "tile": "H2"} | {"claim": s, "action": "pung"} | {"end": ...}, ...],
     "result": mjenv.game.result(...) (or None if the hand is not over)}

A hand whose wall is given rather than shuffled from the seed (a Botzone ``walltiles`` wall, a human log's
rebuilt wall; :func:`mjenv.game.reset_wall`) carries ``"wall_given": true``: then ``"wall"`` is the wall itself
(in the state's order: Botzone ``walltiles`` order under ``rules.private_walls``), ``"seed"`` is only a label
and ``"dice"`` is ``[0, 0]``. Records without the key are seeded as before.

``ops`` is the input of :func:`replay`; ``events`` are derived from the states for readers.
:func:`replay` rebuilds the state after every op and checks the wall against the log. It also reads the older
``"mjenv-hand-v1"`` logs (``"min_fan"`` instead of ``"rules"``).
"""

from __future__ import annotations

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.rules import PENALTY_NAMES, RuleConfig
from mjenv.tiles import BOTZONE_CODES, counts_to_tiles, tile_from_botzone

LOG_FORMAT = "mjenv-hand-v2"
OLD_FORMATS = ("mjenv-hand-v1",)


def _apply(state: np.ndarray, op: list, rewards: np.ndarray) -> int:
    kind, seat, value = op
    if kind == "act":
        if int(state[G.CUR]) != seat:
            raise ValueError(f"log op {op}: seat {seat} is not the seat to act ({int(state[G.CUR])})")
        return int(G.step_kernel(state, int(value), rewards, *G.win_tables()))
    if kind == "penalty":
        G.penalize_kernel(state, int(seat), int(value), rewards)
        return 0
    raise ValueError(f"unknown log op {op!r}")


def _diff_events(before: np.ndarray, after: np.ndarray, op: list) -> list[dict]:
    ev: list[dict] = []
    kind, seat, value = op
    if kind == "act":
        name = A.action_to_str(int(value))
        if before[G.PHASE] == G.PH_TURN:
            ev.append({"seat": seat, "action": name})
        elif name != "pass":
            ev.append({"claim": seat, "action": name})
    else:
        ev.append({"penalty": seat, "mode": PENALTY_NAMES[int(value)]})
    for s in range(4):
        new_bits = int(after[G.FLOWER_BITS + s]) & ~int(before[G.FLOWER_BITS + s])
        for f in range(8):
            if new_bits >> f & 1:
                ev.append({"flower": s, "tile": BOTZONE_CODES[34 + f]})
    if after[G.N_DRAWS] > before[G.N_DRAWS]:
        s = int(after[G.TURN])
        src = "front" if after[G.DRAW_KIND] == G.KIND_NORMAL else "back"
        ev.append({"draw": s, "tile": BOTZONE_CODES[int(after[G.DRAWN])], "from": src})
    if after[G.PHASE] == G.PH_OVER and before[G.PHASE] != G.PH_OVER:
        ev.append(
            {
                "end": G.result(after)["win_type"],
                "winner": int(after[G.WINNER]),
                "payments": [int(x) for x in after[G.SCORES : G.SCORES + 4]],
            }
        )
    return ev


def make_log(
    seed: int, dealer: int, prevalent: int, rules: RuleConfig | None, ops: list, *, wall=None
) -> dict:
    """Build the full JSON log of a hand from its setup and the ops applied (replaying them).

    ``wall`` (tile ids, as :func:`mjenv.game.reset_wall` takes them): the hand's given wall instead of the one
    shuffled from ``seed``; the log then carries ``"wall_given": true``.
    """
    rules = RuleConfig() if rules is None else rules
    st = G.new_state()
    if wall is None:
        G.reset(st, seed, dealer, prevalent, rules)
    else:
        G.reset_wall(st, wall, dealer, prevalent, rules)
    codes = [BOTZONE_CODES[int(t)] for t in st[G.WALL : G.WALL + rules.num_tiles]]
    deal = {
        "hands": [[BOTZONE_CODES[t] for t in counts_to_tiles(G.seat_hand(st, s))] for s in range(4)],
        "flowers": [
            [BOTZONE_CODES[34 + f] for f in range(8) if int(st[G.FLOWER_BITS + s]) >> f & 1] for s in range(4)
        ],
    }
    events: list[dict] = []
    rewards = np.zeros(4, np.float32)
    for op in ops:
        before = st.copy()
        if _apply(st, op, rewards) != 0:
            raise ValueError(f"log op {op} was rejected by the engine")
        events.extend(_diff_events(before, st, op))
    log = {
        "format": LOG_FORMAT,
        "seed": int(seed),
        "dealer": int(dealer),
        "prevalent_wind": int(prevalent),
        "rules": rules.to_dict(),
        "dice": [int(st[G.DICE]) // 10, int(st[G.DICE]) % 10],
        "wall": codes,
        "deal": deal,
        "ops": [list(op) for op in ops],
        "events": events,
        "result": G.result(st) if st[G.PHASE] == G.PH_OVER else None,
    }
    if wall is not None:
        log["wall_given"] = True
    return log


def log_rules(log: dict) -> RuleConfig:
    """The :class:`~mjenv.rules.RuleConfig` a log was played under (``ValueError`` if it is not a log)."""
    if not isinstance(log, dict) or log.get("format") not in (LOG_FORMAT, *OLD_FORMATS):
        raise ValueError(f"not a {LOG_FORMAT} log")
    if log["format"] in OLD_FORMATS:
        return RuleConfig(min_fan=int(log["min_fan"]))
    return RuleConfig.from_dict(log["rules"])


def replay(log: dict) -> list[np.ndarray]:
    """The states of a logged hand: after the deal, then after every op (copies, ``int32[STATE_SIZE]``).

    Raises ValueError if the log is malformed, its wall does not match its seed (or, with ``"wall_given"``, is
    not a full wall), or an op is rejected.
    """
    rules = log_rules(log)
    st = G.new_state()
    wall = [tile_from_botzone(c) for c in log["wall"]]
    if log.get("wall_given", False) is True:
        G.reset_wall(st, wall, int(log["dealer"]), int(log["prevalent_wind"]), rules)
    else:
        G.reset(st, int(log["seed"]), int(log["dealer"]), int(log["prevalent_wind"]), rules)
        if wall != [int(t) for t in st[G.WALL : G.WALL + rules.num_tiles]]:
            raise ValueError("the logged wall does not match the wall of the logged seed")
    states = [st.copy()]
    rewards = np.zeros(4, np.float32)
    for op in log["ops"]:
        if _apply(st, list(op), rewards) != 0:
            raise ValueError(f"log op {op} was rejected by the engine")
        states.append(st.copy())
    return states
