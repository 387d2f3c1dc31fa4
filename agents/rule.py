"""A rule-based MCR player: ``agents.rule:make``, one Numba kernel over the batch.

What it knows
-------------
Only the observation and the legal mask (:mod:`mjenv.observation`, :mod:`mjenv.actions`): its concealed
tiles, its melds, everyone's discards and exposed melds (for the count of tiles not yet visible to it), the
tile on offer, the phase and the wall size. It never reads the table state, and it keeps no memory between
calls: the same observation and mask always give the same action.

Decision procedure (per row)
----------------------------
1. **Win** whenever the mask offers ``WIN`` (the engine offers it only for a legal 8-fan win).
2. **Targets.** MCR needs 8 fan, so the agent plays toward a concrete 8-fan target. For each target it measures a
   *target shanten* (tiles still missing, block counting with mjenv's own shanten kernels and tables,
   :mod:`mjenv.hand`): full flush (3 suits), half flush + all pungs (3), upper four, lower four, reversible
   tiles (tile filters on the regular shape); pure straight (3), mixed straight (6), mixed triple chow (7)
   (three fixed chows plus a set and a pair); seven pairs, honours and knitted, knitted straight, thirteen
   orphans (mjenv's shape shanten); half flush (3) and all pungs, which are 6 fan and usually need a little
   more, carry one step of penalty. Melds decide which targets remain reachable (a chow kills all pungs, a
   meld of another suit kills that flush, any meld kills seven pairs). The target with the smallest target
   shanten (+ penalty) is chosen, ties in a fixed order.
3. **Discard** (and kongs) on its turn: the discards that leave the smallest target shanten; a tile the
   target's filter rules out goes first (the most isolated); otherwise the ``max_eval`` best of them by a
   cheap pre-order (isolation, safety) are compared by the *useful tiles not yet visible* they keep (unseen
   copies of tiles that lower the target shanten), then the smallest regular shanten, then the safer tile. Late in the hand (``danger_wall`` tiles left in
   the wall or fewer) while the hand is still far (target shanten >= 2) it plays safe: it discards the tile
   judged safest (all copies visible, honours with copies visible, tiles other players discarded) among
   those that cost at most one step. A concealed or added kong is declared when it does not raise the
   target shanten.
4. **Claims** (chow, pung, exposed kong): the best target value over all targets after the claim (and the
   discard it forces) is compared with the value now; the agent claims only when the claim strictly lowers it
   (an exposed kong: when it does not raise it), so a claim always advances the hand and keeps an 8-fan
   route. Otherwise it passes.

Speed
-----
One ``prange`` kernel over the rows (chunks of ``_CHUNK`` rows share their scratch arrays: no allocation per
row). The target search orders targets by a bitmask key (:func:`_bounds`: popcounts over 34-bit tile masks, no
table lookups; exact for the cheap shapes, ``NO`` for targets the melds rule out) and skips empty levels. The
two commonest chosen targets have incremental forms that give exactly what :func:`target_shanten` gives: three
fixed chows (about 70% of turns) factor into ``missing + 2 rest - score(residual keys)``, so a discard or a
draw costs one block-score lookup (:func:`_chow_rest`, :func:`_chow_less`, :func:`_chow_useful`); seven pairs
(about 20%) count pairs. The knitted straight keeps one residual key per suit and knitted offset (a tile in or
out changes three of them; a discard moves each combination's value by 0 or 1, so only the combinations at the
best value are re-scored, and only when the tile is not a lone single of their residual); honours and knitted
keep their distinct-tile counts. Useful-tile counts skip draws that provably change nothing (an extra copy
for honours and knitted; for the three chows and the knitted straight, a tile with no residual tile of the
same kind or within two ranks, and any non-chow tile once the residual is complete). The target shanten is
inlined at its call sites (a call passing the table arrays cost as much as the work). Every shortcut is
exact: ``tests/test_agents.py`` checks each against mjenv's kernels or a brute force and pins a digest of
the actions taken in seeded VectorEnv play. Figures: ``benchmarks/rule_agent.py`` and ``docs/agents.md``.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numba
import numpy as np
from numba import prange
from numba import types as _nt

from agents._common import check_factory_args
from mjenv import actions as A
from mjenv import hand as H
from mjenv import observation as O
from mjenv import view as V
from mjenv._jit import njit, shared_kernel
from mjenv.melds import CHOW, NO_MELD, meld_kind, meld_tile

NO = 99  # target unreachable (mjenv.hand.NO_SHANTEN)

# ------------------------------------------------------------------------------------------------ targets
# kinds: 0 tile filter (regular shape on allowed tiles), 1 tile filter + pungs only, 2 three fixed chows,
# 3 a shape of mjenv.hand (seven pairs 1, thirteen orphans 2, honours and knitted 3, knitted straight 4)
_SUITS = [list(range(9 * s, 9 * s + 9)) for s in range(3)]
_HONORS = list(range(27, 34))


def _targets() -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    names: list[str] = []
    kind: list[int] = []
    pen: list[int] = []
    allow: list[np.ndarray] = []
    chows: list[list[int]] = []

    def add(name, k, p, tiles=(), ch=(0, 0, 0), shape=0):
        names.append(name)
        kind.append(k)
        pen.append(p)
        a = np.zeros(34, np.bool_)
        a[list(tiles)] = True
        allow.append(a)
        chows.append(list(ch) if k == 2 else [shape, 0, 0])

    # order = preference among equal values
    for perm in permutations(range(3)):
        add(
            f"mixed_straight_{''.join('mps'[s] for s in perm)}",
            2,
            0,
            ch=[9 * perm[0], 9 * perm[1] + 3, 9 * perm[2] + 6],
        )
    for r in range(7):
        add(f"mixed_triple_chow_{r + 1}", 2, 0, ch=[r, 9 + r, 18 + r])
    for s in range(3):
        add(f"half_flush_all_pungs_{'mps'[s]}", 1, 0, _SUITS[s] + _HONORS)
    for s in range(3):
        add(f"full_flush_{'mps'[s]}", 0, 0, _SUITS[s])
    for s in range(3):
        add(f"pure_straight_{'mps'[s]}", 2, 0, ch=[9 * s, 9 * s + 3, 9 * s + 6])
    add("seven_pairs", 3, 0, shape=H.SEVEN_PAIRS)
    add("knitted_straight", 3, 0, shape=H.KNITTED_STRAIGHT)
    add("honors_knitted", 3, 0, shape=H.HONORS_KNITTED)
    add("upper_four", 0, 0, [9 * s + r for s in range(3) for r in range(5, 9)])
    add("lower_four", 0, 0, [9 * s + r for s in range(3) for r in range(4)])
    # reversible tiles (推不倒): dots 1234589, bamboo 245689, white dragon (mjenv ids: m 0-8, p 9-17, s 18-26)
    add(
        "reversible",
        0,
        0,
        [9 + r for r in (0, 1, 2, 3, 4, 7, 8)] + [18 + r for r in (1, 3, 4, 5, 7, 8)] + [33],
    )
    add("thirteen_orphans", 3, 0, shape=H.THIRTEEN_ORPHANS)
    for s in range(3):
        add(f"half_flush_{'mps'[s]}", 0, 1, _SUITS[s] + _HONORS)
    add("all_pungs", 1, 1, range(34))
    return (
        names,
        np.array(kind, np.int64),
        np.array(pen, np.int64),
        np.array(allow),
        np.array(chows, np.int64),
    )


TARGET_NAMES, T_KIND, T_PEN, T_ALLOW, T_CHOWS = _targets()
NUM_TARGETS = len(TARGET_NAMES)


def _group_masks() -> np.ndarray:
    """Per target: bit g set when group g (m, p, s, honours) is allowed whole; -1 when a group is split."""
    out = np.full(NUM_TARGETS, -1, np.int64)
    for i in range(NUM_TARGETS):
        bits = 0
        whole = True
        for g, (lo, hi) in enumerate(((0, 9), (9, 18), (18, 27), (27, 34))):
            a = T_ALLOW[i, lo:hi]
            if a.all():
                bits |= 1 << g
            elif a.any():
                whole = False
        out[i] = bits if whole else -1
    return out


T_GROUPS = _group_masks()


def _in_chows() -> np.ndarray:
    """Per target: the tiles of its three fixed chows (all False for other kinds)."""
    out = np.zeros((NUM_TARGETS, 34), np.bool_)
    for i in range(NUM_TARGETS):
        if T_KIND[i] == 2:
            for j in range(3):
                out[i, T_CHOWS[i, j] : T_CHOWS[i, j] + 3] = True
    return out


T_INCHOW = _in_chows()
#: bitmasks over the 34 tiles: each target's allowed tiles, each fixed chow's tiles, each knitted combination
T_AMASK = np.array([sum(1 << t for t in range(34) if T_ALLOW[i, t]) for i in range(NUM_TARGETS)], np.int64)
T_CMASK = np.array(
    [[(7 << int(T_CHOWS[i, j])) if T_KIND[i] == 2 else 0 for j in range(3)] for i in range(NUM_TARGETS)],
    np.int64,
)
ORPHAN_MASK = sum(1 << int(t) for t in H.ORPHANS)
HONOR_MASK = sum(1 << t for t in range(27, 34))
KNIT_MASK = np.array(
    [sum(1 << (9 * g + int(H.KNITS[i, g]) + 3 * j) for g in range(3) for j in range(3)) for i in range(6)],
    np.int64,
)


# ------------------------------------------------------------------------------------------------ kernels
# Group keys (base-5 counts of the three suits and the honours, mjenv.hand.keys_kernel) travel as a 4-tuple ``k``
# updated incrementally (a tile in or out changes one key by a power of 5).
_P5 = np.array([5**r for r in range(9)] * 3 + [5**r for r in range(7)], np.int64)


@njit(forceinline=True, _nrt=False)
def add_keys(k, t, d):
    """Keys ``k`` after adding ``d`` copies of tile ``t``."""
    g = t // 9
    x = d * _P5[t]
    if g == 0:
        return (k[0] + x, k[1], k[2], k[3])
    if g == 1:
        return (k[0], k[1] + x, k[2], k[3])
    if g == 2:
        return (k[0], k[1], k[2] + x, k[3])
    return (k[0], k[1], k[2], k[3] + x)


@njit(forceinline=True, _nrt=False)  # inlined by LLVM, typed and lowered once (see _tsh)
def _score(k0, k1, k2, k3, need, tabs):
    """Best regular block score (mjenv.hand): the packed increments, else the full convolution."""
    suit, honor, sinc, hinc = tabs[0], tabs[1], tabs[2], tabs[3]
    v = H.inc_score_kernel(sinc[k0], sinc[k1], sinc[k2], hinc[k3], need)
    if v < 0:
        v = H.regular_score_kernel(suit, honor, k0, k1, k2, k3, need)
    return v


@njit(_nrt=False)  # no reference counting: it only reads its arrays (see _tsh)
def regular_shanten(k, n, tabs):
    """Regular-shape shanten of the ``n``-tile standing hand with keys ``k``."""
    need = n // 3
    return 2 * need - _score(k[0], k[1], k[2], k[3], need, tabs)


@njit(_nrt=False)  # no reference counting: it only reads its arrays (see _tsh)
def target_shanten(conc, k, n, nm, mk, mt, tgt, tabs, shapes):
    """Shanten of target ``tgt`` for concealed counts ``conc`` (``n`` tiles, keys ``k``) and ``nm`` melds.

    ``mk[i]``: 1 chow, 2 pung or kong; ``mt[i]``: lowest tile of meld ``i``. ``tabs``: (suit, honor, suit_inc,
    honor_inc) of mjenv.hand; ``shapes``: (knits, orphans, pow5). Returns ``NO`` when the melds rule the
    target out.
    """
    return _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, NO)


# A call costs about as much as the work: inlined at its few call sites, by LLVM (forceinline: typed and lowered
# once; numba's inline="always" typed and lowered its IR again in each of its six callers, ~7 CPU-s each). The
# helpers inlined by LLVM only read their arrays and allocate nothing, so they do no reference counting
# (_nrt=False): numba prunes the increfs and decrefs of the array arguments inside one function, but not across
# an LLVM-inlined call, and the atomic updates left made target_shanten ~25% slower than the numba-inlined form.
@njit(forceinline=True, _nrt=False)
def _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, bound):
    """:func:`target_shanten`; the knitted straight skips combinations whose bound reaches ``bound`` (the
    result is exact when below ``bound``, else some value >= ``bound``)."""
    kind = T_KIND[tgt]
    if kind == 0 or kind == 1:
        for i in range(nm):
            if kind == 1 and mk[i] == 1:
                return NO
            t = mt[i]
            if not T_ALLOW[tgt, t]:
                return NO
            if mk[i] == 1 and not (T_ALLOW[tgt, t + 1] and T_ALLOW[tgt, t + 2]):
                return NO
        need = n // 3
        if kind == 0:
            gm = T_GROUPS[tgt]
            if gm >= 0:  # allowed tiles are whole groups: mask the keys
                k0 = k[0] if gm & 1 else 0
                k1 = k[1] if gm & 2 else 0
                k2 = k[2] if gm & 4 else 0
                k3 = k[3] if gm & 8 else 0
            else:
                k0 = 0
                k1 = 0
                k2 = 0
                k3 = 0
                for t in range(34):
                    if T_ALLOW[tgt, t] and conc[t] > 0:
                        x = conc[t] * _P5[t]
                        g = t // 9
                        if g == 0:
                            k0 += x
                        elif g == 1:
                            k1 += x
                        elif g == 2:
                            k2 += x
                        else:
                            k3 += x
            return 2 * need - _score(k0, k1, k2, k3, need, tabs)
        p = 0
        q = 0
        for t in range(34):
            if T_ALLOW[tgt, t]:
                c = conc[t]
                if c >= 3:
                    p += 1
                elif c == 2:
                    q += 1
        p = min(p, need)
        score = 2 * p
        if q > 0:
            score += 1 + min(q - 1, need - p)
        return 2 * need - score
    if kind == 2:
        sat0 = False
        sat1 = False
        sat2 = False
        extra = 0
        for i in range(nm):
            t = mt[i]
            if mk[i] == 1 and t == T_CHOWS[tgt, 0] and not sat0:
                sat0 = True
            elif mk[i] == 1 and t == T_CHOWS[tgt, 1] and not sat1:
                sat1 = True
            elif mk[i] == 1 and t == T_CHOWS[tgt, 2] and not sat2:
                sat2 = True
            else:
                extra += 1
        if extra > 1:
            return NO
        k0 = k[0]
        k1 = k[1]
        k2 = k[2]
        missing = 0
        for j in range(3):
            if (j == 0 and sat0) or (j == 1 and sat1) or (j == 2 and sat2):
                continue
            for d in range(3):
                t = T_CHOWS[tgt, j] + d
                if conc[t] > 0:
                    g = t // 9
                    if g == 0:
                        k0 -= _P5[t]
                    elif g == 1:
                        k1 -= _P5[t]
                    else:
                        k2 -= _P5[t]
                else:
                    missing += 1
        rest = 1 - extra
        return missing + 2 * rest - _score(k0, k1, k2, k[3], rest, tabs)
    shape = T_CHOWS[tgt, 0]
    if nm > 0 and shape != H.KNITTED_STRAIGHT:
        return NO
    if shape == H.SEVEN_PAIRS:
        return NO if n < 13 else H.seven_pairs_shanten_kernel(conc)
    if shape == H.THIRTEEN_ORPHANS:
        return NO if n < 13 else H.orphans_shanten_kernel(conc, shapes[1])
    if shape == H.HONORS_KNITTED:
        return NO if n < 13 else H.honors_knitted_shanten_kernel(conc, shapes[0])
    if n < 10:
        return NO
    return H.knitted_straight_shanten_kernel(conc, tabs[0], tabs[1], shapes[0], shapes[2], n, bound, -1)


@njit
def _best_target(conc, k, n, nm, mk, mt, cap, tabs, shapes, lb):
    """``(target, value)`` minimising target shanten + penalty (the first in order on ties), among values
    below ``cap`` (``(0, 10 * NO)`` when none is). ``lb``: scratch of at least ``NUM_TARGETS`` entries.

    Targets are evaluated by increasing cheap lower bound (:func:`_bounds`) and the search stops once the
    bound passes the best value found, so most targets cost no table lookup; within a level, a target whose
    key is a true lower bound (kinds 2, 3) is skipped once the best value is at the level and it comes later in
    the order (it can at most tie, and ties go to the first).
    """
    level = _bounds(conc, n, nm, mk, mt, lb)
    best = 10 * NO
    bt = 0
    while level <= best and level < cap:
        nxt = 10 * NO
        for tgt in range(NUM_TARGETS):
            b = lb[tgt]
            if b == level:
                if best <= level and tgt > bt and T_KIND[tgt] >= 2:
                    continue  # a true bound: value >= level >= best, and it loses the tie by order
                v = _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, NO) + T_PEN[tgt]
                if v < best or (v == best and tgt < bt):
                    best = v
                    bt = tgt
            elif b > level:
                nxt = min(nxt, b)
        level = nxt
    if best >= cap:
        return 0, 10 * NO
    return bt, best


@njit
def _pop(x):
    """Set bits of a non-negative int64 below 2**56."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@njit
