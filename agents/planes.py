"""Tile planes of one player's observation for the convolutional network of :mod:`agents.nn` (``arch="planes"``).

Why
---
:mod:`agents.features` hands the network the rule agent's own reasoning (target shanten after each discard and
so on), so a network trained on it mostly sees the world as its teacher does. These planes are the observation
itself, laid out per tile type (34 columns, one row per plane), for a network that has to learn what matters
from the tiles (the tile-plane networks of Suphx, the Botzone course and CSM_TileResNet do this).

What (``PLANES`` rows of 34 columns and ``SCALARS`` per decision; from the observation and the legal mask
only, never the table state: every value is a small integer, so the uint8 output is exact)
----------------------------------------------------------------------------------------------------------
Planes, per tile type ``t``: own concealed copies (``hand``: at least k+1 copies, k = 0..3), the drawn tile,
the tile on offer; each player's (self, next, across, previous) melded copies (at least k+1) and discarded
copies (at least k+1, claimed ones too); each player's last four discards in order (``recent``: row
``4 * p + j`` marks the tile of p's (j+1)-th latest discard); each player's first six discards (``early``);
the copies visible to the player (``visible``, at least k+1: own hand, every exposed meld, unclaimed discards;
:func:`mjenv.view.visible_kernel`); the seat wind and the prevailing wind (on the wind's tile column). Then the
legal mask's tile actions (``legal``: discard, concealed kong, added kong of ``t``).

Scalars: phase (one-hot), tiles left in the wall, each player's concealed-tile count, flowers, melds and
discards, the seat and prevailing winds (one-hot), who offered the tile on offer, whose turn it is, the no-win
flag; then the legal mask's seven other actions (chow low / middle / high, pung, kong, win, pass).

The ``legal`` planes and the last seven scalars come from the mask (all zero for ``masks=None``, a row where the
player is not asked); the network reads them in its policy heads only, so its value is a function of the
observation alone.

``PLANES_ID`` names this layout; :func:`agents.nn.features_version` includes it, so a checkpoint made for other
inputs fails to load with a clear error.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from agents.features import to_uint8
from mjenv import actions as A
from mjenv import observation as O
from mjenv import view as V
from mjenv._jit import njit

PLANES_ID = "p1"

PLANES = (
    ("hand", 4), ("drawn", 1), ("offer", 1), ("melds", 16), ("discards", 16), ("recent", 16), ("early", 4),
    ("visible", 4), ("seat_wind", 1), ("prevalent_wind", 1), ("legal", 3),
)  # fmt: skip
SCALARS = (
    ("phase", 4), ("wall", 1), ("concealed", 4), ("flowers", 4), ("melds", 4), ("discards", 4),
    ("seat_wind", 4), ("prevalent_wind", 4), ("offer_from", 4), ("turn", 4), ("no_win", 1), ("legal", 7),
)  # fmt: skip
NUM_PLANES = sum(c for _, c in PLANES)
NUM_SCALARS = sum(c for _, c in SCALARS)
#: planes and scalars that come from the legal mask: the last ones of each
NUM_MASK_PLANES, NUM_MASK_SCALARS = PLANES[-1][1], SCALARS[-1][1]
_CHUNK = 256  # rows per parallel work item (scratch arrays allocated once per chunk)
RECENT, EARLY = 4, 6  # discards kept per player as recency planes; first discards marked as early
_SCALE = {"wall": 144.0, "concealed": 14.0, "flowers": 8.0, "melds": 4.0, "discards": 24.0}
#: what to divide each scalar by for a network input of order one
SCALAR_SCALE = np.concatenate([np.full(c, _SCALE.get(name, 1.0), np.float32) for name, c in SCALARS])


def _offsets(spec):
    out, o = {}, 0
    for name, c in spec:
        out[name] = o
        o += c
    return out


_P, _S = _offsets(PLANES), _offsets(SCALARS)
P_HAND, P_DRAWN, P_OFFER, P_MELDS, P_DISC = (_P[k] for k in ("hand", "drawn", "offer", "melds", "discards"))
P_RECENT, P_EARLY, P_VIS, P_SEAT, P_PREV, P_LEGAL = (
    _P[k] for k in ("recent", "early", "visible", "seat_wind", "prevalent_wind", "legal")
)
S_PHASE, S_WALL, S_CONC, S_FLOWERS, S_MELDS, S_DISC = (
    _S[k] for k in ("phase", "wall", "concealed", "flowers", "melds", "discards")
)
S_SEAT, S_PREV, S_FROM, S_TURN, S_NOWIN, S_LEGAL = (
    _S[k] for k in ("seat_wind", "prevalent_wind", "offer_from", "turn", "no_win", "legal")
)
# the mask's seven non-tile actions, in the order of the ``legal`` scalars
_OTHER_ACTIONS = np.array([A.CHOW, A.CHOW + 1, A.CHOW + 2, A.PUNG, A.KONG, A.WIN, A.PASS], np.int64)
assert _OTHER_ACTIONS.size == NUM_MASK_SCALARS
assert A.NUM_ACTIONS == 34 + 5 + 34 + 34 + 2


@njit(parallel=True)
def planes_kernel(obs, masks, has_mask, planes, scal):
    """Fill ``planes[i]`` (``uint8[NUM_PLANES, 34]``) and ``scal[i]`` (``uint8[NUM_SCALARS]``) from the uint8
    observation row ``obs[i]`` and, when ``has_mask``, its legal mask ``masks[i]`` (the module docstring)."""
    n = obs.shape[0]
    for c in prange((n + _CHUNK - 1) // _CHUNK):
        conc = np.zeros(34, np.int8)
        vis = np.zeros(34, np.int64)
        dbo = np.zeros(34, np.bool_)
        for i in range(c * _CHUNK, min(n, (c + 1) * _CHUNK)):
            _planes_row(obs[i], masks[i], has_mask, planes[i], scal[i], conc, vis, dbo)


@njit(inline="always")
def _planes_row(ob, m, has_mask, pl, sc, conc, vis, dbo):
    """One row of :func:`planes_kernel` (``conc``, ``vis``, ``dbo``: scratch)."""
    pl[:] = 0
    sc[:] = 0
    V.hand_kernel(ob, conc)
    V.visible_kernel(ob, conc, vis, dbo, False)
    for t in range(34):
        for k in range(4):
            pl[P_HAND + k, t] = ob[O.O_HAND + 34 * k + t] != 0
            pl[P_VIS + k, t] = vis[t] > k
        pl[P_DRAWN, t] = ob[O.O_DRAWN + t] != 0
        pl[P_OFFER, t] = ob[O.O_OFFER + t] != 0
    for p in range(4):
        for k in range(4):
            for t in range(34):
                pl[P_MELDS + 4 * p + k, t] = ob[O.O_MELDS + 136 * p + 34 * k + t] != 0
                pl[P_DISC + 4 * p + k, t] = ob[O.O_DISCARDS + 136 * p + 34 * k + t] != 0
        nd = V.n_discards_at(ob, p)
        for j in range(nd):
            x = abs(V.discard_at(ob, p, j))  # a claimed discard is -(t + 1)
            if x < 1 or x > 34:
                continue
            if j < EARLY:
                pl[P_EARLY + p, x - 1] = 1
            if nd - 1 - j < RECENT:
                pl[P_RECENT + 4 * p + nd - 1 - j, x - 1] = 1
        sc[S_MELDS + p] = V.n_melds_at(ob, p)
        sc[S_DISC + p] = nd
        sc[S_CONC + p] = ob[O.O_CONCEALED + p]
        sc[S_FLOWERS + p] = ob[O.O_FLOWERS + p]
        sc[S_PHASE + p] = ob[O.O_PHASE + p] != 0
        sc[S_SEAT + p] = ob[O.O_SEAT + p] != 0
        sc[S_PREV + p] = ob[O.O_PREV + p] != 0
        sc[S_FROM + p] = ob[O.O_FROM + p] != 0
        sc[S_TURN + p] = ob[O.O_TURN + p] != 0
        if ob[O.O_SEAT + p] != 0:
            pl[P_SEAT, 27 + p] = 1
        if ob[O.O_PREV + p] != 0:
            pl[P_PREV, 27 + p] = 1
    sc[S_WALL] = ob[O.O_WALL]
    sc[S_NOWIN] = ob[O.O_NOWIN] != 0
    if has_mask:
        for t in range(34):
            pl[P_LEGAL, t] = m[t]
            pl[P_LEGAL + 1, t] = m[A.CONCEALED_KONG + t]
            pl[P_LEGAL + 2, t] = m[A.ADDED_KONG + t]
        for j in range(NUM_MASK_SCALARS):
            sc[S_LEGAL + j] = m[_OTHER_ACTIONS[j]]


def obs_planes(
    obs: np.ndarray, masks: np.ndarray | None = None, threads: int | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(planes uint8[N, NUM_PLANES, 34], scalars uint8[N, NUM_SCALARS])`` of observations (uint8 or float32,
    ``[N, OBS_SIZE]``) and their legal masks (``[N, NUM_ACTIONS]``, or ``None``: the mask rows stay zero).
    ``threads``: Numba threads (default: the current setting)."""
    ob8 = to_uint8(obs)
    n = ob8.shape[0]
    if masks is None:
        m = np.zeros((n, A.NUM_ACTIONS), np.bool_)
    else:
        m = np.asarray(masks)
        if m.shape != (n, A.NUM_ACTIONS):
            raise ValueError(f"masks must have shape ({n}, {A.NUM_ACTIONS}), got {m.shape}")
        m = np.ascontiguousarray(m, dtype=np.bool_)
    planes = np.empty((n, NUM_PLANES, 34), np.uint8)
    scal = np.empty((n, NUM_SCALARS), np.uint8)
    if n:
        if threads is not None and numba.get_num_threads() != threads:
            numba.set_num_threads(threads)
        planes_kernel(ob8, m, masks is not None, planes, scal)
    return planes, scal
