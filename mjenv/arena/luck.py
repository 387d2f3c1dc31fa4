"""Luck-adjusted duplicate evaluation: AIVAT's chance corrections on a value function fixed in advance.

Rules
-----
No rules of its own: the chance events are the engine's own draws (:mod:`mjenv.game`), read from the table
states the arena steps; the alternatives of a draw are scored by the engine's kernels
(:func:`mjenv.game.self_draw_fan_kernel`, the shanten of :mod:`mjenv.shanten`), and the alternatives of a deal
are dealt by :func:`mjenv.game.reset_kernel` itself.

Specification in mjenv
----------------------
AIVAT (Burch, Schmid, Moravcik, Morrill, Bowling, AAAI 2018) on one hand. For each seat ``j``, the adjusted
score is the hand's score minus a correction per chance event ``e``::

    adjusted_j = score_j - sum_e [ V_j(after e) - E_x V_j(after e with outcome x) ]

where the expectation is over the outcomes the event could have had, weighted as the shuffled wall gives
them. The corrections have mean zero given everything before the event, *whatever* ``V`` is, so the adjusted
score is an unbiased estimate of the same expectation as the raw score; the closer ``V`` is to the true value
of the table, the smaller its variance. Events:

* **A draw** (every tile taken from the wall during play: normal draws, kong replacements, flowers and their
  replacements; with private walls each from the drawer's own part). Given every tile taken so far, the tiles
  not yet taken lie in a uniformly random order (the engine shuffles the whole wall uniformly, and the private
  parts are quarters of it), so the drawn tile is uniform over them: tile kind ``t`` has probability
  ``R[t] / sum(R)``, ``R`` the copies of each kind still in the wall(s). The expectation is exact: every kind
  with ``R[t] > 0`` is scored.
* **The deal** (the four starting hands, flowers and their replacements, the dealer's first tile): one event,
  whose expectation is estimated by ``deals`` other deals of the same dealer, wind and rules, dealt by
  ``reset_kernel`` from seeds derived from the hand's own seed (:func:`alternative_seed`). An unbiased
  estimate of the expectation keeps the correction's mean at zero.

``V`` (:class:`LuckModel`) is linear in per-seat features: ``V_j = h_self(j) + sum over the other seats k of
h_other(k)``, each ``h`` a dot product of the model's weights with the seat's features (:func:`seat_features`):
its shanten and the tiles left in the wall (one-hot buckets), for a waiting hand the copies of its waits still
in the wall, for the seat that just drew whether it can win on the tile and the fan of that win, its flowers.
The features read the hands, melds, discards, flowers and the *multiset* of the tiles not yet taken, never
their order. The weights are fitted before any evaluation, on walls reserved for it (``python -m
train.luck_value``, :func:`fit`), by least squares of the hands' scores on their summed feature corrections
(the control-variate coefficients that minimise the adjusted score's variance on the training walls). The
fit never sees an evaluated wall: a value function fitted on the walls it is then used on shrinks their
variance by overfitting, not by removing luck (Kim and Sandholm, 2026). No action terms: the estimator is
unbiased with chance terms only, for every agent (greedy networks, the rule agent, Botzone bots).

The arena (:func:`mjenv.arena.run_arena` with ``adjust=``) runs :class:`LuckAdjuster` beside its vector env:
``start`` after a reset (the deal's correction), ``before_step``/``after_step`` around every step (the draws
of the step, found by the wall positions they consumed; a step that both draws and ends the hand, a flower
met at the end of the wall, is replayed from a copy of its state with the engine's ``step_kernel``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mjenv import game as G
from mjenv._jit import njit
from mjenv._tables import load_shanten_tables, load_tables
from mjenv.fans import NUM_FANS
from mjenv.hand import waits_bits_kernel
from mjenv.melds import KONG, meld_kind
from mjenv.rng import splitmix64_mix
from mjenv.rules import RULE_WORDS
from mjenv.shanten import min_shanten_kernel

# ------------------------------------------------------------------------------------------------ features
#: tiles left in the wall -> bucket 0..5 (``< 10``, ``< 20``, ``< 35``, ``< 55``, ``< 75``, more)
L_EDGES = (10, 20, 35, 55, 75)
NLB = len(L_EDGES) + 1
SH13 = 6  # shanten 0..5+ of a hand waiting to draw
SH14 = 8  # a hand that just drew: 0 it can win now, 1 + (shanten + 1) for -1..5+ otherwise
F_H13 = 0  # one-hot: shanten x wall bucket, a seat waiting to draw
F_H14 = F_H13 + SH13 * NLB  # one-hot: the drawer's state x wall bucket
F_PEND = (
    F_H14 + SH14 * NLB
)  # one-hot: a drawer that drew a flower (its replacement to come): shanten x bucket
F_FAN = F_PEND + SH13 * NLB  # the total fan of the win open to the drawer, per wall bucket
F_LIVE = F_FAN + NLB  # sum over the seat's waits of copies in the wall x the win's value, per bucket
F_TARGET = F_LIVE + NLB  # ... of copies in the other seats' concealed hands x the value
F_DANGER = F_TARGET + NLB  # tiles of the seat's hand that others wait on x the value of their win on it
F_OUT = F_DANGER + NLB  # the drawer's new tile, useless to it, is another's wait: that win's value
F_IN = F_OUT + NLB  # another seat's new tile, useless to it, is this seat's wait: the value
F_READY = F_IN + NLB  # a drawer one discard from a waiting hand: the best such hand's live value
F_READY_T = F_READY + NLB  # ... and its copies in the other seats' concealed hands x win value
F_FLOWERS = F_READY_T + NLB  # flowers set aside
N_SEAT_FEATURES = F_FLOWERS + 1
#: weights of a model: h_self's, then h_other's
N_PARAMS = 2 * N_SEAT_FEATURES
ROLE_WAIT, ROLE_DREW, ROLE_PENDING = 0, 1, 2
NNZ = 10  # non-zero features of one seat
VALUE_SCALE = 1.0 / 32.0  # win values (base payment + fan) are scaled by this in the features
#: a drawer this many tiles or more from waiting keeps its shanten in the features of every tile it could draw
FAR = 3

#: seeds of the alternative deals are keyed by this constant and the hand's seed
_DEAL_KEY = np.uint64(0x6C75636B5F646561)  # "luck_dea"

# per-table tracker words: the wall positions, kong counts and flowers after the last step
T_FRONT, T_BACK, T_PWALL, T_KONGS, T_FLOWERS = 0, 1, 2, 6, 10
T_SIZE = 14


@njit
def _lbucket(n_left):
    b = 0
    for e in L_EDGES:
        if n_left >= e:
            b += 1
    return b


@njit
def seat_features(role, fan, sh, live, target, danger, out, inn, ready, ready_t, n_left, flowers, idx, val):
    """A seat's non-zero features (``NNZ`` pairs into ``idx``, ``val``) in one of three roles.

    ``ROLE_WAIT``: a seat waiting to draw (13 - 3m standing tiles), one-hot (shanten 0..5+, wall bucket).
    ``ROLE_DREW``: the seat that just drew (14 - 3m tiles), one-hot (can win now / shanten -1..5+, wall
    bucket; a drawer that was ``FAR`` or more from waiting keeps that shanten whatever it drew), and the total
    fan of the win open to it. ``ROLE_PENDING``: drew a flower, its replacement to come, one-hot (shanten of its
    hand, wall bucket). All roles, each per wall bucket: ``live``, ``target``, ``danger``, ``out``, ``inn``,
    ``ready``, ``ready_t`` (sums of win values, :func:`_wait_values`; see the ``F_*`` constants), and the
    flowers set aside. ``n_left``: tiles left in the wall(s)."""
    lb = _lbucket(n_left)
    if role == ROLE_WAIT:
        idx[0] = F_H13 + min(max(sh, 0), SH13 - 1) * NLB + lb
    elif role == ROLE_DREW:
        b = 0 if fan >= 0 else 1 + min(max(sh + 1, 0), SH14 - 2)
        idx[0] = F_H14 + b * NLB + lb
    else:
        idx[0] = F_PEND + min(max(sh, 0), SH13 - 1) * NLB + lb
    val[0] = 1.0
    idx[1] = F_FAN + lb
    val[1] = float(fan) if (role == ROLE_DREW and fan >= 0) else 0.0
    idx[2] = F_LIVE + lb
    val[2] = live * VALUE_SCALE
    idx[3] = F_TARGET + lb
    val[3] = target * VALUE_SCALE
    idx[4] = F_DANGER + lb
    val[4] = danger * VALUE_SCALE
    idx[5] = F_OUT + lb
    val[5] = out * VALUE_SCALE
    idx[6] = F_IN + lb
    val[6] = inn * VALUE_SCALE
    idx[7] = F_READY + lb
    val[7] = ready * VALUE_SCALE
    idx[8] = F_READY_T + lb
    val[8] = ready_t * VALUE_SCALE
    idx[9] = F_FLOWERS
    val[9] = float(flowers)


@njit
def _dot(w, off, idx, val):
    h = 0.0
    for i in range(NNZ):
        h += w[off + idx[i]] * val[i]
    return h


@njit
def _remaining(state, R):
    """``R[0..41]``: copies of each tile kind not yet taken from the wall(s)."""
    R[:] = 0
    if state[G.PRIVATE_WALLS] != 0:
        part = G.wall_part_kernel(state)
        for s in range(4):
            for i in range(state[G.PWALL + s]):
                R[state[G.WALL + part * s + i]] += 1
    else:
        for i in range(state[G.FRONT], state[G.BACK]):
            R[state[G.WALL + i]] += 1


@njit
def _hand_key(state, s):
    """A hash of what ``s``'s win values depend on: its concealed hand, melds, flowers and cached waits."""
    h = np.uint64(0xCBF29CE484222325)
    p = np.uint64(0x100000001B3)
    for t in range(34):
        h = (h ^ np.uint64(state[G.HAND + 34 * s + t])) * p
    h = (h ^ np.uint64(state[G.N_MELDS + s] + 8 * state[G.FLOWERS + s])) * p
    for i in range(state[G.N_MELDS + s]):
        h = (h ^ np.uint64(np.uint32(state[G.MELDS + 4 * s + i]))) * p
    h = (h ^ np.uint64(np.uint32(state[G.WAITS + 2 * s]))) * p
    h = (h ^ np.uint64(np.uint32(state[G.WAITS + 2 * s + 1]))) * p
    return np.int64(h >> np.uint64(1))


