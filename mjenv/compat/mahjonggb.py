"""Drop-in replacement for PyMahjongGB 1.4.0 (``import MahjongGB``).

Replace ``from MahjongGB import ...`` with ``from mjenv.compat.mahjonggb import ...`` and nothing changes:
same functions, keyword/positional signatures, return values (order included) and ``TypeError`` messages,
established by calling the reference as a black box (``scripts/diff_shanten.py``, ``scripts/diff_fans.py``).

Part 1: shanten
===============

Rules
-----
Shanten and useful tiles of the five MCR winning shapes as ``mjenv.hand`` defines them (block counting),
with PyMahjongGB's call conventions.

Specification in mjenv
----------------------
``MahjongShanten(pack, hand) -> int``, ``RegularShanten(hand)``, ``SevenPairsShanten(hand)``,
``ThirteenOrphansShanten(hand)``, ``HonorsAndKnittedTilesShanten(hand)`` and ``KnittedStraightShanten(hand)``
``-> (shanten, useful)`` with ``useful`` a tuple of Botzone codes in tile order, exactly as the reference
(same keyword/positional signatures, same ``TypeError`` messages, checks in the same order), established by
calling the reference as a black box:

* ``pack`` / ``hand`` must be tuples (``Param `pack` must be a tuple!``), packs tuples of tuples, hand tiles
  strings (``Param `hand` must be a tuple of strs!``); bad codes give ``ERROE_WRONG_TILE_CODE``,
  ``ERROE_WRONG_PACK_CODE`` and ``ERROE_WRONG_OFFER_CODE`` (offer outside 0..3), sic.
* The standing hand must hold 1, 4, 7, 10 or 13 tiles (``ERROR_INVALID_HAND_OR_PACK`` for ``MahjongShanten``,
  ``ERROR_INVALID_HAND`` for the others); seven pairs, thirteen orphans and honours-and-knitted need 13 tiles,
  the knitted straight 10 or 13. The packs are validated but otherwise ignored (the reference ignores them too:
  ``MahjongShanten`` is the minimum over the shapes that the hand size allows).
* Useful tiles: a tile held four times in the hand is useful only when the hand is ready (regular shape).

Known differences (deliberate): the reference accepts more than four copies of a tile and then returns
values of an unspecified algorithm; here any count above 4 raises ``TypeError('ERROR_TILE_COUNT_GREATER_THAN_4')``.
More than four packs crash the reference (segfault with six); here they raise ``ERROR_INVALID_HAND_OR_PACK``.

Part 2: the fan calculator
==========================

Rules
-----
See :mod:`mjenv.fans` (MCR fan scoring as the reference calculator reads it).

Specification in mjenv
----------------------
``MahjongFanCalculator`` takes the same keyword arguments, returns the same tuples in the same order and
raises ``TypeError`` with the same messages as PyMahjongGB 1.4.0, found by black-box experiment
(``scripts/diff_fans.py``). Deliberate differences: a hand or pack holding more than 4 copies of a tile
raises ``TypeError('ERROR_TILE_COUNT_GREATER_THAN_4')`` (the reference scores such impossible hands with
wrapped-around counts), and a ``CHI`` whose tile cannot be the middle of a chow (``W1``, ``W9``, honours)
raises ``TypeError('ERROE_WRONG_TILE_CODE')`` (the reference reads nonexistent tiles).
"""

from __future__ import annotations

import operator
import threading

import numpy as np

from mjenv import fans as _fans
from mjenv import hand as _hand
from mjenv._jit import njit
from mjenv.melds import pack_meld
from mjenv.tiles import BOTZONE_CODES

__all__ = [
    "MahjongFanCalculator",
    "HonorsAndKnittedTilesShanten",
    "KnittedStraightShanten",
    "MahjongShanten",
    "RegularShanten",
    "SevenPairsShanten",
    "ThirteenOrphansShanten",
]

# --- shared parsing helpers (reused by the fan calculator) -------------------------------------------------

