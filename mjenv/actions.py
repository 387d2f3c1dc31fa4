"""The action space of the MCR table: one fixed ``Discrete(NUM_ACTIONS)`` layout.

Rules
-----
MCR (``docs/rules.md``, "A turn" and "Claims on a discard"): on a turn the player discards, declares a
concealed or an added kong, or declares a self-drawn win; on another player's discard a player may claim a win,
a pung, an exposed kong or (only the next player) a chow in one of three positions, or pass; on an added kong
the other players may rob it for a win or pass.

Specification in mjenv
----------------------
One flat layout serves every decision; the legal mask says which entries apply now::

    offset  size  name            meaning
    0       34    DISCARD + t     discard tile t (0..33)
    34      3     CHOW + p        chow the offered tile as the lowest (p=0), middle (1) or highest (2) tile
    37      1     PUNG            pung the offered tile
    38      1     KONG            exposed kong (大明杠) on the offered tile (needs a concealed pung)
    39      34    CONCEALED_KONG  concealed kong (暗杠) of tile t (4 in hand)
    73      34    ADDED_KONG      added kong (加杠) of tile t onto the player's exposed pung of t
    107     1     WIN             self-drawn win, win on a discard, or robbing an added kong
    108     1     PASS            decline a claim (only in a claim or robbing window)
    109           NUM_ACTIONS

The chow position is the claimed tile's place in the run, so ``CHOW + 0`` on 3m melds 345m (stored by its
middle tile 4m with offer 1). Concealed and added kongs keep separate blocks (rather than one "kong t" block)
so that an action string alone says which kong it is, which the logs and goldens rely on.
"""

from __future__ import annotations

import operator

import numpy as np

from mjenv.tiles import NUM_TILE_TYPES, tile_to_botzone

DISCARD = 0  # 34: discard tile t
CHOW = DISCARD + NUM_TILE_TYPES  # 3: chow, claimed tile lowest / middle / highest
PUNG = CHOW + 3  # 1
KONG = PUNG + 1  # 1: exposed kong on a discard
CONCEALED_KONG = KONG + 1  # 34
ADDED_KONG = CONCEALED_KONG + NUM_TILE_TYPES  # 34
WIN = ADDED_KONG + NUM_TILE_TYPES  # 1
PASS = WIN + 1  # 1
NUM_ACTIONS = PASS + 1  # 109

_CHOW_NAMES = ("low", "mid", "high")


def _check_action(action: object) -> int:
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise TypeError(f"action must be an int, got {type(action).__name__}")
    a = int(action)
    if not 0 <= a < NUM_ACTIONS:
        raise ValueError(f"action {a} out of range 0..{NUM_ACTIONS - 1}")
    return a


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def as_action(action: object) -> int:
    """``action`` as a Python int, for the fronts' ``step``: a Python or numpy integer, a 0-d integer array (what
    ``tensor.numpy()`` gives) or any other integer scalar (``operator.index``, e.g. a 0-d integer torch tensor).

    Whether the integer is a legal action is the rules' business (an integer outside 0..NUM_ACTIONS-1 is an
    illegal action); a value of another type is a caller's bug, never a move: ``TypeError`` for a bool, str,
    float, None or a sequence (also of one element), ``ValueError`` for an integer outside int64.
    """
    if isinstance(action, (bool, np.bool_)) or str(getattr(action, "dtype", "")).endswith("bool"):
        raise TypeError(f"an action must be an integer, got a bool ({action!r})")
    if getattr(action, "ndim", 0) != 0:
        shape = tuple(getattr(action, "shape", ()))
        raise TypeError(f"an action must be a scalar integer, got {type(action).__name__} of shape {shape}")
    try:
        a = operator.index(action)
    except TypeError:
        raise TypeError(f"an action must be an integer, got {type(action).__name__} ({action!r})") from None
    if not _INT64_MIN <= a <= _INT64_MAX:
        raise ValueError(f"action {a} is out of range: actions are 0..{NUM_ACTIONS - 1}")
    return a


def action_to_str(action: int) -> str:
    """A short readable name of an action id.

    >>> action_to_str(0), action_to_str(35), action_to_str(WIN), action_to_str(CONCEALED_KONG + 27)
    ('discard W1', 'chow mid', 'win', 'concealed_kong F1')
    """
    a = _check_action(action)
    if a < CHOW:
        return f"discard {tile_to_botzone(a - DISCARD)}"
    if a < PUNG:
        return f"chow {_CHOW_NAMES[a - CHOW]}"
    if a == PUNG:
        return "pung"
    if a == KONG:
        return "kong"
    if a < ADDED_KONG:
        return f"concealed_kong {tile_to_botzone(a - CONCEALED_KONG)}"
    if a < WIN:
        return f"added_kong {tile_to_botzone(a - ADDED_KONG)}"
    return "win" if a == WIN else "pass"


def str_to_action(text: str) -> int:
    """Inverse of :func:`action_to_str`.

    >>> str_to_action("discard J3"), str_to_action("pass")
    (33, 108)
    """
    if not isinstance(text, str):
        raise TypeError(f"action string must be a str, got {type(text).__name__}")
    try:
        return _FROM_STR[text.strip()]
    except KeyError:
        raise ValueError(f"unknown action string {text!r}") from None


_FROM_STR = {action_to_str(a): a for a in range(NUM_ACTIONS)}