def _filter_dead(nm, mk, mt, tgt):
    """A tile-filter target (kinds 0, 1) ruled out by the melds (the same rule as :func:`target_shanten`)."""
    for i in range(nm):
        if T_KIND[tgt] == 1 and mk[i] == 1:
            return True
        t = mt[i]
        if not T_ALLOW[tgt, t]:
            return True
        if mk[i] == 1 and not (T_ALLOW[tgt, t + 1] and T_ALLOW[tgt, t + 2]):
            return True
    return False


@njit
def _bounds(conc, n, nm, mk, mt, lb):
    """Fill ``lb[tgt]`` with the search key of every target (no table lookups, at least -1; a lower bound of
    target shanten + penalty except for tile filters, see below); returns the smallest.

    Tile filters: the number of concealed tiles outside the filter - 1 (each must be replaced, one per draw).
    This is *not* a lower bound of the filter's target shanten, which counts missing blocks on the allowed
    tiles only (8 suit tiles in good shape can be 2 blocks away with 6 tiles outside): it is a deliberate
    pruning rule that keeps far-off flush-like targets out of the search. Three fixed chows: at least the tiles missing from the chows no meld satisfies
    - 1 (``missing + 2 rest - score`` with ``score <= 2 rest + 1``). Knitted straight: the best combination's
    missing knitted tiles - 1. Seven pairs, honours and knitted, thirteen orphans: their exact (cheap) value.
    Targets the melds rule out get ``NO``, their exact value. Tile sets are 34-bit masks (``b[c]``: the tiles
    held at least ``c + 1`` times).
    """
    b0 = 0
    b1 = 0
    b2 = 0
    b3 = 0
    for t in range(34):
        c = conc[t]
        bit = np.int64(1) << t
        if c >= 1:
            b0 |= bit
            if c >= 2:
                b1 |= bit
                if c >= 3:
                    b2 |= bit
                    if c >= 4:
                        b3 |= bit
    most = 0  # the most knitted tiles of one combination held
    for i in range(6):
        most = max(most, _pop(b0 & KNIT_MASK[i]))
    lo = 10 * NO
    for tgt in range(NUM_TARGETS):
        kind = T_KIND[tgt]
        if kind <= 1:
            if _filter_dead(nm, mk, mt, tgt):
                b = NO
            else:
                na = ~T_AMASK[tgt]
                b = _pop(b0 & na) + _pop(b1 & na) + _pop(b2 & na) + _pop(b3 & na) - 1
        elif kind == 2:
            b = _chow_bound(b0, nm, mk, mt, tgt)
        else:
            # the shapes' values from the tile masks: the same counts as mjenv.hand's kernels (distinct
            # tiles, pairs), checked against them in tests/test_agents.py
            shape = T_CHOWS[tgt, 0]
            if shape == H.KNITTED_STRAIGHT:
                b = NO if n < 10 else 9 - most - 1
            elif nm > 0 or n < 13:
                b = NO
            elif shape == H.SEVEN_PAIRS:  # pairs: a count of 2 or 3 holds one, 4 holds two
                b = 6 - _pop(b1) - _pop(b3)
            elif shape == H.THIRTEEN_ORPHANS:
                b = 13 - _pop(b0 & ORPHAN_MASK) - (1 if b1 & ORPHAN_MASK else 0)
            else:
                b = 13 - min(most + _pop(b0 & HONOR_MASK), 14)
        b = max(b, -1) + T_PEN[tgt]
        lb[tgt] = b
        lo = min(lo, b)
    return lo


