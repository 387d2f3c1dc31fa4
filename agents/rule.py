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

Speed: one ``prange`` kernel over the rows; see ``benchmarks/rule_agent.py``.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import numba
import numpy as np
from numba import prange

from agents._common import check_factory_args
from mjenv import actions as A
from mjenv import hand as H
from mjenv import observation as O
from mjenv._jit import njit

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


# ------------------------------------------------------------------------------------------------ kernels
# Group keys (base-5 counts of the three suits and the honours, mjenv.hand.keys_kernel) travel as a 4-tuple ``k``
# updated incrementally (a tile in or out changes one key by a power of 5).
_P5 = np.array([5**r for r in range(9)] * 3 + [5**r for r in range(7)], np.int64)


@njit(inline="always")
def _adj(k, t, d):
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


@njit(inline="always")
def _score(k0, k1, k2, k3, need, tabs):
    """Best regular block score (mjenv.hand): the packed increments, else the full convolution."""
    suit, honor, sinc, hinc = tabs[0], tabs[1], tabs[2], tabs[3]
    v = H.inc_score_kernel(sinc[k0], sinc[k1], sinc[k2], hinc[k3], need)
    if v < 0:
        v = H.regular_score_kernel(suit, honor, k0, k1, k2, k3, need)
    return v


@njit
def _regular(k, n, tabs):
    """Regular-shape shanten of the ``n``-tile standing hand with keys ``k``."""
    need = n // 3
    return 2 * need - _score(k[0], k[1], k[2], k[3], need, tabs)


@njit
def target_shanten(conc, k, n, nm, mk, mt, tgt, tabs, shapes):
    """Shanten of target ``tgt`` for concealed counts ``conc`` (``n`` tiles, keys ``k``) and ``nm`` melds.

    ``mk[i]``: 1 chow, 2 pung or kong; ``mt[i]``: lowest tile of meld ``i``. ``tabs``: (suit, honor, suit_inc,
    honor_inc) of mjenv.hand; ``shapes``: (knits, orphans, pow5). Returns ``NO`` when the melds rule the
    target out.
    """
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
    return H.knitted_straight_shanten_kernel(conc, tabs[0], tabs[1], shapes[0], shapes[2], n, NO, -1)


