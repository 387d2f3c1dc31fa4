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
(14 - 3 melds) is a complete hand that may be a win. This module holds the :class:`Hand` model, the win test
and the waits, and the per-hand and batch API; shanten and useful tiles (block counting) are computed by
:mod:`mjenv.shanten`, whose API is re-exported here (``shanten``, ``shanten_by_shape`` take a :class:`Hand` or
a hand string; ``batch_shanten``, ``batch_shanten_by_shape``, ``batch_useful`` count arrays). The lookup
tables load through :mod:`mjenv._tables`.

Kernels read the per-suit tables of ``mjenv/_tables/gen_suit_tables.py`` (passed as arguments) and return
negative codes <= ``ERR_INVALID_COUNTS`` for bad input. The win test (:func:`win_code_at_kernel`) reads the
counts as 64-bit words (:func:`mjenv.shanten.count_word`) and looks up one group key at a time.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import numba
import numpy as np
from numba import types as _nt

from mjenv import melds as _melds
from mjenv._jit import njit, shared_kernel
from mjenv._tables import load_shanten_tables, load_tables, table_sha256, win_tables  # noqa: F401 (API)
from mjenv.shanten import (  # noqa: F401 (mjenv.hand's API: shanten and its kernels, re-exported)
    BYTES_01,
    BYTES_7B,
    BYTES_80,
    DELTA9,
    ERR_INVALID_COUNTS,
    ERR_INVALID_SIZE,
    HONORS_KNITTED,
    INC_EXACT,
    INC_PAIR,
    KNIT_MASK,
    KNITTED_STRAIGHT,
    NO_SHANTEN,
    NUM_SHAPES,
    ORPHAN_MASK,
    POW5,
    REGULAR,
    SEVEN_PAIRS,
    SHAPE_NAMES,
    THIRTEEN_ORPHANS,
    batch_shanten,
    batch_shanten_by_shape,
    batch_useful,
    byte_sum,
    check_batch,
    check_counts_kernel,
    count_word,
    honors_knitted_shanten_kernel,
    inc_score_kernel,
    keys_kernel,
    knitted_straight_shanten_kernel,
    min_shanten_at_kernel,
    min_shanten_kernel,
    orphans_shanten_kernel,
    raise_bad_rows,
    regular_score_kernel,
    seven_pairs_shanten_kernel,
    shape_shanten_kernel,
    shapes_and_useful,
    useful_kernel,
)
from mjenv.shanten import warmup as _shanten_warmup
from mjenv.tiles import IS_TERMINAL_OR_HONOR, KNITS, NUM_TILE_TYPES, ORPHANS, format_tiles, parse_tiles

_B06 = np.int64(0x0606060606060606)  # byte-lane constant of the SWAR pass in win_code_at_kernel

# ---------------------------------------------------------------------------------------------------------
# win kernels (the lookup tables' win bits; shanten: mjenv.shanten)
# ---------------------------------------------------------------------------------------------------------


@njit
def _regular_win(suit_win, honor_win, counts, k0, k1, k2, k3):
    """Regular win test of a complete hand from its keys: :func:`groups_win_kernel` with the group sizes."""
    s0 = 0
    s1 = 0
    s2 = 0
    for r in range(9):
        s0 += counts[r]
        s1 += counts[9 + r]
        s2 += counts[18 + r]
    s3 = 0
    for t in range(27, 34):
        s3 += counts[t]
    return groups_win_kernel(suit_win, honor_win, k0, k1, k2, k3, s0, s1, s2, s3)


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
def _mark_waits(counts, n_melds, held, out, suit_win, honor_win):
    """Mark in ``out`` the waits of the waiting hand ``counts`` (13 - 3 * ``n_melds`` tiles) held (``held``:
    hand and melds) fewer than 4 times; return how many. The waits are the engine's
    (:func:`waits_bits_kernel`): one implementation for :func:`waits`, :func:`batch_waits` and
    ``mjenv.game``."""
    lo, hi = waits_bits_kernel(counts, 0, n_melds, suit_win, honor_win)
    found = 0
    for t in range(34):
        bit = (lo >> t) & 1 if t < 27 else (hi >> (t - 27)) & 1
        w = bit == 1 and held[t] < 4
        out[t] = w
        found += w
    return found


# --- batch kernels -----------------------------------------------------------------------------------------


