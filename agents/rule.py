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
3. **Discard** (and kongs) on its turn: the discards that leave the smallest target shanten; among those the one
   keeping the most *useful tiles not yet visible* (unseen copies of tiles that lower the target shanten);
   then the smallest regular shanten; then the safer tile. Late in the hand (``danger_wall`` tiles left in
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
        add(f"mixed_straight_{''.join('mps'[s] for s in perm)}", 2, 0, ch=[9 * perm[0], 9 * perm[1] + 3, 9 * perm[2] + 6])
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
    add("reversible", 0, 0, [9 + r for r in (0, 1, 2, 3, 4, 7, 8)] + [18 + r for r in (1, 3, 4, 5, 7, 8)] + [33])
    add("thirteen_orphans", 3, 0, shape=H.THIRTEEN_ORPHANS)
    for s in range(3):
        add(f"half_flush_{'mps'[s]}", 0, 1, _SUITS[s] + _HONORS)
    add("all_pungs", 1, 1, range(34))
    return (names, np.array(kind, np.int64), np.array(pen, np.int64), np.array(allow), np.array(chows, np.int64))


TARGET_NAMES, T_KIND, T_PEN, T_ALLOW, T_CHOWS = _targets()
NUM_TARGETS = len(TARGET_NAMES)


# ------------------------------------------------------------------------------------------------ kernels
@njit
def _regular(work, n, suit, honor):
    """Regular-shape shanten (block counting, mjenv.hand) of ``work`` as an ``n``-tile standing hand."""
    k0, k1, k2, k3 = H._keys(work)
    need = n // 3
    return 2 * need - H._regular_score(suit, honor, k0, k1, k2, k3, need)


@njit
def target_shanten(conc, n, nm, mk, mt, tgt, work, suit, honor, knits, orphans, pow5):
    """Shanten of target ``tgt`` for concealed counts ``conc`` (``n`` tiles) and ``nm`` melds.

    ``mk[i]``: 1 chow, 2 pung or kong; ``mt[i]``: lowest tile of meld ``i``. ``work`` is int8[34] scratch.
    Returns ``NO`` when the melds rule the target out.
    """
    k = T_KIND[tgt]
    if k == 0 or k == 1:
        for i in range(nm):
            if k == 1 and mk[i] == 1:
                return NO
            t = mt[i]
            if not T_ALLOW[tgt, t] or (mk[i] == 1 and not T_ALLOW[tgt, t + 2]):
                return NO
            if mk[i] == 1 and not T_ALLOW[tgt, t + 1]:
                return NO
        if k == 0:
            for t in range(34):
                work[t] = conc[t] if T_ALLOW[tgt, t] else 0
            return _regular(work, n, suit, honor)
        need = n // 3
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
    if k == 2:
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
        for t in range(34):
            work[t] = conc[t]
        missing = 0
        for j in range(3):
            if (j == 0 and sat0) or (j == 1 and sat1) or (j == 2 and sat2):
                continue
            for d in range(3):
                t = T_CHOWS[tgt, j] + d
                if work[t] > 0:
                    work[t] -= 1
                else:
                    missing += 1
        rest = 1 - extra
        k0, k1, k2, k3 = H._keys(work)
        return missing + 2 * rest - H._regular_score(suit, honor, k0, k1, k2, k3, rest)
    if nm > 0 and T_CHOWS[tgt, 0] != H.KNITTED_STRAIGHT:
        return NO
    return H._shape_shanten(conc, n, T_CHOWS[tgt, 0], suit, honor, knits, orphans, pow5)


@njit
def _best_target(conc, n, nm, mk, mt, work, suit, honor, knits, orphans, pow5):
    """``(target, value)`` minimising target shanten + penalty (first in order on ties)."""
    best = 10 * NO
    bt = 0
    for tgt in range(NUM_TARGETS):
        v = target_shanten(conc, n, nm, mk, mt, tgt, work, suit, honor, knits, orphans, pow5) + T_PEN[tgt]
        if v < best:
            best = v
            bt = tgt
    return bt, best


@njit
def _useful(conc, n, nm, mk, mt, tgt, s, unseen, work, suit, honor, knits, orphans, pow5):
    """Unseen copies of the tiles whose draw lowers target ``tgt``'s shanten ``s`` of an ``n``-tile hand."""
    u = 0
    for t in range(34):
        if unseen[t] <= 0 or conc[t] >= 4:
            continue
        if T_KIND[tgt] <= 1 and not T_ALLOW[tgt, t]:
            continue
        conc[t] += 1
        v = target_shanten(conc, n + 1, nm, mk, mt, tgt, work, suit, honor, knits, orphans, pow5)
        conc[t] -= 1
        if v < s:
            u += unseen[t]
    return u


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
def _decide(ob, mask, danger_wall, conc, vis, disc_by_others, work, mk, mt, suit, honor, knits, orphans, pow5):
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
        for k in range(4):
            if ob[O.O_HAND + 34 * k + t] != 0:
                c += 1
        conc[t] = c
        n += c
        v = c
        for p in range(4):
            for k in range(4):
                if ob[O.O_MELDS + 136 * p + 34 * k + t] != 0:
                    v += 1
        vis[t] = min(v, 4)
        disc_by_others[t] = False
    for p in range(4):
        for j in range(O._MD):
            x = int(ob[O.O_DSEQ + O._MD * p + j])
            if x == 0:
                break
            if x > 0:
                vis[x - 1] = min(vis[x - 1] + 1, 4)
                if p != 0:
                    disc_by_others[x - 1] = True
    nm = 0
    for i in range(4):
        kind = int(ob[O.O_MSEQ + 3 * i])
        if kind == 0:
            break
        t = int(ob[O.O_MSEQ + 3 * i + 1]) - 1
        if kind == 1:
            mk[nm] = 1
            mt[nm] = t - 1
        else:
            mk[nm] = 2
            mt[nm] = t
        nm += 1
    wall = int(ob[O.O_WALL])
    phase = 0
    for k in range(4):
        if ob[O.O_PHASE + k] != 0:
            phase = k
    unseen = work[34:68]
    for t in range(34):
        unseen[t] = 4 - vis[t]
    w = work[:34]
    if phase <= 1:
        return _turn(mask, conc, n, nm, mk, mt, vis, unseen, disc_by_others, wall, danger_wall, w, suit, honor,
                     knits, orphans, pow5)  # fmt: skip
    if phase == 2:
        offer = 0
        for t in range(34):
            if ob[O.O_OFFER + t] != 0:
                offer = t
        return _claim(mask, conc, n, nm, mk, mt, offer, w, suit, honor, knits, orphans, pow5)
    return A.PASS if mask[A.PASS] else only


@njit
def _turn(mask, conc, n, nm, mk, mt, vis, unseen, disc_by_others, wall, danger_wall, w, suit, honor, knits,
          orphans, pow5):  # fmt: skip
    tgt, _ = _best_target(conc, n, nm, mk, mt, w, suit, honor, knits, orphans, pow5)
    # shanten of each discard for the target
    sh = np.full(34, 10 * NO, np.int64)
    best_s = 10 * NO
    for t in range(34):
        if conc[t] > 0 and mask[A.DISCARD + t]:
            conc[t] -= 1
            s = target_shanten(conc, n - 1, nm, mk, mt, tgt, w, suit, honor, knits, orphans, pow5)
            conc[t] += 1
            sh[t] = s
            best_s = min(best_s, s)
    if best_s >= 10 * NO:  # no discard legal (only kongs): take the first legal action
        for a in range(A.NUM_ACTIONS):
            if mask[a]:
                return a
    # kongs that do not raise the target shanten
    for t in range(34):
        if mask[A.CONCEALED_KONG + t]:
            conc[t] -= 4
            mk[nm] = 2
            mt[nm] = t
            s = target_shanten(conc, n - 4, nm + 1, mk, mt, tgt, w, suit, honor, knits, orphans, pow5)
            conc[t] += 4
            if s <= best_s:
                return A.CONCEALED_KONG + t
        if mask[A.ADDED_KONG + t]:
            conc[t] -= 1
            s = target_shanten(conc, n - 1, nm, mk, mt, tgt, w, suit, honor, knits, orphans, pow5)
            conc[t] += 1
            if s <= best_s:
                return A.ADDED_KONG + t
    safe_mode = wall <= danger_wall and best_s >= 2
    best_key = 1 << 60
    best_t = -1
    for t in range(34):
        s = sh[t]
        if s >= 10 * NO:
            continue
        dg = _danger(t, vis, disc_by_others)
        if safe_mode:
            if s > best_s + 1:
                continue
            key = (dg * 4 + (s - best_s)) << 40
        else:
            if s > best_s:
                continue
            key = 0
        conc[t] -= 1
        u = _useful(conc, n - 1, nm, mk, mt, tgt, s, unseen, w, suit, honor, knits, orphans, pow5)
        reg = _regular(conc, n - 1, suit, honor)
        conc[t] += 1
        key += ((200 - u) << 20) + (min(reg + 1, 15) << 8) + (dg << 4)
        if key < best_key:
            best_key = key
            best_t = t
    return A.DISCARD + best_t


@njit
def _claim(mask, conc, n, nm, mk, mt, x, w, suit, honor, knits, orphans, pow5):
    _, now = _best_target(conc, n, nm, mk, mt, w, suit, honor, knits, orphans, pow5)
    best = now
    act = A.PASS
    # pung: two from hand, then a discard (14-tile form: n - 2 + ... = n + 1 - 3)
    if mask[A.PUNG]:
        conc[x] -= 2
        mk[nm] = 2
        mt[nm] = x
        _, v = _best_target(conc, n - 2, nm + 1, mk, mt, w, suit, honor, knits, orphans, pow5)
        conc[x] += 2
        if v < best:
            best = v
            act = A.PUNG
    for p in range(3):
        if mask[A.CHOW + p]:
            lo = x - p
            for d in range(3):
                if lo + d != x:
                    conc[lo + d] -= 1
            mk[nm] = 1
            mt[nm] = lo
            _, v = _best_target(conc, n - 2, nm + 1, mk, mt, w, suit, honor, knits, orphans, pow5)
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
        _, v = _best_target(conc, n - 3, nm + 1, mk, mt, w, suit, honor, knits, orphans, pow5)
        conc[x] += 3
        if v <= now and v <= best:
            act = A.KONG
    if not mask[act]:
        for a in range(A.NUM_ACTIONS):
            if mask[a]:
                return a
    return act


@njit(parallel=True)
def rule_actions_kernel(obs, masks, out, danger_wall, suit, honor, knits, orphans, pow5):
    """Fill ``out[i]`` with the rule agent's action for observation row ``obs[i]`` and mask ``masks[i]``."""
    n = obs.shape[0]
    for i in prange(n):
        conc = np.zeros(34, np.int8)
        vis = np.zeros(34, np.int64)
        disc = np.zeros(34, np.bool_)
        work = np.zeros(68, np.int8)
        mk = np.zeros(5, np.int64)
        mt = np.zeros(5, np.int64)
        out[i] = _decide(obs[i], masks[i], danger_wall, conc, vis, disc, work, mk, mt, suit, honor, knits,
                         orphans, pow5)  # fmt: skip


# ------------------------------------------------------------------------------------------------ policy
class RulePolicy:
    """The rule agent as a batched policy (see the module docstring).

    Parameters
    ----------
    num_envs : int
        Largest batch it will see (any ``N <= num_envs`` works; larger batches work too).
    danger_wall : int
        Play safe when the wall holds this many tiles or fewer and the hand is still far (default 20).
    threads : int, optional
        Numba threads for its kernel (default: Numba's current setting, e.g. the VectorEnv's).
    """

    needs_observations = True

    def __init__(self, num_envs: int = 1, *, danger_wall: int = 20, threads: int | None = None) -> None:
        if isinstance(danger_wall, bool) or not isinstance(danger_wall, (int, np.integer)) or danger_wall < 0:
            raise ValueError(f"danger_wall must be an int >= 0, got {danger_wall!r}")
        top = numba.config.NUMBA_NUM_THREADS
        if threads is not None and (
            isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or not 1 <= threads <= top
        ):
            raise ValueError(f"threads must be None or an int in 1..{top}, got {threads!r}")
        self.num_envs = int(num_envs)
        self.danger_wall = int(danger_wall)
        self.threads = threads
        suit, honor, _, _ = H.load_tables()
        self._tables = (suit, honor, H.KNITS, H.ORPHANS, H._POW5)
        self._out = np.zeros(self.num_envs, np.int64)

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray | None = None) -> np.ndarray:
        if obs is None:
            raise ValueError("the rule agent needs observations (VectorEnv(..., observations=True))")
        if not isinstance(obs, np.ndarray) or obs.ndim != 2 or obs.shape[1] != O.OBS_SIZE:
            raise ValueError(f"obs must be an array of shape (N, {O.OBS_SIZE}), got {getattr(obs, 'shape', obs)}")
        if obs.dtype not in (np.float32, np.uint8):
            obs = obs.astype(np.float32)
        if not isinstance(masks, np.ndarray) or masks.shape != (obs.shape[0], A.NUM_ACTIONS):
            raise ValueError(f"masks must have shape ({obs.shape[0]}, {A.NUM_ACTIONS}), got {getattr(masks, 'shape', masks)}")
        if masks.dtype != np.bool_:
            masks = masks.astype(np.bool_)
        n = obs.shape[0]
        out = self._out[:n] if n <= self._out.shape[0] else np.zeros(n, np.int64)
        if self.threads is not None and numba.get_num_threads() != self.threads:
            numba.set_num_threads(self.threads)
        rule_actions_kernel(
            np.ascontiguousarray(obs), np.ascontiguousarray(masks), out, self.danger_wall, *self._tables
        )
        return out.copy()


def make(num_envs: int, seed: int, **kwargs: Any) -> RulePolicy:
    """``agents.rule:make``: a :class:`RulePolicy` (deterministic: ``seed`` is accepted and unused).

    Keyword options: ``danger_wall`` (int), ``threads`` (int). Unknown options raise ``TypeError``.
    """
    num_envs, _ = check_factory_args(num_envs, seed)
    bad = set(kwargs) - {"danger_wall", "threads"}
    if bad:
        raise TypeError(f"agents.rule:make got unknown option(s) {sorted(bad)}; it takes danger_wall, threads")
    return RulePolicy(num_envs, **kwargs)
