"""Black-box experiment behind the scorer's tie-break (``mjenv.fans._tie_prefers``).

Usage: ``PYTHONPATH=. python lab/scripts/tie_break_lab.py [--outer 40]`` (about 10 min), or
``PYTHONPATH=. python lab/scripts/tie_break_lab.py --family`` (about 6 min: every one-suit hand, see ``family``).

Builds every hand made of an ambiguous 8-tile block of one suit (two sets and a pair that read more than one
way) and two more sets (pungs and chows of the other suits, honour pungs), with every win tile of the block
won on a discard. For each hand whose best total is reached by readings with different fans it asks the
reference (PyMahjongGB) which one it shows, and tallies, by the highest fan points where the tied readings
differ, whether the reference took (a) the later reading in ``_regular_best``'s order and (b) the reading
with more of the first differing fan of >= 16 points (fan order). Result (2026-11-30): differences in 1- or
2-point fans follow (a) both ways round; every difference of >= 16 points follows (b) (三同刻 + 双暗刻 over
三暗刻 + 双同刻 even when it is the earlier reading; 一色三同顺 over 一色三节高).

``--family`` compares our compat calculator with the reference on every winning hand of one suit (bamboo) with
0, 1, 2 or 3 fixed melds (chows and pungs of that suit), each win tile of the concealed part, won on a discard.
That is where readings can tie while both count the same >= 16 point fan built from sets; the only such tie is
fixed chows 123 + 234 with concealed 1122344 won on 3 (and its mirror 678 + 789 / 6678899 / 7), where the
reference keeps the earlier reading. Result (2026-11-30, with that rule in ``_tie_prefers``): 0 differences in
868,685 winning hands (95,247 / 283,723 / 335,972 / 153,743 with 0 / 1 / 2 / 3 fixed melds), outcomes and error messages alike.
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
    """(fan counts, points) of every regular reading of a concealed hand, in ``_regular_best``'s order.

    Calls the scorer's own per-reading kernels on a work space laid out as ``fans._WS_LAYOUT`` says:
    ``_context_ws`` (the fans of the tiles and context, into ``base``) once, then ``_eval_ws`` per reading."""
    h = conc.astype(np.int64)
    h[win] += 1
    ws = np.zeros(F._WS_LEN, np.int64)
    ws[F._WS_TC : F._WS_TC + 34] = h
    mask = sum(1 << t for t in range(34) if h[t] > 0)
    fours = int((h == 4).sum())
    F._context_ws(mask, fours, ws, 0, conc, win, 0)
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
                ws[F._WS_SK + j], ws[F._WS_ST + j], ws[F._WS_SC + j] = k, t, 1
            ws[F._S_WAIT] = -1  # single wait: not computed yet
            ws[F._S_STATE] = 0  # rebuild the fan counts from base
            pts = F._eval_ws(ws, conc, 4, 0, p, win, False, 0, 1, 0)
            out.append((ws[F._WS_FC : F._WS_FC + F.NUM_FANS].copy(), int(pts)))
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


def family(n_fixed: int) -> tuple[int, list[dict]]:
    """(winning hands, differing calls) of compat vs reference (fans or error), every one-suit hand with
    ``n_fixed`` fixed melds."""
    from mjenv.compat.mahjonggb import MahjongFanCalculator as ours

    melds = [("CHI", f"T{r}", 1) for r in range(2, 9)] + [("PENG", f"T{r}", 1) for r in range(1, 10)]

    def counts(m):
        c = np.zeros(9, np.int64)
        r = int(m[1][1]) - 1
        if m[0] == "CHI":
            c[r - 1 : r + 2] += 1
        else:
            c[r] += 3
        return c

    n, bad = 0, []
    for comp in itertools.product(range(5), repeat=9):
        if sum(comp) != 14 - 3 * n_fixed:
            continue
        comp = np.array(comp)
        for fixed in itertools.combinations_with_replacement(melds, n_fixed):
            if (comp + sum((counts(m) for m in fixed), np.zeros(9, np.int64))).max() > 4:
                continue
            for w in np.flatnonzero(comp):
                conc = comp.copy()
                conc[w] -= 1
                kw = dict(
                    pack=fixed,
                    hand=tuple(f"T{r + 1}" for r in range(9) for _ in range(conc[r])),
                    winTile=f"T{w + 1}",
                    flowerCount=0,
                    isSelfDrawn=False,
                    is4thTile=False,
                    isAboutKong=False,
                    isWallLast=False,
                    seatWind=0,
                    prevalentWind=1,
                    verbose=True,
                )
                got, want = _outcome(ours, kw), _outcome(MahjongGB.MahjongFanCalculator, kw)
                n += not isinstance(want, str)
                if got != want:
                    bad.append(kw)
    return n, bad


def _outcome(f, kw):
    try:
        return f(**kw)
    except TypeError as e:
        return str(e)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--outer", type=int, default=0, help="only the first N pairs of outer sets (0: all)")
    ap.add_argument("--family", action="store_true", help="every one-suit hand with 0-3 fixed melds instead")
    args = ap.parse_args(argv)
    if args.family:
        n_bad = 0
        for n_fixed in range(4):
            n, bad = family(n_fixed)
            n_bad += len(bad)
            print(f"{n_fixed} fixed melds: {n} winning hands, {len(bad)} differences")
            for kw in bad:
                print("  ", kw)
        return 1 if n_bad else 0
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
