"""What one player legally knows, as one flat ``float32[OBS_SIZE]`` tensor with named views.

Rules
-----
MCR (``docs/rules.md``; source 000, 行牌): a player sees their own concealed tiles and flowers, every player's
exposed melds, discards (in order) and flowers, how many tiles each player holds, the winds, how many tiles
the wall has left, the tile on offer and who offered it, and whose turn it is. Other players' concealed tiles,
the order of the wall, the face of a concealed kong (杠 face down) and claims not yet revealed are hidden.

Specification in mjenv
----------------------
``FEATURES_VERSION = "v0"``. Players are relative to the observer: index 0 = self, 1 = next player (下家),
2 = across, 3 = previous player (上家). Pieces in order (``OBS_PIECES``; ``views(obs)`` gives named reshaped
views of one flat vector, the OpenSpiel Observer idea)::

    name            shape        meaning
    hand            (4, 34)      own concealed tiles: [k, t] = 1 if at least k+1 copies of t
    drawn           (34,)        one-hot of the tile just drawn on the observer's own turn
    melds           (4, 4, 34)   [p, k, t] = 1 if p's melds hold at least k+1 copies of t (a concealed kong
                                 only for the observer's own; others' concealed kongs are counted in meld_seq)
    discards        (4, 4, 34)   [p, k, t] = 1 if p has discarded at least k+1 copies of t (claimed ones too)
    discard_seq     (4, 48)      p's i-th discard: tile id + 1, negative when a player claimed it, 0 = none
    meld_seq        (4, 4, 3)    p's i-th meld: kind (1 chow, 2 pung, 3 exposed kong, 4 added kong,
                                 5 concealed kong), tile id + 1 (chow: middle tile; 0 for another
                                 player's concealed kong), offer (mjenv.melds)
    flowers         (4,)         flowers set aside
    concealed       (4,)         number of concealed tiles held
    seat_wind       (4,)         one-hot of the observer's seat wind (E S W N)
    prevalent_wind  (4,)         one-hot of the prevailing wind
    wall            (1,)         tiles left in the wall
    offer_tile      (34,)        one-hot of the tile on offer (a discard, or the tile of an added kong), only
                                 for the seat being asked in that window
    offer_from      (4,)         one-hot of who offered it (idem)
    phase           (4,)         one-hot: turn after a draw, turn after a chow/pung (discard only),
                                 claim window on a discard, robbing window on an added kong; the window phases
                                 only for the seat being asked (see "Open windows" below)
    turn            (4,)         one-hot of the player whose turn it is (the discarder in a window)
    no_win          (1,)         1 when the observer lost the right to win this hand (penalty mode)

Open windows: who is asked depends on hidden hands, so only the seat being asked sees a claim or robbing window
(phase, offer_tile, offer_from). With ``claim_windows="claimants"`` (the default: only seats with a claim are
asked) a seat that is not asked sees the table as it will be if every seat asked passes
(``mjenv.game.unclaimed_view_kernel``): the next player has drawn and is to play (after an added kong: the kong
stands and its declarer has drawn the replacement), which is what it sees after a discard nobody can claim.
That draw is shown as one tile that is no flower, so the view never tells the order of the wall. What is left
(docs/rules.md, "Claim windows reveal nothing"): when the next player's draw is a flower, a discard nobody can
claim shows it set aside at once and an open window does not; and the seat that would draw (the discarder's
next player; the kong declarer) cannot be shown its draw, so it sees the discard (or its declared kong) with no
window and ``turn`` at the discarder, where a discard nobody can claim would have it to act (which
``agent_selection`` tells it anyway). With ``claim_windows="all"`` a window opens after every discard, so every
seat not being asked sees the table as it stands, with no window.

Compact encoding (``uint8``): every feature is an integer in -34..144 (``wall`` <= 144, ``meld_seq`` tile ids
<= 34, counts <= 14), so the same kernel (compiled by Numba per dtype, one implementation) fills a ``uint8``
buffer exactly; the only negative feature, ``discard_seq`` (-34..-1 for claimed discards), is stored as int8
two's complement (``256 + v``). :func:`decode` turns a uint8 observation back into the float32 one, and
:func:`views` reads ``discard_seq`` of a uint8 observation as ``int8`` (a view, no copy), so code written
against the views works for both dtypes. ``VectorEnv(..., obs_dtype=np.uint8)`` emits this encoding.
"""

