"""Exact values of the waits a discard leaves, from the player's own view, and a check of a policy's discards
by them (added 2026-12-07, commit 675608c; docs/agents.md, "The wait check").

A discard that leaves a waiting hand (tenpai) has a value the rules core computes from what the player sees: for
each tile it waits on, the copies not yet visible (4 less those in its hand, in every exposed meld and in the
unclaimed discards, as the rule agent decodes them: :func:`agents.rule.decode_view`) and the fan of the win on it, by a discard
and by its own draw (:func:`mjenv.fans.score_batch`; a win needs the rules' minimum fan without the flowers, so a
wait short of it is dead)::

    value(d) = sum over waits w of unseen(w) * [p * take_self(fan_self(w) + flowers) * ok_self(w)
                                                + (1 - p) * take_discard(fan_discard(w) + flowers) * ok_discard(w)]

``take_self`` and ``take_discard`` are what the winner takes from a self-drawn win and from a win on a discard
(:func:`mjenv.rules.payments` under the table's ``base_payment``: ``3 * (fan + 8)`` and ``fan + 24`` by default),
``ok`` the rules' ``min_fan`` (8 by default) without the flowers, ``p`` the share of wins that are self-drawn
(:class:`Takings` reads them from a :class:`mjenv.rules.RuleConfig`). :func:`discard_values` gives it for each
legal discard, :func:`near_values` one draw deeper for the discards that leave a hand one tile from waiting.
:func:`check_discards` replaces a policy's discard into a waiting hand by the best-valued one where that is worth
more than ``1 + margin`` times it (a dead wait, value 0, whenever a live one is on offer), and with ``near`` then
does the same among the discards into a hand one tile from waiting. A network does not compute fan: the network
shipped on 2026-12-06 left a dead wait where a live one was on offer at 2.4% of its discards into a waiting hand;
the check of both steps (:class:`WaitCheck`'s defaults) adds +1.99 points per hand head to head (docs/agents.md).

:class:`CheckedPolicy` (``agents.waits:checked``) wraps any policy with the check and records what it played: the
inner policy's action and probabilities and the checked action, both. It reads the observation and the legal
mask only, never the table; it never imports torch (the inner policy is named by its import string).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from agents._common import check_factory_args
from agents.features import to_uint8
from mjenv import view as V
from mjenv._jit import njit
from mjenv.actions import CHOW, DISCARD, KONG, NUM_TILE_TYPES, PASS, PUNG
from mjenv.fans import WIN_KNITTED_NO_WAIT, WIN_SELF_DRAWN, score_batch
from mjenv.game import MAX_DISCARDS
from mjenv.hand import batch_waits
from mjenv.melds import CHOW as MELD_CHOW
from mjenv.melds import KONG as MELD_KONG
from mjenv.melds import PUNG as MELD_PUNG
from mjenv.observation import O_FLOWERS, O_FROM, O_OFFER, O_PREV, O_SEAT
from mjenv.policy import load_policy, takes_option
from mjenv.rules import RuleConfig, payments
from mjenv.shanten import batch_shanten
from mjenv.view import decode_views

_T = NUM_TILE_TYPES


@njit
def own_view_kernel(obs, hand, unseen, n_melds):
    """Per row of ``obs`` (uint8): the observer's concealed tiles ``hand[i]``, the copies of each tile it cannot
    see ``unseen[i]`` (4 less its hand, every seat's melds, its own concealed kongs included and others' faceless,
    and the unclaimed discards: :func:`mjenv.view.visible_kernel`) and its melds ``n_melds[i]``
    (:func:`mjenv.view.seat_melds_kernel`)."""
    vis = np.zeros(34, np.int64)
    dbo = np.zeros(34, np.bool_)
    melds = np.zeros(4, np.int64)
    for i in range(obs.shape[0]):
        V.hand_kernel(obs[i], hand[i])
        V.visible_kernel(obs[i], hand[i], vis, dbo, False)
        for t in range(34):
            unseen[i, t] = V.unseen_copies(vis[t])
        n_melds[i] = V.seat_melds_kernel(obs[i], 0, melds)


def own_view(obs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(hand int8[N, 34], unseen int64[N, 34], n_melds int64[N])`` of :func:`own_view_kernel` for observations of
    either dtype."""
    ob8 = to_uint8(obs)
    hand = np.zeros((ob8.shape[0], _T), np.int8)
    unseen = np.zeros((ob8.shape[0], _T), np.int64)
    n_melds = np.zeros(ob8.shape[0], np.int64)
    own_view_kernel(ob8, hand, unseen, n_melds)
    return hand, unseen, n_melds


