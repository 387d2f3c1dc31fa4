"""Exact values of the waits a discard leaves, from the player's own view, and a check of a policy's discards
by them (issue 25, docs/training.md, "Session 35").

A discard that leaves a waiting hand (tenpai) has a value the rules core computes from what the player sees: for
each tile it waits on, the copies not yet visible (4 less those in its hand, in every exposed meld and in the
unclaimed discards, as the rule agent decodes them: :func:`agents.rule.decode_view`) and the fan of the win on it, by a discard
and by its own draw (:func:`mjenv.fans.score_batch`; a win needs 8 fan without the flowers, so a wait short of
them is dead)::

    value(d) = sum over waits w of unseen(w) * [p * 3 (fan_self(w) + 8) * ok_self(w)
                                                + (1 - p) * (fan_discard(w) + 24) * ok_discard(w)]

(what the winner takes from a self-drawn win and from a win on a discard, ``p`` the share of wins that are
self-drawn, ``ok`` the 8-fan minimum with the flowers then added). :func:`discard_values` gives it for each legal
discard, :func:`near_values` one draw deeper for the discards that leave a hand one tile from waiting.
:func:`check_discards` replaces a policy's discard into a waiting hand by the best-valued one where that is worth
more than ``1 + margin`` times it (a dead wait, value 0, whenever a live one is on offer), and with ``near`` then
does the same among the discards into a hand one tile from waiting. A network does not
compute fan: the shipped one left a dead wait where a live one was on offer at 2.4% of its discards into a
waiting hand; the check of both steps (:data:`agents.nn.WAIT_CHECK`) adds +1.99 points per hand head to head
(docs/training.md, "Session 35").
It reads the observation and the legal mask only, never the table.
"""

from __future__ import annotations

import numpy as np

from agents.features import to_uint8
from mjenv import view as V
from mjenv._jit import njit
from mjenv.actions import DISCARD, NUM_TILE_TYPES, PASS
from mjenv.fans import WIN_SELF_DRAWN, score_batch
from mjenv.hand import batch_waits
from mjenv.observation import O_FLOWERS, O_PREV, O_SEAT
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


def _packed_melds(obs: np.ndarray) -> np.ndarray:
    """The observer's melds packed as :mod:`mjenv.melds` (``int16[N, 4]``: :func:`mjenv.view.decode_views`)."""
    return decode_views(to_uint8(obs)).melds[:, 0]


def _wait_values(hands: np.ndarray, ctx: dict[str, np.ndarray], unseen: np.ndarray, p_self: float
                 ) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    """The value of each 13-tile (less 3 per meld) hand ``hands[k]`` (``float[K]``, the formula of the module
    docstring) and whether it waits at all (``bool[K]``); ``ctx`` holds each hand's ``melds``, ``n_melds``,
    ``seat``, ``prev`` and ``flowers``, ``unseen[k]`` the copies of each tile its player cannot see."""
    waits = batch_waits(hands, ctx["n_melds"])
    ci, w = np.nonzero(waits & (unseen > 0))
    value = np.zeros(hands.shape[0])
    if ci.size:
        args = (hands[ci], ctx["melds"][ci], ctx["n_melds"][ci], w)
        winds = (ctx["seat"][ci], ctx["prev"][ci], 0)
        fan_d, _ = score_batch(*args, 0, *winds)
        fan_s, _ = score_batch(*args, WIN_SELF_DRAWN, *winds)
        flowers = ctx["flowers"][ci]
        v = p_self * 3 * (fan_s + flowers + 8) * (fan_s >= 8)
        v = v + (1 - p_self) * (fan_d + flowers + 24) * (fan_d >= 8)
        np.add.at(value, ci, unseen[ci, w] * v)
    return value, waits.any(axis=1)


def _turn_rows(
    obs: np.ndarray, m: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """The rows of the player's own turn with a discard legal, their hands, unseen copies and context."""
    rows = np.flatnonzero(~m[:, PASS] & m[:, DISCARD : DISCARD + _T].any(axis=1))
    o = obs[rows]
    hand, unseen, n_melds = own_view(o)
    ctx = {
        "melds": _packed_melds(o),
        "n_melds": n_melds,
        "seat": o[:, O_SEAT : O_SEAT + 4].argmax(axis=1),
        "prev": o[:, O_PREV : O_PREV + 4].argmax(axis=1),
        "flowers": np.rint(o[:, O_FLOWERS]).astype(np.int64),
    }
    return rows, hand, unseen, ctx


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


def discard_values(obs: np.ndarray, masks: np.ndarray, p_self: float = 0.3) -> np.ndarray:
    """``value(d)`` (module docstring) of each legal discard that leaves a waiting hand, ``-1`` elsewhere
    (``float[N, 34]``); rows that are not the player's own turn are all ``-1``."""
    out, rows, unseen, ctx, r, d, cand = _after_discards(obs, masks)
    if r.size:
        value, tenpai = _wait_values(cand, _take(ctx, r), unseen[r], p_self)
        out[rows[r[tenpai]], d[tenpai]] = value[tenpai]
    return out


def near_values(obs: np.ndarray, masks: np.ndarray, p_self: float = 0.3) -> np.ndarray:
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
    value, _ = _wait_values(h13, _take(ctx, rk), left, p_self)
    best = np.zeros(c.size)
    np.maximum.at(best, k, value)
    total = np.zeros(r.size)
    np.add.at(total, c, unseen[r[c], t] * best)
    out[rows[r], d] = total
    return out


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
) -> np.ndarray:
    """``actions`` (``int[N]``, a policy's choices on ``obs`` and ``masks``) with each discard into a waiting hand
    replaced by the best-valued one (:func:`discard_values`) where that is worth more than ``(1 + margin)`` times
    it; with ``near`` (a margin), each discard into a hand one tile from waiting likewise by :func:`near_values`
    (:func:`move_discards`). A new array; other actions are kept."""
    obs, m = np.asarray(obs), np.asarray(masks, dtype=bool)
    out = np.array(actions, dtype=np.int64, copy=True)
    move_discards(out, discard_values(obs, m, p_self), margin)
    if near is not None:
        move_discards(out, near_values(obs, m, p_self), near)
    return out


def check_settings(margin: object, near: object, p_self: object) -> tuple[float, float | None, float]:
    """The settings of :func:`check_discards` as floats, or a ``ValueError`` naming the bad one."""
    for name, x in (("margin", margin), ("near", 0.0 if near is None else near), ("p_self", p_self)):
        if (
            isinstance(x, bool)
            or not isinstance(x, (int, float, np.integer, np.floating))
            or not np.isfinite(x)
        ):
            raise ValueError(f"{name} must be a finite number, got {x!r}")
    if margin < 0 or (near is not None and near < 0):
        raise ValueError(f"margin and near must be >= 0, got {margin!r} and {near!r}")
    if not 0 <= p_self <= 1:
        raise ValueError(f"p_self must be in [0, 1], got {p_self!r}")
    return float(margin), None if near is None else float(near), float(p_self)
