"""Rules: hands, win detection, waits and shanten for Chinese Official Mahjong (MCR).

Rules
-----
MCR (``docs/rules.md``, Winning): a hand wins in one of five shapes,

* regular (``REGULAR``): four sets (chow or pung; fixed melds count) and a pair;
* seven pairs (``SEVEN_PAIRS``, 七对): four identical tiles count as two pairs; concealed hands only;
* thirteen orphans (``THIRTEEN_ORPHANS``, 十三幺): one of each terminal and honour plus one more of them;
* honours and knitted tiles (``HONORS_KNITTED``, 全不靠): 14 different tiles from one knitted combination
  (147/258/369 in the three suits, one suit each) and the honours;
* knitted straight (``KNITTED_STRAIGHT``, 组合龙): the 9 tiles of a knitted combination plus one set and a pair;
  the set may be a fixed meld.

Specification in mjenv
----------------------
A hand is ``counts: int8[34]`` of standing (concealed) tiles plus up to four packed fixed melds
(:mod:`mjenv.melds`). A standing hand of ``3k + 1`` tiles (13 - 3 melds) is *waiting*; ``3k + 2`` tiles
(14 - 3 melds) is a complete hand that may be a win. Shanten uses block counting: regular shanten is
``2 * need - max(2 * sets + min(partials, need - sets) + pair)`` with ``need = n // 3`` sets still to form;
seven pairs ``6 - sum(c // 2)``; thirteen orphans ``13 - kinds - has_pair``; honours and knitted ``13 - best
number of distinct usable tiles``; knitted straight ``missing knitted tiles + shanten of the rest as one set
and a pair``. ``-1`` is a complete (winning) hand. Seven pairs, thirteen orphans and honours-and-knitted only
exist for 13/14 standing tiles (no melds), the knitted straight for 10/11 and 13/14.

Useful tiles of a shape are the tiles whose draw lowers its shanten. By default (``physical=True``) a tile
already held four times (hand and melds) is never useful. ``physical=False`` gives PyMahjongGB's convention,
discovered by experiment and kept for :mod:`mjenv.compat.mahjonggb`: a tile held four times in the hand is
useful only when the hand is ready (shanten 0) and the 5th copy would complete it.

Kernels read the per-suit tables of ``mjenv/_tables/gen_suit_tables.py`` (passed as arguments) and return
negative codes <= ``ERR_INVALID_COUNTS`` for bad input. The overall shanten (:func:`batch_shanten`, the waits
gate, ``MahjongShanten``) takes a faster route with the same values: the regular score from packed block
increments (``gen_shanten_tables.py``; the ``need`` largest increments over the groups), the counts read as
64-bit words, and a knitted straight combination looked up only when a lower bound from rank bitmasks
(its missing tiles, a pair and a set left in the rest) says it could beat the best shape so far. Shanten of a shape that does not apply to the
hand's size is ``NO_SHANTEN`` (99).
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from typing import NamedTuple

import numba
import numpy as np
from numba import types as _nt

from mjenv import melds as _melds
from mjenv._jit import njit, shared_kernel
from mjenv.tiles import IS_TERMINAL_OR_HONOR, KNITS, NUM_TILE_TYPES, ORPHANS, format_tiles, parse_tiles

REGULAR, SEVEN_PAIRS, THIRTEEN_ORPHANS, HONORS_KNITTED, KNITTED_STRAIGHT = 0, 1, 2, 3, 4
NUM_SHAPES = 5
SHAPE_NAMES = ("regular", "seven_pairs", "thirteen_orphans", "honors_knitted", "knitted_straight")
NO_SHANTEN = 99
ERR_INVALID_COUNTS = -10  # a count outside 0..4
ERR_INVALID_SIZE = -11  # tile count does not fit the melds
_NEG = -64

POW5 = np.array([5**i for i in range(10)], dtype=np.int64)

_TABLES: tuple | None = None
_SHANTEN_TABLES: tuple | None = None


def load_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The lookup tables ``(suit, honor, suit_win, honor_win)``, loaded once (see ``gen_suit_tables.py``)."""
    global _TABLES
    if _TABLES is None:
        with resources.files("mjenv._tables").joinpath("suit_tables.npz").open("rb") as f:
            z = np.load(f)
            _TABLES = tuple(np.ascontiguousarray(z[k]) for k in ("suit", "honor", "suit_win", "honor_win"))
    return _TABLES


def load_shanten_tables() -> tuple[np.ndarray, np.ndarray]:
    """The packed increment tables ``(suit_inc, honor_inc)`` of the overall shanten, loaded once.

    See ``gen_shanten_tables.py``; :func:`batch_shanten` and the waits gate pass them to the kernels.
    """
    global _SHANTEN_TABLES
    if _SHANTEN_TABLES is None:
        with resources.files("mjenv._tables").joinpath("shanten_tables.npz").open("rb") as f:
            z = np.load(f)
            _SHANTEN_TABLES = tuple(np.ascontiguousarray(z[k]) for k in ("suit_inc", "honor_inc"))
    return _SHANTEN_TABLES


_WIN_TABLES: tuple | None = None


