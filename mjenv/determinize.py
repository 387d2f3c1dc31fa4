"""Determinization for search: redeal the tiles one seat cannot see, keeping everything it can.

A search agent that plays hands out from its own decisions (perfect-information Monte Carlo, the sampling step of
information-set MCTS) needs tables it could be at: the same observation, another hidden state. Given a table
(``int32[STATE_SIZE]``, :mod:`mjenv.game`) at ``seat``'s own turn, :func:`determinize_kernel` pools the hidden
tiles (the other three seats' concealed tiles, the faces of their concealed kongs and the tiles left in the
wall), gives each of those concealed kongs a tile all four of whose copies are in the pool, deals each other seat
as many concealed tiles as it held, and lays the rest, flowers included, back into the wall in a uniformly random
order. Melds, discards, flowers set aside, the wall's length, scores and every field ``seat`` observes stay as
they were (``observe_kernel`` gives the same observation before and after), and the other seats' cached waits are
recomputed, so the table plays on with :func:`mjenv.game.step_kernel` as any other.

The result depends only on what ``seat`` observes, on ``seed`` and on ``expect``: the pool is counted, never
read in order, its multiset is all tiles less the visible ones, and the hands' sizes, the wall's length and which
flowers are still in it are visible, so the real hands and wall order leak nothing into it (a test redeals a
redealt table and gets the same table). With ``expect`` all zeros, the hands are dealt uniformly: a sample from
the uniform prior over the hidden states consistent with the observation, not from the posterior (the other
seats' past choices are not weighed), as in perfect-information Monte Carlo. ``expect[k, t]``, a belief model's
expected count of tile ``t`` in seat ``k``'s hand, deals seat ``k`` tile by tile, tile ``t`` with odds
``expect[k, t]`` less the copies of ``t`` already dealt to ``k`` (while a copy is hidden), then, once the
expected tiles are dealt, uniformly: an approximate sample of that belief, exactly the real hand when ``expect``
holds the real counts.

Only the turn phase of ``seat`` (``PHASE == PH_TURN``, ``CUR == TURN == seat``) and the shared wall are
supported: in a claim window, the answers already given by other seats are hidden and would no longer match
redealt hands, and with private walls each seat's part has its own length.
"""

from __future__ import annotations

import numpy as np

from mjenv import game as G
from mjenv._jit import njit
from mjenv.hand import win_tables
from mjenv.melds import KONG, meld_kind, meld_offer, meld_tile, pack_meld
from mjenv.rng import GOLDEN, splitmix64_mix

OK = 0
ERR_PHASE = -1  #: not ``seat``'s own turn (a claim or rob window, the hand over, another seat to act)
ERR_PRIVATE_WALLS = -2  #: private walls are not supported


@njit
def _shuffle(a, n, ctr):
    """Fisher-Yates shuffle of ``a[:n]`` from the splitmix64 counter ``ctr``; returns the advanced counter."""
    for i in range(n - 1, 0, -1):
        ctr = ctr + GOLDEN
        j = np.int64(((splitmix64_mix(ctr) >> np.uint64(32)) * np.uint64(i + 1)) >> np.uint64(32))
        t = a[i]
        a[i] = a[j]
        a[j] = t
    return ctr