@njit
def _wait_values(state, s, out, fan_counts):
    """``out[t]``: the value (base payment + total fan) of ``s`` winning on a discard of ``t`` with its hand as
    it stands (no situational flags), for each of its cached waits; 0 where it has no win (or under the
    minimum fan). Scored by the engine's scorer (:func:`mjenv.game.raw_score_kernel`)."""
    for t in range(34):
        out[t] = 0
        if G.waits_on_kernel(state, s, t):
            f = G.raw_score_kernel(state, s, t, 0, False, fan_counts)
            if f >= 0 and f - state[G.FLOWERS + s] >= state[G.MIN_FAN]:
                out[t] = state[G.BASE_PAY] + f


@njit
def _values_cached(state, s, wv, key, fan_counts):
    """:func:`_wait_values` of seat ``s`` into ``wv[s]``, recomputed only when its hand changed (``key[s]``)."""
    k = _hand_key(state, s)
    if key[s] != k:
        _wait_values(state, s, wv[s], fan_counts)
        key[s] = k


@njit
def _seat_sums(state, s, wv, R):
    """``(live, target, danger)`` of seat ``s``: over its waits, the copies in the wall and in the other seats'
    concealed hands times the win's value; over its concealed tiles, the others' win values on them."""
    live = 0.0
    target = 0.0
    danger = 0.0
    for t in range(34):
        v = wv[s, t]
        mine = state[G.HAND + 34 * s + t]
        for k in range(4):
            if k == s:
                continue
            if v > 0:
                target += v * state[G.HAND + 34 * k + t]
            if mine > 0 and wv[k, t] > 0:
                danger += mine * wv[k, t]
        if v > 0:
            live += v * R[t]
    return live, target, danger