@njit
def deal_in_ways_kernel(obs, unseen, out):
    """Per row of ``obs`` (uint8) and tile ``t``: ``out[i, t]``, a count of the ways the three opponents could be
    waiting on ``t``, from the copies the observer cannot see (``u = unseen[i]``, :func:`own_view_kernel`): ``u[t]``
    single waits (one copy of ``t`` held), ``u[t] * (u[t] - 1) / 2`` pair waits (two), and for a suit tile the
    run waits, ``u[a] * u[b]`` for each two tiles ``a, b`` of a run that ``t`` completes (next to it or around it).
    An opponent's count is weighted by ``1 + its melds`` (more melds, nearer a win) and is one fifth on a tile that
    opponent discarded: it seldom waits on what it threw (MCR does not forbid it). Within a row, a tile that an
    opponent waits on ranks above one no opponent waits on about 70% of the time among the legal discards
    (``tests/test_waits.py``); the rule agent's :func:`agents.rule.discard_danger` does about 67%."""
    thrown = np.zeros(34, np.bool_)
    for i in range(obs.shape[0]):
        u = unseen[i]
        for t in range(34):
            out[i, t] = 0.0
        for r in range(1, 4):
            for t in range(34):
                thrown[t] = False
            for j in range(MAX_DISCARDS):
                x = V.discard_at(obs[i], r, j)
                if x == 0:
                    break
                thrown[abs(x) - 1] = True
            weight = 1.0 + V.n_melds_at(obs[i], r)
            for t in range(34):
                c = u[t] + u[t] * (u[t] - 1) / 2.0
                if t < 27:
                    k = t % 9
                    if k >= 2:
                        c += u[t - 2] * u[t - 1]
                    if 1 <= k <= 7:
                        c += u[t - 1] * u[t + 1]
                    if k <= 6:
                        c += u[t + 1] * u[t + 2]
                out[i, t] += weight * c * (0.2 if thrown[t] else 1.0)


def deal_in_ways(obs: np.ndarray) -> np.ndarray:
    """``float[N, 34]``: :func:`deal_in_ways_kernel`'s deal-in estimate of discarding each tile, from the observer's own
    view only (observations of either dtype); compare tiles within a row, not across rows."""
    ob8 = to_uint8(obs)
    _, unseen, _ = own_view(ob8)
    out = np.zeros((ob8.shape[0], _T))
    deal_in_ways_kernel(ob8, unseen, out)
    return out


def weigh_danger(values: np.ndarray, obs: np.ndarray, masks: np.ndarray, weight: float) -> np.ndarray:
    """``values`` (``float[N, 34]`` of :func:`discard_values` or :func:`near_values`, -1 where not valued) with
    each valued discard's value times ``1 - weight * D``, ``D`` its :func:`deal_in_ways` over the largest among the
    row's legal discards (in [0, 1]; 0 on a row where every legal discard is safe). A new array."""
    out = np.array(values, dtype=np.float64, copy=True)
    rows = np.flatnonzero((out >= 0).any(axis=1))
    if rows.size == 0:
        return out
    d = deal_in_ways(np.asarray(obs)[rows]) * np.asarray(masks, dtype=bool)[rows, DISCARD : DISCARD + _T]
    top = d.max(axis=1, keepdims=True)
    rel = np.divide(d, top, out=np.zeros_like(d), where=top > 0)
    sub = out[rows]
    out[rows] = np.where(sub >= 0, sub * (1 - weight * rel), sub)
    return out


def _packed_melds(obs: np.ndarray) -> np.ndarray:
    """The observer's melds packed as :mod:`mjenv.melds` (``int16[N, 4]``: :func:`mjenv.view.decode_views`)."""
    return decode_views(to_uint8(obs)).melds[:, 0]