@njit
def _chow_bound(held, nm, mk, mt, tgt):
    """Lower bound of a three-fixed-chow target (see :func:`_bounds`); ``held``: mask of the tiles held."""
    sat0 = False
    sat1 = False
    sat2 = False
    extra = 0
    for i in range(nm):  # the same meld matching as target_shanten
        t = mt[i]
        if mk[i] == 1 and t == T_CHOWS[tgt, 0] and not sat0:
            sat0 = True
        elif mk[i] == 1 and t == T_CHOWS[tgt, 1] and not sat1:
            sat1 = True
        elif mk[i] == 1 and t == T_CHOWS[tgt, 2] and not sat2:
            sat2 = True
        else:
            extra += 1
    if extra > 1:
        return NO
    need = 0
    if not sat0:
        need |= T_CMASK[tgt, 0]
    if not sat1:
        need |= T_CMASK[tgt, 1]
    if not sat2:
        need |= T_CMASK[tgt, 2]
    return _pop(need & ~held) - 1


@njit
def _near(conc, t):
    """Could drawing ``t`` help a block-counted shape: a copy of ``t`` held, or a suit tile within 2 ranks."""
    if conc[t] > 0:
        return True
    if t >= 27:
        return False
    r = t % 9
    for d in range(-2, 3):
        if d != 0 and 0 <= r + d <= 8 and conc[t + d] > 0:
            return True
    return False


@njit
def _useful(conc, k, n, nm, mk, mt, tgt, s, unseen, tabs, shapes):
    """Unseen copies of the tiles whose draw lowers target ``tgt``'s shanten ``s`` of an ``n``-tile hand."""
    u = 0
    kind = T_KIND[tgt]
    shape = T_CHOWS[tgt, 0]
    for t in range(34):
        if unseen[t] <= 0 or conc[t] >= 4:
            continue
        if kind <= 1 and not T_ALLOW[tgt, t]:
            continue
        if kind == 1 or (kind == 3 and shape == H.SEVEN_PAIRS):
            if conc[t] == 0:  # pungs and pairs grow only from tiles held
                continue
        elif (kind == 0 or kind == 2) and not _near(conc, t) and not T_INCHOW[tgt, t]:
            continue  # (T_INCHOW is all False for kind 0)
        elif kind == 3 and shape == H.HONORS_KNITTED and conc[t] > 0:
            continue  # it counts distinct tiles only: another copy changes nothing
        conc[t] += 1
        v = _tsh(conc, add_keys(k, t, 1), n + 1, nm, mk, mt, tgt, tabs, shapes, s)
        conc[t] -= 1
        if v < s:
            u += unseen[t]
    return u


@njit
def neighbours_held(conc, t):
    """Other copies of ``t`` and tiles within two ranks of it held (honours: copies only)."""
    # np.int64, as numba computes: under NUMBA_DISABLE_JIT an int8 count keeps c an int8 scalar (c << 8 wraps)
    c = np.int64(conc[t]) - 1
    if t < 27:
        r = t % 9
        for d in range(-2, 3):
            if d != 0 and 0 <= r + d <= 8:
                c += conc[t + d] * (2 if d == 1 or d == -1 else 1)
    else:
        c *= 2
    return c


