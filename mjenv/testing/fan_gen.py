"""Random scoring cases for differential tests against the reference calculator.

Rules
-----
See :mod:`mjenv.fans`.

Specification in mjenv
----------------------
:func:`random_case` draws one call of ``MahjongFanCalculator`` (as a kwargs dict in the reference's format):
winning hands of all five shapes built from "themes" (one suit, honours, terminals, green, reversible,
rank bands, ...) and fan templates (four chows of one shape, wind/dragon pungs, nine gates, ...), with
exposed and concealed melds and kongs, every context flag and flowers; near misses (one tile changed) and
malformed inputs the reference rejects. Hands never hold more than 4 copies of a tile.
"""

from __future__ import annotations

import numpy as np

from mjenv.tiles import BOTZONE_CODES

_SUITED = np.arange(27)
_THEMES = (
    list(range(34)),  # anything
    list(range(9)),
    list(range(9, 18)),
    list(range(18, 27)),  # one suit
    list(range(9)) + list(range(27, 34)),
    list(range(9, 18)) + list(range(27, 34)),  # suit + honours
    list(range(27, 34)),  # honours
    [0, 8, 9, 17, 18, 26],
    [0, 8, 9, 17, 18, 26] + list(range(27, 34)),  # terminals (+ honours)
    [10, 11, 12, 14, 16, 32],
    [10, 11, 12, 14, 16],  # green
    [18, 19, 20, 21, 22, 25, 26, 10, 12, 13, 14, 16, 17, 33],  # reversible
    [t for t in range(27) if t % 9 >= 6],
    [t for t in range(27) if 3 <= t % 9 <= 5],
    [t for t in range(27) if t % 9 <= 2],
    [t for t in range(27) if t % 9 >= 5],
    [t for t in range(27) if t % 9 <= 3],  # upper / middle / lower tiles, upper / lower four
    [t for t in range(27) if t % 9 % 2 == 1],
    [t for t in range(27) if 2 <= t % 9 <= 6],  # even, fives
    list(range(18)) + list(range(27, 34)),
    list(range(9)) + list(range(18, 27)),  # two suits
    list(range(27)),
    list(range(27, 31)) + list(range(9)),
    list(range(31, 34)) + list(range(27)),
)


def _chow_ok(t, pool):
    return t < 27 and t % 9 <= 6 and t in pool and t + 1 in pool and t + 2 in pool


def _template_chows(rng):
    """Lowest tiles of 2-4 related chows (the chow fans)."""
    s = [int(x) for x in rng.permutation(3)]
    kind = rng.integers(12)
    r = int(rng.integers(0, 7))
    if kind == 0:
        return [9 * s[0] + r] * int(rng.integers(2, 5))  # 一般高 / 三同顺 / 四同顺
    if kind == 1:
        d = int(rng.integers(1, 3))
        n = int(rng.integers(3, 5))
        r = int(rng.integers(0, 7 - d * (n - 1)))
        return [9 * s[0] + r + d * i for i in range(n)]  # 步高
    if kind == 2:
        return [9 * s[0], 9 * s[0] + 3, 9 * s[0] + 6]  # 清龙
    if kind == 3:
        return [9 * s[0], 9 * s[1] + 3, 9 * s[2] + 6]  # 花龙
    if kind == 4:
        return [9 * s[i] + r for i in range(int(rng.integers(2, 4)))]  # 喜相逢 / 三色三同顺
    if kind == 5:
        r = int(rng.integers(0, 5))
        return [9 * s[i] + r + i for i in range(3)]  # 三色三步高
    if kind == 6:
        return [9 * s[0], 9 * s[0] + 6, 9 * s[1], 9 * s[1] + 6]  # 三色双龙会 / 老少副
    if kind == 7:
        return [9 * s[0], 9 * s[0], 9 * s[0] + 6, 9 * s[0] + 6]  # 一色双龙会
    if kind == 8:
        return [9 * s[0] + r, 9 * s[0] + (r + 3) % 7]  # 连六-ish
    if kind == 9:
        return [9 * s[0], 9 * s[0] + 6, 9 * s[int(rng.integers(0, 3))] + int(rng.choice([0, 6]))]
    if kind == 10:
        return [9 * s[0] + r, 9 * s[1] + r, 9 * s[0] + (r + 3) % 7, 9 * s[1] + (r + 3) % 7]
    return [9 * s[0] + r, 9 * s[0] + r, 9 * s[1] + r, 9 * s[1] + r]


def _template_pungs(rng):
    s = [int(x) for x in rng.permutation(3)]
    kind = rng.integers(6)
    r = int(rng.integers(0, 9))
    if kind == 0:
        n = int(rng.integers(3, 5))
        r = int(rng.integers(0, 10 - n))
        return [9 * s[0] + r + i for i in range(n)]  # 节高
    if kind == 1:
        return [9 * s[i] + r for i in range(int(rng.integers(2, 4)))]  # 双同刻 / 三同刻
    if kind == 2:
        r = int(rng.integers(0, 7))
        return [9 * s[i] + r + i for i in range(3)]  # 三色三节高
    if kind == 3:
        return [
            int(x) for x in rng.choice(np.arange(27, 31), int(rng.integers(2, 5)), replace=False)
        ]  # winds
    if kind == 4:
        return [
            int(x) for x in rng.choice(np.arange(31, 34), int(rng.integers(1, 4)), replace=False)
        ]  # dragons
    return [9 * s[0] + r, 9 * s[1] + r, 9 * s[0] + (r + 8) % 9, 9 * s[1] + (r + 8) % 9]


