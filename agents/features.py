"""Engineered features for :mod:`agents.nn`, computed from one player's observation only: ``nn_features``.

Why
---
The rule agent (:mod:`agents.rule`) decides from quantities a small network cannot easily derive from raw tile
planes: how far the hand is from an 8-fan *target* (target shanten), how far it stays after each discard, how
many useful tiles are still unseen, whether a claim advances the hand. This module computes those quantities
with mjenv's public rules kernels (:mod:`mjenv.hand`) and the rule agent's public ``target_shanten`` kernel (one
implementation of each rule), so the network sees what the teacher reasons about and imitation becomes easy;
PPO then learns on top of them.

What (``NUM_TILE_FEATURES`` per tile type, ``NUM_GLOBAL_FEATURES`` per row; all from the observation, never the
table state; the legal mask only says which discards / kongs / claims are on offer)
--------------------------------------------------------------------------------------------------------------
Per tile type ``t`` (34 rows of ``TILE_FEATURES``): copies held (>= 1..4), drawn, on offer, unseen copies / 4,
discarded by another player, each player's melded and discarded copies / 4, tile identity (suit and rank
one-hots); on the player's own turn: discard legal, target shanten after discarding it minus the best (one-hot
0, 1, 2, >= 3), regular shanten after it minus the best (0, 1, >= 2), allowed by the chosen target, the rule
agent's cheap pre-order rank (first, second among the discards it would compare), the useful tiles not yet
visible kept by that discard (for the first two in that order, / 32), the isolated off-target tile it would
throw first, danger and isolation scores, and whether a concealed / added kong of ``t`` keeps the target
shanten.

Per row (``GLOBAL_FEATURES``): phase, concealed-tile count / 14, own melds / 4, wall / 144, the late-and-far
("play safe") flag, the best target value (one-hot 0..7), the regular shanten (one-hot 0..7), the chosen target
(one-hot over ``agents.rule.TARGET_NAMES``), and for each claim on offer (chow low / mid / high, pung, kong):
legal, and the best target value after it minus the value now (one-hot <= -1, 0, >= 1).

``FEATURES_ID`` names this layout; :data:`agents.nn.NN_FEATURES_VERSION` includes it, so a checkpoint made for
other features fails to load with a clear error.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange
from numba import types as _nt

from agents import rule as R
from mjenv import actions as A
from mjenv import hand as H
from mjenv import observation as O
from mjenv._jit import njit, shared_kernel

FEATURES_ID = "f1"

TILE_FEATURES = (
    ("held", 4), ("drawn", 1), ("offer", 1), ("unseen", 1), ("discarded_by_others", 1), ("melded", 4),
    ("discarded", 4), ("suit", 4), ("rank", 9), ("discard_legal", 1), ("target_shanten_after", 4),
    ("regular_shanten_after", 3), ("allowed", 1), ("pre_rank", 2), ("useful_after", 1), ("off_target_pick", 1),
    ("danger", 1), ("isolation", 1), ("concealed_kong_ok", 1), ("added_kong_ok", 1),
)  # fmt: skip
GLOBAL_FEATURES = (
    ("phase", 4), ("concealed", 1), ("melds", 1), ("wall", 1), ("safe_mode", 1), ("target_value", 8),
    ("regular_shanten", 8), ("target", R.NUM_TARGETS), ("claim", 5 * 4),
)  # fmt: skip
NUM_TILE_FEATURES = sum(c for _, c in TILE_FEATURES)
NUM_GLOBAL_FEATURES = sum(c for _, c in GLOBAL_FEATURES)


def _offsets(spec):
    out, o = {}, 0
    for name, c in spec:
        out[name] = o
        o += c
    return out


_TO = _offsets(TILE_FEATURES)
_GO = _offsets(GLOBAL_FEATURES)
# tile feature offsets (compile-time constants of the kernel)
F_HELD, F_DRAWN, F_OFFER, F_UNSEEN, F_DBO = (
    _TO[k] for k in ("held", "drawn", "offer", "unseen", "discarded_by_others")
)
F_MELDED, F_DISC, F_SUIT, F_RANK = (_TO[k] for k in ("melded", "discarded", "suit", "rank"))
F_LEGAL, F_TSH, F_REG, F_ALLOW = (
    _TO[k] for k in ("discard_legal", "target_shanten_after", "regular_shanten_after", "allowed")
)
F_PRE, F_USE, F_OFFT, F_DANGER, F_ISO = (
    _TO[k] for k in ("pre_rank", "useful_after", "off_target_pick", "danger", "isolation")
)
F_CKONG, F_AKONG = _TO["concealed_kong_ok"], _TO["added_kong_ok"]
G_PHASE, G_CONC, G_MELDS, G_WALL, G_SAFE = (
    _GO[k] for k in ("phase", "concealed", "melds", "wall", "safe_mode")
)
G_TVAL, G_REG, G_TGT, G_CLAIM = (_GO[k] for k in ("target_value", "regular_shanten", "target", "claim"))  # fmt: skip

_BIG = 10 * R.NO
_DANGER_WALL = 20  # the rule agent's default (play safe at this many wall tiles or fewer when far)


_KS = [i for i, nm_ in enumerate(R.TARGET_NAMES) if nm_ == "knitted_straight"][0]


@njit
def _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, bound):
    """``agents.rule.target_shanten``; for the knitted straight (the costly one) exact only below ``bound``
    (else some value >= ``bound``), through mjenv.hand's bounded kernel, as the rule agent does."""
    if tgt == _KS:
        if n < 10:
            return R.NO
        return H.knitted_straight_shanten_kernel(conc, tabs[0], tabs[1], shapes[0], shapes[2], n, bound, -1)
    return R.target_shanten(conc, k, n, nm, mk, mt, tgt, tabs, shapes)