@njit
def determinize_kernel(state, seat, seed, keep_hands, expect, suit_win, honor_win):
    """Redeal in place what ``seat`` cannot see (module docstring); ``seed`` an int64 >= 0, the tables those of
    :func:`mjenv.hand.win_tables`; ``expect`` ``float64[4, 34]``: each seat's expected count of each tile (a belief
    model's; a row of zeros for uniform). Returns ``OK``, or ``ERR_PHASE`` / ``ERR_PRIVATE_WALLS`` (state untouched).

    ``keep_hands``: only the wall's order is redrawn (the other seats keep their hands and kong faces). The wall's
    order is uniform given the hands, so this samples exactly the hidden state's posterior given the hands; but it
    reads the other seats' hands, so it is for training labels and diagnostics only, never for a policy."""
    if state[G.PRIVATE_WALLS] != 0:
        return ERR_PRIVATE_WALLS
    if state[G.PHASE] != G.PH_TURN or state[G.CUR] != seat or state[G.TURN] != seat:
        return ERR_PHASE
    cnt = np.zeros(34, np.int64)
    size = np.zeros(4, np.int64)
    for k in range(4):
        if k == seat or keep_hands:
            continue
        for t in range(34):
            c = state[G.HAND + 34 * k + t]
            size[k] += c
            cnt[t] += c
        for j in range(state[G.N_MELDS + k]):  # the face of a concealed kong is hidden too
            mv = state[G.MELDS + 4 * k + j]
            if meld_kind(mv) == KONG and meld_offer(mv) == 0:
                cnt[meld_tile(mv)] += 4
    flowers = np.zeros(8, np.int64)  # which flowers are in the wall (not where: that is hidden too)
    front, back = state[G.FRONT], state[G.BACK]
    for i in range(front, back):
        t = state[G.WALL + i]
        if t >= 34:
            flowers[t - 34] = 1
        else:
            cnt[t] += 1
    ctr = np.uint64(seed)
    # a new face for each concealed kong: uniform over the tiles all four of whose copies are hidden
    for k in range(4):
        if k == seat or keep_hands:
            continue
        for j in range(state[G.N_MELDS + k]):
            mv = state[G.MELDS + 4 * k + j]
            if meld_kind(mv) == KONG and meld_offer(mv) == 0:
                n4 = 0
                for t in range(34):
                    if cnt[t] == 4:
                        n4 += 1
                ctr = ctr + GOLDEN
                r = np.int64(((splitmix64_mix(ctr) >> np.uint64(32)) * np.uint64(n4)) >> np.uint64(32))
                for t in range(34):
                    if cnt[t] == 4:
                        if r == 0:
                            state[G.MELDS + 4 * k + j] = pack_meld(KONG, t, 0, 0)
                            cnt[t] = 0
                            break
                        r -= 1
    drawn = np.zeros(34)
    for k in range(4):  # each other seat's hand, tile by tile
        if k == seat or keep_hands:
            continue
        tot = 0.0
        for t in range(34):
            tot += expect[k, t]
            drawn[t] = 0.0
            state[G.HAND + 34 * k + t] = 0
        for _ in range(size[k]):
            # with a belief: tile t with odds expect[k, t] less the copies already dealt to k (while any is left);
            # without one, or once the expected tiles are dealt: every hidden copy alike
            z = 0.0
            if tot > 0:
                for t in range(34):
                    if cnt[t] > 0 and expect[k, t] > drawn[t]:
                        z += expect[k, t] - drawn[t]
            by_counts = z <= 0
            if by_counts:
                for t in range(34):
                    z += cnt[t]
            ctr = ctr + GOLDEN
            u = np.float64(splitmix64_mix(ctr) >> np.uint64(11)) * (1.0 / 9007199254740992.0) * z
            pick = -1
            for t in range(34):
                wt = cnt[t] if by_counts else (expect[k, t] - drawn[t] if cnt[t] > 0 else 0.0)
                if wt > 0:
                    pick = t
                    u -= wt
                    if u < 0:
                        break
            cnt[pick] -= 1
            drawn[pick] += 1.0
            state[G.HAND + 34 * k + pick] += 1
    rest = np.empty(back - front, np.int64)
    m = 0
    for t in range(34):
        for _ in range(cnt[t]):
            rest[m] = t
            m += 1
    for f in range(8):
        if flowers[f] != 0:
            rest[m] = 34 + f
            m += 1
    _shuffle(rest, m, ctr)
    for i in range(m):
        state[G.WALL + front + i] = rest[i]
    for k in range(4):
        if k != seat:
            G.update_waits_kernel(state, k, suit_win, honor_win)
    return OK


def _expect_array(expect, shape: tuple[int, ...]) -> np.ndarray:
    """``expect`` as a C-contiguous float64 array of ``shape`` (zeros for None: the uniform prior); ``ValueError``
    unless it has that shape and finite, non-negative values."""
    if expect is None:
        return np.zeros(shape)
    e = np.ascontiguousarray(expect, dtype=np.float64)
    if e.shape != shape or not np.isfinite(e).all() or (e < 0).any():
        dims = ", ".join(map(str, shape))
        raise ValueError(f"expect must be finite, non-negative float[{dims}], got {e.dtype}{e.shape}")
    return e


