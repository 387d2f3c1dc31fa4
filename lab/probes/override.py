"""Lab probe (issue 25): the shipped network with one kind of decision handed to the rule agent.

    python -m mjenv eval --agent new=lab.probes.override:override --agent-opt new.kind=tenpai \\
        --agent base=agents.nn:baseline --agent-opt base.waits=false --seating 1v3 --walls 5000 --seed 35001 --threads 2

Session 34's hybrid (``lab/probes/hybrid.py``) handed all the claims to the rule agent (a loss of half a
point per hand); this probe hands it one narrower kind of decision at a time, to find a kind where the rule agent
(exact target shanten, waits and safety rules) chooses better than the network. Head to head against the
network alone, only the hands where the two disagreed on such a decision score apart. The kinds (``KINDS``; each
row is of exactly one kind, so the kinds partition the decisions):

* ``win``: a win is legal (on the player's own draw, or on an offered tile);
* ``chow``: a claim window with a chow legal and no pung, kong or win;
* ``pung``: a claim window with a pung or an exposed kong legal, and no win;
* ``kong_turn``: the player's own turn with a concealed or added kong legal and no win;
* ``tenpai``: the player's own turn, discarding, the hand one discard from waiting (14-tile shanten 0, or a
  complete hand short of 8 fan);
* ``near``: the same, shanten 1;
* ``far``: the same, shanten 2 or more (``far_late`` only those with at most ``late`` tiles left in the wall);
* ``threat``: own-turn discards (any shanten) while an opponent shows 3 or more exposed melds.

``threat`` and ``far_late`` overlap the shanten kinds; the rest partition the decisions. :func:`kind_rows`
gives the rows of a kind from the observations and masks (the player's own view only). docs/training.md,
"Session 35", has the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import agents.nn as ann
import agents.rule as rule
from agents.waits import own_view
from lab.probes.bias_shift import _open_melds
from mjenv.actions import ADDED_KONG, CHOW, CONCEALED_KONG, KONG, NUM_TILE_TYPES, PASS, PUNG, WIN
from mjenv.observation import O_WALL
from mjenv.shanten import batch_shanten

KINDS = ("win", "chow", "pung", "kong_turn", "tenpai", "near", "far", "far_late", "threat")


def kind_rows(obs: np.ndarray, masks: np.ndarray, kind: str, late: int = 24) -> np.ndarray:
    """The rows (``bool[N]``) of decisions of ``kind`` (module docstring), from the player's observation and mask."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; kinds: {', '.join(KINDS)}")
    m = np.asarray(masks, dtype=bool)
    win = m[:, WIN]
    window = m[:, PASS]
    if kind == "win":
        return win
    if kind == "chow":
        return window & ~win & m[:, CHOW : CHOW + 3].any(axis=1) & ~m[:, PUNG] & ~m[:, KONG]
    if kind == "pung":
        return window & ~win & (m[:, PUNG] | m[:, KONG])
    kongs = m[:, CONCEALED_KONG : ADDED_KONG + NUM_TILE_TYPES].any(axis=1)
    if kind == "kong_turn":
        return ~window & ~win & kongs
    turn = ~window & ~win & ~kongs
    obs = np.asarray(obs)
    if kind == "threat":
        threat = np.zeros(obs.shape[0], dtype=bool)
        for p in (1, 2, 3):
            threat |= _open_melds(obs, p) >= 3
        return turn & threat
    rows = np.flatnonzero(turn)
    out = np.zeros(obs.shape[0], dtype=bool)
    if rows.size == 0:
        return out
    counts, _, n_melds = own_view(obs[rows])
    sh = batch_shanten(counts, n_melds)
    pick = {"tenpai": sh <= 0, "near": sh == 1, "far": sh >= 2}.get(kind)
    if kind == "far_late":
        pick = (sh >= 2) & (obs[rows, O_WALL] <= late)
    out[rows[pick]] = True
    return out


class Override:
    """One chair: ``other`` decides the rows of ``kind``, ``base`` the rest."""

    needs_observations = True

    def __init__(self, base: Any, other: Any, kind: str, late: int = 24) -> None:
        kind_rows(np.zeros((0, O_WALL + 1)), np.zeros((0, PASS + 1), bool), kind)  # refuses an unknown kind
        self.base, self.other, self.kind, self.late = base, other, kind, late

    def describe(self) -> str:
        return f"agents.nn:baseline, its {self.kind} decisions by the rule agent"

    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        obs, m = np.asarray(obs), np.asarray(masks, dtype=bool)
        sel = kind_rows(obs, m, self.kind, self.late)
        actions = np.zeros(m.shape[0], dtype=np.int64)
        for rows, agent in ((sel, self.other), (~sel, self.base)):
            if rows.any():
                actions[rows] = agent(obs[rows], m[rows], None if seats is None else seats[rows])
        return actions


def override(num_envs: int, seed: int, kind: str, late: int = 24, device: str = "cpu") -> Override:
    """The shipped network (``agents.nn:baseline`` without its wait check, greedy) with its ``kind`` decisions made by the rule agent."""
    if isinstance(late, bool) or not isinstance(late, int) or late < 0:
        raise ValueError(f"late must be a non-negative int, got {late!r}")
    return Override(
        ann.zoo(num_envs, seed, "avg109-2026-12-06", device), rule.make(num_envs, seed), kind, late
    )