from __future__ import annotations

import numpy as np

from mjenv import game as G
from mjenv._jit import njit
from mjenv.melds import meld_added, meld_kind, meld_offer, meld_tile

# The kernels below freeze mjenv.game's state offsets at compile time; numba's on-disk cache does not see
# changes in other files, so mjenv._jit drops the package's cached kernels whenever a kernel module changes.

FEATURES_VERSION = "v0"

OBS_PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("hand", (4, 34)),
    ("drawn", (34,)),
    ("melds", (4, 4, 34)),
    ("discards", (4, 4, 34)),
    ("discard_seq", (4, G.MAX_DISCARDS)),
    ("meld_seq", (4, 4, 3)),
    ("flowers", (4,)),
    ("concealed", (4,)),
    ("seat_wind", (4,)),
    ("prevalent_wind", (4,)),
    ("wall", (1,)),
    ("offer_tile", (34,)),
    ("offer_from", (4,)),
    ("phase", (4,)),
    ("turn", (4,)),
    ("no_win", (1,)),
)


def _offsets(pieces: tuple[tuple[str, tuple[int, ...]], ...]) -> tuple[dict[str, int], int]:
    """The flat offset of each named piece, and the total size (the observation's and the oracle block's)."""
    offsets, o = {}, 0
    for name, shape in pieces:
        offsets[name] = o
        o += int(np.prod(shape))
    return offsets, o


OBS_OFFSETS, OBS_SIZE = _offsets(OBS_PIECES)
O_HAND, O_DRAWN, O_MELDS, O_DISCARDS = (OBS_OFFSETS[k] for k in ("hand", "drawn", "melds", "discards"))
O_DSEQ, O_MSEQ, O_FLOWERS, O_CONCEALED = (
    OBS_OFFSETS[k] for k in ("discard_seq", "meld_seq", "flowers", "concealed")
)
O_SEAT, O_PREV, O_WALL, O_OFFER = (
    OBS_OFFSETS[k] for k in ("seat_wind", "prevalent_wind", "wall", "offer_tile")
)
O_FROM, O_PHASE, O_TURN, O_NOWIN = (OBS_OFFSETS[k] for k in ("offer_from", "phase", "turn", "no_win"))
_MD = G.MAX_DISCARDS


# Speed (the VectorEnv writes one observation per decision): indices are cast to unsigned (``_U``) so that numba
# emits no negative-index wraparound code for them, the per-player writer is inlined, and the hand planes and the
# signs of discard_seq are written without branches (``benchmarks/lab/vector_ab.py --kernel``; docs/performance-log.md).
_U = np.uint64


@njit(inline="always")
def _observe_player(state, r, p, obs):
    """Public facts of player ``p`` (relative index ``r``) and, for r == 0, the concealed-kong faces (the
    concealed-tile counts are written by :func:`observe_kernel`)."""
    mb = O_MELDS + 136 * r
    for i in range(state[_U(G.N_MELDS + p)]):
        m = state[_U(G.MELDS + 4 * p + i)]
        kind = meld_kind(m)
        t = meld_tile(m)
        offer = meld_offer(m)
        code = kind
        if kind == 3:
            code = 5 if offer == 0 else (4 if meld_added(m) else 3)
        base = _U(O_MSEQ + 12 * r + 3 * i)
        obs[base] = code
        obs[base + _U(2)] = offer
        if code == 5 and r != 0:
            continue
        obs[base + _U(1)] = t + 1
        if kind == 1:
            for d in range(-1, 2):
                _add_copy(obs, mb, t + d)
        else:
            for _ in range(4 if kind == 3 else 3):
                _add_copy(obs, mb, t)
    nd = min(state[_U(G.N_DISC + p)], _MD)
    db = O_DISCARDS + 136 * r
    seq = _U(O_DSEQ + _MD * r)
    src = _U(G.DISC + _MD * p)
    for i in range(nd):
        v = state[src + _U(i)]
        t = v & 63
        obs[seq + _U(i)] = (t + 1) * (1 - ((v >> 5) & 2))  # -(t + 1) when claimed (CLAIMED_BIT = 64)
        _add_copy(obs, db, t)
    obs[_U(O_FLOWERS + r)] = state[_U(G.FLOWERS + p)]