def win_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(suit_win, honor_win)``: the win lookup tables (those of :func:`load_tables`), all that playing needs.

    Loaded once; only these two members of ``suit_tables.npz`` are read (the 20 MB shanten table is not needed
    to play), unless :func:`load_tables` has loaded the tables already. The engine's ``reset_kernel``,
    ``step_kernel`` and ``begin_turn_kernel`` take them as their last two arguments (``mjenv.game.win_tables``).
    """
    global _WIN_TABLES
    if _WIN_TABLES is None:
        if _TABLES is not None:
            _WIN_TABLES = (_TABLES[2], _TABLES[3])
        else:
            with resources.files("mjenv._tables").joinpath("suit_tables.npz").open("rb") as f:
                z = np.load(f)
                _WIN_TABLES = (np.ascontiguousarray(z["suit_win"]), np.ascontiguousarray(z["honor_win"]))
    return _WIN_TABLES


def table_sha256(name: str = "suit_tables.npz") -> str:
    """SHA-256 of a shipped table file (checked against ``SHA256SUMS`` by the tests)."""
    data = resources.files("mjenv._tables").joinpath(name).read_bytes()
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------------------
# kernels
# ---------------------------------------------------------------------------------------------------------


@njit
def keys_kernel(counts):
    """Base-5 keys of the three suits and the honours of ``counts`` (int8[34])."""
    k0 = 0
    k1 = 0
    k2 = 0
    # np.int64, as numba computes: under NUMBA_DISABLE_JIT an int8 count would make the key an int8 numpy
    # scalar (Python int + int8 is int8 under NEP 50) that wraps
    for r in range(8, -1, -1):
        k0 = k0 * 5 + np.int64(counts[r])
        k1 = k1 * 5 + np.int64(counts[9 + r])
        k2 = k2 * 5 + np.int64(counts[18 + r])
    k3 = 0
    for r in range(6, -1, -1):
        k3 = k3 * 5 + np.int64(counts[27 + r])
    return k0, k1, k2, k3


@njit
def regular_score_kernel(suit, honor, k0, k1, k2, k3, need):
    """Best block score ``2*sets + min(partials, need - sets) + pair`` over the four groups.

    Max-plus combination of the groups' table rows over the blocks given to each group (summing to
    ``need``; rows are monotone in the blocks) and which group holds the pair.
    """
    a = suit[k0]
    b = suit[k1]
    c = suit[k2]
    h = honor[k3]
    best = -1000
    for i in range(need + 1):
        for j in range(need + 1 - i):
            a0b0 = np.int32(a[i]) + b[j]
            a1b0 = np.int32(a[5 + i]) + b[j]
            a0b1 = np.int32(a[i]) + b[5 + j]
            ab1 = max(a0b1, a1b0)
            for k in range(need + 1 - i - j):
                rest = need - i - j - k
                x0 = a0b0 + c[k]
                x1 = ab1 + c[k]
                y = a0b0 + c[5 + k]
                x1 = max(x1, y)
                v = x0 + (max(h[5 + rest], h[rest]))
                best = max(best, v)
                v = x1 + h[rest]
                best = max(best, v)
    return best


@njit
def _regular_shanten(counts, suit, honor, n):
    k0, k1, k2, k3 = keys_kernel(counts)
    need = n // 3
    return 2 * need - regular_score_kernel(suit, honor, k0, k1, k2, k3, need)


@njit
def seven_pairs_shanten_kernel(counts):
    p = 0
    for t in range(34):
        p += counts[t] >> 1
    return 6 - p


@njit
def orphans_shanten_kernel(counts, orphans):
    kinds = 0
    pair = 0
    for i in range(13):
        c = counts[orphans[i]]
        if c > 0:
            kinds += 1
        if c > 1:
            pair = 1
    return 13 - kinds - pair


@njit
def honors_knitted_shanten_kernel(counts, knits):
    honors = 0
    for t in range(27, 34):
        if counts[t] > 0:
            honors += 1
    best = 0
    for i in range(6):
        k = 0
        for s in range(3):
            for j in range(3):
                if counts[9 * s + knits[i, s] + 3 * j] > 0:
                    k += 1
        best = max(best, k)
    v = best + honors
    v = min(v, 14)
    return 13 - v


@njit
def knitted_straight_shanten_kernel(counts, suit, honor, knits, pow5, n, bound, extra):
    """Knitted straight shanten of an ``n``-tile hand (n >= 10); ``bound``: stop early at this value.

    ``extra`` (or -1): a tile held 4 times in ``counts`` plus one drawn copy (PyMahjongGB's useful-tile
    convention). When ``extra`` is not among a combination's knitted tiles the rest holds 5 copies; the only
    use of a 5th copy is a pung plus a pair of it, which completes the rest (one set and a pair).
    """
    k0, k1, k2, k3 = keys_kernel(counts)
    rest_need = 1 if n >= 12 else 0
    best = NO_SHANTEN
    for i in range(6):
        missing = 0
        kk0 = k0
        kk1 = k1
        kk2 = k2
        five = extra >= 0
        for s in range(3):
            for j in range(3):
                r = knits[i, s] + 3 * j
                if 9 * s + r == extra:
                    five = False  # one copy goes to the knitted tiles, 4 stay in the rest
                    continue
                if counts[9 * s + r] > 0:
                    if s == 0:
                        kk0 -= pow5[r]
                    elif s == 1:
                        kk1 -= pow5[r]
                    else:
                        kk2 -= pow5[r]
                else:
                    missing += 1
        if missing - 1 >= best or missing - 1 >= bound:
            continue
        if five and rest_need == 1:
            v = missing - 1
        else:
            v = missing + 2 * rest_need - regular_score_kernel(suit, honor, kk0, kk1, kk2, k3, rest_need)
        best = min(best, v)
    return best


@njit
def shape_shanten_kernel(counts, n, shape, suit, honor, knits, orphans, pow5):
    """Shanten of one shape for an ``n``-tile standing hand (NO_SHANTEN when the shape does not apply)."""
    if shape == 0:
        return _regular_shanten(counts, suit, honor, n)
    if shape == 4:
        if n < 10:
            return NO_SHANTEN
        return knitted_straight_shanten_kernel(counts, suit, honor, knits, pow5, n, NO_SHANTEN, -1)
    if n < 13:
        return NO_SHANTEN
    if shape == 1:
        return seven_pairs_shanten_kernel(counts)
    if shape == 2:
        return orphans_shanten_kernel(counts, orphans)
    return honors_knitted_shanten_kernel(counts, knits)


@njit
def _check(counts):
    """Number of tiles, or ERR_INVALID_COUNTS."""
    n = 0
    for t in range(34):
        c = counts[t]
        if c < 0 or c > 4:
            return ERR_INVALID_COUNTS
        n += c
    return n


@njit
def _all_shanten(counts, n, out, suit, honor, knits, orphans, pow5):
    """Fill ``out[5]`` with the shanten of every shape; return the minimum."""
    best = NO_SHANTEN
    for shape in range(5):
        v = shape_shanten_kernel(counts, n, shape, suit, honor, knits, orphans, pow5)
        out[shape] = v
        best = min(best, v)
    return best


#: DELTA9[mask] = sum of 5**r over the ranks r in a 9-bit rank mask (key change when removing one of each)
_DELTA9 = np.array([sum(5**r for r in range(9) if i >> r & 1) for i in range(512)], dtype=np.int64)
KNIT_MASK = np.array([0b001001001, 0b010010010, 0b100100100], dtype=np.int64)  # ranks 147, 258, 369

# --- overall shanten (batch_shanten): packed increments, SWAR count pass ------------------------------------
# Helpers taking only scalars are plain kernels (LLVM inlines them); the two that index the tables are always
# inlined, since a call passing arrays costs about as much per hand as the work: _knitted_min by numba (into
# _min_shanten_at only), _min_shanten_at by LLVM (forceinline: typed and lowered once, not once per caller).

INC_PAIR = 1 << 12  # bits of shanten_tables.npz (gen_shanten_tables.py): the group can hold the pair
INC_EXACT = 1 << 13  # a row of the group is not concave: use the full convolution
_L16 = np.int64(0x00FF00FF00FF00FF)
_L32 = np.int64(0x0000FFFF0000FFFF)
_B7F = np.int64(0x7F7F7F7F7F7F7F7F)
_GATHER8 = np.int64(0x0102040810204080)  # bit 8r -> bit 56 + r


@njit
def _greedy(twos, ones, need):
    """Sum of the ``need`` largest among ``twos`` increments of 2 and ``ones`` increments of 1."""
    x = min(twos, need)
    return 2 * x + min(ones, need - x)


@njit
def _pair_score(x, twos, ones, need):
    """Block score with the pair in the group of packed increments ``x``; -1 when it cannot hold one."""
    if (x & INC_PAIR) == 0:
        return -1
    return 1 + _greedy(twos - (x & 7) + ((x >> 6) & 7), ones - ((x >> 3) & 7) + ((x >> 9) & 7), need)


@njit
def inc_score_kernel(a, b, c, h, need):
    """:func:`regular_score_kernel` from the packed increments ``a, b, c, h`` of the four groups, or -1.

    When every row of the four groups is concave, the max-plus convolution takes the ``need`` largest
    increments over the groups (at most one group on its pair row). Otherwise -1: the caller then runs the
    full convolution (``INC_EXACT``, about 1 suit key in 1600).
    """
    a = np.int64(a)
    b = np.int64(b)
    c = np.int64(c)
    h = np.int64(h)
    if ((a | b | c | h) & INC_EXACT) != 0:
        return -1
    twos = (a & 7) + (b & 7) + (c & 7) + (h & 7)
    ones = ((a >> 3) & 7) + ((b >> 3) & 7) + ((c >> 3) & 7) + ((h >> 3) & 7)
    best = _greedy(twos, ones, need)
    best = max(best, _pair_score(a, twos, ones, need))
    best = max(best, _pair_score(b, twos, ones, need))
    best = max(best, _pair_score(c, twos, ones, need))
    return max(best, _pair_score(h, twos, ones, need))


@njit
def _key8(w):
    """Base-5 key of the 8 bytes of ``w`` (byte r is the digit of 5**r; bytes 0..4)."""
    u = (w & _L16) + 5 * ((w >> 8) & _L16)
    v = (u & _L32) + 25 * ((u >> 16) & _L32)
    return (v & 0xFFFFFFFF) + 625 * (v >> 32)


@njit
def _nonzero(w):
    """Bytes of ``w`` (each 0..4) mapped to 1 where non-zero, else 0."""
    return ((w + _B7F) >> 7) & _B01


@njit
def _halves(w):
    """Bytes of ``w`` (each 0..4) halved (the pairs each count holds)."""
    return (w >> 1) & _B7F


@njit
def _knit_classes(w, e):
    """Knitted classes held in a suit (ranks 1-8 in the bytes of ``w``, rank 9 count ``e``).

    Byte k of the result is the number of ranks k+1, k+4, k+7 held; bits 24..32 are the rank bitmask.
    """
    z = _nonzero(w)
    f = (e + 7) >> 3
    mask = (((z * _GATHER8) >> 56) & 0xFF) | (f << 8)
    return ((z + (z >> 24) + (z >> 48) + (f << 16)) & 0xFFFFFF) | (mask << 24)


#: _LANES[s, k]: byte lanes (one per knitted combination j) that take class k of suit s (KNITS[j, s] == k)
_LANES = np.array(
    [[sum(1 << (8 * j) for j in range(6) if KNITS[j, s] == k) for k in range(3)] for s in range(3)],
    dtype=np.int64,
)
_LANES6 = np.int64(0x808080808080)  # the high bits of the six lanes


@njit
def _knit_lanes(c0, c1, c2):
    """Tiles held of each knitted combination: byte j is combination j's count (0..9), from :func:`_knit_classes`."""
    v = 0
    for k in range(3):
        v += ((c0 >> (8 * k)) & 0xFF) * _LANES[0, k]
        v += ((c1 >> (8 * k)) & 0xFF) * _LANES[1, k]
        v += ((c2 >> (8 * k)) & 0xFF) * _LANES[2, k]
    return v


@njit
def _levels(w, e):
    """Rank bitmasks of a suit's counts at least 1, 2, 3 and 4, as 9-bit fields at bits 0, 9, 18 and 27."""
    q = 0
    for k in range(1, 5):
        z = ((w + (128 - k) * _B01) >> 7) & _B01  # byte r: count of rank r+1 >= k
        q |= ((((z * _GATHER8) >> 56) & 0xFF) | (np.int64(e >= k) << 8)) << (9 * (k - 1))
    return q


@njit
def _rest_blocks(q, knit):
    """What a suit's tiles hold once one copy of each of its knitted tiles (rank bitmask ``knit``) is taken.

    ``q`` are the suit's :func:`_levels`. Bit 0: a pair is left; bit 1: a set (pung or chow) is left.
    """
    kk = knit | (knit << 9) | (knit << 18) | (knit << 27)
    r = (q & ~kk) | ((q >> 9) & kk)  # levels of the rest: a knitted rank loses one copy
    r1 = r & 511
    chow = r1 & (r1 >> 1) & (r1 >> 2)
    return (1 if (r >> 9) & 511 else 0) | (2 if ((r >> 18) & 511) | chow else 0)


@njit
def _knitted_bound(held, rest_need, blocks):
    """Lower bound on the knitted straight shanten of one combination, without a table look-up.

    ``held``: tiles of the combination's 9 held; ``blocks``: bit 0 set when the rest (the hand less one copy of
    each held knitted tile) holds a pair, bit 1 when it holds a set (see :func:`_rest_blocks`). The shanten is
    ``missing + 2*rest_need - score`` where the rest's block score is at most ``1 + set + pair`` for one set
    and a pair (a set scores 2, a pair 1, a lone partial 1) and exactly ``pair`` for a pair alone.
    """
    pair = blocks & 1
    if rest_need == 0:
        return 9 - held - pair
    return 9 - held + 1 - pair - (blocks >> 1)


@njit
def _other_min(w0, w1, w2, wh, e0, e1, e2, c0, c1, c2, top, n, best):
    """``min(best, seven pairs, thirteen orphans, honours and knitted shanten)`` of an ``n``-tile hand.

    ``w*`` / ``e*``: the count words and rank-9 counts of :func:`_min_shanten_at`, ``c*`` the suits'
    :func:`_knit_classes`; ``top`` is the most tiles of one knitted combination held.
    """
    if n < 13:
        return best
    pairs = _hsum(_halves(w0) + _halves(w1) + _halves(w2) + _halves(wh)) + (e0 >> 1) + (e1 >> 1) + (e2 >> 1)
    best = min(best, 6 - pairs)  # seven pairs
    honors = _hsum(_nonzero(wh))
    ends = ((c0 >> 24) & _ORPHAN_MASK) | ((c1 >> 24) & _ORPHAN_MASK) << 16 | ((c2 >> 24) & _ORPHAN_MASK) << 32
    kinds = honors + _hsum(ends)  # one byte per terminal: held or not
    dup = ((((w0 | w1 | w2) & 0xFF) | e0 | e1 | e2) >> 1) | _halves(wh)  # an orphan held twice
    best = min(best, 13 - kinds - (1 if dup != 0 else 0))  # thirteen orphans
    return min(best, 13 - min(honors + top, 14))  # honours and knitted


