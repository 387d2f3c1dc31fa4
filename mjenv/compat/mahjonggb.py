"""Drop-in replacement for PyMahjongGB 1.4.0 (``import MahjongGB``): the fan calculator.

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

import numpy as np

from mjenv import fans as _fans
from mjenv._jit import njit
from mjenv.tiles import BOTZONE_CODES

_CODE = {c: i for i, c in enumerate(BOTZONE_CODES[:34])}
_KIND = {"CHI": 1, "PENG": 2, "GANG": 3}
_ERRORS = {
    _fans.ERR_WRONG_TILES_COUNT: "ERROR_WRONG_TILES_COUNT",
    _fans.ERR_TILE_COUNT_GREATER_THAN_4: "ERROR_TILE_COUNT_GREATER_THAN_4",
    _fans.ERR_NOT_WIN: "ERROR_NOT_WIN",
    _fans.ERR_BAD_MELD: "ERROE_WRONG_TILE_CODE",
}
_MINGANG = int(_fans.Fan.CONCEALED_KONG_AND_MELDED_KONG)


@njit
def _score_codes(codes, m0, m1, m2, m3, n_melds, win, flags, seat, prevalent, flowers, counts):
    """``score_kernel`` on tile ids (uint8) and four packed melds: keeps the Python side of a call short."""
    concealed = np.zeros(34, dtype=np.int8)
    for t in codes:
        concealed[t] += 1
    melds = np.empty(4, dtype=np.int16)
    melds[0] = m0
    melds[1] = m1
    melds[2] = m2
    melds[3] = m3
    return _fans.score_kernel(concealed, melds, n_melds, win, flags, seat, prevalent, flowers, counts)


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
            melds[i] = (kind << 8) | (offer << 6) | t
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
    flowers = _byte(flowerCount)
    seat = _byte(seatWind)
    prevalent = _byte(prevalentWind)
    flags = (
        (_fans.WIN_SELF_DRAWN if isSelfDrawn else 0)
        | (_fans.WIN_4TH_TILE if is4thTile else 0)
        | (_fans.WIN_ABOUT_KONG if isAboutKong else 0)
        | (_fans.WIN_WALL_LAST if isWallLast else 0)
    )
    codes, melds, n_melds, win = _parse(pack, hand, winTile)
    counts = np.empty(_fans.NUM_FANS, dtype=np.int16)
    total = _score_codes(
        np.frombuffer(bytes(codes), dtype=np.uint8),
        melds[0],
        melds[1],
        melds[2],
        melds[3],
        n_melds,
        win,
        flags,
        seat,
        prevalent,
        flowers,
        counts,
    )
    if total < 0:
        raise TypeError(_ERRORS.get(total, "ERROR_NOT_WIN"))
    fans = counts.nonzero()[0].tolist()
    if fans and fans[0] <= _MINGANG <= fans[-1] and _MINGANG in fans:  # the reference lists 明暗杠 last
        fans.remove(_MINGANG)
        fans.append(_MINGANG)
    c = counts.tolist()
    if verbose:
        return tuple([(_PTS[f], c[f], _ZH[f], _EN[f]) for f in fans])
    return tuple([(_PTS[f] * c[f], _ZH[f]) for f in fans])