#: tile code -> tile id for the 34 playable tiles (flowers are not valid hand/pack tiles)
TILE_ID = {code: i for i, code in enumerate(BOTZONE_CODES[:34])}
PACK_KINDS = ("CHI", "PENG", "GANG")
_BITS = 4  # bits per tile in the packed words below
_PER_WORD = 15  # tiles per int64 word (60 bits)
#: tile code -> its count unit in the packed ``hand`` integer (``4 * tile`` bits up)
_UNIT = {code: 1 << (_BITS * i) for code, i in TILE_ID.items()}
_UNIT_GET = _UNIT.__getitem__
_MASK60 = (1 << 60) - 1

ERR_WRONG_TILE_CODE = "ERROE_WRONG_TILE_CODE"
ERR_WRONG_PACK_CODE = "ERROE_WRONG_PACK_CODE"
ERR_WRONG_OFFER_CODE = "ERROE_WRONG_OFFER_CODE"
ERR_INVALID_HAND = "ERROR_INVALID_HAND"
ERR_INVALID_HAND_OR_PACK = "ERROR_INVALID_HAND_OR_PACK"
ERR_TILE_COUNT = "ERROR_TILE_COUNT_GREATER_THAN_4"
_VALID_SIZES = (1, 4, 7, 10, 13)


def _parse_args(name_args: tuple[str, ...], args: tuple, kwargs: dict) -> tuple:
    """CPython ``PyArg_ParseTupleAndKeywords`` behaviour for all-required object parameters."""
    nargs, nkw = len(args), len(kwargs)
    n = len(name_args)
    if nargs + nkw > n:
        raise TypeError(
            f"function takes at most {n} {'keyword ' if nargs == 0 else ''}argument{'' if n == 1 else 's'} "
            f"({nargs + nkw} given)"
        )
    out = list(args)
    for i in range(nargs, n):
        key = name_args[i]
        if key not in kwargs:
            raise TypeError(f"function missing required argument '{key}' (pos {i + 1})")
        out.append(kwargs[key])
    for key in kwargs:
        if key not in name_args:
            raise TypeError(f"'{key}' is an invalid keyword argument for this function")
        if name_args.index(key) < nargs:
            raise TypeError(
                f"argument for function given by name ('{key}') and position ({name_args.index(key) + 1})"
            )
    return tuple(out)


def _parse_int(x) -> int:
    """The ``"i"`` converter of ``PyArg_ParseTuple``."""
    if isinstance(x, (float, str, bytes)) or not hasattr(type(x), "__index__"):
        raise TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
    v = x.__index__()
    if v > 2**31 - 1:
        raise OverflowError("signed integer is greater than maximum")
    if v < -(2**31):
        raise OverflowError("signed integer is less than minimum")
    return v


def _parse_str(x, pos: int) -> str:
    """The ``"s"`` converter of ``PyArg_ParseTuple``."""
    if not isinstance(x, str):
        raise TypeError(f"argument {pos} must be str, not {type(x).__name__}")
    if "\0" in x:
        raise ValueError("embedded null character")
    return x


def _parse_pack(pack) -> list[tuple[int, int, int]]:
    """Validate a reference pack tuple; returns ``[(kind 1..3, tile id, offer)]`` (kind 1 CHI, 2 PENG, 3 GANG)."""
    if not isinstance(pack, tuple):
        raise TypeError("Param `pack` must be a tuple!")
    out = []
    for p in pack:
        if not isinstance(p, tuple):
            raise TypeError("Param `pack` must be a tuple of tuples!")
        if len(p) != 3:
            raise TypeError(f"function takes exactly 3 arguments ({len(p)} given)")
        kind = _parse_str(p[0], 1)
        code = _parse_str(p[1], 2)
        offer = _parse_int(p[2])
        if kind not in PACK_KINDS:
            raise TypeError(ERR_WRONG_PACK_CODE)
        if code not in TILE_ID:
            raise TypeError(ERR_WRONG_TILE_CODE)
        if not 0 <= offer <= 3:
            raise TypeError(ERR_WRONG_OFFER_CODE)
        out.append((PACK_KINDS.index(kind) + 1, TILE_ID[code], offer))
    return out


def _hand_error(hand) -> TypeError:
    """The error the reference raises for a hand whose fast parse failed."""
    if not isinstance(hand, tuple):
        return TypeError("Param `hand` must be a tuple!")
    for x in hand:
        if not isinstance(x, str):
            return TypeError("Param `hand` must be a tuple of strs!")
        if x not in TILE_ID:
            return TypeError(ERR_WRONG_TILE_CODE)
    return TypeError(ERR_INVALID_HAND)


