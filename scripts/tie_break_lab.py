"""Black-box experiment behind the scorer's tie-break (``mjenv.fans._tie_prefers``).

Usage: ``PYTHONPATH=. python scripts/tie_break_lab.py [--outer 40]``

Builds every hand made of an ambiguous 8-tile block of one suit (two sets and a pair that read more than one
way) and two more sets (pungs and chows of the other suits, honour pungs), with every win tile of the block
won on a discard. For each hand whose best total is reached by readings with different fans it asks the
reference (PyMahjongGB) which one it shows, and tallies, by the highest fan points where the tied readings
differ, whether the reference took (a) the later reading in ``_regular_best``'s order and (b) the reading
with more of the first differing fan of >= 16 points (fan order). Result (2026-11-30): differences in 1- or
2-point fans follow (a) both ways round; every difference of >= 16 points follows (b) (三同刻 + 双暗刻 over
三暗刻 + 双同刻 even when it is the earlier reading; 一色三同顺 over 一色三节高).
"""

from __future__ import annotations

import argparse
import collections
import itertools

import MahjongGB
import numpy as np

from mjenv import fans as F
from mjenv.tiles import BOTZONE_CODES

NAME = {n: i for i, n in enumerate(F.FAN_NAME_ZH)}


def _sets(w, nneed, cur, out):
    """Every split of counts ``w`` into ``nneed`` sets, depth-first over the lowest tile, pung before chow."""
    if nneed == 0:
        out.append(list(cur))
        return
    i = int(np.flatnonzero(w)[0])
    if w[i] >= 3:
        w[i] -= 3
        _sets(w, nneed - 1, cur + [(2, i)], out)
        w[i] += 3
    if i < 27 and i % 9 <= 6 and w[i + 1] and w[i + 2]:
        w[i : i + 3] -= 1
        _sets(w, nneed - 1, cur + [(1, i)], out)
        w[i : i + 3] += 1


def readings(conc, win):
    """(fan counts, points) of every regular reading of a concealed hand, in ``_regular_best``'s order."""
    sk, st, sc, tc = (np.zeros(n, np.int64) for n in (4, 4, 4, 34))
    h = conc.astype(np.int64)
    h[win] += 1
    tc += h
    base = np.zeros(F.NUM_FANS, np.int64)
    F._context_fans(tc, sk, st, sc, 0, conc, win, 0, base)
    out = []
    for p in range(34):
        if h[p] < 2:
            continue
        w = h.copy()
        w[p] -= 2
        splits = []
        _sets(w, 4, [], splits)
        for sets in splits:
            for j, (k, t) in enumerate(sets):
                sk[j], st[j], sc[j] = k, t, 1
            fc = np.zeros(F.NUM_FANS, np.int64)
            scr = np.zeros(80, np.int64)
            scr[16] = -1
            pts = F._eval_division(sk, st, sc, 4, 0, p, win, False, 0, 1, 0, conc, base, fc, scr)
            out.append((fc, int(pts)))
    return out


def reference(conc, win):
    hand = tuple(BOTZONE_CODES[t] for t in range(34) for _ in range(conc[t]))
    got = MahjongGB.MahjongFanCalculator(
        (), hand, BOTZONE_CODES[win], 0, False, False, False, False, 0, 1, True
    )
    v = np.zeros(F.NUM_FANS, np.int64)
    for _, n, zh, _ in got:
        v[NAME[zh]] = n
    return v


def blocks():
    """8 tiles of suit 2 read as two sets and a pair in more than one way."""
    for c in itertools.product(range(5), repeat=9):
        if sum(c) != 8:
            continue
        h = np.zeros(34, np.int64)
        h[18:27] = c
        n = 0
        for p in range(18, 27):
            if h[p] >= 2:
                w = h.copy()
                w[p] -= 2
                out = []
                _sets(w, 2, [], out)
                n += len(out)
        if n >= 2:
            yield h


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outer", type=int, default=0, help="only the first N pairs of outer sets (0: all)")
    args = ap.parse_args(argv)
    outer = [(1, t) for t in range(18) if t % 9 <= 6] + [
        (2, t) for t in list(range(18)) + list(range(27, 34))
    ]
    pairs = list(itertools.combinations_with_replacement(outer, 2))
    if args.outer:
        pairs = pairs[: args.outer]
    tally = collections.Counter()
    for blk in blocks():
        for sets in pairs:
            h = blk.copy()
            for k, t in sets:
                h[t : t + 3 if k == 1 else t + 1] += 1 if k == 1 else 3
            if h.max() > 4:
                continue
            for win in np.flatnonzero(blk):
                conc = h.copy()
                conc[win] -= 1
                rs = readings(conc.astype(np.int8), int(win))
                best = max(p for _, p in rs)
                top = [fc for fc, p in rs if p == best]
                if all((fc == top[0]).all() for fc in top):
                    continue
                ref = reference(conc, int(win))
                if not any((ref == fc).all() for fc in top):
                    continue  # a special shape (seven pairs) beats the regular readings
                for fc in top[:-1]:
                    if (fc == top[-1]).all():
                        continue
                    d = np.flatnonzero(fc != top[-1])
                    tier = int(F.FAN_POINTS[d].max())
                    k = d[0]
                    lex = fc if (k < F._TIE_FANS and fc[k] > top[-1][k]) else top[-1]
                    tally[
                        (
                            tier,
                            "later" if (ref == top[-1]).all() else "earlier",
                            "lex16" if (ref == lex).all() else "not-lex16",
                        )
                    ] += 1
    for (tier, pos, lex), n in sorted(tally.items()):
        print(f"differ at {tier:2d} points: reference took the {pos} reading, {lex}: {n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