@njit
def _batch_win_shapes(counts, n_melds, out, suit_win, honor_win, knits, orphans, pow5):
    """``out[i]``: win-shape bitmask of hand i (14 - 3*melds tiles), or a negative error code."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = check_counts_kernel(row)
        if n < 0:
            out[i] = n
            continue
        if n != 14 - 3 * n_melds[i]:
            out[i] = ERR_INVALID_SIZE
            continue
        out[i] = _win_shapes(row, n, suit_win, honor_win, knits, orphans, pow5)
    return 0


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
    w0 = count_word(counts, i, 0)
    w1 = count_word(counts, i, 8)
    w2 = count_word(counts, i, 16)
    w3 = count_word(counts, i, 24)
    w4 = (np.int64(counts[i, 32]) & 0xFF) | ((np.int64(counts[i, 33]) & 0xFF) << 8)
    orv = w0 | w1 | w2 | w3 | w4
    # a byte is bad iff its high bit is set (negative or >= 128) or adding 0x7B sets it (5..127); a carry out
    # of a byte only comes from a byte that is already bad
    bad = orv | (w0 + BYTES_7B) | (w1 + BYTES_7B) | (w2 + BYTES_7B) | (w3 + BYTES_7B) | (w4 + 0x7B7B)
    if (bad & BYTES_80) != 0:
        return ERR_INVALID_COUNTS
    s0 = byte_sum(w0) + (w1 & 0xFF)
    s1 = byte_sum(w1 >> 8) + byte_sum(w2 & 0xFFFF)
    s2 = byte_sum(w2 >> 16) + byte_sum(w3 & 0xFFFFFF)
    s3 = byte_sum(w3 >> 24) + byte_sum(w4)
    n = s0 + s1 + s2 + s3
    if n != 14 - 3 * n_melds:
        return ERR_INVALID_SIZE
    if n == 14 and (orv & BYTES_01) == 0:
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
    if orph and m0 == ORPHAN_MASK and m1 == ORPHAN_MASK and m2 == ORPHAN_MASK:
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
                _suit_key(counts, i, 0, 9) - DELTA9[x0],
                _suit_key(counts, i, 9, 18) - DELTA9[x1],
                _suit_key(counts, i, 18, 27) - DELTA9[x2],
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
def _batch_waits(counts, n_melds, out, suit, honor, suit_inc, honor_inc, suit_win, honor_win):
    """``out[i]`` (zeros on entry): waits of hand i (13 - 3*melds tiles) as bool[34]; returns the first bad
    row or -1."""
    for i in range(counts.shape[0]):
        row = counts[i]
        n = check_counts_kernel(row)
        if n < 0 or n != 13 - 3 * n_melds[i]:
            return i
        # only ready hands wait: the fast shanten (inlined, on the batch row) first costs less than the waits
        # of the many hands that are not ready (benchmarks/ab_hand.py: batch_waits 17% slower without it)
        if min_shanten_at_kernel(counts, i, n, suit, honor, suit_inc, honor_inc) == 0:
            _mark_waits(row, n_melds[i], row, out[i], suit_win, honor_win)
    return -1


@njit
def _k_waits(counts, out, suit, honor, suit_inc, honor_inc, suit_win, honor_win):
    """Per-hand entry for :func:`waits` on a bare count array (``out`` zeros on entry): number of waits, or a
    negative code."""
    n = check_counts_kernel(counts)
    if n < 0:
        return n
    if n % 3 != 1 or n > 13:
        return ERR_INVALID_SIZE
    if min_shanten_kernel(counts, n, suit, honor, suit_inc, honor_inc) != 0:
        return 0
    return _mark_waits(counts, (13 - n) // 3, counts, out, suit_win, honor_win)


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
# These read a hand ``h`` (int64[34] counts, modified and restored in place) without the lookup tables. They
# are the one place where the win test and the waits exist twice: regular_ok_kernel, special_shape_kernel,
# honors_knitted_kernel and knitted_win_kernel decide what win_code_at_kernel / _win_shapes decide, and
# single_wait_kernel what waits_bits_kernel gives (win tile the only wait). Why a second copy: the scorer
# (mjenv.fans._score, a shared kernel with a hand-typed C signature, called by score_kernel, score_batch and
# the engine's scoring) takes no tables, and threading the two win tables through all of them would change
# every scoring signature for a test run once per win; the scorer also reads the hand into sets with these
# helpers anyway. tests/test_hand.py (test_the_scorers_*) pins them equal to the table kernels over thousands
# of random hands of every shape and meld count.

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
        suit_win, honor_win = win_tables()
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
    suit_win, honor_win = win_tables()
    c = h.counts.copy()
    return int(_win_shapes(c, h.n_tiles, suit_win, honor_win, KNITS, ORPHANS, POW5))


def waits(hand) -> tuple[int, ...]:
    """Tiles (ids) that complete a waiting hand (13 - 3*melds tiles); tiles held 4 times are excluded.

    >>> from mjenv.tiles import format_tiles
    >>> format_tiles(waits("1112345678999m"))
    '123456789m'
    """
    suit, honor, suit_win, honor_win = load_tables()
    out = np.zeros(34, dtype=np.bool_)
    if _is_plain_counts(hand):  # fast path: int8[34] counts, melds implied by the tile count
        if _k_waits(hand, out, suit, honor, *load_shanten_tables(), suit_win, honor_win) >= 0:
            return tuple(np.flatnonzero(out).tolist())
    h = as_hand(hand)
    if h.is_complete:
        raise ValueError(f"waits need a waiting hand (13 - 3*melds tiles), got {h.n_tiles} standing tiles")
    _mark_waits(h.counts, h.n_melds, h.held(), out, suit_win, honor_win)
    return tuple(np.flatnonzero(out).tolist())


def _all_shapes(hand, physical: bool):
    """(overall, shanten int8[5], useful bool[5, 34]) of a hand, via one kernel call."""
    if _is_plain_counts(hand):
        counts, held = hand, hand
    else:
        h = as_hand(hand)
        counts, held = h.counts, h.held()
    best, s, u = shapes_and_useful(counts, held, physical)  # copies counts
    if best <= ERR_INVALID_COUNTS:
        as_hand(hand)  # raises the detailed error
        raise ValueError("invalid hand")
    return best, s, u


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
    counts, n_melds = check_batch(counts, n_melds)
    suit_win, honor_win = win_tables()
    out = np.empty(counts.shape[0], dtype=np.int8)
    if _batch_is_win(counts, n_melds, out, suit_win, honor_win, KNITS, ORPHANS, POW5):
        raise_bad_rows(out, "batch_is_win")
    return out.view(np.bool_)  # every entry is 0 or 1 here


def batch_win_shapes(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Win-shape bitmasks (``int8[N]``, bit ``1 << shape``) of many complete hands (see :func:`batch_is_win`)."""
    counts, n_melds = check_batch(counts, n_melds)
    suit_win, honor_win = win_tables()
    out = np.empty(counts.shape[0], dtype=np.int8)
    _batch_win_shapes(counts, n_melds, out, suit_win, honor_win, KNITS, ORPHANS, POW5)
    raise_bad_rows(out, "batch_win_shapes")
    return out