@njit
def _kongs(state, s):
    n = 0
    for i in range(state[G.N_MELDS + s]):
        if meld_kind(state[G.MELDS + 4 * s + i]) == KONG:
            n += 1
    return n


@njit
def _hand_int8(state, s, hb):
    for t in range(34):
        hb[t] = state[G.HAND + 34 * s + t]


@njit
def _standing(state, s):
    return 13 - 3 * state[G.N_MELDS + s]


@njit
def _track(state, trk):
    trk[T_FRONT] = state[G.FRONT]
    trk[T_BACK] = state[G.BACK]
    for s in range(4):
        trk[T_PWALL + s] = state[G.PWALL + s]
        trk[T_KONGS + s] = _kongs(state, s)
        trk[T_FLOWERS + s] = state[G.FLOWERS + s]


@njit
def _add_feats(z, off, scale, idx, val):
    for i in range(NNZ):
        z[off + idx[i]] += scale * val[i]


@njit
def _state_value(state, w, R, hb, tabs, wv, fan_counts, out, zrow, scale, idx, val):
    """``out[j] += scale * V_j(state)`` (a state just dealt: the seat to act holds 14 - 3m tiles, the others
    wait), and with ``zrow`` (``float[4, N_PARAMS]``, or 0 rows) its features likewise. ``wv`` is scratch."""
    suit, honor, suit_inc, honor_inc = tabs
    _remaining(state, R)
    n_left = 0
    for t in range(42):
        n_left += R[t]
    d = state[G.TURN]
    record = zrow.shape[0] == 4
    for s in range(4):
        _wait_values(state, s, wv[s], fan_counts)
    for s in range(4):
        _hand_int8(state, s, hb)
        live, target, danger = _seat_sums(state, s, wv, R)
        if s == d and state[G.PHASE] == G.PH_TURN and state[G.JUST_CLAIMED] == 0:
            fan = state[G.WIN_FAN + s]
            sh = 0
            if fan < 0:
                sh = min_shanten_kernel(hb, _standing(state, s) + 1, suit, honor, suit_inc, honor_inc)
            role = ROLE_DREW
        else:
            fan = -1
            sh = min_shanten_kernel(hb, _standing(state, s), suit, honor, suit_inc, honor_inc)
            role = ROLE_WAIT
        seat_features(role, fan, sh, live, target, danger, 0.0, 0.0, 0.0, 0.0, n_left, state[G.FLOWERS + s],
                      idx, val)  # fmt: skip
        hs = _dot(w, 0, idx, val)
        ho = _dot(w, N_SEAT_FEATURES, idx, val)
        for j in range(4):
            out[j] += scale * (hs if j == s else ho)
            if record:
                _add_feats(zrow[j], 0 if j == s else N_SEAT_FEATURES, scale, idx, val)