def determinize(
    state: np.ndarray, seat: int, seed: int, keep_hands: bool = False, expect: np.ndarray | None = None
) -> None:
    """Validated :func:`determinize_kernel` on one table: raises ``ValueError`` (state unchanged) when it is not
    ``seat``'s own turn or the table has private walls."""
    G.check_state(state)
    if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= int(seat) <= 3:
        raise ValueError(f"seat must be 0..3, got {seat!r}")
    expect = _expect_array(expect, (4, 34))
    err = determinize_kernel(state, int(seat), G.check_seed(seed), bool(keep_hands), expect, *win_tables())
    if err == ERR_PRIVATE_WALLS:
        raise ValueError("determinize does not support private walls")
    if err == ERR_PHASE:
        raise ValueError(f"determinize needs seat {seat}'s own turn (PH_TURN, CUR == TURN == seat)")


@njit
def determinize_batch_kernel(states, rows, seats, seeds, keep_hands, expect, suit_win, honor_win):
    """:func:`determinize_kernel` of ``states[rows[i]]`` for ``seats[i]``, ``seeds[i]`` and ``expect[i]``
    (``float64[len(rows), 4, 34]``); returns the number of rows that failed (those are untouched)."""
    bad = 0
    for i in range(rows.shape[0]):
        err = determinize_kernel(
            states[rows[i]], seats[i], seeds[i], keep_hands, expect[i], suit_win, honor_win
        )
        bad += err != OK
    return bad


def determinize_rows(
    states: np.ndarray, rows, seeds, expect: np.ndarray | None = None, keep_hands: bool = False
) -> None:
    """Validated :func:`determinize_batch_kernel` for the seat to act at each of ``states[rows]`` (e.g. the
    ``states`` of a :class:`mjenv.vector.VectorEnv` whose tables ``rows`` were copied for rollouts: the acting
    seat's mask and observation stay valid; the ``oracle`` block, if the env fills one, is not updated).

    ``seeds``: one int in [0, 2**63) per row; ``expect``: ``float[len(rows), 4, 34]`` or None (uniform). Raises
    ``ValueError`` before changing anything when a row is not at its acting seat's own turn, the tables have
    private walls, or an argument has the wrong shape or values."""
    if not isinstance(states, np.ndarray) or states.dtype != np.int32 or states.ndim != 2:
        raise ValueError("states must be an int32[N, STATE_SIZE] array")
    if states.shape[1] != G.STATE_SIZE or not states.flags.c_contiguous:
        raise ValueError(
            f"states must be a C-contiguous int32[N, {G.STATE_SIZE}] array, got shape {states.shape}"
        )
    r = np.asarray(rows)
    if r.ndim != 1 or (r.size and not np.issubdtype(r.dtype, np.integer)):
        raise ValueError(f"rows must be a 1-D integer array, got {r.dtype}{r.shape}")
    r = r.astype(np.int64)
    if r.size and (r.min() < 0 or r.max() >= states.shape[0]):
        raise ValueError(f"rows must be in 0..{states.shape[0] - 1}")
    s = np.asarray(seeds)
    if s.shape != r.shape or (s.size and not np.issubdtype(s.dtype, np.integer)) or (s < 0).any():
        raise ValueError(f"seeds must be {r.size} non-negative integers, got {s.dtype}{s.shape}")
    s = s.astype(np.int64)
    e = _expect_array(expect, (r.size, 4, 34))
    sub = states[r]
    if (sub[:, G.PRIVATE_WALLS] != 0).any():
        raise ValueError("determinize does not support private walls")
    turn = (sub[:, G.PHASE] == G.PH_TURN) & (sub[:, G.CUR] == sub[:, G.TURN]) & (sub[:, G.CUR] >= 0)
    if not turn.all():
        raise ValueError(f"rows {r[~turn][:8].tolist()} are not at the acting seat's own turn (PH_TURN)")
    seats = sub[:, G.CUR].astype(np.int64)
    bad = determinize_batch_kernel(states, r, seats, s, bool(keep_hands), e, *win_tables())
    if bad:  # unreachable after the checks above
        raise RuntimeError(f"determinize failed at {bad} rows")
