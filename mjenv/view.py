"""A player's own view decoded from its observation: the one decoder every reader of the observation uses.

Why
---
The observation (:mod:`mjenv.observation`) is a flat tensor for networks; players and tools want counts: the
tiles in hand, the melds (packed as :mod:`mjenv.melds` packs them), the discards in order, the copies of each
tile still unseen. The rule agent, the network's features and planes, the wait values and the Botzone adapter
all read these; this module is the only code that decodes them, so they cannot drift apart.

What (per observation row ``ob``, float32 or the compact uint8 encoding; seats relative to the observer as in
the observation: 0 = self, 1 = next, 2 = across, 3 = previous)
------------------------------------------------------------------------------------------------------------
* :func:`hand_kernel`: the concealed tiles, counts per tile type (the ``hand`` planes).
* :func:`n_melds_at`, :func:`meld_at`, :func:`seat_melds_kernel`: seat ``r``'s melds from ``meld_seq``, packed
  with :func:`mjenv.melds.pack_meld` (the kind codes of ``meld_seq``: :data:`SEQ_CHOW` .. :data:`SEQ_CONCEALED_KONG`,
  and back with :func:`meld_seq_code`). Another seat's concealed kong shows no face: it is packed as a concealed
  kong of tile 0 (:func:`face_shown` says whether a meld's tile is its face). An entry that is not a meld of its
  kind (a tile out of range, a chow not stored by a suited 2..8, a claimed meld with no offer) is ``NO_MELD``.
* :func:`n_discards_at`, :func:`discard_at`: seat ``r``'s discards in order, ``tile + 1``, negative when claimed
  (the uint8 encoding's two's-complement bytes read back).
* :func:`visible_kernel`: the copies of each tile the observer has seen: its hand, the faces of every meld, the
  discards (``count_claimed``: the claimed ones too, which also lie in a meld), uncapped; and the tiles another
  seat discarded. ``unseen = max(0, 4 - visible)`` (:func:`unseen_copies`).
* :func:`facts_kernel`: the one-hot and scalar pieces as integers (``FACT_*`` indices; ``-1`` where none).
* :func:`view_row_kernel`: all of these for one row; :func:`views_kernel` for a batch; :func:`decode_views`
  (numpy) returns them as an :class:`OwnView`.

Kernels are ``mjenv._jit.njit``: numpy arrays and scalars in, counts or error codes out.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mjenv._jit import njit
from mjenv.game import MAX_DISCARDS
from mjenv.melds import CHOW, KONG, NO_MELD, PUNG, meld_added, meld_kind, meld_offer, meld_tile, pack_meld
from mjenv.observation import (
    O_CONCEALED,
    O_DRAWN,
    O_DSEQ,
    O_FLOWERS,
    O_FROM,
    O_HAND,
    O_MSEQ,
    O_NOWIN,
    O_OFFER,
    O_PHASE,
    O_PREV,
    O_SEAT,
    O_TURN,
    O_WALL,
    OBS_SIZE,
    check_obs_dtype,
)

#: the kind codes of the observation's ``meld_seq``
SEQ_CHOW, SEQ_PUNG, SEQ_KONG, SEQ_ADDED_KONG, SEQ_CONCEALED_KONG = 1, 2, 3, 4, 5

#: indices of :func:`facts_kernel`'s output
FACTS = (
    "seat_wind",  # the observer's seat wind 0..3 (E S W N)
    "prevalent_wind",
    "wall",  # tiles left in the wall
    "phase",  # 0 turn after a draw, 1 after a claim, 2 claim window, 3 robbing window; -1 none
    "drawn",  # the tile just drawn on the observer's turn, -1 none
    "offer_tile",  # the tile on offer in the observer's window, -1 none
    "offer_from",  # relative seat that offered it, -1 none
    "turn",  # relative seat whose turn it is, -1 none (the hand is over)
    "no_win",
    "flowers0", "flowers1", "flowers2", "flowers3",  # flowers set aside, per relative seat
    "concealed0", "concealed1", "concealed2", "concealed3",  # concealed tiles held, per relative seat
)  # fmt: skip
NUM_FACTS = len(FACTS)
FACT_SEAT, FACT_PREVALENT, FACT_WALL, FACT_PHASE, FACT_DRAWN = range(5)
FACT_OFFER, FACT_FROM, FACT_TURN, FACT_NO_WIN, FACT_FLOWERS, FACT_CONCEALED = 5, 6, 7, 8, 9, 13
assert (
    FACTS[FACT_NO_WIN] == "no_win"
    and FACTS[FACT_FLOWERS] == "flowers0"
    and FACTS[FACT_CONCEALED] == "concealed0"
)

OK = 0
ERR_SHAPE = -1  #: an output array of :func:`views_kernel` does not match the batch

_MD = MAX_DISCARDS


@njit(forceinline=True)
def hand_kernel(ob, hand):
    """Fill ``hand[t]`` with the observer's concealed copies of tile ``t`` (the ``hand`` planes); returns the number
    of concealed tiles."""
    n = 0
    for t in range(34):
        c = 0
        for k in range(4):
            if ob[O_HAND + 34 * k + t] != 0:
                c += 1
        hand[t] = c
        n += c
    return n


@njit(forceinline=True)
def n_melds_at(ob, r):
    """How many ``meld_seq`` entries relative seat ``r`` has (up to the first that holds no kind code 1..5)."""
    n = 0
    while n < 4:
        code = int(ob[O_MSEQ + 12 * r + 3 * n])
        if code < SEQ_CHOW or code > SEQ_CONCEALED_KONG:
            break
        n += 1
    return n


@njit(forceinline=True)
def meld_at(ob, r, i):
    """Relative seat ``r``'s ``i``-th meld (``i < n_melds_at(ob, r)``) packed as :mod:`mjenv.melds` packs it;
    another seat's concealed kong (no face shown) as a concealed kong of tile 0; ``NO_MELD`` for an entry that is
    not a meld of its kind."""
    base = O_MSEQ + 12 * r + 3 * i
    code = int(ob[base])
    t = int(ob[base + 1]) - 1
    offer = int(ob[base + 2])
    if code == SEQ_CONCEALED_KONG:
        if r != 0:
            return pack_meld(KONG, 0, 0, 0)
        if t < 0 or t > 33:
            return NO_MELD
        return pack_meld(KONG, t, 0, 0)
    if t < 0 or t > 33 or offer < 1 or offer > 3:  # only a concealed kong has no offer
        return NO_MELD
    if code == SEQ_CHOW:
        if t >= 27 or t % 9 == 0 or t % 9 == 8:
            return NO_MELD
        return pack_meld(CHOW, t, offer, 0)
    if code == SEQ_PUNG:
        return pack_meld(PUNG, t, offer, 0)
    if code == SEQ_KONG or code == SEQ_ADDED_KONG:
        return pack_meld(KONG, t, offer, 1 if code == SEQ_ADDED_KONG else 0)
    return NO_MELD


@njit
def seat_melds_kernel(ob, r, out):
    """Relative seat ``r``'s melds (:func:`meld_at`, entries that are no meld left out) into ``out[0:n]``; returns
    ``n``."""
    n = 0
    for i in range(n_melds_at(ob, r)):
        m = meld_at(ob, r, i)
        if m != NO_MELD:
            out[n] = m
            n += 1
    return n


@njit
def meld_seq_code(m):
    """The ``meld_seq`` kind code of packed meld ``m`` (0 for ``NO_MELD``)."""
    kind = meld_kind(m)
    if kind == KONG:
        if meld_offer(m) == 0:
            return SEQ_CONCEALED_KONG
        return SEQ_ADDED_KONG if meld_added(m) else SEQ_KONG
    return kind


@njit(forceinline=True)
def face_shown(m, r):
    """Is the tile of relative seat ``r``'s packed meld ``m`` its face (all but another seat's concealed kong)?"""
    return r == 0 or meld_kind(m) != KONG or meld_offer(m) != 0


@njit(forceinline=True)
def n_discards_at(ob, r):
    """How many tiles relative seat ``r`` has discarded (the ``discard_seq`` entries before the first 0)."""
    n = 0
    while n < _MD and ob[O_DSEQ + _MD * r + n] != 0:
        n += 1
    return n


@njit(forceinline=True)
def discard_at(ob, r, j):
    """Relative seat ``r``'s ``j``-th discard: tile id + 1, negative when it was claimed, 0 for none (either
    encoding: a uint8 byte of 128 or more is an int8 two's complement)."""
    x = int(ob[O_DSEQ + _MD * r + j])
    if x >= 128:
        x -= 256
    return x