@njit
def discard_danger(t, vis, disc_by_others):
    """Rough danger of discarding ``t`` (0 = safe): all copies visible, honours with copies visible and tiles
    other players discarded are safer; middle suit tiles are the most dangerous."""
    left = 4 - vis[t]  # copies neither visible nor in our hand (ours counted in vis)
    if left <= 0:
        return 0
    d = 2
    if t >= 27:
        d = 1 if vis[t] >= 2 else 3
    else:
        r = t % 9
        d = 3 if r == 0 or r == 8 else (4 if r == 1 or r == 7 else 5)
    if disc_by_others[t]:
        d -= 1
    return d


@njit
def target_melds(ob, mk, mt):
    """The observer's melds (:func:`mjenv.view.meld_at`) in the form the targets read into ``mk`` / ``mt``: 1 a chow
    at its low tile, 2 a pung or kong at its tile; returns how many."""
    nm = 0
    for i in range(V.n_melds_at(ob, 0)):
        m = V.meld_at(ob, 0, i)
        if m == NO_MELD:
            continue
        if meld_kind(m) == CHOW:
            mk[nm] = 1
            mt[nm] = meld_tile(m) - 1
        else:
            mk[nm] = 2
            mt[nm] = meld_tile(m)
        nm += 1
    return nm


@njit  # a plain call (once per row): inlined by numba it was typed again inside each of its two callers
def target_view(ob, conc, vis, disc_by_others, mk, mt, count_claimed):
    """What the rule agent reads from one observation row ``ob`` (float32 or uint8), decoded by :mod:`mjenv.view`:
    ``conc`` (own concealed counts, :func:`mjenv.view.hand_kernel`), ``vis`` and ``disc_by_others``
    (:func:`mjenv.view.visible_kernel`: uncapped; with ``count_claimed`` the claimed discards count as seen too,
    as the features have it) and the own melds ``mk`` / ``mt`` (:func:`target_melds`). Returns ``(n, nm)``:
    concealed tiles and own melds."""
    n = V.hand_kernel(ob, conc)
    V.visible_kernel(ob, conc, vis, disc_by_others, count_claimed)
    return n, target_melds(ob, mk, mt)


@njit(inline="always")  # inlined into its shared kernel (_decide_c); called as such by rule_actions_kernel
def _decide(ob, mask, danger_wall, max_eval, conc, vis, disc_by_others, unseen, mk, mt, ws, tabs, shapes):
    """One decision from one observation row ``ob`` and its mask (``ws``: int64[10, 34] scratch); returns the
    action id."""
    n_legal = 0
    only = -1
    for a in range(A.NUM_ACTIONS):
        if mask[a]:
            n_legal += 1
            only = a
    if mask[A.WIN]:
        return A.WIN
    if n_legal <= 1:
        return only
    # ---- decode the observation
    n, nm = target_view(ob, conc, vis, disc_by_others, mk, mt, False)
    wall = int(ob[O.O_WALL])
    phase = 0
    for j in range(4):
        if ob[O.O_PHASE + j] != 0:
            phase = j
    for t in range(34):
        vis[t] = min(vis[t], 4)
        unseen[t] = 4 - vis[t]
    k = H.keys_kernel(conc)
    if phase <= 1:
        return _turn(mask, conc, k, n, nm, mk, mt, vis, unseen, disc_by_others, wall, danger_wall, max_eval, ws,
                     tabs, shapes)  # fmt: skip
    if phase == 2:
        offer = 0
        for t in range(34):
            if ob[O.O_OFFER + t] != 0:
                offer = t
        return _claim(mask, conc, k, n, nm, mk, mt, offer, ws, tabs, shapes)
    return A.PASS if mask[A.PASS] else only


@njit
def _first_legal(mask):
    for a in range(A.NUM_ACTIONS):
        if mask[a]:
            return a
    return 0


# ---- incremental forms of the two commonest targets (about 70% and 20% of the turns in rule-agent play).
# They give exactly what target_shanten gives (tests/test_agents.py checks it), from one block score per tile
# instead of a whole target evaluation.


@njit
def _chow_rest(conc, k, nm, mk, mt, tgt, inu):
    """Three-fixed-chow target ``tgt`` (kind 2) in incremental form: ``(rest, missing, r)`` with

    ``target_shanten = missing + 2 * rest - score(r, rest)``, ``r`` the keys of the concealed tiles less one copy
    of each held tile of the chows no meld satisfies, and ``inu[t] = 1`` on those chows' tiles (0 elsewhere).
    ``rest < 0`` when the melds rule the target out.
    """
    sat0 = False
    sat1 = False
    sat2 = False
    extra = 0
    for i in range(nm):  # the same meld matching as target_shanten
        t = mt[i]
        if mk[i] == 1 and t == T_CHOWS[tgt, 0] and not sat0:
            sat0 = True
        elif mk[i] == 1 and t == T_CHOWS[tgt, 1] and not sat1:
            sat1 = True
        elif mk[i] == 1 and t == T_CHOWS[tgt, 2] and not sat2:
            sat2 = True
        else:
            extra += 1
    r = k
    if extra > 1:
        return -1, 0, r
    for t in range(34):
        inu[t] = 0
    missing = 0
    for j in range(3):
        if (j == 0 and sat0) or (j == 1 and sat1) or (j == 2 and sat2):
            continue
        for d in range(3):
            t = T_CHOWS[tgt, j] + d
            inu[t] = 1
            if conc[t] > 0:
                r = add_keys(r, t, -1)
            else:
                missing += 1
    return 1 - extra, missing, r


@njit(forceinline=True, _nrt=False)
def _chow_less(conc, t, missing, r, inu):
    """``(missing, r)`` of :func:`_chow_rest` after one copy of ``t`` leaves the hand (``conc`` before)."""
    if inu[t] and conc[t] == 1:
        return missing + 1, r  # the chow's only copy
    return missing, add_keys(r, t, -1)


@njit(forceinline=True, _nrt=False)
def _res_count(conc, inu, t):
    """Copies of ``t`` in a three-chow residual: one copy of each held tile of the open chows is outside it."""
    c = conc[t]
    if c > 0 and inu[t]:
        c -= 1
    return c


@njit
def _res_single(conc, inu, t):
    """Is ``t`` a lone single of the three-chow residual (one copy, no residual tile within two ranks)? Such a
    tile is in no block of any reading, so removing it leaves the residual score unchanged."""
    if _res_count(conc, inu, t) != 1:
        return False
    if t >= 27:
        return True
    rk = t % 9
    for d in range(-2, 3):
        if d != 0 and 0 <= rk + d <= 8 and _res_count(conc, inu, t + d) > 0:
            return False
    return True


@njit
def _chow_useful(conc, tgt, rest, r, sc, unseen, inu, tabs):
    """:func:`_useful` for a three-fixed-chow target from its incremental form (``sc = score(r, rest)``).

    A missing chow tile always helps. Any other draw joins the residual ``r`` and helps when it raises its
    score: never when the residual is already complete (``sc = 2 rest + 1``), and only when the residual holds
    a copy of it or (suits) a tile within two ranks (else it stays a single in every reading)."""
    u = 0
    full = sc >= 2 * rest + 1
    for t in range(34):
        if unseen[t] <= 0 or conc[t] >= 4:
            continue
        if inu[t] and conc[t] == 0:
            u += unseen[t]  # a missing chow tile: one step closer
            continue
        if full:
            continue
        near = False
        if t >= 27:
            near = conc[t] > 0  # honours are never chow tiles
        else:
            rk = t % 9
            for d in range(-2, 3):
                if 0 <= rk + d <= 8 and _res_count(conc, inu, t + d) > 0:
                    near = True
                    break
        if not near:
            continue
        r1 = add_keys(r, t, 1)
        if _score(r1[0], r1[1], r1[2], r1[3], rest, tabs) > sc:
            u += unseen[t]
    return u


# ---- incremental knitted straight (a target with costly evaluations: 6 combinations, each a residual score).
# Per suit s and offset o (knitted ranks o, o + 3, o + 6), ``st`` holds: st[3s + o] the knitted tiles missing,
# st[9 + 3s + o] the residual key of suit s (its tiles less one copy of each held knitted tile), st[18 + 3s + o]
# that key's packed increments (mjenv.hand suit_inc); st[27] the honour key, st[28] its increments. Combination
# i of mjenv.hand.KNITS uses offset KNITS[i, s] in suit s; its value is what knitted_straight_shanten_kernel
# gives for it: ``missing + 2 rest - score(residual keys, rest)``. A tile in or out changes three entries.
_KST = 29  # entries of a knitted-straight state


