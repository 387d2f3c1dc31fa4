"""Rules: reusable test helpers (random hands for differential and property tests).

Specification in mjenv
----------------------
Generators draw from an explicit ``numpy.random.Generator`` and return count arrays (``int8[34]``) that never
hold more than four copies of a tile. ``BIASES`` name shape-biased generators (near seven pairs, near thirteen
orphans, near knitted, near full suit, near regular win, four copies).
"""

from __future__ import annotations

import numpy as np

from mjenv.hand import KNITS, ORPHANS

BIASES = ("uniform", "pairs", "orphans", "knitted", "full_suit", "near_win", "quads", "few_kinds")


def _fill(rng: np.random.Generator, counts: np.ndarray, pool: np.ndarray, n: int) -> None:
    """Add tiles drawn from ``pool`` (tile ids, repeats allowed) until ``n`` tiles, respecting 4 copies."""
    tries = 0
    while counts.sum() < n:
        t = int(pool[rng.integers(len(pool))]) if tries < 200 else int(rng.integers(34))
        tries += 1
        if counts[t] < 4:
            counts[t] += 1


def random_hand(rng: np.random.Generator, n: int, bias: str = "uniform") -> np.ndarray:
    """A random ``int8[34]`` count array of ``n`` tiles, shaped by ``bias`` (one of ``BIASES``)."""
    c = np.zeros(34, dtype=np.int8)
    if bias == "uniform":
        wall = np.repeat(np.arange(34), 4)
        for t in rng.choice(wall, size=n, replace=False):
            c[t] += 1
        return c
    if bias == "pairs":
        for t in rng.choice(34, size=min(n // 2, 7), replace=False):
            if c.sum() + 2 <= n:
                c[t] += 2
        if rng.random() < 0.3:
            t = int(rng.integers(34))
            if c[t] == 2 and c.sum() + 2 <= n:
                c[t] += 2
        _fill(rng, c, np.arange(34), n)
    elif bias == "orphans":
        _fill(rng, c, np.concatenate([ORPHANS, ORPHANS, ORPHANS, rng.integers(34, size=2)]), n)
    elif bias == "knitted":
        k = KNITS[rng.integers(6)]
        knit = np.array([9 * s + k[s] + 3 * j for s in range(3) for j in range(3)])
        pool = np.concatenate([knit, knit, np.arange(27, 34), rng.integers(34, size=3)])
        _fill(rng, c, pool, n)
    elif bias == "full_suit":
        s = int(rng.integers(4))
        pool = np.arange(9 * s, 9 * s + 9) if s < 3 else np.arange(27, 34)
        _fill(rng, c, np.concatenate([pool, pool, pool, rng.integers(34, size=2)]), n)
    elif bias == "near_win":
        win = random_win(rng, n + 1 if n % 3 == 1 else n)
        tiles = np.repeat(np.arange(34), win)
        keep = rng.choice(
            len(tiles), size=max(0, min(n, len(tiles)) - int(rng.integers(0, 3))), replace=False
        )
        for t in tiles[keep]:
            c[t] += 1
        _fill(rng, c, np.arange(34), n)
    elif bias == "quads":
        for t in rng.choice(34, size=min(n // 4, int(rng.integers(1, 3))), replace=False):
            c[t] = 4
        _fill(rng, c, np.arange(34), n)
    elif bias == "few_kinds":
        _fill(rng, c, rng.choice(34, size=int(rng.integers(3, 7)), replace=False), n)
    else:
        raise ValueError(f"unknown bias {bias!r}; expected one of {BIASES}")
    return c


def random_win(rng: np.random.Generator, n: int = 14) -> np.ndarray:
    """A random regular complete hand of ``n`` (3k+2) tiles: k sets and a pair, at most 4 copies."""
    if n % 3 != 2 or not 2 <= n <= 14:
        raise ValueError(f"a complete hand has 2, 5, 8, 11 or 14 tiles, got {n}")
    while True:
        c = np.zeros(34, dtype=np.int8)
        t = int(rng.integers(34))
        c[t] += 2
        for _ in range(n // 3):
            if rng.random() < 0.6:
                s, r = int(rng.integers(3)), int(rng.integers(7))
                c[9 * s + r : 9 * s + r + 3] += 1
            else:
                c[int(rng.integers(34))] += 3
        if c.max() <= 4:
            return c