@njit
def _add_copy(obs, base, t):
    """Count one more copy of tile ``t`` in the "at least k+1 copies" planes at ``obs[base:base + 136]``."""
    k = 0
    while k < 3 and obs[_U(base + 34 * k + t)] != 0:
        k += 1
    obs[_U(base + 34 * k + t)] = 1


@njit
def observe_kernel(state, seat, obs):
    """Fill ``obs`` (``float32[OBS_SIZE]`` or the compact ``uint8``) with what ``seat`` knows (see the module
    docstring). ``ValueError`` for a seat outside 0..3."""
    if seat < 0 or seat > 3:  # the indices below are unsigned: never read outside the state
        raise ValueError("observe_kernel: seat must be 0..3")
    ph = state[G.PHASE]
    if (  # the seat to act (almost every call) fails the first test
        seat != state[G.CUR]
        and (ph == G.PH_CLAIM or ph == G.PH_ROB)
        and state[G.ASK_ALL] == 0
        and seat != G.window_drawer_kernel(state)
    ):
        # only the seats with a claim are asked: a seat not being asked sees the table as it will be if the
        # window closes unclaimed (what it sees after a discard nobody can claim), since an open window would
        # tell that some seat holds a claim (with claim_windows="all" every window opens: nothing to hide)
        _observe_unclaimed(state, seat, obs)
    else:
        _observe_table(state, seat, obs)


@njit
def _observe_unclaimed(state, seat, obs):
    """The observation of the table as it will be if the open window closes unclaimed (a call of its own, so that
    the scratch state is allocated off the hot path)."""
    view = np.empty(G.STATE_SIZE, np.int32)
    G.unclaimed_view_kernel(state, view)
    _observe_table(view, seat, obs)


@njit
def _observe_table(state, seat, obs):
    """The body of :func:`observe_kernel`: the observation of ``state`` as it stands."""
    obs[:] = 0
    h = _U(G.HAND + 34 * seat)
    for t in range(34):
        c = state[h + _U(t)]
        o = _U(O_HAND + t)
        obs[o] = c > 0
        obs[o + _U(34)] = c > 1
        obs[o + _U(68)] = c > 2
        obs[o + _U(102)] = c > 3
    for r in range(4):
        _observe_player(state, r, (seat + r) % 4, obs)
    ph = state[G.PHASE]
    turn = state[G.TURN]
    if ph == G.PH_OVER:  # a won or aborted hand: the winner may hold the winning tile, an abort anything
        for r in range(4):
            h = _U(G.HAND + 34 * ((seat + r) % 4))
            n_conc = 0
            for t in range(34):
                n_conc += state[h + _U(t)]
            obs[_U(O_CONCEALED + r)] = n_conc
    else:  # while the hand runs, a player holds 13 tiles less 3 per meld, plus the drawn or claimed one
        for r in range(4):
            p = (seat + r) % 4
            obs[_U(O_CONCEALED + r)] = 13 - 3 * state[_U(G.N_MELDS + p)] + (ph == G.PH_TURN and turn == p)
    if ph == G.PH_TURN and turn == seat and state[G.DRAWN] >= 0:
        obs[_U(O_DRAWN + state[G.DRAWN])] = 1
    obs[_U(O_SEAT + (seat - state[G.DEALER]) % 4)] = 1
    obs[_U(O_PREV + state[G.PREVALENT])] = 1
    obs[O_WALL] = state[G.BACK] - state[G.FRONT]
    # a claim or robbing window is shown only to the seat being asked now (the others see the table after the
    # window, see observe_kernel, or as it stands: the discard, or the declared kong, and no phase)
    if ph == G.PH_TURN:
        obs[_U(O_PHASE + state[G.JUST_CLAIMED])] = 1
    elif state[G.CUR] == seat and (ph == G.PH_CLAIM or ph == G.PH_ROB):
        obs[_U(O_PHASE + (2 if ph == G.PH_CLAIM else 3))] = 1
        obs[_U(O_OFFER + state[G.OFFER_TILE])] = 1
        obs[_U(O_FROM + (state[G.OFFER_SEAT] - seat) % 4)] = 1
    if ph != G.PH_OVER:
        obs[_U(O_TURN + (turn - seat) % 4)] = 1
    obs[O_NOWIN] = state[G.NO_WIN + seat]


