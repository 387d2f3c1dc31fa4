"""mjenv's 109 actions <-> the 235-action layout of the Botzone course agents (both directions).

Rules
-----
The course agents (the ``FeatureAgent`` of the PKU "Chinese Standard Mahjong" course code, ``feature.py``, as
kept in its many public forks) use one flat ``Discrete(235)`` layout::

    offset  size  name     meaning
    0       1     Pass
    1       1     Hu       any win (self-drawn, on a discard, robbing a kong)
    2       34    Play     discard tile t
    36      63    Chi      suit (W T B) * 21 + (middle number - 2) * 3 + i: the chow with that middle tile
                           (2..8), the claimed tile being its lowest (i = 0), middle (1) or highest (2) tile
    99      34    Peng     pung of tile t (the discard on offer)
    133     34    Gang     exposed kong of tile t (the discard on offer)
    167     34    AnGang   concealed kong of tile t
    201     34    BuGang   added kong of tile t
    235           COURSE_ACTIONS

Tile order is the course's ``TILE_LIST`` (W1..W9, T1..T9, B1..B9, F1..F4, J1..J3), which is exactly mjenv's tile
ids (:data:`mjenv.tiles.BOTZONE_CODES`), so tile ``t`` is the same number in both layouts.

Specification in mjenv
----------------------
mjenv's chow, pung and exposed-kong actions do not name a tile (the tile on offer is implied, ``CHOW + i`` with
``i`` the claimed tile's place, as in the course layout); the course layout names it. So mjenv -> course needs
the tile on offer (``offer_tile``, the observation's ``offer_tile``) for those actions, and course -> mjenv
returns the implied offer tile with the action. Everything else maps one to one. The functions check their
input and raise ``ValueError``/``TypeError`` naming the problem.
"""

from __future__ import annotations

import numpy as np

from mjenv import actions as A
from mjenv.tiles import BOTZONE_CODES, NUM_TILE_TYPES

__all__ = [
    "COURSE_ACTIONS",
    "COURSE_PASS",
    "COURSE_HU",
    "COURSE_PLAY",
    "COURSE_CHI",
    "COURSE_PENG",
    "COURSE_GANG",
    "COURSE_ANGANG",
    "COURSE_BUGANG",
    "course_action_name",
    "to_course",
    "from_course",
    "mask_to_course",
    "mask_from_course",
    "to_course_array",
]

COURSE_PASS = 0
COURSE_HU = 1
COURSE_PLAY = 2
COURSE_CHI = 36
COURSE_PENG = 99
COURSE_GANG = 133
COURSE_ANGANG = 167
COURSE_BUGANG = 201
COURSE_ACTIONS = 235

_SUIT = "WTB"