@njit
def _best(conc, k, n, nm, mk, mt, tabs, shapes, bound):
    """``(target, value)``: smallest target shanten + penalty over the rule agent's targets (first on ties);
    values at or above ``bound`` are not exact."""
    best = bound
    bt = 0
    for tgt in range(R.NUM_TARGETS):
        v = _tsh(conc, k, n, nm, mk, mt, tgt, tabs, shapes, best) + R.T_PEN[tgt]
        if v < best:
            best = v
            bt = tgt
    return bt, best


@njit
def _best_value(conc, k, n, nm, mk, mt, tabs, shapes, bound):
    return _best(conc, k, n, nm, mk, mt, tabs, shapes, bound)[1]


@njit
def _useful(conc, k, n, nm, mk, mt, tgt, s, unseen, tabs, shapes):
    """Unseen copies of the tiles whose draw lowers target ``tgt``'s shanten ``s`` of the ``n``-tile hand."""
    u = 0
    kind = R.T_KIND[tgt]
    shape = R.T_CHOWS[tgt, 0]
    for t in range(34):
        if unseen[t] <= 0 or conc[t] >= 4:
            continue
        # draws that provably change nothing: a tile the filter rules out; a new tile for pungs or pairs;
        # another copy for honours and knitted (it counts distinct tiles)
        if kind <= 1 and not R.T_ALLOW[tgt, t]:
            continue
        if (kind == 1 or (kind == 3 and shape == H.SEVEN_PAIRS)) and conc[t] == 0:
            continue
        if kind == 3 and shape == H.HONORS_KNITTED and conc[t] > 0:
            continue
        conc[t] += 1
        v = _tsh(conc, R.add_keys(k, t, 1), n + 1, nm, mk, mt, tgt, tabs, shapes, s)
        conc[t] -= 1
        if v < s:
            u += unseen[t]
    return u