@njit
def _knit_base(conc, k, st, tabs):
    """Fill ``st`` (module comment above) for concealed counts ``conc`` with keys ``k``."""
    sinc = tabs[2]
    for s in range(3):
        for o in range(3):
            m = 0
            r = k[s]
            for j in range(3):
                t = 9 * s + o + 3 * j
                if conc[t] > 0:
                    r -= _P5[t]
                else:
                    m += 1
            st[3 * s + o] = m
            st[9 + 3 * s + o] = r
            st[18 + 3 * s + o] = sinc[r]
    st[27] = k[3]
    st[28] = tabs[3][k[3]]


@njit
def _knit_move(conc, st, dst, t, d, tabs):
    """``dst`` = ``st`` after ``d`` (+1 or -1) copies of tile ``t`` (``conc``: the counts before the move)."""
    for j in range(_KST):
        dst[j] = st[j]
    if t >= 27:
        dst[27] = st[27] + d * _P5[t]
        dst[28] = tabs[3][dst[27]]
        return
    s = t // 9
    o_t = (t % 9) % 3
    sinc = tabs[2]
    for o in range(3):
        e = 3 * s + o
        if o == o_t and ((d < 0 and conc[t] == 1) or (d > 0 and conc[t] == 0)):
            dst[e] = st[e] - d  # the combination's only copy leaves, or its missing tile arrives
        else:
            dst[9 + e] = st[9 + e] + d * _P5[t]
            dst[18 + e] = sinc[dst[9 + e]]


@njit(forceinline=True, _nrt=False)
def _knit_comb(st, i, rest, knits, tabs):
    """Value of knitted combination ``i`` for the hand described by ``st``: ``missing + 2 rest - score``."""
    e0 = knits[i, 0]
    e1 = 3 + knits[i, 1]
    e2 = 6 + knits[i, 2]
    sc = H.inc_score_kernel(st[18 + e0], st[18 + e1], st[18 + e2], st[28], rest)
    if sc < 0:
        sc = H.regular_score_kernel(tabs[0], tabs[1], st[9 + e0], st[9 + e1], st[9 + e2], st[27], rest)
    return st[e0] + st[e1] + st[e2] + 2 * rest - sc


@njit(forceinline=True, _nrt=False)
def _knit_gain(st, i, rest, s, g, key, inc, knits, tabs):
    """Is combination ``i`` (at value ``s``) below ``s`` once group ``g``'s residual key is ``key`` (packed
    increments ``inc``)?"""
    e0 = knits[i, 0]
    e1 = 3 + knits[i, 1]
    e2 = 6 + knits[i, 2]
    k0 = st[9 + e0]
    k1 = st[9 + e1]
    k2 = st[9 + e2]
    k3 = st[27]
    a0 = st[18 + e0]
    a1 = st[18 + e1]
    a2 = st[18 + e2]
    a3 = st[28]
    if g == 0:
        k0 = key
        a0 = inc
    elif g == 1:
        k1 = key
        a1 = inc
    elif g == 2:
        k2 = key
        a2 = inc
    else:
        k3 = key
        a3 = inc
    sc = H.inc_score_kernel(a0, a1, a2, a3, rest)
    if sc < 0:
        sc = H.regular_score_kernel(tabs[0], tabs[1], k0, k1, k2, k3, rest)
    return st[e0] + st[e1] + st[e2] + 2 * rest - sc < s


@njit
def _knit_lone(conc, t, o):
    """For a discard of ``t`` and a knitted combination with offset ``o`` in ``t``'s suit (-1 for honours):
    2 when ``t`` is its only copy of a knitted tile (the combination's value rises by one), 1 when ``t`` is a
    lone single of its residual (one copy, no residual tile within two ranks: the value stays), else 0."""
    if t >= 27:
        return 1 if conc[t] == 1 else 0
    rk = t % 9
    c = conc[t]
    if rk % 3 == o:
        if c == 1:
            return 2
        c -= 1
    if c != 1:
        return 0
    for d in range(-2, 3):
        if d != 0 and 0 <= rk + d <= 8:
            x = conc[t + d]
            if x > 0 and (rk + d) % 3 == o:
                x -= 1
            if x > 0:
                return 0
    return 1


@njit
def _knit_useful(conc, st, rest, s, cv, unseen, knits, tabs):
    """:func:`_useful` for the knitted straight from its state ``st`` (shanten ``s``; ``cv[i]``: the value of
    combination ``i``, exact where it is at most ``s``). A draw lowers a combination by at most one, so only
    the combinations at ``s`` can make it useful: a missing knitted tile of one of them always does (its
    residual stays), another tile when it raises that combination's residual score, which needs a residual
    tile of the same kind or (suits) within two ranks: a tile with neither stays a single in every reading."""
    u = 0
    for t in range(34):
        if unseen[t] <= 0 or conc[t] >= 4:
            continue
        hit = False
        if t >= 27:
            if conc[t] > 0:
                key = st[27] + _P5[t]
                inc = tabs[3][key]
                for i in range(6):
                    if cv[i] == s and _knit_gain(st, i, rest, s, 3, key, inc, knits, tabs):
                        hit = True
                        break
        else:
            g = t // 9
            r = t % 9
            for i in range(6):
                if cv[i] != s:
                    continue
                o = knits[i, g]
                if r % 3 == o and conc[t] == 0:
                    hit = True  # a missing knitted tile
                    break
                near = False
                for d in range(-2, 3):  # the residual holds conc less one copy of each knitted tile held
                    if 0 <= r + d <= 8:
                        c = conc[t + d]
                        if c > 0 and (r + d) % 3 == o:
                            c -= 1
                        if c > 0:
                            near = True
                            break
                if not near:
                    continue
                key = st[9 + 3 * g + o] + _P5[t]
                if _knit_gain(st, i, rest, s, g, key, tabs[2][key], knits, tabs):
                    hit = True
                    break
        if hit:
            u += unseen[t]
    return u


# ---- incremental honours and knitted: mjenv.hand.honors_knitted_shanten_kernel counts the distinct honours
# held (``h``) and, per knitted combination i, its distinct knitted tiles held (``kc[i]``): the value is
# ``13 - min(max kc + h, 14)``; a tile that arrives new or leaves as the last copy changes one count by one.


@njit
def _hk_counts(conc, kc, knits):
    """Fill ``kc[i]`` (distinct knitted tiles of combination ``i`` held); return the distinct honours held."""
    for i in range(6):
        c = 0
        for g in range(3):
            for j in range(3):
                if conc[9 * g + knits[i, g] + 3 * j] > 0:
                    c += 1
        kc[i] = c
    h = 0
    for t in range(27, 34):
        if conc[t] > 0:
            h += 1
    return h


@njit(forceinline=True, _nrt=False)
def _hk_value(kc, h, t, d, knits):
    """Honours and knitted shanten after tile ``t`` arrives new (``d = 1``) or leaves as its last copy
    (``d = -1``; ``t = -1``: no change)."""
    best = 0
    if t >= 27:
        h += d
        for i in range(6):
            best = max(best, kc[i])
    else:
        g = t // 9
        o = (t % 9) % 3
        for i in range(6):
            best = max(best, kc[i] + (d if t >= 0 and knits[i, g] == o else 0))
    return 13 - min(best + h, 14)