@njit
def observe_mask_kernel(state, seat, active, obs, mask):
    """:func:`observe_kernel` and, when ``active``, ``game.legal_mask_kernel`` into ``mask`` (else all zero), in
    one call (the AEC front's ``observe``). Returns the number of legal actions."""
    observe_kernel(state, seat, obs)
    if active:  # an int8 mask as bool: one compiled legal_mask_kernel for both fronts (same bytes)
        return G.legal_mask_kernel(state, seat, mask.view(np.bool_))
    mask[:] = 0
    return 0


OBS_DTYPES = (np.dtype(np.float32), np.dtype(np.uint8))


def check_obs_dtype(dtype: object) -> np.dtype:
    """``dtype`` as a numpy dtype if it is one of :data:`OBS_DTYPES` (float32, uint8), else ``ValueError``."""
    try:
        dt = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"obs_dtype must be a numpy dtype (float32 or uint8), got {dtype!r}") from None
    if dt not in OBS_DTYPES:
        raise ValueError(f"obs_dtype must be float32 or uint8, got {dt}")
    return dt


def decode(obs: np.ndarray) -> np.ndarray:
    """A float32 copy of an observation (or batch ``[..., OBS_SIZE]``) of either dtype: the compact uint8
    encoding is decoded exactly (``discard_seq`` as int8 two's complement); float32 input is copied."""
    obs = np.asarray(obs)
    if obs.shape[-1:] != (OBS_SIZE,):
        raise ValueError(f"observation must end in dimension {OBS_SIZE}, got shape {obs.shape}")
    dt = check_obs_dtype(obs.dtype)
    out = obs.astype(np.float32)
    if dt == np.uint8:
        sl = slice(O_DSEQ, O_DSEQ + 4 * _MD)
        out[..., sl] = obs[..., sl].view(np.int8)
    return out


def _named_views(
    x: np.ndarray, pieces, offsets: dict[str, int], size: int, what: str
) -> dict[str, np.ndarray]:
    """Named reshaped views (no copies) of the pieces of a flat layout (the last dimension of ``x``)."""
    if x.shape[-1:] != (size,):
        raise ValueError(f"{what} must end in dimension {size}, got shape {x.shape}")
    lead = x.shape[:-1]
    return {
        name: x[..., offsets[name] : offsets[name] + int(np.prod(shape))].reshape(*lead, *shape)
        for name, shape in pieces
    }