@njit(inline="always")
def _knitted_min(
    w0, w1, w2, wh, e0, e1, e2, lanes, top, k0, k1, k2, k3, n, best, suit, honor, suit_inc, honor_inc
):
    """``min(best, knitted straight shanten)``; ``lanes``: :func:`_knit_lanes`, ``top`` its largest byte.

    A combination is looked at only when ``missing - 1`` beats ``best`` (one SWAR compare over the six), then
    looked up only when :func:`_knitted_bound` does; those holding the most tiles go first.
    """
    if ((lanes + (119 + best) * _B01) & _LANES6) == 0:  # no byte >= 9 - best (best <= 8 here)
        return best
    rest_need = 1 if n >= 12 else 0
    q0 = _levels(w0, e0)
    q1 = _levels(w1, e1)
    q2 = _levels(w2, e2)
    hblocks = (1 if _halves(wh) else 0) | (2 if (wh + 0x7D * _B01) & _B80 else 0)  # an honour pair, pung
    for phase in range(2):
        for j in range(6):
            held = (lanes >> (8 * j)) & 0xFF
            if (held == top) != (phase == 0) or 8 - held >= best:
                continue
            x0 = KNIT_MASK[KNITS[j, 0]] & q0
            x1 = KNIT_MASK[KNITS[j, 1]] & q1
            x2 = KNIT_MASK[KNITS[j, 2]] & q2
            blocks = hblocks | _rest_blocks(q0, x0) | _rest_blocks(q1, x1) | _rest_blocks(q2, x2)
            if _knitted_bound(held, rest_need, blocks) >= best:
                continue
            r0 = k0 - _DELTA9[x0]  # keys of the rest
            r1 = k1 - _DELTA9[x1]
            r2 = k2 - _DELTA9[x2]
            score = inc_score_kernel(suit_inc[r0], suit_inc[r1], suit_inc[r2], honor_inc[k3], rest_need)
            if score < 0:
                score = regular_score_kernel(suit, honor, r0, r1, r2, k3, rest_need)
            best = min(best, 9 - held + 2 * rest_need - score)
    return best


@njit(forceinline=True)  # inlined by LLVM, typed and lowered once (not per caller)
def _min_shanten_at(counts, i, n, suit, honor, suit_inc, honor_inc):
    """Overall shanten (the minimum over the shapes) of row ``i`` of ``counts`` (int8[:, 34]).

    ``n`` is the number of tiles, or ``-1 - n_melds`` to validate the row here (then a count outside 0..4
    gives ERR_INVALID_COUNTS and a size other than 13/14 - 3*n_melds ERR_INVALID_SIZE). The counts are read
    as 64-bit words (ranks 1-8 of each suit, the 7 honours) and the suits' rank-9 counts; the regular shape
    uses the packed increments; the other shapes are looked at only when they might beat it.
    """
    w0 = _word(counts, i, 0)
    w1 = _word(counts, i, 9)
    w2 = _word(counts, i, 18)
    wh = _word(counts, i, 26) >> 8
    e0 = np.int64(counts[i, 8])
    e1 = np.int64(counts[i, 17])
    e2 = np.int64(counts[i, 26])
    if n < 0:
        e = (e0 & 0xFF) | ((e1 & 0xFF) << 8) | ((e2 & 0xFF) << 16)
        bad = w0 | w1 | w2 | wh | e | (w0 + _B7B) | (w1 + _B7B) | (w2 + _B7B) | (wh + _B7B) | (e + 0x7B7B7B)
        if (bad & _B80) != 0:  # as in win_code_at_kernel: a byte outside 0..4
            return ERR_INVALID_COUNTS
        tot = _hsum(w0 + w1 + w2 + wh) + e0 + e1 + e2
        base = 13 - 3 * (-1 - n)
        if tot != base and tot != base + 1:
            return ERR_INVALID_SIZE
        n = tot
    need = n // 3
    k0 = _key8(w0) + 390625 * e0
    k1 = _key8(w1) + 390625 * e1
    k2 = _key8(w2) + 390625 * e2
    k3 = _key8(wh)
    score = inc_score_kernel(suit_inc[k0], suit_inc[k1], suit_inc[k2], honor_inc[k3], need)
    if score < 0:
        score = regular_score_kernel(suit, honor, k0, k1, k2, k3, need)
    best = 2 * need - score
    if n < 10 or best < 0 or (best == 0 and n % 3 == 1):  # nothing can beat it
        return best
    c0 = _knit_classes(w0, e0)
    c1 = _knit_classes(w1, e1)
    c2 = _knit_classes(w2, e2)
    lanes = _knit_lanes(c0, c1, c2)
    top = 0
    for j in range(6):
        top = max(top, (lanes >> (8 * j)) & 0xFF)
    best = _other_min(w0, w1, w2, wh, e0, e1, e2, c0, c1, c2, top, n, best)
    return _knitted_min(
        w0, w1, w2, wh, e0, e1, e2, lanes, top, k0, k1, k2, k3, n, best, suit, honor, suit_inc, honor_inc
    )


@njit
def min_shanten_kernel(counts, n, suit, honor, suit_inc, honor_inc):
    """:func:`_min_shanten_at` of a single ``int8[34]`` row (the batch kernel's specialization, inlined by LLVM)."""
    return _min_shanten_at(
        counts.reshape((1, counts.shape[0])), np.int64(0), n, suit, honor, suit_inc, honor_inc
    )


@njit
def _regular_fifth_wins(counts, t, suit, honor, n1):
    """``counts[t] == 4``: would a 5th copy complete the regular ``n1``-tile hand?

    Five copies of ``t`` hold a pung or a pair of ``t`` (at most four chows contain it), so the hand wins iff
    the rest after a pung of ``t`` is a complete hand, or the rest after a pair of ``t`` splits into sets.
    """
    counts[t] = 2  # pung of t out
    k0, k1, k2, k3 = keys_kernel(counts)
    need = (n1 - 3) // 3
    win = 2 * need - regular_score_kernel(suit, honor, k0, k1, k2, k3, need) == -1
    if not win:
        counts[t] = 3  # pair of t out: the rest must be sets only
        k0, k1, k2, k3 = keys_kernel(counts)
        sets = (n1 - 2) // 3
        a = suit[k0]
        b = suit[k1]
        c = suit[k2]
        h = honor[k3]
        for i in range(sets + 1):
            for j in range(sets + 1 - i):
                for k in range(sets + 1 - i - j):
                    if a[i] + b[j] + c[k] + h[sets - i - j - k] == 2 * sets:
                        win = True
    counts[t] = 4
    return win


@njit
def useful_kernel(counts, n, shape, s, held, physical, out, suit, honor, knits, orphans, pow5):
    """Mark in ``out`` (bool[34]) the tiles whose draw lowers the shape's shanten ``s``.

    ``held`` (int8[34]) counts hand + melds; with ``physical`` a tile held 4 times is never useful, else
    PyMahjongGB's convention (see the module docstring).
    """
    for t in range(34):
        out[t] = False
        if s >= NO_SHANTEN:
            continue
        c = counts[t]
        if physical:
            if held[t] >= 4:
                continue
        elif c >= 4:
            if shape == 0 and s == 0 and c == 4:
                out[t] = _regular_fifth_wins(counts, t, suit, honor, n + 1)
            elif shape == 4 and c == 4:
                v = knitted_straight_shanten_kernel(counts, suit, honor, knits, pow5, n + 1, NO_SHANTEN, t)
                out[t] = v < s
            continue
        counts[t] = c + 1
        v = shape_shanten_kernel(counts, n + 1, shape, suit, honor, knits, orphans, pow5)
        counts[t] = c
        out[t] = v < s
    return 0


@njit
def _regular_win(suit_win, honor_win, counts, k0, k1, k2, k3):
    """Regular win test of a complete hand from its keys: every group splits into sets, one pair."""
    pairs = 0
    for g in range(4):
        lo = 9 * g
        hi = lo + (9 if g < 3 else 7)
        m = 0
        for t in range(lo, hi):
            m += counts[t]
        r = m % 3
        if r == 1:
            return False
        if g == 0:
            w = suit_win[k0]
        elif g == 1:
            w = suit_win[k1]
        elif g == 2:
            w = suit_win[k2]
        else:
            w = honor_win[k3]
        if r == 0:
            if (w & 1) == 0:
                return False
        else:
            if (w & 2) == 0:
                return False
            pairs += 1
    return pairs == 1


@njit
def _win_shapes(counts, n, suit_win, honor_win, knits, orphans, pow5):
    """Bitmask (1 << shape) of the shapes a complete ``n``-tile standing hand satisfies."""
    k0, k1, k2, k3 = keys_kernel(counts)
    mask = 0
    if _regular_win(suit_win, honor_win, counts, k0, k1, k2, k3):
        mask |= 1
    if n == 14:
        pairs = 0
        odd = 0
        single = 0
        for t in range(34):
            c = counts[t]
            pairs += c >> 1
            odd += c & 1
            if c > 1:
                single = 1
        if odd == 0:
            mask |= 2
        o = 0
        kinds = 0
        for i in range(13):
            c = counts[orphans[i]]
            o += c
            if c > 0:
                kinds += 1
        if o == 14 and kinds == 13:
            mask |= 4
        if single == 0:
            for i in range(6):
                ok = True
                for s in range(3):
                    for r in range(9):
                        if counts[9 * s + r] > 0 and r % 3 != knits[i, s]:
                            ok = False
                if ok:
                    mask |= 8
                    break
    if n == 14 or n == 11:
        for i in range(6):
            kk0 = k0
            kk1 = k1
            kk2 = k2
            ok = True
            for s in range(3):
                for j in range(3):
                    r = knits[i, s] + 3 * j
                    if counts[9 * s + r] == 0:
                        ok = False
                    elif s == 0:
                        kk0 -= pow5[r]
                    elif s == 1:
                        kk1 -= pow5[r]
                    else:
                        kk2 -= pow5[r]
            if ok:
                for s in range(3):
                    for j in range(3):
                        counts[9 * s + knits[i, s] + 3 * j] -= 1
                w = _regular_win(suit_win, honor_win, counts, kk0, kk1, kk2, k3)
                for s in range(3):
                    for j in range(3):
                        counts[9 * s + knits[i, s] + 3 * j] += 1
                if w:
                    mask |= 16
                    break
    return mask


@njit
def _waits(counts, n, held, out, suit_win, honor_win, knits, orphans, pow5):
    """Mark in ``out`` the tiles (held fewer than 4 times) completing an ``n``-tile (3k+1) hand; count them."""
    found = 0
    k = (13 - n) // 3
    for t in range(34):
        out[t] = False
        if held[t] >= 4:
            continue
        counts[t] += 1
        w = _win_code(counts, k, suit_win, honor_win, knits)
        counts[t] -= 1
        if w == 1:
            out[t] = True
            found += 1
    return found


# --- batch kernels -----------------------------------------------------------------------------------------