@dataclass(frozen=True)
class Takings:
    """What a win takes under a table's rules, as :func:`_wait_values` weighs it (:meth:`of` a
    :class:`mjenv.rules.RuleConfig`).

    The winner of a self-drawn win of ``F`` fan (flowers included) takes ``self_k * (F + self_c)``, of a win on a
    discard ``discard_k * (F + discard_c)``: :func:`mjenv.rules.payments` (the engine pays a win by the same
    rule, ``mjenv.game._finish_win``) read at three fans, ``3 * (F + base_payment)`` and ``F + 3 * base_payment``.
    A win needs ``min_fan`` without the flowers; ``flowers``: the flowers a player set aside add to its fan (a
    table without flowers has none); ``flags``: the scorer's option bits of the rules
    (``mjenv.fans.WIN_KNITTED_NO_WAIT`` with ``knitted_wait_fans=False``), added to every win scored.
    """

    min_fan: int = 8
    self_k: int = 3
    self_c: int = 8
    discard_k: int = 1
    discard_c: int = 24
    flowers: bool = True
    flags: int = 0

    @classmethod
    def of(cls, rules: RuleConfig | None = None) -> Takings:
        """The takings of ``rules`` (``None``: the default :class:`mjenv.rules.RuleConfig`)."""
        if rules is None:
            rules = RuleConfig()
        if not isinstance(rules, RuleConfig):
            raise TypeError(f"rules must be a mjenv.rules.RuleConfig or None, got {type(rules).__name__}")
        return _takings_of(rules)


@functools.lru_cache(maxsize=64)
def _takings_of(rules: RuleConfig) -> Takings:
    (sk, sc), (dk, dc) = (_affine_takings(loser, rules.base_payment) for loser in (-1, 1))
    flags = 0 if rules.knitted_wait_fans else WIN_KNITTED_NO_WAIT
    return Takings(rules.min_fan, sk, sc, dk, dc, rules.flowers, flags)


def _affine_takings(loser: int, base: int) -> tuple[int, int]:
    """``(k, c)`` with the winner's takings ``k * (fan + c)`` by :func:`mjenv.rules.payments` (seat 0 wins,
    ``loser`` -1 for a self-drawn win), checked at three fans."""
    take = [int(payments(0, loser, f, base)[0]) for f in (0, 1, 97)]
    k = take[1] - take[0]
    if k <= 0 or take[0] % k or take[2] != take[0] + 97 * k:
        raise ValueError(
            f"mjenv.rules.payments no longer pays k * (fan + c) (takings {take} at fan 0, 1, 97)"
        )
    return k, take[0] // k


def _takings(rules: RuleConfig | Takings | None) -> Takings:
    return rules if isinstance(rules, Takings) else Takings.of(rules)


def _wait_values(hands: np.ndarray, ctx: dict[str, np.ndarray], unseen: np.ndarray, p_self: float,
                 rules: RuleConfig | Takings | None = None) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The value of each 13-tile (less 3 per meld) hand ``hands[k]`` (``float[K]``, the formula of the module
    docstring under ``rules``: a :class:`mjenv.rules.RuleConfig`, its :class:`Takings`, or None for the
    defaults) and whether it waits at all (``bool[K]``); ``ctx`` holds each hand's ``melds``, ``n_melds``,
    ``seat``, ``prev`` and ``flowers``, ``unseen[k]`` the copies of each tile its player cannot see."""
    tk = _takings(rules)
    waits = batch_waits(hands, ctx["n_melds"])
    ci, w = np.nonzero(waits & (unseen > 0))
    value = np.zeros(hands.shape[0])
    if ci.size:
        args = (hands[ci], ctx["melds"][ci], ctx["n_melds"][ci], w)
        winds = (ctx["seat"][ci], ctx["prev"][ci], 0)
        fan_d, _ = score_batch(*args, tk.flags, *winds)
        fan_s, _ = score_batch(*args, WIN_SELF_DRAWN | tk.flags, *winds)
        flowers = ctx["flowers"][ci] if tk.flowers else 0
        # (p * k) * (fan + flowers + c): the defaults' float operations of the check as first shipped
        v = p_self * tk.self_k * (fan_s + flowers + tk.self_c) * (fan_s >= tk.min_fan)
        v = v + (1 - p_self) * tk.discard_k * (fan_d + flowers + tk.discard_c) * (fan_d >= tk.min_fan)
        np.add.at(value, ci, unseen[ci, w] * v)
    return value, waits.any(axis=1)


def _own_context(o: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The hands, unseen copies and context (:func:`_wait_values`' ``ctx``) of observation rows ``o``."""
    hand, unseen, n_melds = own_view(o)
    ctx = {
        "melds": _packed_melds(o),
        "n_melds": n_melds,
        "seat": o[:, O_SEAT : O_SEAT + 4].argmax(axis=1),
        "prev": o[:, O_PREV : O_PREV + 4].argmax(axis=1),
        "flowers": np.rint(o[:, O_FLOWERS]).astype(np.int64),
    }
    return hand, unseen, ctx


