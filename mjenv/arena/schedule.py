"""Seatings and the wall schedule of a duplicate evaluation (:mod:`mjenv.arena`): which agent sits at which chair
in each seat order, and the seed, dealer and prevailing wind of each wall."""

from __future__ import annotations

import itertools

import numpy as np

SEATINGS = ("1v3", "2v2", "perm24")


def seating_players(seating: str) -> np.ndarray:
    """``int8[4]``: the agent index (0..) of each of the four players of ``seating``."""
    check_seating(seating)
    return np.array({"1v3": [0, 1, 1, 1], "2v2": [0, 0, 1, 1], "perm24": [0, 1, 2, 3]}[seating], np.int8)


def seating_orders(seating: str) -> np.ndarray:
    """``int8[P, 4]``: ``orders[p, chair]`` is the player at ``chair`` in order ``p`` of ``seating``.

    >>> seating_orders("1v3").tolist()
    [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1], [1, 2, 3, 0]]
    """
    check_seating(seating)
    if seating == "1v3":  # rotation r: player q sits at chair (q + r) % 4
        return np.array([[(c - r) % 4 for c in range(4)] for r in range(4)], np.int8)
    if seating == "2v2":
        out = []
        for a in itertools.combinations(range(4), 2):
            b = [c for c in range(4) if c not in a]
            row = [0] * 4
            row[a[0]], row[a[1]], row[b[0]], row[b[1]] = 0, 1, 2, 3
            out.append(row)
        return np.array(out, np.int8)
    return np.array([list(p) for p in itertools.permutations(range(4))], np.int8)


def seating_agents(seating: str) -> np.ndarray:
    """``int8[P, 4]``: the agent index at each chair in each order of ``seating``."""
    return seating_players(seating)[seating_orders(seating)]


def num_agents(seating: str) -> int:
    """How many distinct agents ``seating`` takes (2, 2 or 4)."""
    return int(seating_players(seating).max()) + 1


def check_seating(seating: object) -> None:
    if seating not in SEATINGS:
        raise ValueError(f"seating must be one of {SEATINGS}, got {seating!r}")


def wall_schedule(seed: int, walls: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seeds int64[W], dealers int32[W], prevalents int32[W])`` of the walls of an evaluation."""
    ss = np.random.SeedSequence([int(seed), 0x57A11])
    seeds = (ss.generate_state(walls, dtype=np.uint64) >> np.uint64(2)).astype(np.int64)
    w = np.arange(walls)
    return seeds, (w % 4).astype(np.int32), ((w // 4) % 4).astype(np.int32)


def agent_seed(seed: int, k: int) -> int:
    return int(np.random.SeedSequence([int(seed), 0xA6E47, k]).generate_state(1, dtype=np.uint64)[0] >> 2)