@njit
def _batch_win_shapes(counts, n_melds, out, suit_win, honor_win, knits, orphans, pow5):
    """``out[i]``: win-shape bitmask of hand i (14 - 3*melds tiles), or a negative error code."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = _check(row)
        if n < 0:
            out[i] = n
            continue
        if n != 14 - 3 * n_melds[i]:
            out[i] = ERR_INVALID_SIZE
            continue
        out[i] = _win_shapes(row, n, suit_win, honor_win, knits, orphans, pow5)
    return 0


_ORPHAN_MASK = 0b100000001  # ranks 1 and 9


_B01 = np.int64(0x0101010101010101)  # byte-lane constants of the SWAR pass in win_code_at_kernel
_B06 = np.int64(0x0606060606060606)
_B7B = np.int64(0x7B7B7B7B7B7B7B7B)
_B80 = np.int64(-0x7F7F7F7F7F7F7F80)  # 0x8080808080808080 as an int64


@njit(inline="always")
def _word(counts, i, j0):
    """Bytes ``counts[i, j0:j0 + 8]`` as one little-endian int64 (LLVM merges the loads into one)."""
    w = np.int64(0)
    for j in range(8):
        w |= (np.int64(counts[i, j0 + j]) & 0xFF) << (8 * j)
    return w


@njit(inline="always")
def _hsum(w):
    """Sum of the bytes of ``w`` (valid while the sum is below 128)."""
    return (w * _B01) >> 56


@njit
def _suit_key(counts, i, lo, hi):
    """Base-5 key of ``counts[i, lo:hi]`` (rank lo is the lowest digit)."""
    k = 0
    for t in range(hi - 1, lo - 1, -1):
        k = k * 5 + np.int64(counts[i, t])  # np.int64 as in keys_kernel (int8 wraps under NUMBA_DISABLE_JIT)
    return k


@njit(forceinline=True)  # a call per hand costs as much as the test: LLVM inlines it
def win_code_at_kernel(counts, i, n_melds, suit_win, honor_win, knits):
    """1 if row ``i`` of ``counts`` (14 - 3*n_melds tiles) wins in any shape, 0 if not, or a negative error code.

    A first pass reads the 34 counts as five 64-bit words (SWAR): validation (every byte 0..4), group sizes
    (byte sums), parity and "some count >= 2" bits. The regular test then needs the group sizes to allow sets
    and one pair, and looks up one group key at a time (a failing group ends it). Seven pairs is a parity bit;
    rank bitmasks are built only when a special shape is still possible: honours and knitted (all counts <= 1
    and >= 5 honours), thirteen orphans (>= 7 honours), knitted straight (regular group sizes, >= 3 tiles per
    suit; removing the nine knitted tiles keeps the sizes mod 3).
    """
    w0 = _word(counts, i, 0)
    w1 = _word(counts, i, 8)
    w2 = _word(counts, i, 16)
    w3 = _word(counts, i, 24)
    w4 = (np.int64(counts[i, 32]) & 0xFF) | ((np.int64(counts[i, 33]) & 0xFF) << 8)
    orv = w0 | w1 | w2 | w3 | w4
    # a byte is bad iff its high bit is set (negative or >= 128) or adding 0x7B sets it (5..127); a carry out
    # of a byte only comes from a byte that is already bad
    bad = orv | (w0 + _B7B) | (w1 + _B7B) | (w2 + _B7B) | (w3 + _B7B) | (w4 + 0x7B7B)
    if (bad & _B80) != 0:
        return ERR_INVALID_COUNTS
    s0 = _hsum(w0) + (w1 & 0xFF)
    s1 = _hsum(w1 >> 8) + _hsum(w2 & 0xFFFF)
    s2 = _hsum(w2 >> 16) + _hsum(w3 & 0xFFFFFF)
    s3 = _hsum(w3 >> 24) + _hsum(w4)
    n = s0 + s1 + s2 + s3
    if n != 14 - 3 * n_melds:
        return ERR_INVALID_SIZE
    if n == 14 and (orv & _B01) == 0:
        return 1  # seven pairs (four identical tiles are two pairs)
    r0 = s0 % 3
    r1 = s1 % 3
    r2 = s2 % 3
    r3 = s3 % 3
    regular = r0 != 1 and r1 != 1 and r2 != 1 and r3 != 1 and r0 + r1 + r2 + r3 == 2
    if (
        regular
        and (suit_win[_suit_key(counts, i, 0, 9)] >> (r0 >> 1)) & 1
        and (suit_win[_suit_key(counts, i, 9, 18)] >> (r1 >> 1)) & 1
        and (suit_win[_suit_key(counts, i, 18, 27)] >> (r2 >> 1)) & 1
        and (honor_win[_suit_key(counts, i, 27, 34)] >> (r3 >> 1)) & 1
    ):
        return 1  # short-circuit: a group that does not split ends the test before the next key is built
    knitted = regular and (n == 14 or n == 11) and s0 >= 3 and s1 >= 3 and s2 >= 3
    hk = n == 14 and s3 >= 5 and (orv & _B06) == 0  # 14 singles: at most 9 knitted suit tiles
    orph = n == 14 and s3 >= 7
    if not (knitted or hk or orph):
        return 0
    m0 = 0  # rank bitmasks (bit r: rank r+1 held) of the three suits
    m1 = 0
    m2 = 0
    for r in range(9):
        m0 |= ((np.int64(counts[i, r]) + 7) >> 3) << r
        m1 |= ((np.int64(counts[i, 9 + r]) + 7) >> 3) << r
        m2 |= ((np.int64(counts[i, 18 + r]) + 7) >> 3) << r
    if hk:  # honours and knitted: 14 singles within one knitted combination and the honours
        for j in range(6):
            if (
                (m0 & ~KNIT_MASK[knits[j, 0]])
                | (m1 & ~KNIT_MASK[knits[j, 1]])
                | (m2 & ~KNIT_MASK[knits[j, 2]])
            ) == 0:
                return 1
    if orph and m0 == _ORPHAN_MASK and m1 == _ORPHAN_MASK and m2 == _ORPHAN_MASK:
        mh = 0
        for r in range(7):
            mh |= ((np.int64(counts[i, 27 + r]) + 7) >> 3) << r
        if mh == 127:
            return 1  # thirteen orphans: all 13 kinds and nothing else in 14 tiles
    if knitted:
        for j in range(6):  # knitted straight: all nine knitted tiles, then the rest as sets and a pair
            x0 = KNIT_MASK[knits[j, 0]]
            x1 = KNIT_MASK[knits[j, 1]]
            x2 = KNIT_MASK[knits[j, 2]]
            if ((m0 & x0) ^ x0) | ((m1 & x1) ^ x1) | ((m2 & x2) ^ x2) == 0 and groups_win_kernel(
                suit_win,
                honor_win,
                _suit_key(counts, i, 0, 9) - _DELTA9[x0],
                _suit_key(counts, i, 9, 18) - _DELTA9[x1],
                _suit_key(counts, i, 18, 27) - _DELTA9[x2],
                _suit_key(counts, i, 27, 34),
                s0 - 3,
                s1 - 3,
                s2 - 3,
                s3,
            ):
                return 1
    return 0


@njit
def _win_code(row, n_melds, suit_win, honor_win, knits):
    """:func:`win_code_at_kernel` of a single ``int8[34]`` row."""
    return win_code_at_kernel(row.reshape((1, row.shape[0])), 0, n_melds, suit_win, honor_win, knits)


@njit
def groups_win_kernel(suit_win, honor_win, k0, k1, k2, k3, s0, s1, s2, s3):
    """Regular win from group keys and sizes: each group splits into sets, exactly one also has the pair."""
    r0 = s0 % 3
    r1 = s1 % 3
    r2 = s2 % 3
    r3 = s3 % 3
    if r0 == 1 or r1 == 1 or r2 == 1 or r3 == 1:
        return False
    if (r0 + r1 + r2 + r3) != 2:
        return False
    return (
        (suit_win[k0] >> (r0 >> 1))
        & (suit_win[k1] >> (r1 >> 1))
        & (suit_win[k2] >> (r2 >> 1))
        & (honor_win[k3] >> (r3 >> 1))
        & 1
    ) == 1


@njit
def _batch_is_win(counts, n_melds, out, suit_win, honor_win, knits, orphans, pow5):
    """``out[i]``: 1 if hand i (14 - 3*melds tiles) wins in any shape, 0 if not, negative on bad input.

    Returns the number of bad rows.
    """
    bad = 0
    for i in range(counts.shape[0]):
        v = win_code_at_kernel(counts, i, n_melds[i], suit_win, honor_win, knits)
        out[i] = v
        bad += v < 0
    return bad


@njit
def _batch_shanten(counts, n_melds, out, suit, honor, suit_inc, honor_inc):
    """``out[i]``: overall shanten of hand i (13 or 14 - 3*melds tiles), or a negative error code < -1."""
    for i in range(counts.shape[0]):
        out[i] = _min_shanten_at(counts, i, -1 - np.int64(n_melds[i]), suit, honor, suit_inc, honor_inc)
    return 0


@njit
def _batch_shanten_by_shape(counts, n_melds, out, suit, honor, knits, orphans, pow5):
    """``out[i, shape]``: shanten per shape (NO_SHANTEN if it does not apply); row of error codes on bad input."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = _check(row)
        base = 13 - 3 * n_melds[i]
        if n >= 0 and n != base and n != base + 1:
            n = ERR_INVALID_SIZE
        if n < 0:
            for s in range(5):
                out[i, s] = n
            continue
        _all_shanten(row, n, out[i], suit, honor, knits, orphans, pow5)
    return 0


@njit
def _batch_waits(
    counts, n_melds, out, suit, honor, suit_inc, honor_inc, suit_win, honor_win, knits, orphans, pow5
):
    """``out[i]``: waits of hand i (13 - 3*melds tiles) as bool[34]; returns the first bad row or -1."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = _check(row)
        if n < 0 or n != 13 - 3 * n_melds[i]:
            return i
        # only ready hands wait; the batch kernel's own shanten specialization (no reshaped view of the row)
        if _min_shanten_at(counts, i, n, suit, honor, suit_inc, honor_inc) == 0:
            _waits(row, n, row, out[i], suit_win, honor_win, knits, orphans, pow5)
    return -1


@njit
def _batch_useful(counts, n_melds, shape, physical, s_out, useful, suit, honor, knits, orphans, pow5):
    """``s_out[i]``: shape shanten of waiting hand i; ``useful[i]``: its useful tiles; -1 or the first bad row."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = _check(row)
        if n < 0 or n != 13 - 3 * n_melds[i]:
            return i
        s = shape_shanten_kernel(row, n, shape, suit, honor, knits, orphans, pow5)
        s_out[i] = s
        useful_kernel(row, n, shape, s, row, physical, useful[i], suit, honor, knits, orphans, pow5)
    return -1


