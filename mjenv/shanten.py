"""Rules: shanten and useful tiles of the five MCR winning shapes (block counting, table kernels).

Rules
-----
MCR (``docs/rules.md``, Winning): a hand wins in one of five shapes (:mod:`mjenv.hand` names them):
regular (``REGULAR``), seven pairs (``SEVEN_PAIRS``), thirteen orphans (``THIRTEEN_ORPHANS``), honours and
knitted tiles (``HONORS_KNITTED``), knitted straight (``KNITTED_STRAIGHT``). Shanten is how many tiles a
hand is from being ready; ``-1`` is a complete (winning) hand.

Specification in mjenv
----------------------
A hand is ``counts: int8[34]`` of standing (concealed) tiles; ``n`` tiles with ``13 - n`` or ``14 - n`` a
multiple of 3 (the rest are fixed melds). Shanten uses block counting: regular shanten is
``2 * need - max(2 * sets + min(partials, need - sets) + pair)`` with ``need = n // 3`` sets still to form;
seven pairs ``6 - sum(c // 2)``; thirteen orphans ``13 - kinds - has_pair``; honours and knitted ``13 - best
number of distinct usable tiles``; knitted straight ``missing knitted tiles + shanten of the rest as one set
and a pair``. Seven pairs, thirteen orphans and honours-and-knitted only exist for 13/14 standing tiles (no
melds), the knitted straight for 10/11 and 13/14. Shanten of a shape that does not apply to the hand's size
is ``NO_SHANTEN`` (99).

Useful tiles of a shape are the tiles whose draw lowers its shanten. By default (``physical=True``) a tile
already held four times (hand and melds) is never useful. ``physical=False`` gives PyMahjongGB's convention,
discovered by experiment and kept for :mod:`mjenv.compat.mahjonggb`: a tile held four times in the hand is
useful only when the hand is ready (shanten 0) and the 5th copy would complete it.

Kernels read the per-suit tables of ``mjenv/_tables/gen_suit_tables.py`` (passed as arguments; loaded by
:mod:`mjenv._tables`) and return negative codes <= ``ERR_INVALID_COUNTS`` for bad input. The overall
shanten (:func:`batch_shanten`, ``min_shanten_kernel``, ``MahjongShanten``) takes a faster route
with the same values: the regular score from packed block increments (``gen_shanten_tables.py``; the ``need``
largest increments over the groups), the counts read as 64-bit words (SWAR: :func:`count_word`, also read by
the win test of :mod:`mjenv.hand`), and a knitted straight combination looked up only when a lower bound from
rank bitmasks (its missing tiles, a pair and a set left in the rest) says it could beat the best shape so far.

The per-hand functions that take a :class:`mjenv.hand.Hand` or a hand string (``shanten``,
``shanten_by_shape``) are in :mod:`mjenv.hand`; this module's Python API takes count arrays.
"""

from __future__ import annotations

import numpy as np

from mjenv._jit import njit
from mjenv._tables import load_shanten_tables, load_tables
from mjenv.tiles import KNITS, NUM_TILE_TYPES, ORPHANS

REGULAR, SEVEN_PAIRS, THIRTEEN_ORPHANS, HONORS_KNITTED, KNITTED_STRAIGHT = 0, 1, 2, 3, 4
NUM_SHAPES = 5
SHAPE_NAMES = ("regular", "seven_pairs", "thirteen_orphans", "honors_knitted", "knitted_straight")
NO_SHANTEN = 99
ERR_INVALID_COUNTS = -10  # a count outside 0..4
ERR_INVALID_SIZE = -11  # tile count does not fit the melds

POW5 = np.array([5**i for i in range(10)], dtype=np.int64)

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
def check_counts_kernel(counts):
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


# --- SWAR: 8 tile counts in one int64 word (also read by mjenv.hand's win test) -------------------------

ORPHAN_MASK = 0b100000001  # ranks 1 and 9
# byte-lane constants of the SWAR passes (here and in mjenv.hand.win_code_at_kernel)
BYTES_01 = np.int64(0x0101010101010101)
BYTES_7B = np.int64(0x7B7B7B7B7B7B7B7B)
BYTES_80 = np.int64(-0x7F7F7F7F7F7F7F80)  # 0x8080808080808080 as an int64


@njit(inline="always")
def count_word(counts, i, j0):
    """Bytes ``counts[i, j0:j0 + 8]`` as one little-endian int64 (LLVM merges the loads into one)."""
    w = np.int64(0)
    for j in range(8):
        w |= (np.int64(counts[i, j0 + j]) & 0xFF) << (8 * j)
    return w


@njit(inline="always")
def byte_sum(w):
    """Sum of the bytes of ``w`` (valid while the sum is below 128)."""
    return (w * BYTES_01) >> 56