def views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named reshaped views (no copies) of a flat observation (or a batch ``[..., OBS_SIZE]``).

    For the compact uint8 encoding, ``discard_seq`` is viewed as ``int8`` so its values equal the float32 ones.
    """
    obs = np.asarray(obs)
    out = _named_views(obs, OBS_PIECES, OBS_OFFSETS, OBS_SIZE, "observation")
    if obs.dtype == np.uint8:
        out["discard_seq"] = out["discard_seq"].view(np.int8)
    return out


# ------------------------------------------------------------------------------------------------ oracle block
# Hidden information for a training-only critic (PerfectDou's perfect-training-imperfect-execution, Suphx's
# oracle): ``VectorEnv(..., oracle=True)`` fills ``env.oracle[i]`` with this block for the chair to act at table
# ``i``. It is never part of an observation; no policy and no evaluation reads it (tests/test_layering.py checks
# that only mjenv.vector fills it and only train/ reads it). Seats are relative to that chair as in the
# observation (0 = self, 1 = next player, 2 = across, 3 = previous player)::
#
#     name         shape     meaning
#     hands        (4, 34)   concealed tiles of every seat, counts
#     waits        (4, 34)   1 where the tile completes the seat's cached waiting hand (mjenv.game WAITS: the
#                            13-tile hand after its last discard, deal or kong; all zero when not waiting)
#     wall_counts  (34,)     copies of each tile left in the wall (flowers not counted)
#     wall_next    (4, 34)   tiles each seat draws in its next ORACLE_NEXT_DRAWS normal draws if nobody claims
#                            (from the turn after the current one in play order; flowers skipped)
#     wall_seq     (144,)    the wall left, in draw order (``mjenv.game.wall_tiles``): tile id + 1 (flowers
#                            35..42), 0 after the end; with private walls each seat's part in wall order
#
# Every value is an integer in 0..42, so the kernel fills float32 or uint8 buffers alike (one implementation).
ORACLE_NEXT_DRAWS = 4
ORACLE_PIECES: tuple[tuple[str, tuple[int, ...]], ...] = (
    ("hands", (4, 34)),
    ("waits", (4, 34)),
    ("wall_counts", (34,)),
    ("wall_next", (4, 34)),
    ("wall_seq", (144,)),
)
ORACLE_OFFSETS, ORACLE_SIZE = _offsets(ORACLE_PIECES)
_R_HANDS, _R_WAITS, _R_WCOUNT, _R_WNEXT, _R_WSEQ = (
    ORACLE_OFFSETS[k] for k in ("hands", "waits", "wall_counts", "wall_next", "wall_seq")
)


@njit
def oracle_kernel(state, seat, out):
    """Fill ``out`` (``[ORACLE_SIZE]``, float32 or uint8) with the hidden-state block of ``seat``'s decision
    (see "oracle block" above). Training critics only: never a policy input. ``ValueError`` for a bad seat."""
    if seat < 0 or seat > 3:
        raise ValueError("oracle_kernel: seat must be 0..3")
    out[:] = 0
    for r in range(4):
        p = (seat + r) % 4
        for t in range(34):
            out[_R_HANDS + 34 * r + t] = state[G.HAND + 34 * p + t]
        lo = state[G.WAITS + 2 * p]
        hi = state[G.WAITS + 2 * p + 1]
        for t in range(27):
            out[_R_WAITS + 34 * r + t] = (lo >> t) & 1
        for t in range(27, 34):
            out[_R_WAITS + 34 * r + t] = (hi >> (t - 27)) & 1
    first = (state[G.TURN] + 1) % 4  # the seat of the next normal draw if nobody claims
    k = 0
    if state[G.PRIVATE_WALLS] != 0:
        part = 36 if state[G.HAS_FLOWERS] != 0 else 34
        for p in range(4):
            left = state[G.PWALL + p]
            r = (p - seat) % 4
            drawn = 0
            for j in range(left):  # seat p pops its part from the end
                t = state[G.WALL + part * p + left - 1 - j]
                if t < 34:
                    out[_R_WCOUNT + t] += 1
                    if drawn < ORACLE_NEXT_DRAWS:
                        out[_R_WNEXT + 34 * r + t] += 1
                        drawn += 1
            for i in range(left):  # wall order, as mjenv.game.wall_tiles
                out[_R_WSEQ + k] = state[G.WALL + part * p + i] + 1
                k += 1
    else:
        front = state[G.FRONT]
        back = state[G.BACK]
        d = 0  # normal draws counted so far (flowers are replaced from the back: not a seat's own draw)
        for i in range(front, back):
            t = state[G.WALL + i]
            out[_R_WSEQ + k] = t + 1
            k += 1
            if t < 34:
                out[_R_WCOUNT + t] += 1
                if d < 4 * ORACLE_NEXT_DRAWS:
                    out[_R_WNEXT + 34 * ((first + d - seat) % 4) + t] += 1
                    d += 1


@njit
def oracle_rows_kernel(states, seats, out):
    """``out[i]`` = :func:`oracle_kernel` of ``states[i]`` for chair ``seats[i]`` (all zero where the seat is -1,
    a stopped table)."""
    for i in range(states.shape[0]):
        if seats[i] < 0:
            out[i] = 0
        else:
            oracle_kernel(states[i], seats[i], out[i])


def oracle_views(block: np.ndarray) -> dict[str, np.ndarray]:
    """Named reshaped views (no copies) of an oracle block (or a batch ``[..., ORACLE_SIZE]``)."""
    return _named_views(np.asarray(block), ORACLE_PIECES, ORACLE_OFFSETS, ORACLE_SIZE, "oracle block")


def warmup() -> float:
    """Compile (or load from the on-disk cache) the observation kernels of the single-table fronts, for the
    argument types they call them with (Python ints: ``int64``); returns seconds taken. Run by
    :func:`mjenv.warmup` after :func:`mjenv.game.warmup`."""
    import time

    t0 = time.perf_counter()
    st = G.new_state()
    G.reset_kernel(st, 0, 0, 0, G.rules_block(), *G.win_tables())
    obs = np.zeros(OBS_SIZE, np.float32)
    observe_kernel(st, int(st[G.CUR]), obs)
    observe_mask_kernel(st, int(st[G.CUR]), True, obs, np.zeros(G.NUM_ACTIONS, np.int8))
    return time.perf_counter() - t0