@njit
def _k_shanten_all(counts, held, physical, s_out, u_out, suit, honor, knits, orphans, pow5):
    """Per-hand entry: ``s_out[5]`` shanten per shape, ``u_out[5, 34]`` useful tiles (waiting hands only).

    Returns the overall shanten, or a negative code <= ERR_INVALID_COUNTS.
    """
    n = _check(counts)
    if n < 0:
        return n
    if n % 3 == 0 or n > 14:
        return ERR_INVALID_SIZE
    best = NO_SHANTEN
    for shape in range(5):
        v = shape_shanten_kernel(counts, n, shape, suit, honor, knits, orphans, pow5)
        s_out[shape] = v
        if n % 3 == 1:
            useful_kernel(
                counts, n, shape, v, held, physical, u_out[shape], suit, honor, knits, orphans, pow5
            )
        else:
            u_out[shape, :] = False
        best = min(best, v)
    return best


@njit
def _k_waits(counts, out, suit, honor, suit_inc, honor_inc, suit_win, honor_win, knits, orphans, pow5):
    """Per-hand entry for :func:`waits` on a bare count array: number of waits, or a negative code."""
    n = _check(counts)
    if n < 0:
        return n
    if n % 3 != 1 or n > 13:
        return ERR_INVALID_SIZE
    if min_shanten_kernel(counts, n, suit, honor, suit_inc, honor_inc) != 0:
        return 0
    return _waits(counts, n, counts, out, suit_win, honor_win, knits, orphans, pow5)


