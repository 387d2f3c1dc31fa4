"""Game records for the viewer tests, played by a scripted policy on the engine (no hand-made states).

The policy wins when it can, declares any legal kong, pungs when it can and otherwise picks a random legal
action (seeded by the hand's seed). The seeds below were found by searching seeds 0..2999 with it; the tests
assert that each record really has what it is chosen for.
"""

from __future__ import annotations

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.record import make_log

SEED_DRAW = 0  # an exhaustive draw with flowers in play
SEED_ALL_KONGS = 34  # exposed, concealed and added kongs in one hand
SEED_ROBBED = 100  # a win robbing an added kong
SEED_ILLEGAL = 1  # a penalty (terminate) after 20 legal actions


def play_ops(seed: int, stop_after: int | None = None) -> tuple[np.ndarray, list]:
    st = G.new_state()
    G.reset(st, seed)
    rng = np.random.default_rng(seed)
    mask = np.zeros(A.NUM_ACTIONS, np.bool_)
    ops: list = []
    while st[G.PHASE] != G.PH_OVER and (stop_after is None or len(ops) < stop_after):
        seat = int(st[G.CUR])
        G.legal_mask_kernel(st, seat, mask)
        legal = np.flatnonzero(mask)
        pref = (
            [a for a in legal if a == A.WIN]
            or [a for a in legal if A.KONG <= a < A.WIN]
            or [a for a in legal if a == A.PUNG]
        )
        a = int(pref[0]) if pref else int(rng.choice(legal))
        G.step(st, a)
        ops.append(["act", seat, a])
    return st, ops


def record(seed: int) -> dict:
    """The record of hand ``seed`` played by the scripted policy (the illegal seed ends with a penalty)."""
    if seed == SEED_ILLEGAL:
        st, ops = play_ops(seed, stop_after=20)
        ops.append(["penalty", int(st[G.CUR]), 0])
    else:
        _, ops = play_ops(seed)
    return make_log(seed, 0, 0, None, ops)


def with_info(log: dict) -> dict:
    """``log`` with hand-made policy info on every decision: the chosen action at 0.6 (by name), the rest spread
    over other ids; the value is the op index / 100. Every third entry is null, every fifth uses a 109-list."""
    info = []
    for i, (_, _, a) in enumerate(log["ops"]):
        if i % 3 == 2:
            info.append(None)
        elif i % 5 == 0:
            probs = [0.0] * A.NUM_ACTIONS
            probs[a] = 0.6
            probs[(a + 1) % A.NUM_ACTIONS] = 0.3
            probs[(a + 2) % A.NUM_ACTIONS] = 0.1
            info.append({"probs": probs, "value": i / 100})
        else:
            info.append(
                {
                    "probs": {
                        A.action_to_str(a): 0.6,
                        str((a + 7) % A.NUM_ACTIONS): 0.25,
                        A.action_to_str((a + 3) % A.NUM_ACTIONS): 0.15,
                    },
                    "value": i / 100,
                }
            )
    return {**log, "info": info}