def _regular_sets(rng, pool):
    """4 sets (kind 1 chow by lowest tile, 2 pung) and a pair; None if the draw failed."""
    sets: list[tuple[int, int]] = []
    u = rng.random()
    if u < 0.35:
        sets = [(1, t) for t in _template_chows(rng)]
    elif u < 0.6:
        sets = [(2, t) for t in _template_pungs(rng)]
    p_chow = rng.choice([0.0, 0.3, 0.6, 0.9, 1.0])
    tries = 0
    while len(sets) < 4 and tries < 40:
        tries += 1
        t = int(rng.choice(pool))
        if rng.random() < p_chow:
            if _chow_ok(t, pool):
                sets.append((1, t))
        else:
            sets.append((2, t))
    if len(sets) < 4:
        return None
    sets = sets[:4]
    if rng.random() < 0.3 and any(k == 1 for k, _ in sets):
        pair = int(rng.choice([4, 13, 22]))
    else:
        pair = int(rng.choice(pool))
    return sets, pair


def _counts_ok(tiles):
    return np.bincount(tiles, minlength=34).max() <= 4


def _codes(tiles):
    return tuple(BOTZONE_CODES[t] for t in sorted(tiles))


def _regular(rng, pool):
    r = _regular_sets(rng, pool)
    if r is None:
        return None
    sets, pair = r
    rng.shuffle(sets)
    n_melds = int(rng.choice([0, 0, 0, 1, 1, 2, 2, 3, 4]))
    pack = []
    hand = [pair, pair]
    kongs = 0
    for i, (kind, t) in enumerate(sets):
        make_kong = kind == 2 and rng.random() < 0.25
        if i < n_melds or make_kong:
            if kind == 1:
                offer = int(rng.integers(1, 4)) if rng.random() > 0.03 else 0
                pack.append(("CHI", BOTZONE_CODES[t + 1], offer))
            elif make_kong:
                kongs += 1
                offer = int(rng.choice([0, 0, 1, 2, 3])) if i < n_melds or rng.random() < 0.5 else 0
                pack.append(("GANG", BOTZONE_CODES[t], offer))
            else:
                offer = int(rng.integers(1, 4)) if rng.random() > 0.03 else 0
                pack.append(("PENG", BOTZONE_CODES[t], offer))
        else:
            hand += [t, t, t] if kind == 2 else [t, t + 1, t + 2]
    all_tiles = list(hand)
    for kind_s, code, _ in pack:
        t = BOTZONE_CODES.index(code)
        all_tiles += {"CHI": [t - 1, t, t + 1], "PENG": [t] * 3, "GANG": [t] * 4}[kind_s]
    if not _counts_ok(all_tiles):
        return None
    return tuple(pack), hand


def _seven_pairs(rng, pool):
    if rng.random() < 0.2:
        s = int(rng.integers(3))
        r = int(rng.integers(0, 3))
        ts = [9 * s + r + i for i in range(7)]
    else:
        ts = [int(x) for x in rng.choice(pool, 7)]
    hand = [t for t in ts for _ in range(2)]
    return ((), hand) if _counts_ok(hand) else None


def _orphans(rng):
    orph = [0, 8, 9, 17, 18, 26] + list(range(27, 34))
    return (), orph + [int(rng.choice(orph))]


def _knitted_tiles(rng):
    perm = rng.permutation(3)
    return [9 * int(perm[i]) + i + 3 * k for i in range(3) for k in range(3)]


def _honors_knitted(rng):
    pool = _knitted_tiles(rng) + list(range(27, 34))
    if rng.random() < 0.4:
        hand = list(range(27, 34)) + [int(x) for x in rng.choice(_knitted_tiles_of(pool), 7, replace=False)]
    else:
        hand = [int(x) for x in rng.choice(pool, 14, replace=False)]
    return (), hand


def _knitted_tiles_of(pool):
    return [t for t in pool if t < 27]


def _knitted_straight(rng, pool):
    hand = _knitted_tiles(rng)
    r = _regular_sets(rng, pool)
    if r is None:
        return None
    sets, pair = r
    kind, t = sets[0]
    pack = ()
    if rng.random() < 0.4:
        if kind == 1:
            pack = (("CHI", BOTZONE_CODES[t + 1], int(rng.integers(1, 4))),)
        else:
            pack = ((rng.choice(["PENG", "GANG"]), BOTZONE_CODES[t], int(rng.integers(0, 4))),)
        if pack[0][0] == "PENG" and pack[0][2] == 0:
            pack = (("PENG", pack[0][1], 1),)
        hand += [pair, pair]
        tiles = hand + ([t, t + 1, t + 2] if kind == 1 else [t] * (3 if pack[0][0] == "PENG" else 4))
    else:
        hand += [pair, pair] + ([t, t + 1, t + 2] if kind == 1 else [t] * 3)
        tiles = hand
    return (pack, hand) if _counts_ok(tiles) else None


