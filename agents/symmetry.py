"""The symmetries of MCR's tiles as maps of observations, legal masks and actions: ``VIEWS``, ``View``.

Why
---
The rules treat the three suits alike, and the ranks 1..9 of a suit alike read backwards (9..1): relabelling
the suits of every tile of a table (characters / bamboo / dots in any order), or reversing the ranks of every
suited tile, gives a table that plays out the same, with the same scores. Only two fans tell them apart (All
Green, 88, and Reversible Tiles, 8, name particular tiles). A network trained on real tables has never been
told this, so its outputs on the twelve relabelled copies of an observation differ a little: like the members
of an ensemble, they can be averaged (the eight board symmetries of AlphaGo's evaluation), and a dataset can be
augmented with them.

What
----
A *view* is a map of the 34 tile types: a permutation of the three suits (``suits[s]`` is the new suit of suit
``s``: 0 characters, 1 bamboo, 2 dots, mjenv's tile ids) and, with ``reverse``, rank ``r`` read as ``10 - r``;
honours stay. :data:`VIEWS` lists the twelve (the identity first). :class:`View` holds one view's maps:
:meth:`View.obs` gives the observations of the relabelled tables (every tile column moved, the tile ids in
``discard_seq`` and ``meld_seq`` mapped, a chow's claimed position read from the other end when reversed),
:meth:`View.mask` their legal masks, and :meth:`View.back` per-action values of the relabelled tables as values
of the original actions (:func:`action_map`: a tile's discard or kong moves with the tile; a chow's low and high
positions swap when reversed).
``tests/test_symmetry.py`` plays hands on relabelled walls and checks every observation and mask against these
maps.
"""

from __future__ import annotations

from itertools import permutations

import numpy as np

from agents.features import to_uint8
from mjenv import actions as A
from mjenv import observation as O
from mjenv import view as V

#: the twelve views: (suit permutation, reverse); the identity first
VIEWS: tuple[tuple[tuple[int, int, int], bool], ...] = tuple(
    (p, rev) for rev in (False, True) for p in permutations(range(3))
)

_TILE_PIECES = ("hand", "drawn", "melds", "discards", "offer_tile")  # pieces whose last axis is the tile type


def tile_map(suits: tuple[int, int, int], reverse: bool = False) -> np.ndarray:
    """``int64[34]``: the new tile id of each tile id under the view (``suits``, ``reverse``)."""
    if sorted(suits) != [0, 1, 2]:
        raise ValueError(f"suits must be a permutation of (0, 1, 2), got {suits!r}")
    out = np.arange(34)
    for s in range(3):
        for r in range(9):
            out[9 * s + r] = 9 * suits[s] + (8 - r if reverse else r)
    return out


def _obs_gather(tmap: np.ndarray) -> np.ndarray:
    """``int64[OBS_SIZE]``: the column of the old observation each column of the new one reads."""
    src = np.arange(O.OBS_SIZE)
    shapes = dict(O.OBS_PIECES)
    for name in _TILE_PIECES:
        base = O.OBS_OFFSETS[name]
        for k in range(int(np.prod(shapes[name])) // 34):
            src[base + 34 * k + tmap] = base + 34 * k + np.arange(34)
    return src


def action_map(tmap: np.ndarray, reverse: bool = False) -> np.ndarray:
    """``int64[NUM_ACTIONS]``: the action of the relabelled table that each action becomes."""
    out = np.arange(A.NUM_ACTIONS)
    for base in (A.DISCARD, A.CONCEALED_KONG, A.ADDED_KONG):
        out[base : base + 34] = base + tmap
    if reverse:
        out[A.CHOW], out[A.CHOW + 2] = A.CHOW + 2, A.CHOW
    return out


class View:
    """One view's maps, precomputed (:meth:`obs`, :meth:`mask`, :meth:`back`)."""

    def __init__(self, suits: tuple[int, int, int], reverse: bool = False) -> None:
        self.suits, self.reverse = tuple(int(s) for s in suits), bool(reverse)
        self.tmap = tile_map(self.suits, self.reverse)
        self.gather = _obs_gather(self.tmap)
        self.amap = action_map(self.tmap, self.reverse)
        self.ainv = np.empty_like(self.amap)
        self.ainv[self.amap] = np.arange(A.NUM_ACTIONS)
        # value maps of the tile ids in discard_seq (-(t+1)..t+1) and meld_seq (t+1), as int8 lookups
        lut = np.zeros(256, np.uint8)  # uint8 code of the int8 value v -> uint8 code of the mapped value
        for t in range(34):
            lut[t + 1] = self.tmap[t] + 1
            lut[(256 - (t + 1)) % 256] = (256 - (self.tmap[t] + 1)) % 256
        self.lut = lut
        self.identity = self.suits == (0, 1, 2) and not self.reverse

    def __repr__(self) -> str:
        return f"View(suits={self.suits}, reverse={self.reverse})"

    def obs(self, obs: np.ndarray) -> np.ndarray:
        """The uint8 observations ``[N, OBS_SIZE]`` of the relabelled tables (input of either dtype)."""
        o = to_uint8(obs)
        if self.identity:
            return o
        out = o[:, self.gather]
        v = O.views(out)  # no copies: the writes below land in out
        dseq = v["discard_seq"].view(np.uint8)  # the stored bytes, which the lut maps
        dseq[...] = self.lut[dseq]
        ms = v["meld_seq"]  # [N, 4, 4, 3]: (kind code, tile + 1, offer) per meld
        ms[..., 1] = self.lut[ms[..., 1]]
        if self.reverse:  # a chow's claimed tile counted from the other end: 1 <-> 3
            chow = (ms[..., 0] == V.SEQ_CHOW) & (ms[..., 2] != 0)
            ms[..., 2] = np.where(chow, 4 - ms[..., 2], ms[..., 2])
        return out

    def mask(self, mask: np.ndarray) -> np.ndarray:
        """The legal masks ``[N, NUM_ACTIONS]`` of the relabelled tables."""
        m = np.asarray(mask)
        return m if self.identity else m[:, self.ainv]

    def back(self, values: np.ndarray) -> np.ndarray:
        """Per-action values of the relabelled tables (``[N, NUM_ACTIONS]``) as values of the original
        actions: ``out[:, a] = values[:, amap[a]]``."""
        v = np.asarray(values)
        return v if self.identity else v[:, self.amap]