def _packed_hand(hand) -> int:
    """Sum of the per-code units of the hand (4 bits per tile), or raise the reference's error."""
    if type(hand) is not tuple and not isinstance(hand, tuple):
        raise TypeError("Param `hand` must be a tuple!")
    try:
        return sum(map(_UNIT_GET, hand))
    except (KeyError, TypeError):
        raise _hand_error(hand) from None


def _parse_hand_and_pack(pack, hand) -> tuple[list, np.ndarray]:
    """Validate ``(pack, hand)`` in the reference's order; returns packs and ``int8[34]`` counts.

    Raises the reference's ``TypeError`` messages (hand size is not checked here).
    """
    packs = _parse_pack(pack)
    x = _packed_hand(hand)
    counts = np.zeros(34, dtype=np.int8)
    _unpack_counts(x & _MASK60, (x >> 60) & _MASK60, x >> 120, counts)
    return packs, counts


# --- kernels -------------------------------------------------------------------------------------------------


@njit
def _unpack_counts(w0, w1, w2, counts):
    """Decode three 60-bit words (15 tiles of 4 bits each) into ``counts``; return the max count."""
    mx = 0
    for t in range(34):
        if t < 15:
            c = (w0 >> (4 * t)) & 15
        elif t < 30:
            c = (w1 >> (4 * (t - 15))) & 15
        else:
            c = (w2 >> (4 * (t - 30))) & 15
        counts[t] = c
        mx = max(mx, c)
    return mx


@njit
def _k_mahjong_shanten(w0, w1, w2, n, suit, honor, suit_inc, honor_inc):
    """Overall shanten of a packed hand of n tiles, or ERR_INVALID_COUNTS."""
    counts = np.empty(34, dtype=np.int8)
    if _unpack_counts(w0, w1, w2, counts) > 4:
        return _hand.ERR_INVALID_COUNTS
    return _hand.min_shanten_kernel(counts, n, suit, honor, suit_inc, honor_inc)


@njit
def _k_shape(w0, w1, w2, n, shape, useful, suit, honor, knits, orphans, pow5):
    """Shanten of one shape with PyMahjongGB's useful tiles in ``useful`` (bool[34])."""
    counts = np.empty(34, dtype=np.int8)
    if _unpack_counts(w0, w1, w2, counts) > 4:
        return _hand.ERR_INVALID_COUNTS
    s = _hand.shape_shanten_kernel(counts, n, shape, suit, honor, knits, orphans, pow5)
    _hand.useful_kernel(counts, n, shape, s, counts, False, useful, suit, honor, knits, orphans, pow5)
    return s


# --- public functions ------------------------------------------------------------------------------------

_KNITS, _ORPHANS, _POW5 = _hand.KNITS, _hand.ORPHANS, _hand.POW5
_CODES = np.array(BOTZONE_CODES[:34], dtype=object)


def MahjongShanten(*args, **kwargs) -> int:
    """Shanten of a hand: ``MahjongShanten(pack, hand)``, the minimum over the shapes the hand size allows.

    Parameters
    ----------
    pack : tuple of (str, str, int)
        Fixed packs ``("CHI"/"PENG"/"GANG", tile, offer 0..3)``; validated, not used (as the reference).
    hand : tuple of str
        1, 4, 7, 10 or 13 standing tiles as Botzone codes.

    Returns
    -------
    int
        Shanten; 0 means ready.

    >>> MahjongShanten((), ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "T1", "T1", "T1", "T2"))
    0
    """
    if kwargs or len(args) != 2:
        pack, hand = _parse_args(("pack", "hand"), args, kwargs)
    else:
        pack, hand = args
    if pack:
        packs = _parse_pack(pack)
        if len(packs) > 4:
            x = _packed_hand(hand)
            raise TypeError(ERR_INVALID_HAND_OR_PACK)
    elif not isinstance(pack, tuple):
        raise TypeError("Param `pack` must be a tuple!")
    x = _packed_hand(hand)
    n = len(hand)
    if n not in _VALID_SIZES:
        raise TypeError(ERR_INVALID_HAND_OR_PACK)
    suit, honor, _, _ = _hand.load_tables()
    suit_inc, honor_inc = _hand.load_shanten_tables()
    s = _k_mahjong_shanten(x & _MASK60, (x >> 60) & _MASK60, x >> 120, n, suit, honor, suit_inc, honor_inc)
    if s <= _hand.ERR_INVALID_COUNTS:
        raise TypeError(ERR_TILE_COUNT)
    return int(s)