@njit
def _turn(mask, conc, k, n, nm, mk, mt, vis, unseen, disc_by_others, wall, danger_wall, max_eval, ws, tabs,
          shapes):  # fmt: skip
    """A turn: kongs that do not raise the target shanten, else the best discard (module docstring)."""
    sh = ws[0]
    pre = ws[1]
    inu = ws[4]
    kst = ws[5]  # knitted straight: the hand's state, after a discard, scratch
    kst1 = ws[6]
    ktmp = ws[7]
    kv = ws[8]  # knitted straight: the combinations' values before and after a discard
    kv1 = ws[9]
    krest = 0
    v0 = 0
    hk_h = 0
    tgt, _ = _best_target(conc, k, n, nm, mk, mt, 10 * NO, tabs, shapes, ws[2])
    # mode 1: three fixed chows, incremental; mode 2: seven pairs, incremental; mode 3: knitted straight,
    # incremental; mode 4: honours and knitted, incremental; mode 0: target_shanten per tile
    mode = 0
    rest = 0
    missing = 0
    r = k
    sc0 = 0
    pairs = 0
    if T_KIND[tgt] == 2:
        rest, missing, r = _chow_rest(conc, k, nm, mk, mt, tgt, inu)
        if rest >= 0:
            mode = 1
            sc0 = _score(r[0], r[1], r[2], r[3], rest, tabs)
    elif T_KIND[tgt] == 3 and T_CHOWS[tgt, 0] == H.SEVEN_PAIRS and nm == 0 and n - 1 >= 13:
        mode = 2
        pairs = 6 - H.seven_pairs_shanten_kernel(conc)
    elif (
        T_KIND[tgt] == 3
        and T_CHOWS[tgt, 0] == H.KNITTED_STRAIGHT
        and n - 1 >= 10
        and (n >= 12) == (n - 1 >= 12)
    ):
        # a discard raises each combination's value by 0 or 1: the value after it is v0 when a combination at
        # v0 keeps its value, else v0 + 1
        mode = 3
        krest = 1 if n >= 12 else 0
        _knit_base(conc, k, kst, tabs)
        v0 = 10 * NO
        for i in range(6):
            kv[i] = _knit_comb(kst, i, krest, shapes[0], tabs)
            v0 = min(v0, kv[i])
    elif T_KIND[tgt] == 3 and T_CHOWS[tgt, 0] == H.HONORS_KNITTED and nm == 0 and n - 1 >= 13:
        mode = 4
        hk_h = _hk_counts(conc, kv, shapes[0])
    best_s = 10 * NO
    for t in range(34):
        sh[t] = 10 * NO
        if conc[t] > 0 and mask[A.DISCARD + t]:
            if mode == 1:
                if inu[t] and conc[t] == 1:
                    s = missing + 1 + 2 * rest - sc0  # the chow's only copy: the residual stays
                elif _res_single(conc, inu, t):
                    s = missing + 2 * rest - sc0  # a lone single of the residual: its score stays
                else:
                    m1, r1 = _chow_less(conc, t, missing, r, inu)
                    s = m1 + 2 * rest - _score(r1[0], r1[1], r1[2], r1[3], rest, tabs)
            elif mode == 2:
                s = 6 - pairs + (1 if conc[t] % 2 == 0 else 0)  # an even count loses a pair
            elif mode == 4:  # another copy of t stays: nothing changes
                s = _hk_value(kv, hk_h, t if conc[t] == 1 else -1, -1, shapes[0])
            elif mode == 3:
                s = v0 + 1
                moved = False
                for i in range(6):
                    if kv[i] != v0:
                        continue
                    q = _knit_lone(conc, t, shapes[0][i, t // 9] if t < 27 else -1)
                    if q == 1:  # a lone single of this combination's residual: its value stays
                        s = v0
                        break
                    if q == 2:  # its only knitted copy: the combination's value rises
                        continue
                    if not moved:
                        _knit_move(conc, kst, ktmp, t, -1, tabs)
                        moved = True
                    if _knit_comb(ktmp, i, krest, shapes[0], tabs) == v0:
                        s = v0
                        break
            else:
                # values past best + 1 are never used: the knitted straight may stop there
                conc[t] -= 1
                s = _tsh(conc, add_keys(k, t, -1), n - 1, nm, mk, mt, tgt, tabs, shapes, min(best_s + 2, NO))
                conc[t] += 1
            sh[t] = s
            best_s = min(best_s, s)
    if best_s >= 10 * NO:  # no discard legal
        return _first_legal(mask)
    for t in range(34):
        if mask[A.CONCEALED_KONG + t]:
            conc[t] -= 4
            mk[nm] = 2
            mt[nm] = t
            s = target_shanten(conc, add_keys(k, t, -4), n - 4, nm + 1, mk, mt, tgt, tabs, shapes)
            conc[t] += 4
            if s <= best_s:
                return A.CONCEALED_KONG + t
        if mask[A.ADDED_KONG + t]:
            conc[t] -= 1
            s = target_shanten(conc, add_keys(k, t, -1), n - 1, nm, mk, mt, tgt, tabs, shapes)
            conc[t] += 1
            if s <= best_s:
                return A.ADDED_KONG + t
    safe_mode = wall <= danger_wall and best_s >= 2
    # cheap pre-order of the candidates (safety when playing safe; isolated tiles first), then the costly
    # useful-tile count for the first max_eval of them only
    for t in range(34):
        pre[t] = 1 << 60
        s = sh[t]
        if s >= 10 * NO:
            continue
        dg = discard_danger(t, vis, disc_by_others)
        if safe_mode:
            if s > best_s + 1:
                continue
            pre[t] = ((dg * 4 + (s - best_s)) << 20) + (neighbours_held(conc, t) << 8) + dg
        elif s == best_s:
            pre[t] = (neighbours_held(conc, t) << 8) + dg
    if not safe_mode and T_KIND[tgt] <= 1:
        # a tile the target's filter rules out: all such discards leave the same useful tiles, so take the
        # most isolated (then safest) of them without counting
        bt = -1
        for t in range(34):
            if pre[t] < 1 << 60 and not T_ALLOW[tgt, t] and (bt < 0 or pre[t] < pre[bt]):
                bt = t
        if bt >= 0:
            return A.DISCARD + bt
    n_cand = 0
    only_t = 0
    for t in range(34):
        if pre[t] < 1 << 60:
            n_cand += 1
            only_t = t
    if n_cand == 1:  # nothing to break a tie with
        return A.DISCARD + only_t
    best_key = 1 << 60
    best_t = -1
    for _ in range(min(max_eval, 34)):
        t = 0  # the next candidate in pre-order (smallest pre, lowest tile first); taken ones are marked
        for x in range(1, 34):
            if pre[x] < pre[t]:
                t = x
        if pre[t] >= 1 << 60:
            break
        pre[t] = 1 << 60
        s = sh[t]
        dg = discard_danger(t, vis, disc_by_others)
        key = ((dg * 4 + (s - best_s)) << 40) if safe_mode else 0
        k1 = add_keys(k, t, -1)
        if mode == 1:
            m1, r1 = _chow_less(conc, t, missing, r, inu)
            if (inu[t] and conc[t] == 1) or _res_single(conc, inu, t):
                sc = sc0  # (as in the discard loop)
            else:
                sc = _score(r1[0], r1[1], r1[2], r1[3], rest, tabs)
            conc[t] -= 1
            u = _chow_useful(conc, tgt, rest, r1, sc, unseen, inu, tabs)
        elif mode == 2:
            conc[t] -= 1
            u = 0
            for x in range(34):  # a pair grows from a single (or a third) copy: _useful's seven pairs case
                if unseen[x] > 0 and (conc[x] == 1 or conc[x] == 3):
                    u += unseen[x]
        elif mode == 3:
            _knit_move(conc, kst, kst1, t, -1, tabs)
            conc[t] -= 1
            for i in range(6):  # the combinations' values after the discard (they do not fall below kv)
                kv1[i] = _knit_comb(kst1, i, krest, shapes[0], tabs) if kv[i] <= s else 10 * NO
            u = _knit_useful(conc, kst1, krest, s, kv1, unseen, shapes[0], tabs)
        elif mode == 4:
            h1 = hk_h
            for i in range(6):
                kv1[i] = kv[i]
            if conc[t] == 1:  # the last copy leaves
                if t >= 27:
                    h1 -= 1
                else:
                    for i in range(6):
                        if shapes[0][i, t // 9] == (t % 9) % 3:
                            kv1[i] -= 1
            conc[t] -= 1
            u = 0
            for x in range(34):  # only a tile not held can help (_useful's honours and knitted case)
                if unseen[x] > 0 and conc[x] == 0 and _hk_value(kv1, h1, x, 1, shapes[0]) < s:
                    u += unseen[x]
        else:
            conc[t] -= 1
            u = _useful(conc, k1, n - 1, nm, mk, mt, tgt, s, unseen, tabs, shapes)
        reg = regular_shanten(k1, n - 1, tabs)
        conc[t] += 1
        key += ((200 - u) << 20) + (min(reg + 1, 15) << 8) + (dg << 4)
        if key < best_key:
            best_key = key
            best_t = t
    return A.DISCARD + best_t


@njit
def _target_values(conc, k, n, nm, mk, mt, slack, vals, lb, tabs, shapes):
    """Fill ``vals`` with target shanten + penalty of every target whose value is at most the best + ``slack``
    (the others get ``10 * NO``: their lower bound already exceeds that); returns the best value. ``lb``:
    scratch."""
    level = _bounds(conc, n, nm, mk, mt, lb)
    for tgt in range(NUM_TARGETS):
        vals[tgt] = 10 * NO
    best = 10 * NO
    while level <= best + slack:
        nxt = 10 * NO
        for tgt in range(NUM_TARGETS):
            b = lb[tgt]
            if b == level:
                v = _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, NO) + T_PEN[tgt]
                vals[tgt] = v
                best = min(best, v)
            elif b > level:
                nxt = min(nxt, b)
        level = nxt
    return best


@njit
def _claim_value(conc, k, n, nm, mk, mt, vals, limit, tabs, shapes):
    """Best value after a claim (the meld already applied to the arguments) over the targets whose value
    before the claim is at most ``limit``: a claim gains at most one tile, so no other target can beat it."""
    best = 10 * NO
    for tgt in range(NUM_TARGETS):
        if vals[tgt] <= limit:
            best = min(best, _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, NO) + T_PEN[tgt])
    return best


@njit
def _claim(mask, conc, k, n, nm, mk, mt, x, ws, tabs, shapes):
    """A claim window: the claim that lowers the best target value most (kong: does not raise it), else pass.

    A claim is a draw of the offered tile plus a fixed meld, so it lowers a target's value by at most one:
    only targets at the best value now can make a chow or pung pay, only those within one of it a kong.
    """
    vals = ws[3]
    now = _target_values(conc, k, n, nm, mk, mt, 1, vals, ws[2], tabs, shapes)
    best = now
    act = A.PASS
    if mask[A.PUNG]:  # two from the hand; the 11-tile rest is in the 3k+2 form (a discard to come)
        conc[x] -= 2
        mk[nm] = 2
        mt[nm] = x
        v = _claim_value(conc, add_keys(k, x, -2), n - 2, nm + 1, mk, mt, vals, now, tabs, shapes)
        conc[x] += 2
        if v < best:
            best = v
            act = A.PUNG
    for p in range(3):
        if mask[A.CHOW + p]:
            lo = x - p
            kk = k
            for d in range(3):
                if lo + d != x:
                    conc[lo + d] -= 1
                    kk = add_keys(kk, lo + d, -1)
            mk[nm] = 1
            mt[nm] = lo
            v = _claim_value(conc, kk, n - 2, nm + 1, mk, mt, vals, now, tabs, shapes)
            for d in range(3):
                if lo + d != x:
                    conc[lo + d] += 1
            if v < best:
                best = v
                act = A.CHOW + p
    if mask[A.KONG]:
        conc[x] -= 3
        mk[nm] = 2
        mt[nm] = x
        v = _claim_value(conc, add_keys(k, x, -3), n - 3, nm + 1, mk, mt, vals, now + 1, tabs, shapes)
        conc[x] += 3
        if v <= now and v <= best:
            act = A.KONG
    if not mask[act]:
        return _first_legal(mask)
    return act


_CHUNK = 16  # rows per scratch allocation in the kernel


# shapes of the tables (mjenv.hand.load_tables, load_shanten_tables) and of POW5, which the shared kernels
# (decide_kernel, agents.features.row_kernel) receive as data pointers
TABLE_SHAPES = ((5**9, 10), (5**7, 10), (5**9,), (5**7,), H.POW5.shape)
_P = _nt.CPointer
#: the C types of the five table pointers (``tabs``, then POW5) in a shared kernel's signature
TABLE_POINTERS = (_P(_nt.int8), _P(_nt.int8), _P(_nt.uint16), _P(_nt.uint16), _P(_nt.int64))


@njit(inline="always")
def tables_at(suit, honor, sinc, hinc, pow5):
    """``(tabs, shapes)`` as arrays over the data pointers of a shared kernel's table arguments.

    KNITS and ORPHANS are read as mjenv.hand's read-only globals instead: so the callees compile for the same
    argument types (read-only arrays) as when :class:`RulePolicy` passed them, which the hand kernels' own
    warmup and the tests that call the callees directly use too (no second specialization of each)."""
    tabs = (
        numba.carray(suit, TABLE_SHAPES[0]),
        numba.carray(honor, TABLE_SHAPES[1]),
        numba.carray(sinc, TABLE_SHAPES[2]),
        numba.carray(hinc, TABLE_SHAPES[3]),
    )
    shapes = (H.KNITS, H.ORPHANS, numba.carray(pow5, TABLE_SHAPES[4]))
    return tabs, shapes


def check_tables(tabs, shapes) -> None:
    """Raise ``RuntimeError`` unless ``tabs`` and ``shapes`` have the C-contiguous shapes the shared kernels
    assume (:data:`TABLE_SHAPES`)."""
    if shapes[0] is not H.KNITS or shapes[1] is not H.ORPHANS:
        raise RuntimeError("the shared kernels read mjenv.hand.KNITS and ORPHANS: pass those")
    for a, shape in zip((*tabs, shapes[2]), TABLE_SHAPES):
        if a.shape != shape or not a.flags.c_contiguous:
            raise RuntimeError(
                f"mjenv's tables changed shape ({a.shape}, expected {shape}): update TABLE_SHAPES"
            )


_AGENT_TABLES: tuple | None = None


def agent_tables() -> tuple[tuple, tuple]:
    """``(tabs, shapes)`` that the agents' kernels take (:func:`rule_actions_kernel`,
    :func:`agents.features.nn_features_kernel`): ``tabs`` = (suit, honor, suit_inc, honor_inc) of
    :mod:`mjenv.hand`, ``shapes`` = (KNITS, ORPHANS, POW5); loaded once and checked (:func:`check_tables`)."""
    global _AGENT_TABLES
    if _AGENT_TABLES is None:
        suit, honor, _, _ = H.load_tables()
        suit_inc, honor_inc = H.load_shanten_tables()
        tables = ((suit, honor, suit_inc, honor_inc), (H.KNITS, H.ORPHANS, H.POW5))
        check_tables(*tables)  # as the shared kernels see them
        _AGENT_TABLES = tables
    return _AGENT_TABLES


def _decide_c(ob, mask, danger_wall, max_eval, conc, vis, disc, unseen, mk, mt, ws, suit, honor, sinc, hinc,
              pow5):  # fmt: skip
    """:func:`_decide` over data pointers (the body of its shared kernel: :func:`decide_kernel`)."""
    tabs, shapes = tables_at(suit, honor, sinc, hinc, pow5)
    return _decide(
        numba.carray(ob, O.OBS_SIZE), numba.carray(mask, A.NUM_ACTIONS), danger_wall, max_eval,
        numba.carray(conc, 34), numba.carray(vis, 34), numba.carray(disc, 34), numba.carray(unseen, 34),
        numba.carray(mk, 5), numba.carray(mt, 5), numba.carray(ws, (10, 34)), tabs, shapes,
    )  # fmt: skip


_DECIDE_SIG = _nt.int64(
    _P(_nt.float32), _P(_nt.boolean), _nt.int64, _nt.int64, _P(_nt.int8), _P(_nt.int64), _P(_nt.boolean),
    _P(_nt.int64), _P(_nt.int64), _P(_nt.int64), _P(_nt.int64), *TABLE_POINTERS,
)  # fmt: skip
_decide_shared = None  # the shared kernel, made by decide_kernel() before rule_actions_kernel first compiles


def decide_kernel():
    """The rule agent's per-row decision as a shared kernel (:func:`mjenv._jit.shared_kernel`), compiled (or
    loaded from the cache) on first use.

    Why: ``rule_actions_kernel`` is a ``prange`` kernel, and numba links the whole callee tree of its loop body
    into each of its libraries (the kernel, the gufunc, its two wrappers) and optimizes and code-generates it
    again in each: about 35 of the ~95 CPU-s of a cold compile. As a shared kernel the decision is compiled
    once, and the parallel kernel only holds a call to its symbol. With ``NUMBA_DISABLE_JIT`` it is the plain
    :func:`_decide`. Must be called before :func:`rule_actions_kernel` compiles or loads (its cached code
    calls the symbol): :class:`RulePolicy` does.
    """
    global _decide_shared
    if _decide_shared is None:
        _decide_shared = shared_kernel("agents_rule_decide_v1", _DECIDE_SIG, _decide_c)
        if _decide_shared is None:  # NUMBA_DISABLE_JIT
            _decide_shared = _decide_rows
    return _decide_shared


def _decide_rows(ob, mask, danger_wall, max_eval, conc, vis, disc, unseen, mk, mt, ws, suit, honor, sinc, hinc,
                 pow5):  # fmt: skip
    """The plain-Python stand-in of the shared kernel (``NUMBA_DISABLE_JIT``): arrays instead of pointers."""
    return _decide(ob, mask, danger_wall, max_eval, conc, vis, disc, unseen, mk, mt, ws,
                   (suit, honor, sinc, hinc), (H.KNITS, H.ORPHANS, pow5))  # fmt: skip


@njit(parallel=True)
def rule_actions_kernel(obs, masks, out, danger_wall, max_eval, tabs, shapes):
    """Fill ``out[i]`` with the rule agent's action for observation row ``obs[i]`` and mask ``masks[i]``.

    ``tabs`` = (suit, honor, suit_inc, honor_inc) of :mod:`mjenv.hand`; ``shapes`` = (KNITS, ORPHANS, pow5),
    all C-contiguous. Rows are taken in chunks of ``_CHUNK`` that share one set of scratch arrays (no
    allocation per row). Call :func:`decide_kernel` once first (it makes the per-row kernel this calls).
    """
    suit, honor, sinc, hinc = tabs[0], tabs[1], tabs[2], tabs[3]
    pow5 = shapes[2]
    n = obs.shape[0]
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        conc = np.zeros(34, np.int8)
        vis = np.zeros(34, np.int64)
        disc = np.zeros(34, np.bool_)
        unseen = np.zeros(34, np.int64)
        mk = np.zeros(5, np.int64)
        mt = np.zeros(5, np.int64)
        ws = np.zeros((10, 34), np.int64)
        for i in range(c * _CHUNK, min(n, (c + 1) * _CHUNK)):
            out[i] = _decide_shared(obs[i], masks[i], danger_wall, max_eval, conc, vis, disc, unseen, mk, mt, ws,
                                    suit, honor, sinc, hinc, pow5)  # fmt: skip


@njit(parallel=True)
def widen_kernel(obs8, out):
    """Copy the fields :func:`rule_actions_kernel` reads from uint8 observation rows into float32 rows ``out``
    (claimed discards, two's-complement bytes, back to negative). The decision kernel then compiles for
    float32 only (one compilation of about two minutes instead of two); the other fields of ``out`` are not
    touched."""
    for i in prange(obs8.shape[0]):
        for j in range(4 * 34):
            out[i, O.O_HAND + j] = obs8[i, O.O_HAND + j]
        for j in range(4 * 12):
            out[i, O.O_MSEQ + j] = obs8[i, O.O_MSEQ + j]
        for j in range(4 * O._MD):
            x = np.int32(obs8[i, O.O_DSEQ + j])
            out[i, O.O_DSEQ + j] = x - 256 if x >= 128 else x
        out[i, O.O_WALL] = obs8[i, O.O_WALL]
        for j in range(4):
            out[i, O.O_PHASE + j] = obs8[i, O.O_PHASE + j]
        for j in range(34):
            out[i, O.O_OFFER + j] = obs8[i, O.O_OFFER + j]


# ------------------------------------------------------------------------------------------------ policy
class RulePolicy:
    """The rule agent as a batched policy (see the module docstring).

    Parameters
    ----------
    num_envs : int
        Largest batch it will see (any ``N <= num_envs`` works; larger batches work too).
    danger_wall : int
        Play safe when the wall holds this many tiles or fewer and the hand is still far (default 20).
    max_eval : int
        Count useful tiles for at most this many of the best discards (after a cheap pre-order; default 2).
    threads : int, optional
        Numba threads for its kernel (default: Numba's current setting, e.g. the VectorEnv's).
    """

    needs_observations = True

    def __init__(
        self, num_envs: int = 1, *, danger_wall: int = 20, max_eval: int = 2, threads: int | None = None
    ) -> None:
        for name, v, lo in (("danger_wall", danger_wall, 0), ("max_eval", max_eval, 1)):
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
                raise TypeError(f"{name} must be an int, got {type(v).__name__}")
            if v < lo:
                raise ValueError(f"{name} must be >= {lo}, got {v}")
        top = numba.config.NUMBA_NUM_THREADS
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= top
        ):
            raise ValueError(f"threads must be None or an int in 1..{top}, got {threads!r}")
        self.num_envs = int(num_envs)
        self.danger_wall = int(danger_wall)
        self.max_eval = int(max_eval)
        self.threads = threads
        self._tabs, self._shapes = agent_tables()
        self._out = np.zeros(self.num_envs, np.int64)
        self._wide: np.ndarray | None = None  # float32 rows for uint8 observations (widen_kernel)

    def __call__(
        self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray | None = None
    ) -> np.ndarray:
        if obs is None:
            raise ValueError("the rule agent needs observations (VectorEnv(..., observations=True))")
        if not isinstance(obs, np.ndarray) or obs.ndim != 2 or obs.shape[1] != O.OBS_SIZE:
            raise ValueError(
                f"obs must be an array of shape (N, {O.OBS_SIZE}), got {getattr(obs, 'shape', obs)}"
            )
        if not isinstance(masks, np.ndarray) or masks.shape != (obs.shape[0], A.NUM_ACTIONS):
            raise ValueError(
                f"masks must have shape ({obs.shape[0]}, {A.NUM_ACTIONS}), got {getattr(masks, 'shape', masks)}"
            )
        if self.threads is not None and numba.get_num_threads() != self.threads:
            numba.set_num_threads(self.threads)
        if obs.dtype == np.uint8:
            if self._wide is None or self._wide.shape[0] < obs.shape[0]:
                self._wide = np.zeros((obs.shape[0], O.OBS_SIZE), np.float32)
            wide = self._wide[: obs.shape[0]]
            widen_kernel(np.ascontiguousarray(obs), wide)
            obs = wide
        elif obs.dtype != np.float32:
            obs = obs.astype(np.float32)
        if masks.dtype != np.bool_:
            masks = masks.astype(np.bool_)
        n = obs.shape[0]
        out = self._out[:n] if n <= self._out.shape[0] else np.zeros(n, np.int64)
        decide_kernel()
        rule_actions_kernel(
            np.ascontiguousarray(obs),
            np.ascontiguousarray(masks),
            out,
            self.danger_wall,
            self.max_eval,
            self._tabs,
            self._shapes,
        )
        return out.copy()


def make(num_envs: int, seed: int, **kwargs: Any) -> RulePolicy:
    """``agents.rule:make``: a :class:`RulePolicy` (deterministic: ``seed`` is accepted and unused).

    Keyword options: ``danger_wall``, ``max_eval``, ``threads`` (ints; see :class:`RulePolicy`). Unknown options
    raise ``TypeError``.
    """
    num_envs, _ = check_factory_args(num_envs, seed)
    bad = set(kwargs) - {"danger_wall", "max_eval", "threads"}
    if bad:
        raise TypeError(
            f"agents.rule:make got unknown option(s) {sorted(bad)}; it takes danger_wall, max_eval, threads"
        )
    return RulePolicy(num_envs, **kwargs)