def _turn_rows(
    obs: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The rows of the player's own turn with a discard legal, their hands, unseen copies and context."""
    rows = np.flatnonzero(~m[:, PASS] & m[:, DISCARD : DISCARD + _T].any(axis=1))
    return (rows, *_own_context(obs[rows]))


def _take(ctx: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, np.ndarray]:
    return {k: v[idx] for k, v in ctx.items()}


def _after_discards(obs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, ...]:
    """``(out, rows, unseen, ctx, r, d, hands)``: ``out`` all ``-1`` (``float[N, 34]``); the own-turn rows of
    :func:`_turn_rows` with their unseen copies and context; and for each legal discard ``d`` of turn row
    ``rows[r]``, the hand it leaves."""
    obs, m = np.asarray(obs), np.asarray(masks, dtype=bool)
    out = np.full((obs.shape[0], _T), -1.0)
    rows, hand, unseen, ctx = _turn_rows(obs, m)
    r, d = np.nonzero(m[rows, DISCARD : DISCARD + _T])
    hands = hand[r].copy()
    hands[np.arange(r.size), d] -= 1
    return out, rows, unseen, ctx, r, d, hands


def discard_values(
    obs: np.ndarray, masks: np.ndarray, p_self: float = 0.3, rules: RuleConfig | Takings | None = None
) -> np.ndarray:
    """``value(d)`` (module docstring; under ``rules``, None for the defaults) of each legal discard that leaves a
    waiting hand, ``-1`` elsewhere (``float[N, 34]``); rows that are not the player's own turn are all ``-1``."""
    out, rows, unseen, ctx, r, d, cand = _after_discards(obs, masks)
    if r.size:
        value, tenpai = _wait_values(cand, _take(ctx, r), unseen[r], p_self, rules)
        out[rows[r[tenpai]], d[tenpai]] = value[tenpai]
    return out


def near_values(
    obs: np.ndarray, masks: np.ndarray, p_self: float = 0.3, rules: RuleConfig | Takings | None = None
) -> np.ndarray:
    """One draw deeper than :func:`discard_values`: for each legal discard ``d`` that leaves a hand one tile from
    waiting (shanten 1), ``sum over draws t of unseen(t) * max over discards d' of value(hand - d + t - d')``
    (the best wait each draw offers, 0 where it offers none; ``t``'s unseen copies one fewer after its draw);
    ``-1`` elsewhere (``float[N, 34]``)."""
    out, rows, unseen, ctx, r, d, cand = _after_discards(obs, masks)
    if r.size == 0:
        return out
    keep = batch_shanten(cand, ctx["n_melds"][r]) == 1
    r, d, cand = r[keep], d[keep], cand[keep]
    # every draw t with an unseen copy: the 14-tile hands, those that can reach a wait (shanten 0)
    c, t = np.nonzero(unseen[r] > 0)
    drawn = cand[c].copy()
    drawn[np.arange(c.size), t] += 1
    ready = batch_shanten(drawn, ctx["n_melds"][r[c]]) <= 0
    c, t, drawn = c[ready], t[ready], drawn[ready]
    # every discard d' of each such hand
    k, d2 = np.nonzero(drawn > 0)
    h13 = drawn[k].copy()
    h13[np.arange(k.size), d2] -= 1
    rk = r[c[k]]
    left = unseen[rk].copy()
    left[np.arange(k.size), t[k]] -= 1
    value, _ = _wait_values(h13, _take(ctx, rk), left, p_self, rules)
    best = np.zeros(c.size)
    np.maximum.at(best, k, value)
    total = np.zeros(r.size)
    np.add.at(total, c, unseen[r[c], t] * best)
    out[rows[r], d] = total
    return out


#: the claims :func:`claim_values` values, in the order of its columns: chow low / mid / high, pung, exposed kong
CLAIMS = (CHOW, CHOW + 1, CHOW + 2, PUNG, KONG)


def claim_values(
    obs: np.ndarray, masks: np.ndarray, p_self: float = 0.3, rules: RuleConfig | Takings | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(claims float[N, 5], passing float[N])`` at claim windows (a chow, pung or exposed kong legal beside
    pass): for each legal claim of :data:`CLAIMS`, the value (module docstring) of the best waiting hand it
    leads to (a chow or pung: the best wait over the discards that follow it; an exposed kong: the hand it
    leaves, before its replacement draw), 0 where it leads to none; and the value of passing, the wait the
    hand holds now (0 if none). ``-1`` where a claim is not legal and on rows that are no claim window."""
    obs, m = np.asarray(obs), np.asarray(masks, dtype=bool)
    n = obs.shape[0]
    claims, passing = np.full((n, len(CLAIMS)), -1.0), np.full(n, -1.0)
    cols = np.array(CLAIMS)
    rows = np.flatnonzero(m[:, PASS] & m[:, cols].any(axis=1))
    if rows.size == 0:
        return claims, passing
    o = obs[rows]
    hand, unseen, ctx = _own_context(o)
    offer = o[:, O_OFFER : O_OFFER + _T].argmax(axis=1)
    offer_from = o[:, O_FROM : O_FROM + 4].argmax(axis=1)
    value, _ = _wait_values(hand, ctx, unseen, p_self, rules)
    passing[rows] = value
    r, j = np.nonzero(m[rows][:, cols])
    # the concealed hand and the melds after each legal claim
    after = hand[r].copy()
    c = offer[r]
    melds = ctx["melds"][r].copy()
    kind = np.where(j < 3, MELD_CHOW, np.where(j == 3, MELD_PUNG, MELD_KONG))
    mid = np.where(j < 3, c - j + 1, c)
    k = np.arange(r.size)
    for step in (-1, 0, 1):  # a chow takes the two run tiles other than the claimed one from the hand
        t = mid + step
        sel = (j < 3) & (t != c)
        after[k[sel], t[sel]] -= 1
    after[k[j == 3], c[j == 3]] -= 2
    after[k[j == 4], c[j == 4]] -= 3
    nm = ctx["n_melds"][r] + 1
    melds[k, nm - 1] = (kind << 8) | (offer_from[r] << 6) | mid
    sub = {"melds": melds, "n_melds": nm, **{key: ctx[key][r] for key in ("seat", "prev", "flowers")}}
    best = np.zeros(r.size)
    kong = j == 4
    if kong.any():  # the hand the kong leaves (10 - 3 * melds tiles) waits as it stands
        v, _ = _wait_values(after[kong], _take(sub, np.flatnonzero(kong)), unseen[r[kong]], p_self, rules)
        best[kong] = v
    rest = np.flatnonzero(~kong)
    if rest.size:  # a chow or pung: then a discard; the best wait over the discards
        q, d = np.nonzero(after[rest] > 0)
        h13 = after[rest[q]].copy()
        h13[np.arange(q.size), d] -= 1
        v, _ = _wait_values(h13, _take(sub, rest[q]), unseen[r[rest[q]]], p_self, rules)
        top = np.zeros(rest.size)
        np.maximum.at(top, q, v)
        best[rest] = top
    claims[rows[r], j] = best
    return claims, passing


def move_claims(actions: np.ndarray, claims: np.ndarray, passing: np.ndarray, margin: float) -> np.ndarray:
    """In place: each pass in ``actions`` at a claim window where a claim of :func:`claim_values` leads to a wait
    worth more than ``(1 + margin)`` times passing (and more than 0) is replaced by the best such claim. Returns
    the rows moved."""
    rows = np.flatnonzero((actions == PASS) & (claims.max(axis=1) > 0))
    best = claims[rows].argmax(axis=1)
    better = claims[rows, best] > (1 + margin) * np.maximum(passing[rows], 0)
    actions[rows[better]] = np.array(CLAIMS)[best[better]]
    return rows[better]


def move_discards(actions: np.ndarray, values: np.ndarray, margin: float) -> np.ndarray:
    """In place: each discard in ``actions`` that ``values`` (``float[N, 34]``, -1 where a discard is not valued)
    values is replaced by the best-valued discard of its row where that is worth more than ``(1 + margin)`` times
    it. Returns the rows moved."""
    rows = np.flatnonzero((actions >= DISCARD) & (actions < DISCARD + _T))
    rows = rows[values[rows].max(axis=1) >= 0]
    own = values[rows, actions[rows] - DISCARD]
    best = values[rows].argmax(axis=1)
    better = (own >= 0) & (values[rows, best] > (1 + margin) * own)
    actions[rows[better]] = DISCARD + best[better]
    return rows[better]


def check_discards(
    obs: np.ndarray,
    masks: np.ndarray,
    actions: np.ndarray,
    margin: float = 0.5,
    near: float | None = None,
    p_self: float = 0.3,
    rules: RuleConfig | Takings | None = None,
    claims: float | None = None,
    danger: float | None = None,
) -> np.ndarray:
    """``actions`` (``int[N]``, a policy's choices on ``obs`` and ``masks``) with each discard into a waiting hand
    replaced by the best-valued one (:func:`discard_values`) where that is worth more than ``(1 + margin)`` times
    it; with ``near`` (a margin), each discard into a hand one tile from waiting likewise by :func:`near_values`
    (:func:`move_discards`); with ``claims`` (a margin), each pass at a claim window by the claim that leads to the
    best wait where that is worth more than ``1 + claims`` times passing (:func:`claim_values`,
    :func:`move_claims`); with ``danger`` (a weight in [0, 1]), the discards' values of both steps first weighed by
    their danger (:func:`weigh_danger`); the values under ``rules`` (None: the defaults). A new array; other
    actions are kept. :meth:`WaitCheck.apply` is the same with checked settings."""
    obs, m = np.asarray(obs), np.asarray(masks, dtype=bool)
    tk = _takings(rules)
    out = np.array(actions, dtype=np.int64, copy=True)

    def weighed(values: np.ndarray) -> np.ndarray:
        return values if danger is None else weigh_danger(values, obs, m, danger)

    move_discards(out, weighed(discard_values(obs, m, p_self, tk)), margin)
    if near is not None:
        move_discards(out, weighed(near_values(obs, m, p_self, tk)), near)
    if claims is not None:
        move_claims(out, *claim_values(obs, m, p_self, tk), claims)
    return out


_NUMBER = (int, float, np.integer, np.floating)
_OPTIONAL = ("near", "claims", "danger")  # the settings that may be None


@dataclass(frozen=True)
class WaitCheck:
    """The settings of the wait check (:func:`check_discards`), checked when made; the defaults are the check as
    shipped on 2026-12-07 (commit 675608c).

    ``margin``: a discard into a waiting hand is replaced by the best-valued one where that is worth more than
    ``1 + margin`` times it (>= 0). ``near``: the same margin among the discards into a hand one tile from
    waiting (:func:`near_values`), or None to skip that step. ``p_self``: the share of wins that are self-drawn
    (in [0, 1]). ``claims``: at a claim window, a pass is replaced by the chow, pung or exposed kong that leads to
    the best wait where that is worth more than ``1 + claims`` times the wait the hand holds
    (:func:`claim_values`), or None (the default) to leave claims alone. ``danger``: a weight in [0, 1] by which
    each discard's value is lowered for its danger (:func:`weigh_danger`: the most dangerous legal discard's value
    times ``1 - danger``), or None (the default) to weigh none. A bad type is a ``TypeError``, a bad value a
    ``ValueError``, each naming the setting.
    """

    margin: float = 0.5
    near: float | None = 0.5
    p_self: float = 0.3
    claims: float | None = None
    danger: float | None = None

    def __post_init__(self) -> None:
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in _OPTIONAL and v is None:
                continue
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, _NUMBER):
                extra = " or None" if f.name in _OPTIONAL else ""
                raise TypeError(f"WaitCheck.{f.name} must be a number{extra}, got {type(v).__name__} {v!r}")
            if not np.isfinite(v):
                raise ValueError(f"WaitCheck.{f.name} must be finite, got {v!r}")
            object.__setattr__(self, f.name, float(v))
        if self.margin < 0 or (self.near is not None and self.near < 0):
            raise ValueError(f"WaitCheck.margin and near must be >= 0, got {self.margin!r} and {self.near!r}")
        if self.claims is not None and self.claims < 0:
            raise ValueError(f"WaitCheck.claims must be >= 0 or None, got {self.claims!r}")
        if not 0 <= self.p_self <= 1:
            raise ValueError(f"WaitCheck.p_self must be in [0, 1], got {self.p_self!r}")
        if self.danger is not None and not 0 <= self.danger <= 1:
            raise ValueError(f"WaitCheck.danger must be in [0, 1] or None, got {self.danger!r}")

    @classmethod
    def of(cls, waits: bool | dict | WaitCheck | None) -> WaitCheck | None:
        """A check from an option: ``True`` the defaults, ``False``/``None`` no check, a dict of settings over
        the defaults (an unknown key is a ``ValueError``), or a :class:`WaitCheck`."""
        if waits is None or isinstance(waits, (WaitCheck, bool)):
            return (cls() if waits else None) if isinstance(waits, bool) else waits
        if not isinstance(waits, dict):
            raise TypeError(f"waits must be a bool, a dict or a WaitCheck, got {type(waits).__name__}")
        unknown = set(waits) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(
                f"waits takes margin, near, p_self, claims and danger, not {', '.join(sorted(map(str, unknown)))}"
            )
        return cls(**waits)

    def describe(self) -> str:
        """The settings in one short string, e.g. ``margin 0.5, near 0.5, p_self 0.3``."""
        text = f"margin {self.margin:g}, near {'off' if self.near is None else f'{self.near:g}'}, p_self {self.p_self:g}"
        if self.claims is not None:
            text += f", claims {self.claims:g}"
        return text if self.danger is None else f"{text}, danger {self.danger:g}"

    def apply(
        self,
        obs: np.ndarray,
        masks: np.ndarray,
        actions: np.ndarray,
        rules: RuleConfig | Takings | None = None,
    ) -> np.ndarray:
        """:func:`check_discards` of ``actions`` with these settings, the values under ``rules``."""
        return check_discards(
            obs, masks, actions, self.margin, self.near, self.p_self, rules, self.claims, self.danger
        )


#: the check of ``agents.nn:baseline``: the default check and claims into a better wait (margin 0.5), +0.71
#: [+0.56, +0.86] points per hand head to head over the default check on the network of 2026-12-06 (2v2, 8,000
#: walls of seed 20261310; docs/agents.md, "The wait check")
BASELINE_CHECK = WaitCheck(claims=0.5)


def _rules_option(rules: object) -> RuleConfig:
    """``rules`` as a :class:`mjenv.rules.RuleConfig`: one, None (the defaults), a dict of its fields (as
    ``--agent-opt NAME.rules={"min_fan": 6}`` gives it) or ``"mcr"`` / ``"botzone"`` (:meth:`RuleConfig.botzone`)."""
    if rules is None or rules == "mcr":
        return RuleConfig()
    if rules == "botzone":
        return RuleConfig.botzone()
    if isinstance(rules, RuleConfig):
        return rules
    if isinstance(rules, dict):
        return RuleConfig.from_dict(rules)
    if isinstance(rules, str):
        raise ValueError(
            f"rules must be 'mcr', 'botzone', a dict of RuleConfig fields or a RuleConfig, got {rules!r}"
        )
    raise TypeError(
        f"rules must be a RuleConfig, a dict of its fields, 'mcr' or 'botzone', got {type(rules).__name__}"
    )


class CheckedPolicy:
    """A policy (``inner``) with its discards checked by the value of the waits they leave (:class:`WaitCheck`,
    the values under ``rules``, a :class:`mjenv.rules.RuleConfig`; None: the defaults): the batched policy
    protocol of :mod:`mjenv.policy`.

    It reads observations (``needs_observations``); ``row_streams`` and ``rng`` pass through to the inner policy
    when it declares them, ``seats`` always. :meth:`act_with_info` records what was played honestly: ``info``
    holds the inner policy's own info under ``inner_`` names (``inner_probs``, ``inner_value`` for an
    ``agents.nn`` network), its action ``inner_action`` and the checked action ``action``, and no ``probs``: the
    check moves some actions to ones the inner distribution may give almost no weight.
    """

    needs_observations = True

    def __init__(
        self,
        inner: Any,
        check: WaitCheck | None = None,
        rules: RuleConfig | None = None,
        name: str | None = None,
    ) -> None:
        if not callable(inner):
            raise TypeError(f"inner must be a policy (a callable), got {type(inner).__name__}")
        check = WaitCheck() if check is None else check
        if not isinstance(check, WaitCheck):
            raise TypeError(f"check must be a WaitCheck, got {type(check).__name__}")
        self.inner = inner
        self.check = check
        self.rules = _rules_option(rules)
        self.takings = Takings.of(self.rules)
        self.name = name
        self.row_streams = bool(getattr(inner, "row_streams", False))

    def describe(self) -> str:
        """One line: the inner policy's description (or name) and the check's settings and rules."""
        d = getattr(self.inner, "describe", None)
        inner = d() if callable(d) else (self.name or type(self.inner).__name__)
        rules = "" if self.takings == Takings() else f", rules {self.takings}"
        return f"{inner}, discards checked by wait value ({self.check.describe()}{rules})"

    def _inner_kw(self, rng: Any) -> dict:
        return {"rng": rng} if self.row_streams and rng is not None else {}

    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        if obs is None:
            raise ValueError("the wait check needs observations (VectorEnv(..., observations=True))")
        actions = np.asarray(self.inner(obs, masks, seats, **self._inner_kw(rng)), dtype=np.int64)
        return self.check.apply(obs, masks, actions, self.takings)

    def act_with_info(
        self, obs: Any, masks: Any, seats: Any = None, rng: Any = None
    ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """``(checked actions, info)``: ``info`` as the class docstring says (an inner policy without
        ``act_with_info`` gives only the two actions)."""
        if obs is None:
            raise ValueError("the wait check needs observations (VectorEnv(..., observations=True))")
        act = getattr(self.inner, "act_with_info", None)
        if act is None:
            inner, info = self.inner(obs, masks, seats, **self._inner_kw(rng)), {}
        else:
            inner, info = act(obs, masks, seats, **self._inner_kw(rng))
        inner = np.asarray(inner, dtype=np.int64)
        out = {f"inner_{k}": v for k, v in info.items()}
        actions = self.check.apply(obs, masks, inner, self.takings)
        out["inner_action"], out["action"] = inner, actions
        return actions, out


def checked(
    num_envs: int,
    seed: int,
    inner: str = "agents.nn:latest",
    inner_opt: dict | None = None,
    margin: float = 0.5,
    near: float | None = 0.5,
    p_self: float = 0.3,
    rules: RuleConfig | dict | str | None = None,
    threads: int | None = None,
    claims: float | None = None,
) -> CheckedPolicy:
    """``agents.waits:checked``: the agent ``inner`` (an import string, built with ``inner_opt``, a dict of its
    options, by :func:`mjenv.policy.load_policy` with the same ``num_envs`` and ``seed``) with its discards
    checked by the value of the waits they leave: a :class:`CheckedPolicy` of ``WaitCheck(margin, near,
    p_self, claims)`` (``claims``: also claim into a better wait than passing holds, off by default), the values under ``rules`` (a :class:`mjenv.rules.RuleConfig`, a dict of its fields, ``"mcr"`` or
    ``"botzone"``; default MCR's). The settings and rules are checked before the inner agent is built.
    ``threads`` (``mjenv eval --threads`` fills it) goes to the inner agent when its factory takes it and
    ``inner_opt`` does not set it.

    ``mjenv eval --agent chk=agents.waits:checked --agent-opt chk.inner=agents.rule:make --agent rule=agents.rule:make
    --seating 1v3``.
    """
    num_envs, seed = check_factory_args(num_envs, seed)
    check = WaitCheck(margin, near, p_self, claims)
    rules = _rules_option(rules)
    if not isinstance(inner, str):
        raise TypeError(
            f"inner must be an agent's import string 'module:factory', got {type(inner).__name__}"
        )
    if inner_opt is None:
        inner_opt = {}
    if not isinstance(inner_opt, dict) or not all(isinstance(k, str) for k in inner_opt):
        raise TypeError(f"inner_opt must be a dict of the inner agent's options, got {inner_opt!r}")
    if threads is not None and "threads" not in inner_opt and takes_option(inner, "threads"):
        inner_opt = {**inner_opt, "threads": threads}
    policy = load_policy(inner, num_envs, seed, **inner_opt)
    return CheckedPolicy(policy, check, rules, name=inner)