def _shape_call(shape: int, args: tuple, kwargs: dict, sizes: tuple[int, ...]):
    if kwargs or len(args) != 1:
        (hand,) = _parse_args(("hand",), args, kwargs)
    else:
        hand = args[0]
    x = _packed_hand(hand)
    n = len(hand)
    if n not in sizes:
        raise TypeError(ERR_INVALID_HAND)
    suit, honor, _, _ = _hand.load_tables()
    useful = np.empty(34, dtype=np.bool_)
    s = _k_shape(
        x & _MASK60, (x >> 60) & _MASK60, x >> 120, n, shape, useful, suit, honor, _KNITS, _ORPHANS, _POW5
    )
    if s <= _hand.ERR_INVALID_COUNTS:
        raise TypeError(ERR_TILE_COUNT)
    return int(s), tuple(_CODES[useful])


def RegularShanten(*args, **kwargs):
    """Regular-shape shanten and useful tiles: ``RegularShanten(hand) -> (shanten, useful)``.

    >>> RegularShanten(("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "T1", "T1", "T1", "T2"))
    (0, ('T2', 'T3'))
    """
    return _shape_call(_hand.REGULAR, args, kwargs, _VALID_SIZES)


def SevenPairsShanten(*args, **kwargs):
    """Seven-pairs shanten and useful tiles of a 13-tile hand: ``(shanten, useful)``."""
    return _shape_call(_hand.SEVEN_PAIRS, args, kwargs, (13,))


def ThirteenOrphansShanten(*args, **kwargs):
    """Thirteen-orphans shanten and useful tiles of a 13-tile hand: ``(shanten, useful)``."""
    return _shape_call(_hand.THIRTEEN_ORPHANS, args, kwargs, (13,))


def HonorsAndKnittedTilesShanten(*args, **kwargs):
    """Honours-and-knitted-tiles shanten and useful tiles of a 13-tile hand: ``(shanten, useful)``."""
    return _shape_call(_hand.HONORS_KNITTED, args, kwargs, (13,))


def KnittedStraightShanten(*args, **kwargs):
    """Knitted-straight shanten and useful tiles of a 10- or 13-tile hand: ``(shanten, useful)``."""
    return _shape_call(_hand.KNITTED_STRAIGHT, args, kwargs, (10, 13))


# --- the fan calculator ----------------------------------------------------------------------------------
_CODE = {c: i for i, c in enumerate(BOTZONE_CODES[:34])}
_KIND = {"CHI": 1, "PENG": 2, "GANG": 3}
# the kernel's packing, run as plain Python (no dispatch per meld; under NUMBA_DISABLE_JIT it is the function)
_pack_meld = getattr(pack_meld, "py_func", pack_meld)
_ERRORS = {
    _fans.ERR_WRONG_TILES_COUNT: "ERROR_WRONG_TILES_COUNT",
    _fans.ERR_TILE_COUNT_GREATER_THAN_4: "ERROR_TILE_COUNT_GREATER_THAN_4",
    _fans.ERR_NOT_WIN: "ERROR_NOT_WIN",
    _fans.ERR_BAD_MELD: "ERROE_WRONG_TILE_CODE",
}
_MINGANG = int(_fans.Fan.CONCEALED_KONG_AND_MELDED_KONG)
_REF_ORDER = np.array(_fans.REFERENCE_ORDER, dtype=np.int64)
_REF_ORDER.setflags(write=False)
_TLS = threading.local()  # a per-thread result buffer (the kernels run without the GIL)


#: (fan id, count) pairs of one result, in the reference's order, after the fan count in slot 0
_RES_LEN = 1 + 2 * _fans.NUM_FANS