def _int(name: str, v: object, lo: int, hi: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if not lo <= int(v) <= hi:
        raise ValueError(f"{name} must be in {lo}..{hi}, got {int(v)}")
    return int(v)


def _chi_index(tile: int, pos: int) -> int:
    """The course Chi index of claiming suit tile ``tile`` as the ``pos``-th (0 low, 1 mid, 2 high) tile of a
    chow, or -1 when no such chow exists."""
    if tile >= 27:
        return -1
    suit, num = divmod(tile, 9)  # num 0..8 for 1..9
    mid = num - pos + 1  # 0-based number of the middle tile
    if not 1 <= mid <= 7:
        return -1
    return COURSE_CHI + suit * 21 + (mid - 1) * 3 + pos


def course_action_name(index: int) -> str:
    """The course agent's response text of a course action (``Pass``, ``Hu``, ``Play W1``, ``Chi T5 2``
    (middle tile, claimed position), ``Peng B3``, ``Gang F1``, ``AnGang J2``, ``BuGang W9``)."""
    i = _int("course action", index, 0, COURSE_ACTIONS - 1)
    if i == COURSE_PASS:
        return "Pass"
    if i == COURSE_HU:
        return "Hu"
    if i < COURSE_CHI:
        return "Play " + BOTZONE_CODES[i - COURSE_PLAY]
    if i < COURSE_PENG:
        k, pos = divmod(i - COURSE_CHI, 3)
        return f"Chi {_SUIT[k // 7]}{k % 7 + 2} {pos}"
    for off, name in (
        (COURSE_BUGANG, "BuGang"),
        (COURSE_ANGANG, "AnGang"),
        (COURSE_GANG, "Gang"),
        (COURSE_PENG, "Peng"),
    ):
        if i >= off:
            return f"{name} {BOTZONE_CODES[i - off]}"
    raise AssertionError(i)


def to_course(action: int, offer_tile: int = -1) -> int:
    """The course index of mjenv ``action``. ``offer_tile`` (the tile on offer, 0..33) is needed for a chow,
    pung or exposed kong; a chow that cannot exist with that tile is a ``ValueError``."""
    a = _int("action", action, 0, A.NUM_ACTIONS - 1)
    if a < A.CHOW:
        return COURSE_PLAY + a - A.DISCARD
    if a == A.PASS:
        return COURSE_PASS
    if a == A.WIN:
        return COURSE_HU
    if A.CONCEALED_KONG <= a < A.ADDED_KONG:
        return COURSE_ANGANG + a - A.CONCEALED_KONG
    if A.ADDED_KONG <= a < A.WIN:
        return COURSE_BUGANG + a - A.ADDED_KONG
    if isinstance(offer_tile, (int, np.integer)) and not isinstance(offer_tile, bool) and offer_tile == -1:
        raise ValueError(f"action {A.action_to_str(a)!r} needs the tile on offer (offer_tile)")
    t = _int("offer_tile", offer_tile, 0, NUM_TILE_TYPES - 1)
    if a == A.PUNG:
        return COURSE_PENG + t
    if a == A.KONG:
        return COURSE_GANG + t
    c = _chi_index(t, a - A.CHOW)
    if c < 0:
        raise ValueError(f"no chow {A.action_to_str(a)!r} on {BOTZONE_CODES[t]}")
    return c


def from_course(index: int) -> tuple[int, int]:
    """``(mjenv action, offer tile)`` of a course index; the offer tile is the claimed tile that a Chi, Peng or
    Gang implies, -1 for the other actions."""
    i = _int("course action", index, 0, COURSE_ACTIONS - 1)
    if i == COURSE_PASS:
        return A.PASS, -1
    if i == COURSE_HU:
        return A.WIN, -1
    if i < COURSE_CHI:
        return A.DISCARD + i - COURSE_PLAY, -1
    if i < COURSE_PENG:
        k, pos = divmod(i - COURSE_CHI, 3)
        suit, mid = divmod(k, 7)  # mid 0..6 for middle numbers 2..8
        return A.CHOW + pos, suit * 9 + mid + 1 + pos - 1
    if i < COURSE_GANG:
        return A.PUNG, i - COURSE_PENG
    if i < COURSE_ANGANG:
        return A.KONG, i - COURSE_GANG
    if i < COURSE_BUGANG:
        return A.CONCEALED_KONG + i - COURSE_ANGANG, -1
    return A.ADDED_KONG + i - COURSE_BUGANG, -1


def _check_mask(mask: object, n: int, name: str) -> np.ndarray:
    m = np.asarray(mask)
    if m.shape[-1:] != (n,):
        raise ValueError(f"{name} must end in dimension {n}, got shape {m.shape}")
    return m.astype(np.bool_)


def mask_to_course(mask: object, offer_tile: int = -1) -> np.ndarray:
    """``bool[235]`` course mask of an mjenv legal mask (``bool[109]``); ``offer_tile`` as in :func:`to_course`
    (needed when a chow, pung or exposed kong is legal)."""
    m = _check_mask(mask, A.NUM_ACTIONS, "mask")
    if m.ndim != 1:
        raise ValueError(f"mask must be 1-d, got shape {m.shape}")
    out = np.zeros(COURSE_ACTIONS, np.bool_)
    for a in np.flatnonzero(m):
        out[to_course(int(a), offer_tile)] = True
    return out


def mask_from_course(mask: object) -> tuple[np.ndarray, int]:
    """``(bool[109] mjenv mask, offer tile)`` of a course mask; the claims in it must all be on one tile
    (``ValueError`` otherwise); the offer tile is -1 when no claim is legal."""
    m = _check_mask(mask, COURSE_ACTIONS, "course mask")
    if m.ndim != 1:
        raise ValueError(f"course mask must be 1-d, got shape {m.shape}")
    out = np.zeros(A.NUM_ACTIONS, np.bool_)
    offer = -1
    for i in np.flatnonzero(m):
        a, t = from_course(int(i))
        if t >= 0:
            if offer >= 0 and t != offer:
                raise ValueError(
                    f"course mask claims two different tiles: {BOTZONE_CODES[offer]} and "
                    f"{BOTZONE_CODES[t]} ({course_action_name(int(i))})"
                )
            offer = t
        out[a] = True
    return out, offer


# (action, offer tile + 1) -> course index; -1 where impossible (vectorised mapping)
_TABLE = np.full((A.NUM_ACTIONS, NUM_TILE_TYPES + 1), -1, np.int16)
for _a in range(A.NUM_ACTIONS):
    for _t in range(-1, NUM_TILE_TYPES):
        try:
            _TABLE[_a, _t + 1] = to_course(_a, _t)
        except ValueError:
            pass
_TABLE.setflags(write=False)


def to_course_array(actions: object, offer_tiles: object) -> np.ndarray:
    """:func:`to_course` over arrays (``offer_tiles`` -1 where there is none); ``int16``. Raises ``ValueError``
    naming the first pair that has no course index."""
    a = np.asarray(actions)
    t = np.asarray(offer_tiles)
    if not np.issubdtype(a.dtype, np.integer) or not np.issubdtype(t.dtype, np.integer):
        raise TypeError("actions and offer_tiles must be integer arrays")
    a, t = np.broadcast_arrays(a, t)
    bad = (a < 0) | (a >= A.NUM_ACTIONS) | (t < -1) | (t >= NUM_TILE_TYPES)
    if bad.any():
        i = np.flatnonzero(bad.ravel())[0]
        raise ValueError(f"entry {i}: action {a.ravel()[i]} / offer tile {t.ravel()[i]} out of range")
    out = _TABLE[a, t + 1]
    if (out < 0).any():
        i = np.flatnonzero(out.ravel() < 0)[0]
        raise ValueError(
            f"entry {i}: action {A.action_to_str(int(a.ravel()[i]))!r} has no course index with "
            f"offer tile {int(t.ravel()[i])}"
        )
    return out