@njit(forceinline=True)
def visible_kernel(ob, hand, visible, by_others, count_claimed):
    """``visible[t]``: the copies of tile ``t`` the observer has seen (``hand``, from :func:`hand_kernel`; every
    meld's face; the unclaimed discards, and with ``count_claimed`` the claimed ones too), uncapped;
    ``by_others[t]``: another seat discarded ``t`` (a claimed discard counts only with ``count_claimed``)."""
    for t in range(34):
        visible[t] = hand[t]
        by_others[t] = False
    for r in range(4):
        for i in range(n_melds_at(ob, r)):
            m = meld_at(ob, r, i)
            if m == NO_MELD or not face_shown(m, r):
                continue
            t = meld_tile(m)
            kind = meld_kind(m)
            if kind == CHOW:
                visible[t - 1] += 1
                visible[t] += 1
                visible[t + 1] += 1
            else:
                visible[t] += 3 if kind == PUNG else 4
    for r in range(4):
        for j in range(_MD):
            x = discard_at(ob, r, j)
            if x == 0:
                break
            if count_claimed and x < 0:
                x = -x
            if 0 < x <= 34:
                visible[x - 1] += 1
                if r != 0:
                    by_others[x - 1] = True


@njit
def unseen_copies(v):
    """The copies of a tile not seen when ``v`` were seen: ``max(0, 4 - v)``."""
    return max(0, 4 - v)