@njit
def _score_packed(w0, w1, w2, mpack, spack, res):
    """``score_kernel`` on a packed call: the standing tiles as three 60-bit count words (``_UNIT``), the four
    melds as 16-bit fields of ``mpack``, and ``n_melds | win << 3 | flags << 9 | seat << 13 | prevalent << 21 |
    flowers << 29`` in ``spack``. Writes the fans to ``res`` (see ``_RES_LEN``); returns the total or ERR_*."""
    concealed = np.empty(34, dtype=np.int8)
    _unpack_counts(w0, w1, w2, concealed)
    melds = np.empty(4, dtype=np.int16)
    for i in range(4):
        melds[i] = (mpack >> (16 * i)) & 0xFFFF
    counts = np.empty(_fans.NUM_FANS, dtype=np.int16)
    total = _fans.score_kernel(
        concealed,
        melds,
        spack & 7,
        (spack >> 3) & 63,
        (spack >> 9) & 15,
        (spack >> 13) & 255,
        (spack >> 21) & 255,
        (spack >> 29) & 255,
        counts,
    )
    k = 0
    for f in _REF_ORDER:
        if counts[f]:
            res[1 + 2 * k] = f
            res[2 + 2 * k] = counts[f]
            k += 1
    res[0] = k
    return total


def _arrays(pack, hand, winTile):
    """Reference-format arguments -> (concealed int8[34], melds int16[4], n_melds, win tile id)."""
    codes, melds, n_melds, win = _parse(pack, hand, winTile)
    return (
        np.bincount(np.array(codes, dtype=np.int64), minlength=34).astype(np.int8),
        np.array(melds, dtype=np.int16),
        n_melds,
        win,
    )


assert list(_fans.REFERENCE_ORDER) == sorted(set(range(_fans.NUM_FANS)) - {_MINGANG}) + [_MINGANG]
_ZH = _fans.FAN_NAME_ZH
_EN = _fans.FAN_NAME_EN
_PTS = [int(p) for p in _fans.FAN_POINTS]


def _byte(x) -> int:
    """An ``unsigned char`` argument as the reference parses it (no range check, wraps modulo 256)."""
    return operator.index(x) & 0xFF


def _parse(pack, hand, winTile):
    """Reference-format arguments -> (concealed int8[34], melds int16[4], n_melds, win tile id)."""
    if not isinstance(pack, tuple):
        raise TypeError("Param `pack` must be a tuple!")
    if not isinstance(hand, tuple):
        raise TypeError("Param `hand` must be a tuple!")
    if not isinstance(winTile, str):
        raise TypeError(f"argument 3 must be str, not {type(winTile).__name__}")
    raw = []
    for p in pack:
        if not isinstance(p, tuple):
            raise TypeError("Param `pack` must be a tuple of tuples!")
        if len(p) != 3:
            raise TypeError(f"function takes exactly 3 arguments ({len(p)} given)")
        kind_s, tile_s, offer = p
        if not isinstance(kind_s, str):
            raise TypeError(f"argument 1 must be str, not {type(kind_s).__name__}")
        if not isinstance(tile_s, str):
            raise TypeError(f"argument 2 must be str, not {type(tile_s).__name__}")
        raw.append((kind_s, tile_s, operator.index(offer)))
    codes = []
    for h in hand:
        if not isinstance(h, str):
            raise TypeError("Param `hand` must be a tuple of strs!")
        codes.append(_CODE.get(h))
    melds = [0, 0, 0, 0]
    for i, (kind_s, tile_s, offer) in enumerate(raw):
        kind = _KIND.get(kind_s)
        if kind is None:
            raise TypeError("ERROE_WRONG_PACK_CODE")
        t = _CODE.get(tile_s)
        if t is None:
            raise TypeError("ERROE_WRONG_TILE_CODE")
        if not 0 <= offer <= 3:
            raise TypeError("ERROE_WRONG_OFFER_CODE")
        if i < 4:
            melds[i] = _pack_meld(kind, t, offer, 0)
    if len(raw) > 4:
        raise TypeError("ERROR_WRONG_TILES_COUNT")
    if None in codes:
        raise TypeError("ERROE_WRONG_TILE_CODE")
    win = _CODE.get(winTile)
    if win is None:
        raise TypeError("ERROE_WRONG_TILE_CODE")
    if len(hand) != 13 - 3 * len(raw):
        raise TypeError("ERROR_WRONG_TILES_COUNT")
    return codes, melds, len(raw), win