@njit
def alternative_seed(seed, k):
    """The seed of the ``k``-th alternative deal of a hand dealt from ``seed`` (``uint64``)."""
    return splitmix64_mix(np.uint64(seed) ^ _DEAL_KEY ^ (np.uint64(k + 1) * np.uint64(0x9E3779B97F4A7C15)))


@njit
def _deal_event(
    state, w, deals, scratch, R, hb, tabs, suit_win, honor_win, wv, fan_counts, corr, z, idx, val
):
    """The deal's correction of the hand just dealt in ``state``: ``corr[j] += V_j(deal) - mean over ``deals``
    alternative deals of V_j``; features likewise into ``z`` (``float[4, N_PARAMS]`` or 0 rows)."""
    if deals <= 0:  # no deal correction (V(deal) alone, without its expectation, would not have mean zero)
        return
    _state_value(state, w, R, hb, tabs, wv, fan_counts, corr, z, 1.0, idx, val)
    seed = np.uint64(np.uint32(state[G.SEED_LO])) | (np.uint64(np.uint32(state[G.SEED_HI])) << np.uint64(32))
    rules = np.empty(RULE_WORDS, np.int32)
    for i in range(RULE_WORDS):
        rules[i] = state[G.RULES + i]
    dealer = state[G.DEALER]
    prevalent = state[G.PREVALENT]
    for k in range(deals):
        G.reset_kernel(scratch, alternative_seed(seed, k), dealer, prevalent, rules, suit_win, honor_win)
        _state_value(scratch, w, R, hb, tabs, wv, fan_counts, corr, z, -1.0 / deals, idx, val)


@njit
def _alt(w, d, lb, v, p, idx, val, kv, useless, z, sign, record):
    """Add ``p`` times the values (``v[j]``) of one outcome of a draw, and ``sign * p`` times its features to
    ``z``: the drawer ``d``'s features in ``idx``/``val``; for each other seat ``k`` with a win of value
    ``kv[k]`` on the tile, a target more and a live copy fewer, and (``useless``) the tile coming its way."""
    hs = _dot(w, 0, idx, val)
    ho = _dot(w, N_SEAT_FEATURES, idx, val)
    o = N_SEAT_FEATURES
    ks = VALUE_SCALE * (w[F_TARGET + lb] - w[F_LIVE + lb] + (w[F_IN + lb] if useless else 0.0))
    ko = VALUE_SCALE * (w[o + F_TARGET + lb] - w[o + F_LIVE + lb] + (w[o + F_IN + lb] if useless else 0.0))
    for j in range(4):
        x = hs if j == d else ho
        for k in range(4):
            if kv[k] > 0:
                x += kv[k] * (ks if j == k else ko)
        v[j] += p * x
        if record:
            _add_feats(z[j], 0 if j == d else o, sign * p, idx, val)
            for k in range(4):
                if kv[k] > 0:
                    off = 0 if j == k else o
                    c = sign * p * kv[k] * VALUE_SCALE
                    z[j, off + F_TARGET + lb] += c
                    z[j, off + F_LIVE + lb] -= c
                    if useless:
                        z[j, off + F_IN + lb] += c


@njit
def _best_ready(state, d, t, R, oh, suit_win, honor_win, fan_counts):
    """``d`` holds 14 - 3m tiles (``t`` just drawn, in ``state``) and can discard into a waiting hand: over its
    discards, the waiting hand whose waits have the most copies left (in the wall after ``t``, and ``oh``: in
    the other seats' concealed hands); returns its ``(live, target)`` values (those copies, in the wall and in
    the others' hands, times the win's value as :func:`_wait_values` scores it)."""
    h = G.HAND + 34 * d
    n_melds = state[G.N_MELDS + d]
    best_u = -1
    best_n = -1
    for u in range(34):
        if state[h + u] == 0:
            continue
        state[h + u] -= 1
        lo, hi = waits_bits_kernel(state, h, n_melds, suit_win, honor_win)
        state[h + u] += 1
        n = 0
        for x in range(27):
            if (lo >> x) & 1:
                n += R[x] - (1 if x == t else 0) + oh[x]
        for x in range(7):
            if (hi >> x) & 1:
                n += R[27 + x] - (1 if 27 + x == t else 0) + oh[27 + x]
        if n > best_n:
            best_n = n
            best_u = u
    if best_n <= 0:
        return 0.0, 0.0
    state[h + best_u] -= 1
    lo, hi = waits_bits_kernel(state, h, n_melds, suit_win, honor_win)
    v = 0.0
    vt = 0.0
    for x in range(34):
        on = ((lo >> x) & 1) if x < 27 else ((hi >> (x - 27)) & 1)
        if on:
            f = G.raw_score_kernel(state, d, x, 0, False, fan_counts)
            if f >= 0 and f - state[G.FLOWERS + d] >= state[G.MIN_FAN]:
                v += (state[G.BASE_PAY] + f) * (R[x] - (1 if x == t else 0))
                vt += (state[G.BASE_PAY] + f) * oh[x]
    state[h + best_u] += 1
    return v, vt