@njit
def _first(ob, base, k):
    """The index of the first nonzero of ``ob[base:base + k]`` (a one-hot), -1 when all are zero."""
    for j in range(k):
        if ob[base + j] != 0:
            return j
    return -1


@njit
def facts_kernel(ob, facts):
    """Fill ``facts`` (``[NUM_FACTS]``, see :data:`FACTS`) with the one-hot and scalar pieces as integers."""
    facts[FACT_SEAT] = _first(ob, O_SEAT, 4)
    facts[FACT_PREVALENT] = _first(ob, O_PREV, 4)
    facts[FACT_WALL] = int(ob[O_WALL])
    facts[FACT_PHASE] = _first(ob, O_PHASE, 4)
    facts[FACT_DRAWN] = _first(ob, O_DRAWN, 34)
    facts[FACT_OFFER] = _first(ob, O_OFFER, 34)
    facts[FACT_FROM] = _first(ob, O_FROM, 4)
    facts[FACT_TURN] = _first(ob, O_TURN, 4)
    facts[FACT_NO_WIN] = int(ob[O_NOWIN])
    for r in range(4):
        facts[FACT_FLOWERS + r] = int(ob[O_FLOWERS + r])
        facts[FACT_CONCEALED + r] = int(ob[O_CONCEALED + r])


@njit
def view_row_kernel(ob, hand, melds, n_melds, visible, unseen, by_others, discards, n_discards, facts,
                    count_claimed):  # fmt: skip
    """The whole view of one row: :func:`hand_kernel` into ``hand[34]``, every seat's :func:`seat_melds_kernel`
    into ``melds[4, 4]`` (0 after the last) and ``n_melds[4]``, :func:`visible_kernel` into ``visible[34]`` and
    ``by_others[34]``, ``unseen[34]``, the discards into ``discards[4, MAX_DISCARDS]`` (:func:`discard_at`, 0 after
    the last) and ``n_discards[4]``, :func:`facts_kernel` into ``facts``. Returns the concealed-tile count."""
    n = hand_kernel(ob, hand)
    visible_kernel(ob, hand, visible, by_others, count_claimed)
    for t in range(34):
        unseen[t] = unseen_copies(visible[t])
    for r in range(4):
        melds[r, :] = 0
        n_melds[r] = seat_melds_kernel(ob, r, melds[r])
        nd = n_discards_at(ob, r)
        n_discards[r] = nd
        for j in range(_MD):
            discards[r, j] = discard_at(ob, r, j) if j < nd else 0
    facts_kernel(ob, facts)
    return n


