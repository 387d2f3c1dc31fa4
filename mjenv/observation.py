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
                                 only for the seat being asked (all zero for everyone else while a window is
                                 open: who is asked depends on hidden hands)
    turn            (4,)         one-hot of the player whose turn it is (the discarder in a window)
    no_win          (1,)         1 when the observer lost the right to win this hand (penalty mode)

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
OBS_OFFSETS: dict[str, int] = {}
_o = 0
for _name, _shape in OBS_PIECES:
    OBS_OFFSETS[_name] = _o
    _o += int(np.prod(_shape))
OBS_SIZE = _o
del _o, _name, _shape
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
# signs of discard_seq are written without branches (``benchmarks/vector_ab.py --kernel``; docs/performance.md).
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
    # a claim or robbing window is shown only to the seat being asked now: to anyone else an open window would
    # tell that some seat holds a claim (who is asked depends on hidden hands), so they see the discard (or the
    # declared kong) with no window and no phase
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


def views(obs: np.ndarray) -> dict[str, np.ndarray]:
    """Named reshaped views (no copies) of a flat observation (or a batch ``[..., OBS_SIZE]``).

    For the compact uint8 encoding, ``discard_seq`` is viewed as ``int8`` so its values equal the float32 ones.
    """
    obs = np.asarray(obs)
    if obs.shape[-1:] != (OBS_SIZE,):
        raise ValueError(f"observation must end in dimension {OBS_SIZE}, got shape {obs.shape}")
    lead = obs.shape[:-1]
    out = {
        name: obs[..., OBS_OFFSETS[name] : OBS_OFFSETS[name] + int(np.prod(shape))].reshape(*lead, *shape)
        for name, shape in OBS_PIECES
    }
    if obs.dtype == np.uint8:
        out["discard_seq"] = out["discard_seq"].view(np.int8)
    return out