def MahjongFanCalculator(
    pack,
    hand,
    winTile,
    flowerCount,
    isSelfDrawn,
    is4thTile,
    isAboutKong,
    isWallLast,
    seatWind,
    prevalentWind,
    verbose=False,
):
    """Calculate Mahjong Fans (same contract as ``MahjongGB.MahjongFanCalculator``).

    Parameters
    ----------
    pack : tuple of (``"CHI"``/``"PENG"``/``"GANG"``, tile code, offer 0..3)
    hand : tuple of str, the standing tiles (Botzone codes ``W1``..``J3``)
    winTile : str
    flowerCount : int
    isSelfDrawn, is4thTile, isAboutKong, isWallLast : bool
    seatWind, prevalentWind : int, 0..3 = east/south/west/north
    verbose : bool, optional

    Returns
    -------
    tuple
        ``((points, name), ...)``, or with ``verbose`` ``((points_each, count, name, english_name), ...)``.

    Raises
    ------
    TypeError
        With the reference's messages (``ERROR_NOT_WIN``, ``ERROR_WRONG_TILES_COUNT``, ...).

    Examples
    --------
    >>> MahjongFanCalculator(pack=(), hand=("W1", "W1", "W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9",
    ...     "W9", "W9"), winTile="W5", flowerCount=0, isSelfDrawn=False, is4thTile=False, isAboutKong=False,
    ...     isWallLast=False, seatWind=0, prevalentWind=0)
    ((88, '九莲宝灯'), (2, '双暗刻'), (1, '幺九刻'))
    """
    if type(flowerCount) is int and type(seatWind) is int and type(prevalentWind) is int:
        flowers = flowerCount & 0xFF
        seat = seatWind & 0xFF
        prevalent = prevalentWind & 0xFF
    else:
        flowers = _byte(flowerCount)
        seat = _byte(seatWind)
        prevalent = _byte(prevalentWind)
    flags = (
        (_fans.WIN_SELF_DRAWN if isSelfDrawn else 0)
        | (_fans.WIN_4TH_TILE if is4thTile else 0)
        | (_fans.WIN_ABOUT_KONG if isAboutKong else 0)
        | (_fans.WIN_WALL_LAST if isWallLast else 0)
    )
    x, mpack, n_melds, win = _fast_parse(pack, hand, winTile)
    try:
        res = _TLS.res
    except AttributeError:
        res = _TLS.res = np.zeros(_RES_LEN, dtype=np.int16)
    total = _score_packed(
        x & _MASK60,
        (x >> 60) & _MASK60,
        x >> 120,
        mpack,
        n_melds | win << 3 | flags << 9 | seat << 13 | prevalent << 21 | flowers << 29,
        res,
    )
    if total < 0:
        raise TypeError(_ERRORS.get(total, "ERROR_NOT_WIN"))
    r = res[: 1 + 2 * res[0]].tolist()
    if verbose:
        return tuple([(_PTS[f], n, _ZH[f], _EN[f]) for f, n in zip(r[1::2], r[2::2])])
    return tuple([(_PTS[f] * n, _ZH[f]) for f, n in zip(r[1::2], r[2::2])])


def _fast_parse(pack, hand, winTile):
    """``_parse`` for the common call (valid tuples of valid codes); any doubt goes to ``_parse``, which
    raises the reference's error. Returns (packed standing tiles, packed melds, n_melds, win tile id)."""
    if type(pack) is tuple and type(hand) is tuple and len(hand) == 13 - 3 * len(pack) and not pack:
        try:
            return sum(map(_UNIT_GET, hand)), 0, 0, _CODE[winTile]
        except (KeyError, TypeError):
            pass
    codes, melds, n_melds, win = _parse(pack, hand, winTile)
    x = 0
    for t in codes:
        x += 1 << (_BITS * t)
    return x, melds[0] | melds[1] << 16 | melds[2] << 32 | melds[3] << 48, n_melds, win
