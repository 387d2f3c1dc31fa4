"""Slow pure-Python reference shanten (block counting by exhaustive decomposition), for differential tests.

Independent of the table kernels in ``mjenv.hand``: decomposes the count array tile by tile.
"""

from __future__ import annotations

from functools import cache

KNITS = ((0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0))
ORPHANS = (0, 8, 9, 17, 18, 26, 27, 28, 29, 30, 31, 32, 33)


def _knit_tiles(perm):
    return [9 * s + perm[s] + 3 * k for s in range(3) for k in range(3)]


@cache
def _best(counts: tuple, i: int, need: int, m: int, t: int, p: int) -> int:
    """Max of 2m + min(t, need - m) + p over decompositions of counts[i:]."""
    while i < 34 and counts[i] == 0:
        i += 1
    if i == 34:
        return 2 * m + min(t, need - m) + p if m <= need else -99
    c = list(counts)
    best = -99
    suited = i < 27
    r = i % 9

    def go(rem, dm, dt, dp):
        nonlocal best
        cc = list(c)
        for j in rem:
            cc[j] -= 1
        best = max(best, _best(tuple(cc), i, need, m + dm, t + dt, p + dp))

    if c[i] >= 3:
        go((i, i, i), 1, 0, 0)
    if suited and r <= 6 and c[i + 1] and c[i + 2]:
        go((i, i + 1, i + 2), 1, 0, 0)
    if c[i] >= 2:
        if p == 0:
            go((i, i), 0, 0, 1)
        go((i, i), 0, 1, 0)
    if suited and r <= 7 and c[i + 1]:
        go((i, i + 1), 0, 1, 0)
    if suited and r <= 6 and c[i + 2]:
        go((i, i + 2), 0, 1, 0)
    go((i,), 0, 0, 0)
    return best


def regular(counts) -> int:
    n = sum(counts)
    need = n // 3
    return 2 * need - _best(tuple(int(x) for x in counts), 0, need, 0, 0, 0)


def seven_pairs(counts) -> int:
    return 6 - sum(int(c) // 2 for c in counts)


def thirteen_orphans(counts) -> int:
    kinds = sum(1 for t in ORPHANS if counts[t])
    pair = any(counts[t] >= 2 for t in ORPHANS)
    return 13 - kinds - int(pair)


def honors_knitted(counts) -> int:
    best = 0
    honors = sum(1 for t in range(27, 34) if counts[t])
    for perm in KNITS:
        best = max(best, honors + sum(1 for t in _knit_tiles(perm) if counts[t]))
    return 13 - min(best, 14)


def knitted_straight_by_combination(counts) -> list[int]:
    """Knitted straight shanten with each knitted combination of ``KNITS`` (in order)."""
    n = sum(counts)
    out = []
    for perm in KNITS:
        c = [int(x) for x in counts]
        missing = 0
        for t in _knit_tiles(perm):
            if c[t]:
                c[t] -= 1
            else:
                missing += 1
        # the rest must become one set + a pair (13/14 tiles) or just a pair (10/11 tiles)
        rest_need = 1 if n >= 12 else 0
        rest = 2 * rest_need - _best(tuple(c), 0, rest_need, 0, 0, 0)
        out.append(missing + rest)
    return out


def knitted_straight(counts) -> int:
    return min(knitted_straight_by_combination(counts))


SHAPES = {
    "regular": regular,
    "seven_pairs": seven_pairs,
    "thirteen_orphans": thirteen_orphans,
    "honors_knitted": honors_knitted,
    "knitted_straight": knitted_straight,
}


def useful(fn, counts) -> list[int]:
    s = fn(counts)
    out = []
    for t in range(34):
        c = list(counts)
        c[t] += 1
        if fn(c) < s:
            out.append(t)
    return out
