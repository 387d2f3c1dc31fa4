"""Differential comparison of mjenv's shanten/useful/win detection with PyMahjongGB (black-box oracle).

Used by ``tests/test_compat_mahjonggb.py`` (a few thousand hands) and ``scripts/diff_shanten.py`` (>= 1M).
"""

from __future__ import annotations

import numpy as np

from mjenv import hand as H
from mjenv.compat import mahjonggb as C
from mjenv.melds import to_pack
from mjenv.testing.hands import BIASES, random_hand
from mjenv.tiles import BOTZONE_CODES

SIZES = (1, 4, 7, 10, 13)
SHAPE_FUNCS = (
    ("RegularShanten", H.REGULAR, SIZES),
    ("SevenPairsShanten", H.SEVEN_PAIRS, (13,)),
    ("ThirteenOrphansShanten", H.THIRTEEN_ORPHANS, (13,)),
    ("HonorsAndKnittedTilesShanten", H.HONORS_KNITTED, (13,)),
    ("KnittedStraightShanten", H.KNITTED_STRAIGHT, (10, 13)),
)
CODES = np.array(BOTZONE_CODES[:34], dtype=object)


def make_hands(rng: np.random.Generator, n_hands: int) -> np.ndarray:
    """``int8[n_hands, 34]`` hands of every size (1..13 standing tiles) and every bias."""
    out = np.zeros((n_hands, 34), dtype=np.int8)
    sizes = rng.choice(np.array([1, 4, 7, 10, 13, 13, 13, 10]), size=n_hands)
    biases = rng.integers(len(BIASES), size=n_hands)
    for i in range(n_hands):
        out[i] = random_hand(rng, int(sizes[i]), BIASES[biases[i]])
    return out


def _random_packs(rng: np.random.Generator, counts: np.ndarray) -> tuple:
    k = (13 - int(counts.sum())) // 3
    held = counts.astype(np.int64).copy()
    packs = []
    while len(packs) < k:
        kind = int(rng.integers(1, 4))
        t = int(rng.integers(34))
        if kind == 1:
            if t >= 27 or t % 9 in (0, 8) or held[t - 1 : t + 2].max() >= 4:
                continue
            held[t - 1 : t + 2] += 1
            packs.append((1 << 8) | (int(rng.integers(1, 4)) << 6) | t)
        else:
            need = 3 if kind == 2 else 4
            if held[t] + need > 4:
                continue
            held[t] += need
            offer = int(rng.integers(1, 4)) if kind == 2 else int(rng.integers(0, 4))
            packs.append((kind << 8) | (offer << 6) | t)
    return tuple(to_pack(m) for m in packs)


def compare(counts: np.ndarray, rng: np.random.Generator, max_report: int = 10) -> dict:
    """Compare every function on every hand; returns counts of checks and a list of mismatches."""
    import MahjongGB  # the oracle, imported where it is used: importing this module needs no test extra

    n_melds = (13 - counts.sum(axis=1)) // 3
    ours_total = H.batch_shanten(counts, n_melds)
    ours_shape = {}
    for name, shape, _sizes in SHAPE_FUNCS:
        ours_shape[name] = H.batch_useful(counts, shape, n_melds, physical=False)
    # win detection: every hand + every tile (fewer than 4 held)
    n = counts.shape[0]
    plus = np.repeat(counts, 34, axis=0)
    idx = np.arange(n * 34)
    plus[idx, idx % 34] += 1
    ok_rows = plus.max(axis=1) <= 4
    win = np.zeros(n * 34, dtype=bool)
    win[ok_rows] = H.batch_is_win(np.ascontiguousarray(plus[ok_rows]), np.repeat(n_melds, 34)[ok_rows])
    win = win.reshape(n, 34)
    ok_rows = ok_rows.reshape(n, 34)
    stats = {"hands": n, "checks": 0, "mismatches": []}
    bad = stats["mismatches"]
    for i in range(n):
        tiles = tuple(CODES[np.repeat(np.arange(34), counts[i])])
        size = len(tiles)
        pack = _random_packs(rng, counts[i]) if rng.random() < 0.5 else ()
        exp = MahjongGB.MahjongShanten(pack, tiles)
        got = int(ours_total[i])
        stats["checks"] += 1
        if exp != got:
            bad.append(("MahjongShanten", tiles, pack, exp, got))
        exp_c = C.MahjongShanten(pack=pack, hand=tiles)
        if exp_c != exp:
            bad.append(("compat.MahjongShanten", tiles, pack, exp, exp_c))
        ready_useful = set()
        for name, _shape, sizes in SHAPE_FUNCS:
            if size not in sizes:
                continue
            exp = getattr(MahjongGB, name)(tiles)
            s, u = ours_shape[name]
            got = (int(s[i]), tuple(CODES[u[i]]))
            stats["checks"] += 1
            if exp != got:
                bad.append((name, tiles, (), exp, got))
            got_c = getattr(C, name)(tiles)
            if got_c != exp:
                bad.append(("compat." + name, tiles, (), exp, got_c))
            if exp[0] == 0:
                ready_useful.update(exp[1])
        # a hand + t (at most 4 copies) is a win iff some shape is ready and t is among its useful tiles
        for t in range(34):
            if not ok_rows[i, t]:
                continue
            stats["checks"] += 1
            if bool(win[i, t]) != (CODES[t] in ready_useful):
                bad.append(("is_win", tiles, CODES[t], CODES[t] in ready_useful, bool(win[i, t])))
    return stats