@njit(inline="always")  # inlined into its shared kernel (row_kernel)
def _row(ob, mask, f, g, conc, vis, unseen, dbo, mk, mt, sh, pre, tabs, shapes):
    """Features of one observation row ``ob`` (uint8 encoding) with legal mask ``mask`` into ``f`` [34, F_t]
    and ``g`` [F_g] (both zeroed by the caller)."""
    n, nm = R.target_view(ob, conc, vis, dbo, mk, mt, True)  # claimed discards count as seen here
    for p in range(4):
        for j in range(4):
            for t in range(34):
                if ob[O.O_MELDS + 136 * p + 34 * j + t] != 0:
                    f[t, F_MELDED + p] += 0.25
                if ob[O.O_DISCARDS + 136 * p + 34 * j + t] != 0:
                    f[t, F_DISC + p] += 0.25
    wall = int(ob[O.O_WALL])
    phase = -1
    for j in range(4):
        if ob[O.O_PHASE + j] != 0:
            phase = j
    offer = -1
    for t in range(34):
        if ob[O.O_OFFER + t] != 0:
            offer = t
    for t in range(34):
        vis[t] = min(vis[t], 4)
        unseen[t] = 4 - vis[t]
        for j in range(4):
            if conc[t] > j:
                f[t, F_HELD + j] = 1.0
        if ob[O.O_DRAWN + t] != 0:
            f[t, F_DRAWN] = 1.0
        if t == offer:
            f[t, F_OFFER] = 1.0
        f[t, F_UNSEEN] = unseen[t] / 4.0
        if dbo[t]:
            f[t, F_DBO] = 1.0
        f[t, F_SUIT + t // 9] = 1.0
        f[t, F_RANK + (t % 9 if t < 27 else t - 27)] = 1.0
        f[t, F_DANGER] = R.discard_danger(t, vis, dbo) / 5.0
    if phase >= 0:
        g[G_PHASE + phase] = 1.0
    g[G_CONC] = n / 14.0
    g[G_MELDS] = nm / 4.0
    g[G_WALL] = wall / 144.0
    if n == 0 or n > 14:
        return
    k = H.keys_kernel(conc)
    tgt, now = _best(conc, k, n, nm, mk, mt, tabs, shapes, _BIG)
    g[G_TVAL + min(now, 7)] = 1.0
    g[G_TGT + tgt] = 1.0
    g[G_REG + min(max(R.regular_shanten(k, n, tabs), 0), 7)] = 1.0
    if (phase == 0 or phase == 1) and n % 3 == 2:
        _turn_features(mask, f, g, conc, k, n, nm, mk, mt, vis, unseen, dbo, sh, pre, tgt, wall, tabs, shapes)
    elif phase == 2 and offer >= 0 and n % 3 == 1 and nm < 4:
        _claim_features(mask, g, conc, k, n, nm, mk, mt, offer, now, tabs, shapes)


# The own-turn and claim-window parts of _row are kernels of their own (a call per row): numba's typing of one
# function grows faster than its length, and _row with both inside was the features' largest compile.
@njit
def _turn_features(mask, f, g, conc, k, n, nm, mk, mt, vis, unseen, dbo, sh, pre, tgt, wall, tabs, shapes):
    """:func:`_row` on the player's own turn: every discard, then the rule agent's candidates."""
    best_s = _BIG
    best_r = _BIG
    for t in range(34):
        sh[t] = _BIG
        pre[t] = _BIG
        if conc[t] > 0 and mask[A.DISCARD + t]:
            f[t, F_LEGAL] = 1.0
            conc[t] -= 1
            k1 = R.add_keys(k, t, -1)
            sh[t] = _tsh(conc, k1, n - 1, nm, mk, mt, tgt, tabs, shapes, R.NO)
            pre[t] = R.regular_shanten(k1, n - 1, tabs)
            conc[t] += 1
            best_s = min(best_s, sh[t])
            best_r = min(best_r, pre[t])
        f[t, F_ALLOW] = 1.0 if R.T_ALLOW[tgt, t] else 0.0
        if conc[t] > 0:
            f[t, F_ISO] = min(R.neighbours_held(conc, t), 16) / 8.0
    if best_s >= _BIG:
        return
    for t in range(34):
        if sh[t] < _BIG:
            f[t, F_TSH + min(sh[t] - best_s, 3)] = 1.0
            f[t, F_REG + min(pre[t] - best_r, 2)] = 1.0
    for t in range(34):  # kongs that keep the target shanten (the rule agent declares those)
        if mask[A.CONCEALED_KONG + t] and conc[t] == 4 and nm < 4:
            conc[t] -= 4
            mk[nm] = 2
            mt[nm] = t
            s = R.target_shanten(conc, R.add_keys(k, t, -4), n - 4, nm + 1, mk, mt, tgt, tabs, shapes)
            conc[t] += 4
            if s <= best_s:
                f[t, F_CKONG] = 1.0
        if mask[A.ADDED_KONG + t] and conc[t] >= 1:
            conc[t] -= 1
            s = R.target_shanten(conc, R.add_keys(k, t, -1), n - 1, nm, mk, mt, tgt, tabs, shapes)
            conc[t] += 1
            if s <= best_s:
                f[t, F_AKONG] = 1.0
    safe = wall <= _DANGER_WALL and best_s >= 2
    if safe:
        g[G_SAFE] = 1.0
    for t in range(34):  # the cheap pre-order of the candidates (reuses ``pre``)
        s = sh[t]
        key = _BIG << 40
        if s < _BIG:
            dg = R.discard_danger(t, vis, dbo)
            iso = R.neighbours_held(conc, t)
            if safe:
                if s <= best_s + 1:
                    key = ((dg * 4 + (s - best_s)) << 20) + (iso << 8) + dg
            elif s == best_s:
                key = (iso << 8) + dg
        pre[t] = key
    if not safe and R.T_KIND[tgt] <= 1:  # an off-target tile goes first: the most isolated one
        bt = -1
        for t in range(34):
            if pre[t] < _BIG << 40 and not R.T_ALLOW[tgt, t] and (bt < 0 or pre[t] < pre[bt]):
                bt = t
        if bt >= 0:
            f[bt, F_OFFT] = 1.0
    for rank in range(2):
        t = 0
        for x in range(1, 34):
            if pre[x] < pre[t]:
                t = x
        if pre[t] >= _BIG << 40:
            break
        pre[t] = _BIG << 40
        f[t, F_PRE + rank] = 1.0
        conc[t] -= 1
        u = _useful(conc, R.add_keys(k, t, -1), n - 1, nm, mk, mt, tgt, sh[t], unseen, tabs, shapes)
        conc[t] += 1
        f[t, F_USE] = min(u, 64) / 32.0


@njit
def _claim_features(mask, g, conc, k, n, nm, mk, mt, offer, now, tabs, shapes):
    """:func:`_row` in a claim window: the best target value after each claim on offer, against the value now."""
    x = offer
    for c in range(5):
        a = A.CHOW + c if c < 3 else (A.PUNG if c == 3 else A.KONG)
        if not mask[a]:
            continue
        kk = k
        ok = True
        if c < 3:
            lo = x - c
            if x >= 27 or lo < 9 * (x // 9) or lo + 2 >= 9 * (x // 9) + 9:
                ok = False
            else:
                for d in range(3):
                    if lo + d != x and conc[lo + d] < 1:
                        ok = False
            if ok:
                for d in range(3):
                    if lo + d != x:
                        conc[lo + d] -= 1
                        kk = R.add_keys(kk, lo + d, -1)
                mk[nm] = 1
                mt[nm] = lo
                v = _best_value(conc, kk, n - 2, nm + 1, mk, mt, tabs, shapes, now + 1)
                for d in range(3):
                    if lo + d != x:
                        conc[lo + d] += 1
        else:
            m = 2 if c == 3 else 3
            if conc[x] < m:
                ok = False
            else:
                conc[x] -= m
                mk[nm] = 2
                mt[nm] = x
                v = _best_value(conc, R.add_keys(k, x, -m), n - m, nm + 1, mk, mt, tabs, shapes, now + 1)
                conc[x] += m
        if not ok:
            continue
        b = G_CLAIM + 4 * c
        g[b] = 1.0
        d = v - now
        g[b + 1 + (0 if d <= -1 else (1 if d == 0 else 2))] = 1.0


_CHUNK = 16


def _row_c(ob, mask, f, g, conc, vis, unseen, dbo, mk, mt, sh, pre, suit, honor, sinc, hinc, pow5):
    """:func:`_row` over data pointers (the body of its shared kernel: :func:`row_kernel`)."""
    tabs, shapes = R.tables_at(suit, honor, sinc, hinc, pow5)
    _row(numba.carray(ob, O.OBS_SIZE), numba.carray(mask, A.NUM_ACTIONS),
         numba.carray(f, (34, NUM_TILE_FEATURES)), numba.carray(g, NUM_GLOBAL_FEATURES), numba.carray(conc, 34),
         numba.carray(vis, 34), numba.carray(unseen, 34), numba.carray(dbo, 34), numba.carray(mk, 5),
         numba.carray(mt, 5), numba.carray(sh, 34), numba.carray(pre, 34), tabs, shapes)  # fmt: skip
    return 0


_P = _nt.CPointer
_ROW_SIG = _nt.int64(
    _P(_nt.uint8), _P(_nt.boolean), _P(_nt.float32), _P(_nt.float32), _P(_nt.int8), _P(_nt.int64),
    _P(_nt.int64), _P(_nt.boolean), _P(_nt.int64), _P(_nt.int64), _P(_nt.int64), _P(_nt.int64),
    *R.TABLE_POINTERS,
)  # fmt: skip
_row_shared = None  # the shared kernel, made by row_kernel() before nn_features_kernel first compiles


def row_kernel():
    """The features of one row as a shared kernel (:func:`mjenv._jit.shared_kernel`), compiled (or loaded from
    the cache) on first use: as for :func:`agents.rule.decide_kernel`, so that the ``prange`` kernel's four
    libraries do not each optimize and code-generate the whole feature code again. Must be called before
    :func:`nn_features_kernel` compiles or loads: :func:`nn_features` does."""
    global _row_shared
    if _row_shared is None:
        _row_shared = shared_kernel("agents_features_row_v1", _ROW_SIG, _row_c)
        if _row_shared is None:  # NUMBA_DISABLE_JIT: arrays instead of pointers
            _row_shared = _row_rows
    return _row_shared


def _row_rows(ob, mask, f, g, conc, vis, unseen, dbo, mk, mt, sh, pre, suit, honor, sinc, hinc, pow5):
    """The plain-Python stand-in of the shared kernel (``NUMBA_DISABLE_JIT``)."""
    _row(ob, mask, f, g, conc, vis, unseen, dbo, mk, mt, sh, pre, (suit, honor, sinc, hinc),
         (H.KNITS, H.ORPHANS, pow5))  # fmt: skip
    return 0


@njit(parallel=True)
def nn_features_kernel(obs, masks, tile_out, glob_out, tabs, shapes):
    """Fill ``tile_out[i]`` (``float32[34, NUM_TILE_FEATURES]``) and ``glob_out[i]``
    (``float32[NUM_GLOBAL_FEATURES]``) from uint8 observation row ``obs[i]`` and legal mask ``masks[i]``
    (the module docstring). ``tabs`` = (suit, honor, suit_inc, honor_inc) of :mod:`mjenv.hand`; ``shapes`` =
    (KNITS, ORPHANS, POW5)."""
    suit, honor, sinc, hinc = tabs[0], tabs[1], tabs[2], tabs[3]
    pow5 = shapes[2]
    n = obs.shape[0]
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        conc = np.zeros(34, np.int8)
        vis = np.zeros(34, np.int64)
        unseen = np.zeros(34, np.int64)
        dbo = np.zeros(34, np.bool_)
        mk = np.zeros(5, np.int64)
        mt = np.zeros(5, np.int64)
        sh = np.zeros(34, np.int64)
        pre = np.zeros(34, np.int64)
        for i in range(c * _CHUNK, min(n, (c + 1) * _CHUNK)):
            tile_out[i] = 0.0
            glob_out[i] = 0.0
            _row_shared(obs[i], masks[i], tile_out[i], glob_out[i], conc, vis, unseen, dbo, mk, mt, sh, pre, suit,
                        honor, sinc, hinc, pow5)  # fmt: skip


def to_uint8(obs: np.ndarray) -> np.ndarray:
    """Observations of either dtype in the compact uint8 encoding (float32 ones are converted exactly)."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] != O.OBS_SIZE:
        raise ValueError(f"obs must have shape (N, {O.OBS_SIZE}), got {obs.shape}")
    if obs.dtype == np.uint8:
        return np.ascontiguousarray(obs)
    if obs.dtype != np.float32:
        raise ValueError(f"obs must be uint8 or float32, got {obs.dtype}")
    return obs.astype(np.int16).astype(np.uint8)  # -34..-1 wrap to the two's-complement bytes


def nn_features(
    obs: np.ndarray, masks: np.ndarray | None = None, threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(tile features float32[N, 34, NUM_TILE_FEATURES], global features float32[N, NUM_GLOBAL_FEATURES])``.

    ``obs``: observations (uint8 or float32, ``[N, OBS_SIZE]``); ``masks``: their legal masks (``[N,
    NUM_ACTIONS]``), or ``None`` for rows where the player is not asked (all actions taken as offered: the
    kernel still checks the hand can make each discard / claim). ``threads``: Numba threads (default: the
    current setting).
    """
    ob8 = to_uint8(obs)
    n = ob8.shape[0]
    if masks is None:
        m = np.ones((n, A.NUM_ACTIONS), np.bool_)
    else:
        m = np.asarray(masks)
        if m.shape != (n, A.NUM_ACTIONS):
            raise ValueError(f"masks must have shape ({n}, {A.NUM_ACTIONS}), got {m.shape}")
        m = np.ascontiguousarray(m, dtype=np.bool_)
    tile = np.empty((n, 34, NUM_TILE_FEATURES), np.float32)
    glob = np.empty((n, NUM_GLOBAL_FEATURES), np.float32)
    if n:
        if threads is not None and numba.get_num_threads() != threads:
            numba.set_num_threads(threads)
        tabs, shapes = R.agent_tables()
        row_kernel()
        nn_features_kernel(ob8, m, tile, glob, tabs, shapes)
    return tile, glob