@njit
def _is(a, n, k):
    """Do the first two dimensions of ``a`` have sizes ``n`` and ``k``?"""
    return a.shape[0] == n and a.shape[1] == k


@njit
def views_kernel(obs, hand, melds, n_melds, visible, unseen, by_others, discards, n_discards, facts,
                 count_claimed):  # fmt: skip
    """:func:`view_row_kernel` of each row of ``obs`` (``[N, OBS_SIZE]``) into row ``i`` of each output; returns
    ``OK``, or ``ERR_SHAPE`` (nothing written) when an array does not have the shape of the batch."""
    n = obs.shape[0]
    ok = obs.shape[1] == OBS_SIZE and _is(hand, n, 34) and _is(visible, n, 34) and _is(unseen, n, 34)
    ok = (
        ok
        and _is(by_others, n, 34)
        and _is(n_melds, n, 4)
        and _is(n_discards, n, 4)
        and _is(facts, n, NUM_FACTS)
    )
    ok = ok and _is(melds, n, 4) and melds.shape[2] == 4 and _is(discards, n, 4) and discards.shape[2] == _MD
    if not ok:
        return ERR_SHAPE
    for i in range(n):
        view_row_kernel(obs[i], hand[i], melds[i], n_melds[i], visible[i], unseen[i], by_others[i], discards[i],
                        n_discards[i], facts[i], count_claimed)  # fmt: skip
    return OK


class OwnView(NamedTuple):
    """The decoded views of a batch of ``N`` observations (:func:`decode_views`; seats relative to the observer)."""

    hand: np.ndarray  #: int8[N, 34]: concealed copies per tile
    melds: np.ndarray  #: int16[N, 4, 4]: each seat's melds packed (mjenv.melds), 0 after the last
    n_melds: np.ndarray  #: int64[N, 4]
    visible: np.ndarray  #: int64[N, 34]: copies seen (uncapped)
    unseen: np.ndarray  #: int64[N, 34]: max(0, 4 - visible)
    by_others: np.ndarray  #: bool[N, 34]: another seat discarded the tile
    discards: np.ndarray  #: int8[N, 4, MAX_DISCARDS]: tile + 1, negative when claimed, 0 after the last
    n_discards: np.ndarray  #: int64[N, 4]
    facts: np.ndarray  #: int64[N, NUM_FACTS] (FACT_* indices)


def decode_views(obs: np.ndarray, count_claimed: bool = False) -> OwnView:
    """The :class:`OwnView` of observations ``obs`` (``[N, OBS_SIZE]``, float32 or uint8): :func:`views_kernel`.
    ``count_claimed``: claimed discards count as visible (and as discarded by others) too."""
    obs = np.asarray(obs)
    if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
        raise ValueError(f"obs must have shape (N, {OBS_SIZE}), got {obs.shape}")
    check_obs_dtype(obs.dtype)
    n = obs.shape[0]
    v = OwnView(
        np.zeros((n, 34), np.int8),
        np.zeros((n, 4, 4), np.int16),
        np.zeros((n, 4), np.int64),
        np.zeros((n, 34), np.int64),
        np.zeros((n, 34), np.int64),
        np.zeros((n, 34), np.bool_),
        np.zeros((n, 4, _MD), np.int8),
        np.zeros((n, 4), np.int64),
        np.zeros((n, NUM_FACTS), np.int64),
    )
    if n:
        err = views_kernel(np.ascontiguousarray(obs), *v, bool(count_claimed))
        if err != OK:  # pragma: no cover - the arrays above have the batch's shapes
            raise ValueError("views_kernel: an output array does not match the batch")
    return v