#: DELTA9[mask] = sum of 5**r over the ranks r in a 9-bit rank mask (key change when removing one of each)
DELTA9 = np.array([sum(5**r for r in range(9) if i >> r & 1) for i in range(512)], dtype=np.int64)
KNIT_MASK = np.array([0b001001001, 0b010010010, 0b100100100], dtype=np.int64)  # ranks 147, 258, 369

# --- overall shanten (batch_shanten): packed increments, SWAR count pass ------------------------------------
# Helpers taking only scalars are plain kernels (LLVM inlines them); the two that index the tables are always
# inlined, since a call passing arrays costs about as much per hand as the work: _knitted_min by numba (into
# min_shanten_at_kernel only), min_shanten_at_kernel by LLVM (forceinline: typed and lowered once, not once
# per caller; also mjenv.hand's batch waits gate).

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
    return ((w + _B7F) >> 7) & BYTES_01


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
        z = ((w + (128 - k) * BYTES_01) >> 7) & BYTES_01  # byte r: count of rank r+1 >= k
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

    ``w*`` / ``e*``: the count words and rank-9 counts of :func:`min_shanten_at_kernel`, ``c*`` the suits'
    :func:`_knit_classes`; ``top`` is the most tiles of one knitted combination held.
    """
    if n < 13:
        return best
    pairs = (
        byte_sum(_halves(w0) + _halves(w1) + _halves(w2) + _halves(wh)) + (e0 >> 1) + (e1 >> 1) + (e2 >> 1)
    )
    best = min(best, 6 - pairs)  # seven pairs
    honors = byte_sum(_nonzero(wh))
    ends = ((c0 >> 24) & ORPHAN_MASK) | ((c1 >> 24) & ORPHAN_MASK) << 16 | ((c2 >> 24) & ORPHAN_MASK) << 32
    kinds = honors + byte_sum(ends)  # one byte per terminal: held or not
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
    if ((lanes + (119 + best) * BYTES_01) & _LANES6) == 0:  # no byte >= 9 - best (best <= 8 here)
        return best
    rest_need = 1 if n >= 12 else 0
    q0 = _levels(w0, e0)
    q1 = _levels(w1, e1)
    q2 = _levels(w2, e2)
    hblocks = (1 if _halves(wh) else 0) | (
        2 if (wh + 0x7D * BYTES_01) & BYTES_80 else 0
    )  # an honour pair, pung
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
            r0 = k0 - DELTA9[x0]  # keys of the rest
            r1 = k1 - DELTA9[x1]
            r2 = k2 - DELTA9[x2]
            score = inc_score_kernel(suit_inc[r0], suit_inc[r1], suit_inc[r2], honor_inc[k3], rest_need)
            if score < 0:
                score = regular_score_kernel(suit, honor, r0, r1, r2, k3, rest_need)
            best = min(best, 9 - held + 2 * rest_need - score)
    return best


@njit(forceinline=True)  # inlined by LLVM, typed and lowered once (not per caller)
def min_shanten_at_kernel(counts, i, n, suit, honor, suit_inc, honor_inc):
    """Overall shanten (the minimum over the shapes) of row ``i`` of ``counts`` (int8[:, 34]).

    ``n`` is the number of tiles, or ``-1 - n_melds`` to validate the row here (then a count outside 0..4
    gives ERR_INVALID_COUNTS and a size other than 13/14 - 3*n_melds ERR_INVALID_SIZE). The counts are read
    as 64-bit words (ranks 1-8 of each suit, the 7 honours) and the suits' rank-9 counts; the regular shape
    uses the packed increments; the other shapes are looked at only when they might beat it.
    """
    w0 = count_word(counts, i, 0)
    w1 = count_word(counts, i, 9)
    w2 = count_word(counts, i, 18)
    wh = count_word(counts, i, 26) >> 8
    e0 = np.int64(counts[i, 8])
    e1 = np.int64(counts[i, 17])
    e2 = np.int64(counts[i, 26])
    if n < 0:
        e = (e0 & 0xFF) | ((e1 & 0xFF) << 8) | ((e2 & 0xFF) << 16)
        bad = (
            w0
            | w1
            | w2
            | wh
            | e
            | (w0 + BYTES_7B)
            | (w1 + BYTES_7B)
            | (w2 + BYTES_7B)
            | (wh + BYTES_7B)
            | (e + 0x7B7B7B)
        )
        if (bad & BYTES_80) != 0:  # as in win_code_at_kernel: a byte outside 0..4
            return ERR_INVALID_COUNTS
        tot = byte_sum(w0 + w1 + w2 + wh) + e0 + e1 + e2
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
    """:func:`min_shanten_at_kernel` of a single ``int8[34]`` row (the batch kernel's specialization, inlined
    by LLVM)."""
    return min_shanten_at_kernel(
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
def _batch_shanten(counts, n_melds, out, suit, honor, suit_inc, honor_inc):
    """``out[i]``: overall shanten of hand i (13 or 14 - 3*melds tiles), or a negative error code < -1."""
    for i in range(counts.shape[0]):
        out[i] = min_shanten_at_kernel(counts, i, -1 - np.int64(n_melds[i]), suit, honor, suit_inc, honor_inc)
    return 0


@njit
def _batch_shanten_by_shape(counts, n_melds, out, suit, honor, knits, orphans, pow5):
    """``out[i, shape]``: shanten per shape (NO_SHANTEN if it does not apply); row of error codes on bad input."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = check_counts_kernel(row)
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
def _batch_useful(counts, n_melds, shape, physical, s_out, useful, suit, honor, knits, orphans, pow5):
    """``s_out[i]``: shape shanten of waiting hand i; ``useful[i]``: its useful tiles; -1 or the first bad row."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = check_counts_kernel(row)
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
    n = check_counts_kernel(counts)
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


# ---------------------------------------------------------------------------------------------------------
# Python API (count arrays; mjenv.hand takes Hand objects and strings)
# ---------------------------------------------------------------------------------------------------------


def check_batch(counts, n_melds) -> tuple[np.ndarray, np.ndarray]:
    """``(counts, n_melds)`` of a batch call checked and made contiguous: ``int8[N, 34]`` counts and
    ``int8[N]`` melds per hand (a scalar is broadcast); raises ``TypeError``/``ValueError`` naming the
    problem."""
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


def raise_bad_rows(codes: np.ndarray, what: str) -> None:
    """Raise ``ValueError`` naming the first row of ``codes`` that holds an error code (and how many do)."""
    bad = np.nonzero(codes <= ERR_INVALID_COUNTS)[0]
    if len(bad):
        i = int(bad[0])
        reason = (
            "a count outside 0..4"
            if codes[i] == ERR_INVALID_COUNTS
            else "a tile count that does not fit its melds"
        )
        raise ValueError(f"{what}: row {i} has {reason} ({len(bad)} bad rows)")


def batch_shanten(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Overall shanten (``int8[N]``) of many hands of ``13 - 3*n_melds`` or one more standing tiles."""
    counts, n_melds = check_batch(counts, n_melds)
    suit, honor, _, _ = load_tables()
    out = np.empty(counts.shape[0], dtype=np.int8)
    _batch_shanten(counts, n_melds, out, suit, honor, *load_shanten_tables())
    raise_bad_rows(out, "batch_shanten")
    return out