def batch_waits(counts: np.ndarray, n_melds=0) -> np.ndarray:
    """Waits (``bool[N, 34]``) of many waiting hands (``13 - 3*n_melds`` standing tiles each).

    Tiles held 4 times in the standing hand are excluded (the melds are not known to this function).
    """
    counts, n_melds = check_batch(counts, n_melds)
    suit, honor, suit_win, honor_win = load_tables()
    out = np.zeros((counts.shape[0], NUM_TILE_TYPES), dtype=np.bool_)
    bad = _batch_waits(counts, n_melds, out, suit, honor, *load_shanten_tables(), suit_win, honor_win)
    if bad >= 0:
        raise ValueError(
            f"batch_waits: row {bad} has a count outside 0..4 or does not hold 13 - 3*melds tiles"
        )
    return out


def warmup() -> None:
    """Compile (or load from the on-disk cache) every kernel of this module and of :mod:`mjenv.shanten` with
    their canonical signatures."""
    _shanten_warmup()
    c = np.zeros((1, 34), dtype=np.int8)
    c[0, :13] = 1
    c[0, 0] = 2
    c14 = np.zeros((1, 34), dtype=np.int8)
    c14[0, [0, 1, 2, 3, 4, 5, 6, 7, 8]] = 1
    c14[0, [9, 10, 11]] = 1
    c14[0, 27] = 2
    batch_is_win(c14)
    batch_win_shapes(c14)
    batch_waits(c[:, :].copy() - np.eye(1, 34, 0, dtype=np.int8))
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