@njit
def _plain(wv, d, t):
    """No seat waits on ``t`` (with a win of some value)."""
    for s in range(4):
        if wv[s, t] > 0:
            return False
    return True


@njit
def _draw_events(state, trk, w, scratch, R, hb, seq, tabs, wv, wkey, fan_counts, corr, z, idx, val, suit_win,
                 honor_win):  # fmt: skip
    """The corrections of the draws ``state``'s last step made (found against the tracker ``trk``): for each
    draw, ``V(after) - E_t V(after drawing t)``, exactly over the kinds left. Only the drawer's features and
    the other seats' sums on the tile depend on it, so only they are scored per kind."""
    suit, honor, suit_inc, honor_inc = tabs
    private = state[G.PRIVATE_WALLS] != 0
    d = state[G.TURN]
    n = 0
    front_draw = False
    if private:
        part = G.wall_part_kernel(state)
        # only the drawer's part moves in a step
        d = -1
        for s in range(4):
            if state[G.PWALL + s] != trk[T_PWALL + s]:
                d = s
        if d < 0:
            return
        for p in range(trk[T_PWALL + d] - 1, state[G.PWALL + d] - 1, -1):
            seq[n] = state[G.WALL + part * d + p]
            n += 1
    else:
        if state[G.FRONT] > trk[T_FRONT]:
            seq[n] = state[G.WALL + trk[T_FRONT]]
            n += 1
            front_draw = True
        for p in range(trk[T_BACK] - 1, state[G.BACK] - 1, -1):
            seq[n] = state[G.WALL + p]
            n += 1
    if n == 0:
        return
    if not private and seq[n - 1] >= 34:
        # the wall ran out on a flower (the hand is over and the turn never passed): the drawer is the seat
        # whose flowers grew
        for s in range(4):
            if state[G.FLOWERS + s] > trk[T_FLOWERS + s]:
                d = s
    if d < 0 or d > 3:  # pragma: no cover - a draw always leaves the drawer's turn (or ends the hand)
        return
    kind = G.KIND_KONG if _kongs(state, d) > trk[T_KONGS + d] else G.KIND_NORMAL
    if front_draw:
        kind = G.KIND_NORMAL
    # the table just before the first draw of the step: the drawer's hand without its last (normal) tile, its
    # flowers without those drawn, the wall positions of the tracker
    scratch[:] = state
    nfl = 0
    for i in range(n):
        if seq[i] >= 34:
            nfl += 1
    if seq[n - 1] < 34:
        scratch[G.HAND + 34 * d + seq[n - 1]] -= 1
    scratch[G.FLOWERS + d] -= nfl
    scratch[G.FRONT] = trk[T_FRONT]
    scratch[G.BACK] = trk[T_BACK]
    for s in range(4):
        scratch[G.PWALL + s] = trk[T_PWALL + s]
    _remaining(scratch, R)
    _hand_int8(scratch, d, hb)
    n_std = _standing(scratch, d)
    sh_before = min_shanten_kernel(hb, n_std, suit, honor, suit_inc, honor_inc)
    record = z.shape[0] == 4
    oh = np.zeros(34, np.int64)  # copies of each tile in the other seats' concealed hands
    for s in range(4):
        if s != d:
            for t in range(34):
                oh[t] += scratch[G.HAND + 34 * s + t]
    ev = np.zeros(4)
    av = np.zeros(4)
    kv = np.zeros(4)
    kv0 = np.zeros(4)
    for k in range(n):
        x = seq[k]
        # win values of every seat's waits (the drawer's with the flowers it holds before this draw)
        for s in range(4):
            _values_cached(scratch, s, wv, wkey, fan_counts)
        live_d, target_d, danger_d = _seat_sums(scratch, d, wv, R)
        total = 0
        for t in range(42):
            total += R[t]
        # the wall positions after this draw (the flags of a win on it read them)
        if private:
            scratch[G.PWALL + d] -= 1
            scratch[G.BACK] -= 1
        elif k == 0 and front_draw:
            scratch[G.FRONT] += 1
        else:
            scratch[G.BACK] -= 1
        n_left = total - 1
        lb = _lbucket(n_left)
        fl = scratch[G.FLOWERS + d]
        ev[:] = 0.0
        av[:] = 0.0
        n_fl = 0
        for t in range(34, 42):
            n_fl += R[t]
        if n_fl > 0:  # a flower: the replacement is still to come
            seat_features(ROLE_PENDING, -1, sh_before, live_d, target_d, danger_d, 0.0, 0.0, 0.0, 0.0,
                          n_left, fl + 1, idx, val)  # fmt: skip
            _alt(w, d, lb, ev, n_fl / total, idx, val, kv0, False, z, -1.0, record)
            if x >= 34:
                _alt(w, d, lb, av, 1.0, idx, val, kv0, False, z, 1.0, record)
        far = sh_before >= FAR  # far from waiting: no win, and one tile more or less is not told apart
        # a far drawer's "plain" tiles (nobody's wait) all have the same features: scored once
        p_plain = 0.0
        for t in range(34):
            if R[t] == 0:
                continue
            if far and _plain(wv, d, t):
                p_plain += R[t] / total
                continue
            scratch[G.HAND + 34 * d + t] += 1
            fan = G.self_draw_fan_kernel(scratch, d, t, kind)
            scratch[G.HAND + 34 * d + t] -= 1
            sh = -1
            if fan < 0:
                if far:
                    sh = sh_before
                else:
                    hb[t] += 1
                    sh = min_shanten_kernel(hb, n_std + 1, suit, honor, suit_inc, honor_inc)
                    hb[t] -= 1
            useless = fan < 0 and sh >= sh_before
            others = 0.0
            for s in range(4):
                kv[s] = wv[s, t] if s != d else 0.0
                others += kv[s]
            live = live_d - wv[d, t]
            ready = 0.0
            ready_t = 0.0
            if fan < 0 and sh == 0:
                if sh_before == 0:
                    ready = live
                    ready_t = target_d
                else:
                    scratch[G.HAND + 34 * d + t] += 1
                    ready, ready_t = _best_ready(scratch, d, t, R, oh, suit_win, honor_win, fan_counts)
                    scratch[G.HAND + 34 * d + t] -= 1
            seat_features(ROLE_DREW, fan, sh, live, target_d, danger_d + others, others if useless else 0.0,
                          0.0, ready, ready_t, n_left, fl, idx, val)  # fmt: skip
            _alt(w, d, lb, ev, R[t] / total, idx, val, kv, useless, z, -1.0, record)
            if t == x:
                _alt(w, d, lb, av, 1.0, idx, val, kv, useless, z, 1.0, record)
        if p_plain > 0.0:
            r0 = live_d if sh_before == 0 else 0.0
            rt0 = target_d if sh_before == 0 else 0.0
            seat_features(ROLE_DREW, -1, sh_before, live_d, target_d, danger_d, 0.0, 0.0, r0, rt0, n_left, fl,
                          idx, val)  # fmt: skip
            _alt(w, d, lb, ev, p_plain, idx, val, kv0, True, z, -1.0, record)
            if x < 34 and far and _plain(wv, d, x):
                _alt(w, d, lb, av, 1.0, idx, val, kv0, True, z, 1.0, record)
        for j in range(4):
            corr[j] += av[j] - ev[j]
        R[x] -= 1
        if x >= 34:
            scratch[G.FLOWERS + d] += 1
            kind = G.KIND_FLOWER