def batch_shanten_by_shape(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Shanten per shape (``int8[N, 5]``, ``NO_SHANTEN`` where a shape does not apply).

    Shapes other than the regular one are computed from the standing tiles' size alone: with melds, only the
    regular shape (and the knitted straight with one meld) applies, as in :func:`mjenv.hand.shanten_by_shape`.
    """
    counts, n_melds = check_batch(counts, n_melds)
    suit, honor, _, _ = load_tables()
    out = np.empty((counts.shape[0], NUM_SHAPES), dtype=np.int8)
    _batch_shanten_by_shape(counts, n_melds, out, suit, honor, KNITS, ORPHANS, POW5)
    raise_bad_rows(out[:, 0], "batch_shanten_by_shape")
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
    counts, n_melds = check_batch(counts, n_melds)
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


def shapes_and_useful(
    counts: np.ndarray, held: np.ndarray, physical: bool
) -> tuple[int, np.ndarray, np.ndarray]:
    """``(overall, shanten int8[5], useful bool[5, 34])`` of one hand, in one kernel call.

    ``counts`` (``int8[34]``, copied) are the standing tiles, ``held`` the tiles held with the melds; the
    useful tiles are computed for waiting hands (``3k + 1`` tiles) and empty for complete ones. ``overall`` is a
    negative code <= ``ERR_INVALID_COUNTS`` for a bad hand (:func:`mjenv.hand.shanten` raises on it).
    """
    suit, honor, _, _ = load_tables()
    s = np.empty(NUM_SHAPES, dtype=np.int8)
    u = np.empty((NUM_SHAPES, NUM_TILE_TYPES), dtype=np.bool_)
    best = _k_shanten_all(counts.copy(), held, bool(physical), s, u, suit, honor, KNITS, ORPHANS, POW5)
    return int(best), s, u


def warmup() -> None:
    """Compile (or load from the on-disk cache) this module's entry kernels with their canonical
    signatures."""
    c = np.zeros((1, 34), dtype=np.int8)
    c[0, :13] = 1
    c[0, 0] = 2
    batch_shanten(c)
    batch_shanten_by_shape(c)
    w = c - np.eye(1, 34, 0, dtype=np.int8)
    batch_useful(w, REGULAR, physical=False)
    shapes_and_useful(w[0], w[0], True)