@njit
def _k_win_code(counts, suit_win, honor_win, knits):
    """Per-hand entry for :func:`is_win` on a bare count array (melds implied by the tile count)."""
    n = 0
    for t in range(34):
        n += counts[t]
    if n % 3 != 2 or n > 14:
        return ERR_INVALID_SIZE
    return _win_code(counts, (14 - n) // 3, suit_win, honor_win, knits)


# ---------------------------------------------------------------------------------------------------------
# Hand model
# ---------------------------------------------------------------------------------------------------------

# --- the engine's waits (cached per seat in mjenv.game) -----------------------------------------------------
_POP9 = np.array([i.bit_count() for i in range(512)], dtype=np.int64)  # popcount of 9-bit masks


@njit
def waits_bits_kernel(counts, h, n_melds, suit_win, honor_win):
    """The tiles that complete the waiting (13 - 3 * ``n_melds``) hand ``counts[h:h + 34]``, as two bit masks
    ``(lo, hi)``: bit ``t`` of ``lo`` for tiles 0..26, bit ``t - 27`` of ``hi`` for the honours.

    The engine caches them for each seat (``mjenv.game``'s ``WAITS``), so that every win check of a claim,
    robbing or self-draw is a bit test. The waits are the tiles ``t`` held fewer than 4 times for which
    :func:`win_code_at_kernel` (the rules core's win test) says ``hand + t`` wins, found without testing all
    34 tiles:

    * regular shape: the group sizes mod 3 must be (1, 0, 0, 0) or (2, 2, 0, 0) in some order, the groups not
      taking the tile must split into sets (and the pair) on their own (``suit_win``/``honor_win`` bits), and
      only then each tile of a candidate group is tried with :func:`groups_win_kernel`;
    * special shapes (necessary conditions, then the full win test on each candidate): seven pairs (exactly
      one tile held an odd number of times: that tile), thirteen orphans (only terminals and honours held: the
      13 orphans), honours and knitted (no tile held twice, suited tiles within one knitted combination: its
      tiles and the honours), knitted straight (8 of the 9 tiles of a knitted combination held, at most one
      meld: every tile).

    Bad hands (a wrong size) simply have no waits. ``counts`` is any integer array (the engine passes its
    state); it is not modified.
    """
    k0 = 0  # base-5 group keys (rank r is digit r), group sizes, bitmasks of held ranks and of odd counts
    k1 = 0
    k2 = 0
    k3 = 0
    s0 = 0
    s1 = 0
    s2 = 0
    s3 = 0
    m0 = 0
    m1 = 0
    m2 = 0
    o0 = 0
    o1 = 0
    o2 = 0
    o3 = 0
    big = 0  # OR of all counts: <= 1 iff no tile is held twice
    for r in range(8, -1, -1):
        # np.int64, as numba computes: under NUMBA_DISABLE_JIT an int8 count keeps the keys and masks int8
        c0 = np.int64(counts[h + r])
        c1 = np.int64(counts[h + 9 + r])
        c2 = np.int64(counts[h + 18 + r])
        k0 = k0 * 5 + c0
        k1 = k1 * 5 + c1
        k2 = k2 * 5 + c2
        s0 += c0
        s1 += c1
        s2 += c2
        m0 |= ((c0 + 7) >> 3) << r
        m1 |= ((c1 + 7) >> 3) << r
        m2 |= ((c2 + 7) >> 3) << r
        o0 |= (c0 & 1) << r
        o1 |= (c1 & 1) << r
        o2 |= (c2 & 1) << r
        big |= c0 | c1 | c2
    for r in range(6, -1, -1):
        c3 = np.int64(counts[h + 27 + r])
        k3 = k3 * 5 + c3
        s3 += c3
        o3 |= (c3 & 1) << r
        big |= c3
    lo = 0  # bits of tiles 0..26
    hi = 0  # bits of tiles 27..33 (bit t - 27)
    r0 = s0 % 3
    r1 = s1 % 3
    r2 = s2 % 3
    r3 = s3 % 3
    # np.int64: numpy bools add as a logical or (NUMBA_DISABLE_JIT), numba's as integers
    n1 = np.int64(r0 == 1) + np.int64(r1 == 1) + np.int64(r2 == 1) + np.int64(r3 == 1)
    n2 = np.int64(r0 == 2) + np.int64(r1 == 2) + np.int64(r2 == 2) + np.int64(r3 == 2)
    if (n1 == 1 and n2 == 0) or (n1 == 0 and n2 == 2):
        # a group that does not take the tile must split on its own: sets, or sets and the pair when it is 2 mod 3
        f0 = (suit_win[k0] >> (r0 >> 1)) & 1
        f1 = (suit_win[k1] >> (r1 >> 1)) & 1
        f2 = (suit_win[k2] >> (r2 >> 1)) & 1
        f3 = (honor_win[k3] >> (r3 >> 1)) & 1
        for g in range(4):
            rg = r0 if g == 0 else (r1 if g == 1 else (r2 if g == 2 else r3))
            if rg == 0:
                continue
            others = (f0 | (g == 0)) & (f1 | (g == 1)) & (f2 | (g == 2)) & (f3 | (g == 3))
            if others == 0:
                continue
            p = 1
            for r in range(9 if g < 3 else 7):
                t = 9 * g + r
                if counts[h + t] < 4 and groups_win_kernel(
                    suit_win,
                    honor_win,
                    k0 + (p if g == 0 else 0),
                    k1 + (p if g == 1 else 0),
                    k2 + (p if g == 2 else 0),
                    k3 + (p if g == 3 else 0),
                    s0 + (g == 0),
                    s1 + (g == 1),
                    s2 + (g == 2),
                    s3 + (g == 3),
                ):
                    if g < 3:
                        lo |= 1 << t
                    else:
                        hi |= 1 << r
                p *= 5
    if n_melds <= 1:
        cand_lo = 0  # candidate tiles of the special shapes (necessary conditions), tried with the full test
        cand_hi = 0
        if n_melds == 0:
            n_odd = _POP9[o0] + _POP9[o1] + _POP9[o2] + _POP9[o3]
            if n_odd == 1:  # seven pairs: the one tile held an odd number of times
                cand_lo |= o0 | (o1 << 9) | (o2 << 18)
                cand_hi |= o3
            if (m0 | m1 | m2) & 0b011111110 == 0:  # thirteen orphans: only terminals and honours held
                cand_lo |= 0b100000001 | (0b100000001 << 9) | (0b100000001 << 18)
                cand_hi |= 127
            if big <= 1:  # honours and knitted tiles: singles within one knitted combination and the honours
                for j in range(6):
                    x0 = KNIT_MASK[KNITS[j, 0]]
                    x1 = KNIT_MASK[KNITS[j, 1]]
                    x2 = KNIT_MASK[KNITS[j, 2]]
                    if (m0 & ~x0) | (m1 & ~x1) | (m2 & ~x2) == 0:
                        cand_lo |= x0 | (x1 << 9) | (x2 << 18)
                        cand_hi |= 127
        for j in range(6):  # knitted straight: 8 of the 9 knitted tiles held
            x0 = KNIT_MASK[KNITS[j, 0]]
            x1 = KNIT_MASK[KNITS[j, 1]]
            x2 = KNIT_MASK[KNITS[j, 2]]
            if _POP9[m0 & x0] + _POP9[m1 & x1] + _POP9[m2 & x2] >= 8:
                cand_lo |= (1 << 27) - 1
                cand_hi |= 127
                break
        cand_lo &= ~lo
        cand_hi &= ~hi
        if cand_lo != 0 or cand_hi != 0:
            row = np.empty(34, np.int8)
            for t in range(34):
                row[t] = counts[h + t]
            for t in range(34):
                if (t < 27 and (cand_lo >> t) & 1 == 0) or (t >= 27 and (cand_hi >> (t - 27)) & 1 == 0):
                    continue
                if row[t] >= 4:
                    continue
                row[t] += 1
                # a call through a symbol, not the inlined test: this path is rare, and one more copy of the
                # inlined win test cost seconds of compile time (in each process that compiles the engine)
                if _win_code_row(row, np.int64(n_melds), suit_win, honor_win) == 1:
                    if t < 27:
                        lo |= 1 << t
                    else:
                        hi |= 1 << (t - 27)
                row[t] -= 1
    return lo, hi


# --- table-free shape and wait predicates (the scorer's: mjenv.fans) ---------------------------------------
# These read a hand ``h`` (int64[34] counts, modified and restored in place) without the lookup tables: the
# scorer calls them once per win, where loading the tables would cost more than the test.

_TERMINAL_OR_HONOR = np.ascontiguousarray(IS_TERMINAL_OR_HONOR[:NUM_TILE_TYPES])
_TERMINAL_OR_HONOR.setflags(write=False)


@njit
def knitted_perm_kernel(h):
    """Index of the knitted straight (组合龙) all nine of whose tiles are in ``h``, or -1."""
    for k in range(6):
        ok = True
        for s in range(3):
            b = 9 * KNITS[k, s] + s
            ok &= h[b] > 0 and h[b + 3] > 0 and h[b + 6] > 0
        if ok:
            return k
    return -1


@njit
def honors_knitted_kernel(h):
    """1 for 全不靠 (14 single tiles of honours and one knitted straight), 2 for 七星不靠, else 0."""
    for t in range(34):
        if h[t] > 1:
            return 0
    for k in range(6):
        ok = True
        for t in range(27):
            if h[t] and t // 9 != KNITS[k, t % 3]:
                ok = False
                break
        if ok:
            nh = 0
            for t in range(27, 34):
                nh += h[t]
            return 2 if nh == 7 else 1
    return 0


@njit
def special_shape_kernel(h, kind):
    """Is ``h`` (14 concealed tiles) seven pairs (kind 0) / thirteen orphans (kind 1)?"""
    if kind == 0:
        for t in range(34):
            if h[t] % 2:
                return False
        return True
    for t in range(34):
        if _TERMINAL_OR_HONOR[t] != (h[t] > 0):
            return False
    return True


@njit
def suit_sets_kernel(h, b, pair):
    """Do the 9 counts ``h[b:b+9]`` (minus a pair at tile ``pair``) split into sets? Greedy from the lowest
    rank: three chows equal three pungs, so ``count % 3`` chows must start at each rank."""
    s1 = 0  # chows started one rank below
    s2 = 0  # chows started two ranks below
    for i in range(9):
        c = h[b + i] - s1 - s2 - (2 if b + i == pair else 0)
        if c < 0:
            return False
        if c >= 3:  # c <= 4: c % 3 without a division
            c -= 3
        if c > 0 and i > 6:
            return False
        s2 = s1
        s1 = c
    return True


@njit
def regular_ok_kernel(h, nneed):
    """Can ``h`` (3 * nneed + 2 tiles) be read as a pair and ``nneed`` sets?"""
    ps = -1
    for s in range(3):
        n = 0
        for t in range(9 * s, 9 * s + 9):
            n += h[t]
        if n % 3 == 1 or (n % 3 == 2 and ps >= 0):
            return False
        if n % 3 == 2:
            ps = s
    for t in range(27, 34):  # honours: pungs and at most one pair
        if h[t] % 3 == 1 or (h[t] % 3 == 2 and ps >= 0):
            return False
        if h[t] % 3 == 2:
            ps = 3
    if ps < 0:
        return False
    for s in range(3):
        if s != ps and not suit_sets_kernel(h, 9 * s, -1):
            return False
    if ps == 3:
        return True
    for p in range(9 * ps, 9 * ps + 9):
        if h[p] >= 2 and suit_sets_kernel(h, 9 * ps, p):
            return True
    return False


@njit
def group_code_kernel(h, g):
    """How the tiles of group ``g`` (suit 0..2, 3 = honours) split: -1 not into sets and at most one pair,
    0 into sets only (or none), 1 into a pair and sets."""
    if g == 3:
        pairs = 0
        for t in range(27, 34):
            r = h[t] % 3
            if r == 1:
                return -1
            pairs += r == 2
        return -1 if pairs > 1 else pairs
    b = 9 * g
    n = np.int64(0)  # not the literal 0: no Literal specialization of suit_code_kernel (see _score)
    wsum = np.int64(0)
    for r in range(9):
        n += h[b + r]
        wsum += r * h[b + r]
    return suit_code_kernel(h, b, n, wsum)


@njit
def suit_code_kernel(h, b, n, wsum):
    """``group_code_kernel`` of the suit at tile ``b`` holding ``n`` tiles of rank sum ``wsum`` (ranks 0..8)."""
    if n % 3 == 1:
        return -1
    if n % 3 == 0:
        return 0 if suit_sets_kernel(h, b, -1) else -1
    # a chow or pung adds 0 mod 3 to the rank sum and a pair of rank r adds 2r: r = 2 * wsum mod 3
    for r in range((2 * wsum) % 3, 9, 3):
        if h[b + r] >= 2 and suit_sets_kernel(h, b, b + r):
            return 1
    return -1


@njit
def single_wait_kernel(conc13, nfix, win, h, regular):
    """True when ``win`` is the only tile that completes the 13-tile hand (独听, needed for 边/嵌/单钓).

    ``h``: int64[34] scratch; ``regular``: the hand with ``win`` is known to read as a pair and sets.
    A regular hand is a win when every group splits (``group_code_kernel``) with exactly one pair; adding a tile
    changes one group, so a group can take it only when all the others split, and only with the code that
    gives one pair in all. When ``regular``, the groups other than ``win``'s split already, as their tile
    counts say (0 mod 3: sets, 2 mod 3: the pair).
    """
    distinct = 0
    odd = 0
    odd_t = -1
    for t in range(34):
        c = conc13[t]
        h[t] = c
        distinct += c > 0
        if c % 2:
            odd += 1
            odd_t = t
    if nfix == 0 and odd == 1 and odd_t != win:  # the one odd tile completes seven pairs
        return False
    gw = win // 9 if win < 27 else 3
    codes = 0  # 2 bits per group: the code + 1
    for g in range(4):
        if regular and g != gw:
            n = 0
            for t in range(9 * g, 34 if g == 3 else 9 * g + 9):
                n += h[t]
            c = n % 3 // 2
        else:
            c = group_code_kernel(h, g)
        codes |= (c + 1) << (2 * g)
    for g in range(4):
        bad = 0
        pairs = 0
        for k in range(4):
            c = ((codes >> (2 * k)) & 3) - 1
            if k != g:
                bad += c < 0
                pairs += c
        if bad == 0 and pairs <= 1 and _group_takes(h, g, win, 1 - pairs):
            return False
    # 十三幺, 全不靠, 组合龙 need many distinct standing tiles
    return not (nfix <= 1 and distinct >= 8 and _special_wait(h, nfix, win))


@njit
def _group_takes(h, g, win, need):
    """Does some tile of group ``g`` other than ``win`` give the group the code ``need`` (0 or 1)?"""
    b = 9 * g
    e = 34 if g == 3 else b + 9
    n = 0
    wsum = 0
    for t in range(b, e):
        n += h[t]
        wsum += (t - b) * h[t]
    if (n + 1) % 3 != 2 * need:  # code 0 needs 0 tiles mod 3, code 1 needs 2
        return False
    for t in range(b, e):
        if t == win:
            continue
        r = t - b
        near = h[t] > 0
        if g < 3:
            near |= (r > 0 and h[t - 1] > 0) or (r > 1 and h[t - 2] > 0)
            near |= (r < 8 and h[t + 1] > 0) or (r < 7 and h[t + 2] > 0)
        if not near:  # a tile with no neighbour in the hand joins no set or pair
            continue
        h[t] += 1
        cg = group_code_kernel(h, 3) if g == 3 else suit_code_kernel(h, b, n + 1, wsum + r)
        h[t] -= 1
        if cg == need:
            return True
    return False


@njit
def _special_wait(h, nfix, win):
    """Does a tile other than ``win`` complete 13-tile ``h`` as 十三幺, 全不靠 or (with sets) 组合龙?"""
    orphans_only = True
    single = True
    for t in range(34):
        orphans_only &= h[t] == 0 or _TERMINAL_OR_HONOR[t]
        single &= h[t] <= 1
    knit = False  # some knitted straight misses at most one tile in h
    for k in range(6):
        miss = 0
        for s in range(3):
            b = 9 * KNITS[k, s] + s
            miss += np.int64(h[b] == 0) + np.int64(h[b + 3] == 0) + np.int64(h[b + 6] == 0)  # numpy bools: or
        knit |= miss <= 1
    orphans_only &= nfix == 0
    single &= nfix == 0
    if not (orphans_only or single or knit):
        return False
    for t in range(34):
        if t == win:
            continue
        h[t] += 1
        won = (orphans_only and special_shape_kernel(h, 1)) or (single and honors_knitted_kernel(h) > 0)
        if not won and knit:
            won = knitted_win_kernel(h, nfix)
        h[t] -= 1
        if won:
            return True
    return False


@njit
def knitted_win_kernel(h, nfix):
    """Is ``h`` a knitted straight (组合龙) and ``1 - nfix`` sets and a pair?"""
    k = knitted_perm_kernel(h)
    if k < 0:
        return False
    take_knitted_kernel(h, k, -1)
    won = regular_ok_kernel(h, 1 - nfix)
    take_knitted_kernel(h, k, 1)
    return won


@njit
def take_knitted_kernel(h, k, d):
    """Add ``d`` to each of the nine tiles of knitted straight ``k``."""
    for s in range(3):
        b = 9 * KNITS[k, s] + s
        h[b] += d
        h[b + 3] += d
        h[b + 6] += d


_MELD_RE = re.compile(r"\[([^\]]*)\]")


class Hand:
    """Standing tiles (``counts: int8[34]``), up to four fixed melds (packed ints) and a flower count.

    Parameters
    ----------
    counts : ndarray[int8, (34,)]
        Standing tiles; ``13 - 3*len(melds)`` (waiting) or one more (complete) tiles.
    melds : sequence of int
        Packed melds (:func:`mjenv.melds.pack`).
    flowers : int
        Number of flowers (0..8).

    Examples
    --------
    >>> h = Hand.parse("[567m,2][EEE,1] 123m45p99s")
    >>> len(h.melds), int(h.counts.sum())
    (2, 7)
    >>> str(h)
    '[567m,2][EEE,1] 123m99s45p'
    """

    __slots__ = ("counts", "flowers", "melds", "n_melds")

    def __init__(self, counts, melds=(), flowers: int = 0, n_melds: int | None = None):
        c = np.asarray(counts)
        if c.shape != (NUM_TILE_TYPES,):
            raise ValueError(f"counts must have shape (34,), got {c.shape}")
        if not np.issubdtype(c.dtype, np.integer):
            raise TypeError(f"counts must be integers, got dtype {c.dtype}")
        if (c < 0).any():
            raise ValueError("counts must be non-negative")
        if isinstance(melds, (int, np.integer)) or not hasattr(melds, "__iter__"):
            raise TypeError("melds must be a sequence of packed melds")
        ms = [int(m) for m in melds]
        if len(ms) > 4:
            raise ValueError(f"at most 4 melds, got {len(ms)}")
        if isinstance(flowers, bool) or not isinstance(flowers, (int, np.integer)) or not 0 <= flowers <= 8:
            raise ValueError(f"flowers must be an int 0..8, got {flowers!r}")
        held = c.astype(np.int64).copy()
        for m in ms:
            if _melds.kind_of(m) not in (_melds.CHOW, _melds.PUNG, _melds.KONG):
                raise ValueError(f"not a packed meld: {m!r}")
            for t in _melds.meld_tiles(m):
                held[t] += 1
        over = np.nonzero(held > 4)[0]
        if len(over):
            from mjenv.tiles import tile_to_botzone

            raise ValueError(
                "more than 4 copies across hand and melds of "
                + ", ".join(tile_to_botzone(int(t)) for t in over)
            )
        if n_melds is None:
            n_melds = len(ms)
        elif ms or not 0 <= n_melds <= 4:
            raise ValueError("n_melds (melds of unknown tiles) must be 0..4 and given without melds")
        n = int(c.sum())
        base = 13 - 3 * n_melds
        if n not in (base, base + 1):
            raise ValueError(
                f"a hand with {n_melds} meld(s) needs {base} or {base + 1} standing tiles, got {n}"
            )
        self.n_melds = int(n_melds)
        self.counts = np.ascontiguousarray(c, dtype=np.int8)
        self.melds = tuple(ms)
        self.flowers = int(flowers)

    @property
    def n_tiles(self) -> int:
        """Number of standing tiles."""
        return int(self.counts.sum())

    @property
    def is_complete(self) -> bool:
        """True for a 14 - 3*melds tile hand (one that can be a win)."""
        return self.n_tiles == 14 - 3 * self.n_melds

    def held(self) -> np.ndarray:
        """Counts of hand plus melds (``int8[34]``)."""
        h = self.counts.copy()
        for m in self.melds:
            for t in _melds.meld_tiles(m):
                h[t] += 1
        return h

    @classmethod
    def parse(cls, text: str, implicit_melds: bool = False) -> Hand:
        """Parse ``"[567m,2][EEE,1] 123m45p"``: bracketed fixed melds (``[tiles,offer]``) then standing tiles.

        A meld of three consecutive tiles is a chow (offer = claimed tile 1..3, default 1), three equal tiles a
        pung (offer 1..3, default 1), four equal tiles a kong (offer 0 = concealed, default 0).
        Standing tiles use any notation of :func:`mjenv.tiles.parse_tiles`. With ``implicit_melds`` a hand
        without bracketed melds and fewer than 13 tiles stands for ``(14 - n) // 3`` melds of unknown tiles.
        """
        if not isinstance(text, str):
            raise TypeError(f"hand must be a str, got {type(text).__name__}")
        ms = []
        for body in _MELD_RE.findall(text):
            parts = body.split(",")
            if len(parts) > 2:
                raise ValueError(f"meld [{body}] must be [tiles] or [tiles,offer]")
            tiles = sorted(parse_tiles(parts[0]))
            offer = None
            if len(parts) == 2:
                if not parts[1].strip().isdigit():
                    raise ValueError(f"meld offer in [{body}] must be 0..3")
                offer = int(parts[1])
            if any(t >= NUM_TILE_TYPES for t in tiles):
                raise ValueError(f"flowers cannot be in a meld: [{body}]")
            if len(tiles) == 4 and len(set(tiles)) == 1:
                ms.append(_melds.pack(_melds.KONG, tiles[0], 0 if offer is None else offer))
            elif len(tiles) == 3 and len(set(tiles)) == 1:
                ms.append(_melds.pack(_melds.PUNG, tiles[0], 1 if offer is None else offer))
            elif (
                len(tiles) == 3
                and tiles[0] < 27
                and tiles[1] == tiles[0] + 1
                and tiles[2] == tiles[0] + 2
                and tiles[0] // 9 == tiles[2] // 9
            ):
                ms.append(_melds.pack(_melds.CHOW, tiles[1], 1 if offer is None else offer))
            else:
                raise ValueError(f"meld [{body}] is not a chow, pung or kong")
        rest = _MELD_RE.sub(" ", text)
        if "[" in rest or "]" in rest:
            raise ValueError(f"unbalanced brackets in {text!r}")
        tiles = parse_tiles(rest)
        flowers = sum(1 for t in tiles if t >= NUM_TILE_TYPES)
        counts = np.zeros(NUM_TILE_TYPES, dtype=np.int64)
        for t in tiles:
            if t < NUM_TILE_TYPES:
                counts[t] += 1
        n = int(counts.sum())
        if implicit_melds and not ms and 0 < n < 13 and n % 3 != 0:
            return cls(counts, (), flowers, n_melds=(14 - n) // 3)
        return cls(counts, ms, flowers)

    @classmethod
    def from_botzone(cls, pack=(), hand=()) -> Hand:
        """From reference-calculator tuples: ``pack=(("PENG", "W1", 1), ...)``, ``hand=("W2", "W3", ...)``."""
        if not isinstance(pack, (tuple, list)) or not isinstance(hand, (tuple, list)):
            raise TypeError("pack and hand must be tuples")
        ms = [_melds.from_pack(tuple(p) if isinstance(p, list) else p) for p in pack]
        counts = np.zeros(NUM_TILE_TYPES, dtype=np.int64)
        for t in parse_tiles(list(hand)):
            if t >= NUM_TILE_TYPES:
                raise ValueError("flowers cannot be standing tiles")
            counts[t] += 1
        return cls(counts, ms)

    def to_botzone(self) -> tuple[tuple, tuple]:
        """``(pack, hand)`` tuples for the reference calculator."""
        from mjenv.tiles import counts_to_tiles, tile_to_botzone

        return (
            tuple(_melds.to_pack(m) for m in self.melds),
            tuple(tile_to_botzone(t) for t in counts_to_tiles(self.counts)),
        )

    def __str__(self) -> str:
        from mjenv.tiles import counts_to_tiles

        parts = []
        for m in self.melds:
            parts.append(f"[{format_tiles(_melds.meld_tiles(m))},{_melds.offer_of(m)}]")
        s = "".join(parts)
        body = format_tiles(counts_to_tiles(self.counts))
        if self.flowers:
            body += format_tiles(range(34, 34 + self.flowers))
        return f"{s} {body}" if s else body

    def __repr__(self) -> str:
        return f"Hand.parse({str(self)!r})"


def as_hand(hand) -> Hand:
    """Coerce a :class:`Hand`, a hand string or a 34-count array into a :class:`Hand`.

    A string without bracketed melds or a count array of ``13 - 3k`` (or one more) tiles stands for a hand with ``k`` unknown fixed melds.
    """
    if isinstance(hand, Hand):
        return hand
    if isinstance(hand, str):
        return Hand.parse(hand, implicit_melds=True)
    if isinstance(hand, (np.ndarray, list, tuple)):
        c = np.asarray(hand)
        if c.shape != (NUM_TILE_TYPES,):
            raise ValueError(f"a count array must have shape (34,), got {c.shape}")
        if not np.issubdtype(c.dtype, np.integer):
            raise TypeError(f"counts must be integers, got dtype {c.dtype}")
        n = int(c.sum())
        if n > 14 or n < 1 or n % 3 == 0:
            raise ValueError(f"a count array must hold 3k+1 or 3k+2 tiles (at most 14), got {n}")
        return Hand(c, (), 0, n_melds=(14 - n) // 3)
    raise TypeError(f"hand must be a Hand, a str or a count array, got {type(hand).__name__}")


# ---------------------------------------------------------------------------------------------------------
# per-hand API
# ---------------------------------------------------------------------------------------------------------


class Shanten(NamedTuple):
    """Shanten number and the useful tiles (sorted tile ids) that lower it."""

    shanten: int
    useful: tuple[int, ...]


def _args():
    suit, honor, suit_win, honor_win = load_tables()
    return suit, honor, suit_win, honor_win


def _is_plain_counts(hand) -> bool:
    return (
        type(hand) is np.ndarray
        and hand.dtype == np.int8
        and hand.shape == (NUM_TILE_TYPES,)
        and hand.flags.c_contiguous
    )


def is_win(hand) -> bool:
    """True if a complete hand (14 - 3*melds standing tiles) wins in some shape.

    >>> is_win("123m456m789m123s55p")
    True
    >>> is_win("[123m,1] 456m789m123s55p")
    True
    """
    if _is_plain_counts(hand):  # fast path: int8[34] counts, melds implied by the tile count
        _, _, suit_win, honor_win = _TABLES or load_tables()
        code = _k_win_code(hand, suit_win, honor_win, KNITS)
        if code >= 0:
            return code == 1
    return win_shapes(hand) != 0


def win_shapes(hand) -> int:
    """Bitmask ``1 << shape`` of the winning shapes of a complete hand (0 if not a win).

    >>> win_shapes("11223344556677m") == (1 << REGULAR) | (1 << SEVEN_PAIRS)
    True
    """
    h = as_hand(hand)
    if not h.is_complete:
        raise ValueError(
            f"win detection needs a complete hand (14 - 3*melds tiles), got {h.n_tiles} standing tiles"
        )
    _, _, suit_win, honor_win = load_tables()
    c = h.counts.copy()
    return int(_win_shapes(c, h.n_tiles, suit_win, honor_win, KNITS, ORPHANS, POW5))


def waits(hand) -> tuple[int, ...]:
    """Tiles (ids) that complete a waiting hand (13 - 3*melds tiles); tiles held 4 times are excluded.

    >>> from mjenv.tiles import format_tiles
    >>> format_tiles(waits("1112345678999m"))
    '123456789m'
    """
    suit, honor, suit_win, honor_win = _TABLES or load_tables()
    out = np.zeros(34, dtype=np.bool_)
    if _is_plain_counts(hand):  # fast path: int8[34] counts, melds implied by the tile count
        suit_inc, honor_inc = _SHANTEN_TABLES or load_shanten_tables()
        inc = (suit_inc, honor_inc, suit_win, honor_win)
        if _k_waits(hand.copy(), out, suit, honor, *inc, KNITS, ORPHANS, POW5) >= 0:
            return tuple(np.flatnonzero(out).tolist())
    h = as_hand(hand)
    if h.is_complete:
        raise ValueError(f"waits need a waiting hand (13 - 3*melds tiles), got {h.n_tiles} standing tiles")
    _waits(h.counts.copy(), h.n_tiles, h.held(), out, suit_win, honor_win, KNITS, ORPHANS, POW5)
    return tuple(np.flatnonzero(out).tolist())


def _all_shapes(hand, physical: bool):
    """(overall, shanten int8[5], useful bool[5, 34]) of a hand, via one kernel call."""
    if _is_plain_counts(hand):
        counts, held = hand.copy(), hand
    else:
        h = as_hand(hand)
        counts, held = h.counts.copy(), h.held()
    suit, honor, _, _ = _TABLES or load_tables()
    s = np.empty(NUM_SHAPES, dtype=np.int8)
    u = np.empty((NUM_SHAPES, NUM_TILE_TYPES), dtype=np.bool_)
    best = _k_shanten_all(counts, held, bool(physical), s, u, suit, honor, KNITS, ORPHANS, POW5)
    if best <= ERR_INVALID_COUNTS:
        as_hand(hand)  # raises the detailed error
        raise ValueError("invalid hand")
    return int(best), s, u


def shanten_by_shape(hand, physical: bool = True) -> dict[str, Shanten]:
    """Shanten and useful tiles of every shape that applies to the hand (keys from ``SHAPE_NAMES``).

    Seven pairs, thirteen orphans and honours-and-knitted apply to 13/14 standing tiles (no melds), the
    knitted straight to 10/11 (one meld) and 13/14. Useful tiles are computed for waiting hands
    (13 - 3*melds tiles) and empty for complete ones.

    >>> r = shanten_by_shape("1122334455667m")
    >>> r["seven_pairs"]
    Shanten(shanten=0, useful=(6,))
    """
    _, s, u = _all_shapes(hand, physical)
    return {
        name: Shanten(int(s[i]), tuple(np.flatnonzero(u[i]).tolist()))
        for i, name in enumerate(SHAPE_NAMES)
        if s[i] < NO_SHANTEN
    }


def shanten(hand, physical: bool = True) -> Shanten:
    """Overall shanten (minimum over the shapes) and the union of the useful tiles of the best shapes.

    >>> shanten("123m456m789m123s5p")
    Shanten(shanten=0, useful=(22,))
    """
    best, s, u = _all_shapes(hand, physical)
    return Shanten(best, tuple(np.flatnonzero(u[s == best].any(axis=0)).tolist()))


# ---------------------------------------------------------------------------------------------------------
# batch API
# ---------------------------------------------------------------------------------------------------------


def _batch_args(counts, n_melds):
    if not isinstance(counts, np.ndarray):
        raise TypeError(f"counts must be a numpy array, got {type(counts).__name__}")
    if counts.ndim != 2 or counts.shape[1] != NUM_TILE_TYPES:
        raise ValueError(f"counts must have shape (N, 34), got {counts.shape}")
    if counts.dtype != np.int8:
        raise TypeError(f"counts must be int8, got {counts.dtype}")
    counts = np.ascontiguousarray(counts)
    if np.isscalar(n_melds) or (isinstance(n_melds, np.ndarray) and n_melds.ndim == 0):
        m = int(n_melds)
        if not 0 <= m <= 4:
            raise ValueError(f"n_melds must be 0..4, got {m}")
        n_melds = np.full(counts.shape[0], m, dtype=np.int8)
    else:
        n_melds = np.ascontiguousarray(n_melds, dtype=np.int8)
        if n_melds.shape != (counts.shape[0],):
            raise ValueError(f"n_melds must be a scalar or shape ({counts.shape[0]},), got {n_melds.shape}")
        if ((n_melds < 0) | (n_melds > 4)).any():
            raise ValueError("n_melds must be 0..4")
    return counts, n_melds


def _raise_bad(codes: np.ndarray, what: str) -> None:
    bad = np.nonzero(codes <= ERR_INVALID_COUNTS)[0]
    if len(bad):
        i = int(bad[0])
        reason = (
            "a count outside 0..4"
            if codes[i] == ERR_INVALID_COUNTS
            else "a tile count that does not fit its melds"
        )
        raise ValueError(f"{what}: row {i} has {reason} ({len(bad)} bad rows)")


def batch_is_win(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Win test of many complete hands.

    Parameters
    ----------
    counts : ndarray[int8, (N, 34)]
        Standing tiles, ``14 - 3*n_melds`` per row.
    n_melds : int or ndarray[int8, (N,)]
        Fixed melds per hand.

    Returns
    -------
    ndarray[bool, (N,)]
    """
    counts, n_melds = _batch_args(counts, n_melds)
    _, _, suit_win, honor_win = load_tables()
    out = np.empty(counts.shape[0], dtype=np.int8)
    if _batch_is_win(counts, n_melds, out, suit_win, honor_win, KNITS, ORPHANS, POW5):
        _raise_bad(out, "batch_is_win")
    return out.view(np.bool_)  # every entry is 0 or 1 here


def batch_win_shapes(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Win-shape bitmasks (``int8[N]``, bit ``1 << shape``) of many complete hands (see :func:`batch_is_win`)."""
    counts, n_melds = _batch_args(counts, n_melds)
    _, _, suit_win, honor_win = load_tables()
    out = np.empty(counts.shape[0], dtype=np.int8)
    _batch_win_shapes(counts, n_melds, out, suit_win, honor_win, KNITS, ORPHANS, POW5)
    _raise_bad(out, "batch_win_shapes")
    return out


def batch_shanten(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Overall shanten (``int8[N]``) of many hands of ``13 - 3*n_melds`` or one more standing tiles."""
    counts, n_melds = _batch_args(counts, n_melds)
    suit, honor, _, _ = load_tables()
    out = np.empty(counts.shape[0], dtype=np.int8)
    _batch_shanten(counts, n_melds, out, suit, honor, *load_shanten_tables())
    _raise_bad(out, "batch_shanten")
    return out


def batch_shanten_by_shape(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Shanten per shape (``int8[N, 5]``, ``NO_SHANTEN`` where a shape does not apply).

    Shapes other than the regular one are computed from the standing tiles' size alone: with melds, only the
    regular shape (and the knitted straight with one meld) applies, as in :func:`shanten_by_shape`.
    """
    counts, n_melds = _batch_args(counts, n_melds)
    suit, honor, _, _ = load_tables()
    out = np.empty((counts.shape[0], NUM_SHAPES), dtype=np.int8)
    _batch_shanten_by_shape(counts, n_melds, out, suit, honor, KNITS, ORPHANS, POW5)
    _raise_bad(out[:, 0], "batch_shanten_by_shape")
    return out


def batch_waits(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Waits (``bool[N, 34]``) of many waiting hands (``13 - 3*n_melds`` standing tiles each).

    Tiles held 4 times in the standing hand are excluded (the melds are not known to this function).
    """
    counts, n_melds = _batch_args(counts, n_melds)
    suit, honor, suit_win, honor_win = load_tables()
    out = np.zeros((counts.shape[0], NUM_TILE_TYPES), dtype=np.bool_)
    counts = counts.copy()
    suit_inc, honor_inc = load_shanten_tables()
    bad = _batch_waits(
        counts, n_melds, out, suit, honor, suit_inc, honor_inc, suit_win, honor_win, KNITS, ORPHANS, POW5
    )
    if bad >= 0:
        raise ValueError(
            f"batch_waits: row {bad} has a count outside 0..4 or does not hold 13 - 3*melds tiles"
        )
    return out


def batch_useful(counts: np.ndarray, shape: int, n_melds=0, physical: bool = True):
    """Shanten of one shape and its useful tiles for many waiting hands (``13 - 3*n_melds`` tiles).

    Returns
    -------
    shanten : ndarray[int8, (N,)]
        ``NO_SHANTEN`` where the shape does not apply to the hand size.
    useful : ndarray[bool, (N, 34)]
        With ``physical=False``: PyMahjongGB's convention (see the module docstring); otherwise tiles held
        4 times in the row are never useful.
    """
    if shape not in range(NUM_SHAPES):
        raise ValueError(f"shape must be 0..4 (REGULAR..KNITTED_STRAIGHT), got {shape!r}")
    counts, n_melds = _batch_args(counts, n_melds)
    suit, honor, _, _ = load_tables()
    s = np.empty(counts.shape[0], dtype=np.int8)
    u = np.zeros((counts.shape[0], NUM_TILE_TYPES), dtype=np.bool_)
    bad = _batch_useful(
        counts.copy(), n_melds, shape, bool(physical), s, u, suit, honor, KNITS, ORPHANS, POW5
    )
    if bad >= 0:
        raise ValueError(
            f"batch_useful: row {bad} has a count outside 0..4 or does not hold 13 - 3*melds tiles"
        )
    return s, u


def warmup() -> None:
    """Compile (or load from the on-disk cache) every kernel of this module with its canonical signatures."""
    c = np.zeros((1, 34), dtype=np.int8)
    c[0, :13] = 1
    c[0, 0] = 2
    batch_shanten(c)
    batch_shanten_by_shape(c)
    c14 = np.zeros((1, 34), dtype=np.int8)
    c14[0, [0, 1, 2, 3, 4, 5, 6, 7, 8]] = 1
    c14[0, [9, 10, 11]] = 1
    c14[0, 27] = 2
    batch_is_win(c14)
    batch_win_shapes(c14)
    batch_waits(c[:, :].copy() - np.eye(1, 34, 0, dtype=np.int8))
    batch_useful(c - np.eye(1, 34, 0, dtype=np.int8), REGULAR, physical=False)
    shanten("1112345678999m")
    waits("1112345678999m")
    waits(c[0] - np.eye(1, 34, 0, dtype=np.int8)[0])
    is_win(c14[0])
    is_win("11123456789999m")


def _win_code_row_c(row, n_melds, suit_win, honor_win):
    return _win_code(
        numba.carray(row, NUM_TILE_TYPES), n_melds, numba.carray(suit_win, 5**9), numba.carray(honor_win, 5**7),
        KNITS,
    )  # fmt: skip


@njit
def _win_code_row_body(row, n_melds, suit_win, honor_win):
    return _win_code(row, n_melds, suit_win, honor_win, KNITS)


# (Defined last: a shared kernel compiles on import, and the win test calls kernels defined above.)
# The win test of one int8[34] row for callers in other modules' kernels (hand.waits_bits_kernel, which the
# engine's waits reach): compiled once, as a shared kernel (mjenv._jit.shared_kernel), with the same argument
# types as the hand kernels' own _win_code, so that compiling the engine does not compile a second copy of the
# inlined win test (and a parallel warmup's engine task can stub it: mjenv._compile._TASKS).
_win_code_row = (
    shared_kernel(
        "mjenv_hand_win_code_row_v1",
        _nt.int64(_nt.CPointer(_nt.int8), _nt.int64, _nt.CPointer(_nt.uint8), _nt.CPointer(_nt.uint8)),
        _win_code_row_c,
    )
    or _win_code_row_body
)