@njit
def luck_step_kernel(
    states, rows, trk, w, deals, corr, z, done_rows, replay, wv_all, wkey_all,
    suit, honor, suit_inc, honor_inc, suit_win, honor_win,
):  # fmt: skip
    """One step of the arena's tables ``rows`` (the tables that played it), corrections into ``corr[N, 4]``
    (and features into ``z[N, 4, N_PARAMS]`` when it has N rows, else 0 rows). ``wv_all[N, 4, 34]`` and
    ``wkey_all[N, 4]`` cache each seat's win values (:func:`_values_cached`).

    ``done_rows[i]``: 0 the table's hand goes on (its draws are corrected), 1 the hand ended (its final draws,
    if any, are read from ``replay[i]``, the finished table that the caller replayed; the caller then takes
    the finished hand's ``corr``), 2 a new hand was just dealt at that table (its deal is corrected after
    ``corr`` and ``z`` are cleared). Rows are processed in the order given."""
    tabs = (suit, honor, suit_inc, honor_inc)
    scratch = np.empty(states.shape[1], np.int32)
    R = np.zeros(42, np.int64)
    hb = np.zeros(34, np.int8)
    seq = np.zeros(64, np.int64)
    idx = np.zeros(NNZ, np.int64)
    val = np.zeros(NNZ, np.float64)
    fan_counts = np.zeros(NUM_FANS, np.int16)
    wv_tmp = np.zeros((4, 34))
    nz = z.shape[0]
    dummy = np.zeros((0, N_PARAMS))
    for i in range(rows.shape[0]):
        r = rows[i]
        zrow = z[r] if nz > 0 else dummy
        if done_rows[i] == 0:
            _draw_events(states[r], trk[r], w, scratch, R, hb, seq, tabs, wv_all[r], wkey_all[r], fan_counts,
                         corr[r], zrow, idx, val, suit_win, honor_win)  # fmt: skip
            _track(states[r], trk[r])
        elif done_rows[i] == 1:
            if replay.shape[0] > i and replay[i, 0] != -99:
                _draw_events(replay[i], trk[r], w, scratch, R, hb, seq, tabs, wv_all[r], wkey_all[r], fan_counts,
                             corr[r], zrow, idx, val, suit_win, honor_win)  # fmt: skip
        else:
            corr[r, :] = 0.0
            if nz > 0:
                z[r] = 0.0
            _deal_event(states[r], w, deals, scratch, R, hb, tabs, suit_win, honor_win, wv_tmp, fan_counts,
                        corr[r], zrow, idx, val)  # fmt: skip
            _track(states[r], trk[r])
            wkey_all[r, :] = -1