@njit
def _best_target(conc, k, n, nm, mk, mt, cap, tabs, shapes):
    """``(target, value)`` minimising target shanten + penalty (the first in order on ties), among values
    below ``cap`` (``(0, 10 * NO)`` when none is).

    Targets are evaluated by increasing cheap lower bound (:func:`_lower_bound`) and the search stops once the
    bound passes the best value found, so most targets cost no table lookup.
    """
    lb = np.empty(NUM_TARGETS, np.int64)
    gsum = np.zeros(4, np.int64)
    for t in range(34):
        gsum[t // 9 if t < 27 else 3] += conc[t]
    lo = 10 * NO
    for tgt in range(NUM_TARGETS):
        b = _lower_bound(conc, gsum, n, tgt) + T_PEN[tgt]
        lb[tgt] = b
        lo = min(lo, b)
    best = 10 * NO
    bt = 0
    level = max(lo, -1)
    while level <= best and level < cap:
        for tgt in range(NUM_TARGETS):
            if lb[tgt] == level or (level == -1 and lb[tgt] < -1):
                v = target_shanten(conc, k, n, nm, mk, mt, tgt, tabs, shapes) + T_PEN[tgt]
                if v < best or (v == best and tgt < bt):
                    best = v
                    bt = tgt
        level += 1
    if best >= cap:
        return 0, 10 * NO
    return bt, best


@njit
def _lower_bound(conc, gsum, n, tgt):
    """A cheap lower bound of :func:`target_shanten` (no table lookups).

    Tile filters: every concealed tile outside the filter must be replaced, one per draw, so the shanten is at
    least their number - 1. Three fixed chows: at least the missing chow tiles - 1 (ignoring meld-satisfied
    chows, so the bound holds only without melds; with melds it returns -1). Knitted shapes: the best
    combination's missing knitted tiles - 1 (knitted straight); other shapes -1 (they are cheap).
    """
    kind = T_KIND[tgt]
    if kind <= 1:
        gm = T_GROUPS[tgt]
        out = 0
        if gm >= 0:
            for g in range(4):
                if not (gm >> g) & 1:
                    out += gsum[g]
        else:
            for t in range(34):
                if conc[t] > 0 and not T_ALLOW[tgt, t]:
                    out += conc[t]
        return out - 1
    if kind == 2:
        if n < 13:
            return -1
        missing = 0
        for j in range(3):
            for d in range(3):
                if conc[T_CHOWS[tgt, j] + d] == 0:
                    missing += 1
        return missing - 1
    if T_CHOWS[tgt, 0] == H.KNITTED_STRAIGHT:
        most = 0
        for i in range(6):
            held = 0
            for g in range(3):
                for j in range(3):
                    if conc[9 * g + H.KNITS[i, g] + 3 * j] > 0:
                        held += 1
            most = max(most, held)
        return 9 - most - 1
    return -1


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
        elif kind == 0 and not _near(conc, t):
            continue
        elif kind == 2 and not _near(conc, t):
            in_chow = False
            for j in range(3):
                if 0 <= t - T_CHOWS[tgt, j] <= 2:
                    in_chow = True
            if not in_chow:
                continue
        conc[t] += 1
        v = target_shanten(conc, _adj(k, t, 1), n + 1, nm, mk, mt, tgt, tabs, shapes)
        conc[t] -= 1
        if v < s:
            u += unseen[t]
    return u


@njit
def _neighbours(conc, t):
    """Other copies of ``t`` and tiles within two ranks of it held (honours: copies only)."""
    c = conc[t] - 1
    if t < 27:
        r = t % 9
        for d in range(-2, 3):
            if d != 0 and 0 <= r + d <= 8:
                c += conc[t + d] * (2 if d == 1 or d == -1 else 1)
    else:
        c *= 2
    return c


@njit
def _danger(t, vis, disc_by_others):
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
def _decide(ob, mask, danger_wall, max_eval, conc, vis, disc_by_others, unseen, mk, mt, tabs, shapes):
    """One decision from one observation row ``ob`` and its mask; returns the action id."""
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
    n = 0
    for t in range(34):
        c = 0
        for j in range(4):
            if ob[O.O_HAND + 34 * j + t] != 0:
                c += 1
        conc[t] = c
        n += c
        vis[t] = c
        disc_by_others[t] = False
    for p in range(4):  # every player's melds from meld_seq (others' concealed kongs have no face: skipped)
        for i in range(4):
            kind = int(ob[O.O_MSEQ + 12 * p + 3 * i])
            t = int(ob[O.O_MSEQ + 12 * p + 3 * i + 1]) - 1
            if kind <= 0 or kind > 5:
                break
            if t < 0 or t > 33:
                continue
            if kind == 1:
                if 1 <= t % 9 <= 7 and t < 27:
                    vis[t - 1] += 1
                    vis[t] += 1
                    vis[t + 1] += 1
            else:
                vis[t] += 3 if kind == 2 else 4
    for p in range(4):
        for j in range(O._MD):
            x = int(ob[O.O_DSEQ + O._MD * p + j])
            if x == 0:
                break
            if x >= 128:  # uint8 observations: a claimed discard -(t + 1) as a two's-complement byte
                x -= 256
            if 0 < x <= 34:
                vis[x - 1] += 1
                if p != 0:
                    disc_by_others[x - 1] = True
    nm = 0
    for i in range(4):
        kind = int(ob[O.O_MSEQ + 3 * i])
        if kind <= 0 or kind > 5:
            break
        t = int(ob[O.O_MSEQ + 3 * i + 1]) - 1
        if t < 0 or t > 33 or (kind == 1 and (t % 9 == 0 or t % 9 == 8 or t >= 27)):
            continue  # another player's hidden face never appears here; guard against malformed input
        if kind == 1:
            mk[nm] = 1
            mt[nm] = t - 1
        else:
            mk[nm] = 2
            mt[nm] = t
        nm += 1
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
        return _turn(mask, conc, k, n, nm, mk, mt, vis, unseen, disc_by_others, wall, danger_wall, max_eval, tabs,
                     shapes)  # fmt: skip
    if phase == 2:
        offer = 0
        for t in range(34):
            if ob[O.O_OFFER + t] != 0:
                offer = t
        return _claim(mask, conc, k, n, nm, mk, mt, offer, tabs, shapes)
    return A.PASS if mask[A.PASS] else only


@njit
def _first_legal(mask):
    for a in range(A.NUM_ACTIONS):
        if mask[a]:
            return a
    return 0


@njit
def _turn(mask, conc, k, n, nm, mk, mt, vis, unseen, disc_by_others, wall, danger_wall, max_eval, tabs,
          shapes):  # fmt: skip
    """A turn: kongs that do not raise the target shanten, else the best discard (module docstring)."""
    tgt, _ = _best_target(conc, k, n, nm, mk, mt, 10 * NO, tabs, shapes)
    sh = np.full(34, 10 * NO, np.int64)
    best_s = 10 * NO
    for t in range(34):
        if conc[t] > 0 and mask[A.DISCARD + t]:
            conc[t] -= 1
            s = target_shanten(conc, _adj(k, t, -1), n - 1, nm, mk, mt, tgt, tabs, shapes)
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
            s = target_shanten(conc, _adj(k, t, -4), n - 4, nm + 1, mk, mt, tgt, tabs, shapes)
            conc[t] += 4
            if s <= best_s:
                return A.CONCEALED_KONG + t
        if mask[A.ADDED_KONG + t]:
            conc[t] -= 1
            s = target_shanten(conc, _adj(k, t, -1), n - 1, nm, mk, mt, tgt, tabs, shapes)
            conc[t] += 1
            if s <= best_s:
                return A.ADDED_KONG + t
    safe_mode = wall <= danger_wall and best_s >= 2
    # cheap pre-order of the candidates (safety when playing safe; isolated tiles first), then the costly
    # useful-tile count for the first max_eval of them only
    pre = np.full(34, 1 << 60, np.int64)
    for t in range(34):
        s = sh[t]
        if s >= 10 * NO:
            continue
        dg = _danger(t, vis, disc_by_others)
        if safe_mode:
            if s > best_s + 1:
                continue
            pre[t] = ((dg * 4 + (s - best_s)) << 20) + (_neighbours(conc, t) << 8) + dg
        elif s == best_s:
            pre[t] = (_neighbours(conc, t) << 8) + dg
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
        dg = _danger(t, vis, disc_by_others)
        key = ((dg * 4 + (s - best_s)) << 40) if safe_mode else 0
        conc[t] -= 1
        k1 = _adj(k, t, -1)
        u = _useful(conc, k1, n - 1, nm, mk, mt, tgt, s, unseen, tabs, shapes)
        reg = _regular(k1, n - 1, tabs)
        conc[t] += 1
        key += ((200 - u) << 20) + (min(reg + 1, 15) << 8) + (dg << 4)
        if key < best_key:
            best_key = key
            best_t = t
    return A.DISCARD + best_t


@njit
def _target_values(conc, k, n, nm, mk, mt, slack, vals, tabs, shapes):
    """Fill ``vals`` with target shanten + penalty of every target whose value is at most the best + ``slack``
    (the others get ``10 * NO``: their lower bound already exceeds that); returns the best value."""
    lb = np.empty(NUM_TARGETS, np.int64)
    gsum = np.zeros(4, np.int64)
    for t in range(34):
        gsum[t // 9 if t < 27 else 3] += conc[t]
    lo = 10 * NO
    for tgt in range(NUM_TARGETS):
        b = _lower_bound(conc, gsum, n, tgt) + T_PEN[tgt]
        lb[tgt] = b
        vals[tgt] = 10 * NO
        lo = min(lo, b)
    best = 10 * NO
    level = max(lo, -1)
    while level <= best + slack:
        for tgt in range(NUM_TARGETS):
            if lb[tgt] == level or (level == -1 and lb[tgt] < -1):
                v = target_shanten(conc, k, n, nm, mk, mt, tgt, tabs, shapes) + T_PEN[tgt]
                vals[tgt] = v
                best = min(best, v)
        level += 1
    return best


@njit
def _claim_value(conc, k, n, nm, mk, mt, vals, limit, tabs, shapes):
    """Best value after a claim (the meld already applied to the arguments) over the targets whose value
    before the claim is at most ``limit``: a claim gains at most one tile, so no other target can beat it."""
    best = 10 * NO
    for tgt in range(NUM_TARGETS):
        if vals[tgt] <= limit:
            best = min(best, target_shanten(conc, k, n, nm, mk, mt, tgt, tabs, shapes) + T_PEN[tgt])
    return best


@njit
def _claim(mask, conc, k, n, nm, mk, mt, x, tabs, shapes):
    """A claim window: the claim that lowers the best target value most (kong: does not raise it), else pass.

    A claim is a draw of the offered tile plus a fixed meld, so it lowers a target's value by at most one:
    only targets at the best value now can make a chow or pung pay, only those within one of it a kong.
    """
    vals = np.empty(NUM_TARGETS, np.int64)
    now = _target_values(conc, k, n, nm, mk, mt, 1, vals, tabs, shapes)
    best = now
    act = A.PASS
    if mask[A.PUNG]:  # two from the hand; the 11-tile rest is in the 3k+2 form (a discard to come)
        conc[x] -= 2
        mk[nm] = 2
        mt[nm] = x
        v = _claim_value(conc, _adj(k, x, -2), n - 2, nm + 1, mk, mt, vals, now, tabs, shapes)
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
                    kk = _adj(kk, lo + d, -1)
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
        v = _claim_value(conc, _adj(k, x, -3), n - 3, nm + 1, mk, mt, vals, now + 1, tabs, shapes)
        conc[x] += 3
        if v <= now and v <= best:
            act = A.KONG
    if not mask[act]:
        return _first_legal(mask)
    return act


@njit(parallel=True)
def rule_actions_kernel(obs, masks, out, danger_wall, max_eval, tabs, shapes):
    """Fill ``out[i]`` with the rule agent's action for observation row ``obs[i]`` and mask ``masks[i]``.

    ``tabs`` = (suit, honor, suit_inc, honor_inc) of :mod:`mjenv.hand`; ``shapes`` = (KNITS, ORPHANS, pow5).
    """
    n = obs.shape[0]
    for i in prange(n):
        conc = np.zeros(34, np.int8)
        vis = np.zeros(34, np.int64)
        disc = np.zeros(34, np.bool_)
        unseen = np.zeros(34, np.int64)
        mk = np.zeros(5, np.int64)
        mt = np.zeros(5, np.int64)
        out[i] = _decide(
            obs[i], masks[i], danger_wall, max_eval, conc, vis, disc, unseen, mk, mt, tabs, shapes
        )


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
        suit, honor, _, _ = H.load_tables()
        suit_inc, honor_inc = H.load_shanten_tables()
        self._tabs = (suit, honor, suit_inc, honor_inc)
        self._shapes = (H.KNITS, H.ORPHANS, H.POW5)
        self._out = np.zeros(self.num_envs, np.int64)

    def __call__(
        self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray | None = None
    ) -> np.ndarray:
        if obs is None:
            raise ValueError("the rule agent needs observations (VectorEnv(..., observations=True))")
        if not isinstance(obs, np.ndarray) or obs.ndim != 2 or obs.shape[1] != O.OBS_SIZE:
            raise ValueError(
                f"obs must be an array of shape (N, {O.OBS_SIZE}), got {getattr(obs, 'shape', obs)}"
            )
        if obs.dtype not in (np.float32, np.uint8):
            obs = obs.astype(np.float32)
        if not isinstance(masks, np.ndarray) or masks.shape != (obs.shape[0], A.NUM_ACTIONS):
            raise ValueError(
                f"masks must have shape ({obs.shape[0]}, {A.NUM_ACTIONS}), got {getattr(masks, 'shape', masks)}"
            )
        if masks.dtype != np.bool_:
            masks = masks.astype(np.bool_)
        n = obs.shape[0]
        out = self._out[:n] if n <= self._out.shape[0] else np.zeros(n, np.int64)
        if self.threads is not None and numba.get_num_threads() != self.threads:
            numba.set_num_threads(self.threads)
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