def _nine_gates(rng):
    s = int(rng.integers(3))
    hand = [9 * s + r for r in (0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 8)]
    return (), hand + [9 * s + int(rng.integers(9))]


def _corrupt(rng, kw):
    """Malformed input the reference rejects with a TypeError."""
    k = rng.integers(8)
    hand = list(kw["hand"])
    if k == 0 and hand:
        hand[int(rng.integers(len(hand)))] = str(rng.choice(["W0", "T10", "H1", "X1", "w1", "F5", "J4", ""]))
    elif k == 1:
        kw["winTile"] = str(rng.choice(["W0", "H2", "Z1", "J0"]))
    elif k == 2 and hand:
        hand.pop()
    elif k == 3:
        hand.append(hand[0] if hand else "W1")
    elif k == 4:
        kw["pack"] = kw["pack"] + (("PENG", "W1", int(rng.choice([4, 5, -1, 7]))),)
    elif k == 5:
        kw["pack"] = kw["pack"] + ((str(rng.choice(["PONG", "chi", "KONG"])), "W5", 1),)
    elif k == 6:
        kw["pack"] = kw["pack"] + (("CHI", str(rng.choice(["B0", "T", "J9"])), 1),)
    else:
        kw["hand"] = list(hand)
        return kw
    kw["hand"] = tuple(hand)
    return kw


def _chicken(rng):
    """Exposed sets of three suits with no pattern and a wind pair: mostly 无番和 candidates."""
    s = [int(x) for x in rng.permutation(3)]
    ranks = rng.integers(0, 7, 3)
    pack = (("CHI", BOTZONE_CODES[9 * s[0] + int(ranks[0]) + 1], 1),)
    pung = 9 * s[2] + int(rng.integers(1, 8))
    pair = 27 + int(rng.integers(4))
    hand = [
        9 * s[1] + int(ranks[1]),
        9 * s[1] + int(ranks[1]) + 1,
        9 * s[1] + int(ranks[1]) + 2,
        9 * s[2] + int(ranks[2]),
        9 * s[2] + int(ranks[2]) + 1,
        9 * s[2] + int(ranks[2]) + 2,
        pung,
        pung,
        pung,
        pair,
        pair,
    ]
    t = BOTZONE_CODES.index(pack[0][1])
    return (pack, hand) if _counts_ok(hand + [t - 1, t, t + 1]) else None


def random_case(rng: np.random.Generator) -> dict:
    """One ``MahjongFanCalculator`` kwargs dict (reference format). See the module docstring."""
    while True:
        u = rng.random()
        pool = _THEMES[int(rng.integers(len(_THEMES)))]
        if u < 0.68:
            r = _regular(rng, pool)
        elif u < 0.76:
            r = _seven_pairs(rng, pool)
        elif u < 0.78:
            r = _orphans(rng)
        elif u < 0.83:
            r = _honors_knitted(rng)
        elif u < 0.88:
            r = _knitted_straight(rng, pool)
        elif u < 0.90:
            r = _chicken(rng)
        else:
            r = _nine_gates(rng)
        if r is not None:
            break
    pack, tiles = r
    tiles = list(tiles)
    win = tiles.pop(int(rng.integers(len(tiles))))
    v = rng.random()
    if v < 0.12:  # near miss: one standing tile or the win tile changed
        j = int(rng.integers(len(tiles) + 1))
        new = int(rng.integers(34))
        if j == len(tiles):
            win = new
        else:
            tiles[j] = new
        all_t = tiles + [win]
        for kind_s, code, _ in pack:
            t = BOTZONE_CODES.index(code)
            all_t += {"CHI": [t - 1, t, t + 1], "PENG": [t] * 3, "GANG": [t] * 4}[kind_s]
        if not _counts_ok(all_t):
            win = tiles[0] if j != 0 else win
            tiles = tiles[:-1] + [tiles[-1]]
            return random_case(rng)
    flags = rng.random(4)
    kw = dict(
        pack=tuple(pack),
        hand=_codes(tiles),
        winTile=BOTZONE_CODES[win],
        flowerCount=int(rng.choice([0, 0, 0, 0, 1, 2, 3, 8])),
        isSelfDrawn=bool(flags[0] < 0.5),
        is4thTile=bool(flags[1] < 0.15),
        isAboutKong=bool(flags[2] < 0.15),
        isWallLast=bool(flags[3] < 0.1),
        seatWind=int(rng.integers(4)),
        prevalentWind=int(rng.integers(4)),
    )
    if v > 0.985:
        kw = _corrupt(rng, kw)
    return kw