@njit
def _track_rows(states, rows, trk):
    for i in range(rows.shape[0]):
        _track(states[rows[i]], trk[rows[i]])


# ------------------------------------------------------------------------------------------------ the model
@dataclass(frozen=True, eq=False)
class LuckModel:
    """A value function of the luck-adjusted evaluation: ``weights`` (``float64[N_PARAMS]``: ``h_self``'s, then
    ``h_other``'s, over :func:`seat_features`), the alternative ``deals`` of its deal correction, and
    ``meta`` (the command, commit, date and training walls that made it; :func:`save` writes it).

    A model of all zeros is valid (no correction: the raw scores); any weights keep the estimate unbiased."""

    weights: np.ndarray
    deals: int = 8
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        w = np.ascontiguousarray(self.weights, dtype=np.float64)
        if w.shape != (N_PARAMS,):
            raise ValueError(f"LuckModel weights must have shape ({N_PARAMS},), got {w.shape}")
        if not np.isfinite(w).all():
            raise ValueError("LuckModel weights must be finite")
        if isinstance(self.deals, bool) or not isinstance(self.deals, (int, np.integer)) or self.deals < 0:
            raise ValueError(f"LuckModel deals must be an int >= 0, got {self.deals!r}")
        object.__setattr__(self, "weights", w)
        object.__setattr__(self, "deals", int(self.deals))

    @property
    def name(self) -> str:
        return str(self.meta.get("name", "custom"))

    def describe(self) -> dict[str, Any]:
        """The report's entry: the model's name and metadata (its weights are in the file)."""
        return {"name": self.name, "deals": self.deals, **{k: v for k, v in self.meta.items() if k != "name"}}


#: the shipped value model (``python -m train.luck_value``; its metadata says how it was made)
SHIPPED = Path(__file__).resolve().parent / "values" / "value-2026-12-07.npz"


def save(model: LuckModel, path: str | os.PathLike) -> None:
    """Write ``model`` as ``.npz``: its weights, deals and metadata (JSON)."""
    np.savez(
        path,
        weights=model.weights,
        deals=np.int64(model.deals),
        meta=np.frombuffer(json.dumps(model.meta, sort_keys=True).encode(), np.uint8),
        n_params=np.int64(N_PARAMS),
    )


