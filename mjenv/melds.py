"""Fixed melds (副露 and concealed kongs) packed into one ``int16``.

Rules
-----
A meld is a chow (吃, three consecutive suited tiles, claimed only from the previous player), a pung (碰, three
identical tiles claimed from a discard) or a kong (杠: exposed 明杠 from a discard, added 加杠 onto an exposed
pung, or concealed 暗杠 from the hand).

Specification in mjenv
----------------------
Bit layout of a packed meld (the CMOH ``pack_t`` idea)::

    bits 0-5   tile   0..33; a chow is stored by its MIDDLE tile
    bits 6-7   offer  chow: which tile of the chow was claimed, 1 = lowest, 2 = middle, 3 = highest
                      pung/kong: relative seat of the player who offered it, 1 = 上家 (previous player),
                      2 = 对家 (across), 3 = 下家 (next player); 0 = concealed (only for a concealed kong)
    bits 8-9   kind   1 = chow, 2 = pung, 3 = kong
    bit 10     added  1 for a kong made by adding the 4th tile to an exposed pung (加杠)

``0`` is the "no meld" sentinel. The offer convention equals the reference calculator's
``("CHI"/"PENG"/"GANG", tile, offer)`` pack tuples, so :func:`to_pack` / :func:`from_pack` are exact.
"""

from __future__ import annotations

import numpy as np

from mjenv._jit import njit
from mjenv.tiles import NUM_TILE_TYPES, tile_from_botzone, tile_to_botzone

CHOW, PUNG, KONG = 1, 2, 3
KIND_NAMES = {CHOW: "CHI", PUNG: "PENG", KONG: "GANG"}
_KIND_FROM_NAME = {v: k for k, v in KIND_NAMES.items()}
MAX_MELDS = 4
NO_MELD = 0


@njit
def meld_kind(meld):
    """Kind of packed ``meld``: CHOW, PUNG, KONG (0 for ``NO_MELD``). Kernels and Python alike."""
    return (meld >> 8) & 3


@njit
def meld_tile(meld):
    """Tile of packed ``meld`` (a chow's MIDDLE tile)."""
    return meld & 63


@njit
def meld_offer(meld):
    """Offer of packed ``meld``: the claimed tile's position (chow) or the offering seat (1..3, 0 concealed)."""
    return (meld >> 6) & 3


@njit
def meld_added(meld):
    """1 for an added kong (加杠), else 0."""
    return (meld >> 10) & 1


@njit
def pack_meld(kind, tile, offer, added):
    """Packed meld from its fields, unchecked (kernels; Python code uses :func:`pack`, which validates)."""
    return (added << 10) | (kind << 8) | (offer << 6) | tile


# the kernels' Python functions (``py_func``; under NUMBA_DISABLE_JIT the kernels are those functions)
_py_pack_meld, _py_meld_kind, _py_meld_tile, _py_meld_offer, _py_meld_added = (
    getattr(k, "py_func", k) for k in (pack_meld, meld_kind, meld_tile, meld_offer, meld_added)
)


def pack(kind: int, tile: int, offer: int, added: bool = False) -> int:
    """Pack a meld into an int. Validates kind, tile, offer (see the module docstring)."""
    if kind not in (CHOW, PUNG, KONG):
        raise ValueError(f"meld kind must be CHOW(1), PUNG(2) or KONG(3), got {kind!r}")
    if (
        isinstance(tile, bool)
        or not isinstance(tile, (int, np.integer))
        or not 0 <= int(tile) < NUM_TILE_TYPES
    ):
        raise ValueError(f"meld tile must be a tile id 0..33, got {tile!r}")
    tile = int(tile)
    if not isinstance(offer, (int, np.integer)) or not 0 <= int(offer) <= 3:
        raise ValueError(f"meld offer must be 0..3, got {offer!r}")
    if kind == CHOW:
        if tile >= 27 or tile % 9 in (0, 8):
            raise ValueError(
                f"a chow is stored by its middle tile, which must be a suited 2..8, got {tile_to_botzone(tile)}"
            )
        if offer == 0:
            raise ValueError("a chow's offer must be 1..3 (the claimed tile's position)")
    if kind == PUNG and offer == 0:
        raise ValueError("a pung is always claimed: offer must be 1..3")
    if added and (kind != KONG or offer == 0):
        raise ValueError("only an exposed kong can be an added kong")
    return _py_pack_meld(kind, tile, int(offer), int(added))


# The Python accessors run the kernels' own code as plain Python (``py_func``: no dispatch, no compile).
def kind_of(meld: int) -> int:
    """:func:`meld_kind` of a Python int."""
    return _py_meld_kind(int(meld))


def tile_of(meld: int) -> int:
    """:func:`meld_tile` of a Python int."""
    return _py_meld_tile(int(meld))


def offer_of(meld: int) -> int:
    """:func:`meld_offer` of a Python int."""
    return _py_meld_offer(int(meld))


def is_added(meld: int) -> bool:
    """:func:`meld_added` of a Python int, as a bool."""
    return bool(_py_meld_added(int(meld)))


def is_concealed(meld: int) -> bool:
    """True for a concealed kong (the only concealed fixed meld)."""
    return kind_of(meld) == KONG and offer_of(meld) == 0


def meld_tiles(meld: int) -> list[int]:
    """The tile ids of a meld (3 for chow/pung, 4 for kong)."""
    k, t = kind_of(meld), tile_of(meld)
    if k == CHOW:
        return [t - 1, t, t + 1]
    if k == PUNG:
        return [t] * 3
    if k == KONG:
        return [t] * 4
    raise ValueError(f"not a packed meld: {meld!r}")


def to_pack(meld: int) -> tuple[str, str, int]:
    """Reference-calculator pack tuple, e.g. ``("CHI", "W2", 1)``."""
    return (KIND_NAMES[kind_of(meld)], tile_to_botzone(tile_of(meld)), offer_of(meld))


def from_pack(p: tuple[str, str, int]) -> int:
    """Inverse of :func:`to_pack` (a kong claimed as added cannot be told apart and is packed as exposed)."""
    if not isinstance(p, tuple) or len(p) != 3:
        raise TypeError(f"a pack must be a tuple (kind, tile, offer), got {p!r}")
    kind, code, offer = p
    if kind not in _KIND_FROM_NAME:
        raise ValueError(f"pack kind must be 'CHI', 'PENG' or 'GANG', got {kind!r}")
    return pack(_KIND_FROM_NAME[kind], tile_from_botzone(code), offer)