def load(path: str | os.PathLike) -> LuckModel:
    """Read a model that :func:`save` wrote."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"no value model at {str(p)!r}")
    with np.load(p) as f:
        if int(f["n_params"]) != N_PARAMS:
            raise ValueError(
                f"value model {p.name} has {int(f['n_params'])} weights; this mjenv's features take {N_PARAMS}"
            )
        meta = json.loads(bytes(f["meta"]).decode())
        return LuckModel(np.array(f["weights"]), int(f["deals"]), meta)


def shipped() -> LuckModel:
    """The shipped value model (:data:`SHIPPED`)."""
    return load(SHIPPED)


def constant(deals: int = 8) -> LuckModel:
    """A value function that is the same everywhere: no correction at all (adjusted = raw); for tests."""
    return LuckModel(np.zeros(N_PARAMS), deals, {"name": "constant"})


def random_model(seed: int = 0, scale: float = 10.0, deals: int = 8) -> LuckModel:
    """Random weights (a deliberately bad value function: still unbiased, noisier); for tests."""
    rng = np.random.default_rng(seed)
    return LuckModel(rng.normal(0.0, scale, N_PARAMS), deals, {"name": f"random({seed})"})


def resolve_model(spec: Any) -> LuckModel:
    """A :class:`LuckModel` from ``spec``: a model, ``None``/``True``/``"shipped"`` (the shipped one), a path to
    an ``.npz`` :func:`save` wrote, or an import string ``"module:factory"`` whose factory returns a model."""
    if isinstance(spec, LuckModel):
        return spec
    if spec is None or spec is True or spec == "shipped":
        return shipped()
    if not isinstance(spec, str) or not spec:
        raise TypeError(f"a value model must be a LuckModel, a path or 'module:factory', got {spec!r}")
    if spec.endswith(".npz") or os.path.sep in spec:
        return load(spec)
    if ":" not in spec:
        raise ValueError(f"value model {spec!r}: give a path to an .npz or an import string 'module:factory'")
    import importlib

    mod, _, fn = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(mod), fn)
    except (ImportError, AttributeError) as e:
        raise ValueError(f"value model {spec!r} cannot be imported: {e}") from None
    model = factory()
    if not isinstance(model, LuckModel):
        raise TypeError(f"value model {spec!r} returned {type(model).__name__}, not a LuckModel")
    return model


# ------------------------------------------------------------------------------------------------ the adjuster
class LuckAdjuster:
    """The corrections of the hands played on a vector env's ``n`` tables (see the module docstring).

    ``record=True`` also sums each hand's feature corrections per seat (``z``, for :func:`fit`)."""

    def __init__(self, model: LuckModel, n: int, *, record: bool = False) -> None:
        self.model = model
        self.n = n
        self.corr = np.zeros((n, 4), np.float64)
        self.z = np.zeros((n, 4, N_PARAMS), np.float64) if record else np.zeros((0, 4, N_PARAMS))
        self.trk = np.zeros((n, T_SIZE), np.int32)
        self.wv = np.zeros((n, 4, 34), np.float64)
        self.wkey = np.full((n, 4), -1, np.int64)
        suit, honor, _, _ = load_tables()
        self._tabs = (suit, honor, *load_shanten_tables(), *G.win_tables())
        self._pre_rows = np.zeros(0, np.int64)
        self._pre_states = None
        self._pre_actions = None
        self._empty_replay = np.zeros((0, G.STATE_SIZE), np.int32)

    def _run(self, states, rows, done, replay) -> None:
        luck_step_kernel(
            states, rows, self.trk, self.model.weights, self.model.deals, self.corr, self.z, done, replay,
            self.wv, self.wkey, *self._tabs,
        )  # fmt: skip

    def start(self, states: np.ndarray, rows: np.ndarray) -> None:
        """New hands were dealt at ``rows``: clear their corrections and correct their deals."""
        rows = np.asarray(rows, np.int64)
        self._run(states, rows, np.full(rows.size, 2, np.int64), self._empty_replay)

    def track(self, states: np.ndarray, rows: np.ndarray) -> None:
        """Take the tables ``rows`` as they stand (mid-hand) with no correction so far: their next draws are
        corrected from here (for tests and tools that start from a built position)."""
        rows = np.asarray(rows, np.int64)
        self.corr[rows] = 0.0
        if self.z.shape[0]:
            self.z[rows] = 0.0
        self.wkey[rows] = -1
        _track_rows(states, rows, self.trk)

    def before_step(self, states: np.ndarray, actions: np.ndarray, rows: np.ndarray) -> None:
        """Before a step of the tables ``rows``: keep a copy of the tables whose step could both draw and end the
        hand (a flower met at the end of the wall; with flowers only, and at most 8 tiles left)."""
        rows = np.asarray(rows, np.int64)
        near = rows[states[rows, G.HAS_FLOWERS] != 0]  # only the columns read, not whole table rows
        left = np.where(
            states[near, G.PRIVATE_WALLS] != 0,
            states[near, G.PWALL : G.PWALL + 4].min(axis=1),
            states[near, G.BACK] - states[near, G.FRONT],
        )
        near = near[left <= 8]
        self._pre_rows = near
        self._pre_states = states[near].copy() if near.size else None
        self._pre_actions = np.asarray(actions)[near].copy() if near.size else None

    def after_step(self, states: np.ndarray, rows: np.ndarray, terminated: np.ndarray, events: np.ndarray,
                   aborted: np.ndarray) -> np.ndarray:  # fmt: skip
        """After the step of the tables ``rows``: correct the draws of the hands that go on; for the tables that
        finished a hand (``terminated``) correct its final draws and return their corrections (``[k, 4]``, in
        the order of ``rows[terminated[rows]]``); the caller then calls :meth:`start` for the new hands."""
        rows = np.asarray(rows, np.int64)
        fin = terminated[rows]
        going = rows[~fin]
        if going.size:
            self._run(states, going, np.zeros(going.size, np.int64), self._empty_replay)
        ended = rows[fin]
        if ended.size == 0:
            return np.zeros((0, 4))
        replay = np.full((ended.size, G.STATE_SIZE), -99, np.int32)
        if self._pre_rows.size:
            pos = {int(r): k for k, r in enumerate(self._pre_rows.tolist())}
            suit_win, honor_win = self._tabs[-2:]
            for i, r in enumerate(ended.tolist()):
                k = pos.get(r)
                if k is None or aborted[r] or not (events[r] & G.EV_EXHAUSTIVE):
                    continue
                st = self._pre_states[k].copy()
                err = G.step_kernel(
                    st, int(self._pre_actions[k]), np.zeros(4, np.float32), suit_win, honor_win
                )
                if err == G.OK:
                    replay[i] = st
        self._run(states, ended, np.ones(ended.size, np.int64), replay)
        return self.corr[ended].copy()


# ------------------------------------------------------------------------------------------------ fitting
def fit(z: np.ndarray, scores: np.ndarray, ridge: float = 1e-3) -> np.ndarray:
    """Least-squares weights of a value model: the control-variate coefficients that minimise the variance of
    ``scores - z @ w`` over the hands and seats given (``z`` as ``train.luck_value.collect`` returns it), with an
    intercept (not kept) and a ridge of ``ridge`` times the mean diagonal."""
    X = np.asarray(z, np.float64).reshape(-1, N_PARAMS)
    y = np.asarray(scores, np.float64).reshape(-1)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"z has {X.shape[0]} seat-hands and scores {y.shape[0]}")
    Xc = X - X.mean(axis=0)
    yc = y - y.mean()
    A = Xc.T @ Xc
    A[np.diag_indices_from(A)] += ridge * max(float(np.mean(np.diag(A))), 1e-12)
    return np.linalg.solve(A, Xc.T @ yc)
