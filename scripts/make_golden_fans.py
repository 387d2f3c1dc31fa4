"""Write tests/golden/fans.jsonl: the rule texts' worked examples and, per fan, a positive and a near miss.

Usage: ``PYTHONPATH=. python scripts/make_golden_fans.py`` (needs PyMahjongGB). Every expected value is the
reference calculator's output, recorded with its source; review the diff before committing a regenerated file.
"""

from __future__ import annotations

import json
from pathlib import Path

import MahjongGB
import numpy as np

from mjenv.compat import mahjonggb as ours
from mjenv.fans import FAN_NAME_ZH, Fan
from mjenv.testing.fan_gen import random_case
from mjenv.tiles import format_tiles, tile_from_botzone

OUT = Path(__file__).resolve().parents[1] / "tests" / "golden" / "fans.jsonl"
R001 = "rules 001_*.txt"

# (description, pack, standing tiles (compact), win tile, self_drawn, source note)
EXAMPLES = [
    (
        "就高不就低: 56s self-drawn 7s, chow reading 48 beats pung reading 47",
        [],
        "55566677s567p55p",
        "7s",
        True,
        R001 + " 就高不就低: 一色三同顺24+全带五16+不求人4+平和2+喜相逢1+缺一门1=48",
    ),
    (
        "套算一次: 花龙 123s 456m 789p plus 123m counts one pair fan",
        [],
        "123456m123s789p5p",
        "5p",
        False,
        R001 + " 套算一次: 123m only once with 456m (连六) or 123s (喜相逢)",
    ),
    (
        "套算一次 (1)/(2): 123m 789m 123s 789s give 3 fan, never 4",
        [],
        "123789m123789s2p",
        "2p",
        False,
        R001 + " 套算一次 (1)(2): 2+1 pair fans = 3, not 2 喜相逢 + 2 老少副",
    ),
    (
        "不拆移: 123 234 345 456 一色四步高 without 连六",
        [],
        "123234345456m5p",
        "5p",
        False,
        R001 + " 不拆移: 一色四步高 123/456 not re-used as 连六",
    ),
    (
        "不拆移: 123 345 567 789 一色四步高 without 老少副",
        [],
        "123345567789m5p",
        "5p",
        False,
        R001 + " 不拆移: 一色四步高 123/789 not re-used as 老少副",
    ),
    (
        "不得相同: 123m 456m 789m 123m only one 清龙",
        [],
        "123456789123m5p",
        "5p",
        False,
        R001 + " 不得相同: one 清龙",
    ),
    (
        "不得相同: 222p 333s 444m 555p only one 三色三节高",
        [("PENG", "B2", 1), ("PENG", "T3", 1), ("PENG", "W4", 1)],
        "555p5s",
        "5s",
        False,
        R001 + " 不得相同: one 三色三节高",
    ),
    (
        "不重复: 九莲宝灯 on 5 counts 双暗刻 and 幺九刻x1",
        [],
        "1112345678999m",
        "5m",
        False,
        R001 + " 不重复: 和2、5、8的九莲宝灯应计九莲宝灯、双暗刻、幺九刻x1",
    ),
    (
        "不重复: 九莲宝灯 on 3 counts no 幺九刻",
        [],
        "1112345678999m",
        "3m",
        False,
        R001 + " 不重复: 和1、3、4、6、7、9的九莲宝灯则不计幺九刻",
    ),
    (
        "不重复: 大三元 plus a fourth terminal pung counts 幺九刻 once",
        [("PENG", "J1", 1), ("PENG", "J2", 2), ("PENG", "J3", 3)],
        "111m5m",
        "5m",
        False,
        R001 + " 不重复: 大三元 ... 另一副面子如为幺九刻可加计",
    ),
    (
        "tie-break: equal totals, the reading with the later pair (44s) wins",
        [("PENG", "J3", 3)],
        "1111223444s",
        "3s",
        False,
        "reference tie-break found by scripts/diff_fans.py; expected from PyMahjongGB 1.4.0",
    ),
    (
        "tie-break: equal totals, chows (一色三同顺) over pungs (一色三节高)",
        [],
        "22233444m11123p",
        "3m",
        False,
        "reference tie-break found by scripts/diff_fans.py; expected from PyMahjongGB 1.4.0",
    ),
    (
        "tie-break: pair fans, 一般高 x2 + 老少副 over 一般高 + 老少副 x2",
        [("CHI", "T8", 2), ("CHI", "T8", 3), ("CHI", "T2", 1)],
        "1388s",
        "2s",
        False,
        "reference tie-break found by scripts/diff_fans.py; expected from PyMahjongGB 1.4.0",
    ),
]


def call(kw):
    try:
        return [list(x) for x in MahjongGB.MahjongFanCalculator(**kw, verbose=True)]
    except TypeError as e:
        return str(e)


def record(kw, source, note=""):
    exp = call(kw)
    tiles = [tile_from_botzone(c) for c in kw["hand"]]
    row = {
        "hand": format_tiles(tiles),
        "win_tile": format_tiles([tile_from_botzone(kw["winTile"])]),
        "pack": [list(p) for p in kw["pack"]],
        "flags": {k: kw[k] for k in ("isSelfDrawn", "is4thTile", "isAboutKong", "isWallLast")},
        "seat": kw["seatWind"],
        "prevalent": kw["prevalentWind"],
        "flowers": kw["flowerCount"],
        "expected": {"error": exp}
        if isinstance(exp, str)
        else {"total": sum(p * n for p, n, _, _ in exp), "fans": exp},
        "source": source,
    }
    if note:
        row["note"] = note
    return row


def kwargs(pack, hand, win, sd=False):
    from mjenv.tiles import parse_tiles, tile_to_botzone

    return dict(
        pack=tuple(tuple(p) for p in pack),
        hand=tuple(tile_to_botzone(t) for t in parse_tiles(hand)),
        winTile=tile_to_botzone(parse_tiles(win)[0]),
        flowerCount=0,
        isSelfDrawn=sd,
        is4thTile=False,
        isAboutKong=False,
        isWallLast=False,
        seatWind=0,
        prevalentWind=0,
    )


def main() -> None:
    rows = [record(kwargs(p, h, w, sd), src, note) for note, p, h, w, sd, src in EXAMPLES]
    rng = np.random.default_rng(20261130)
    ref_src = "PyMahjongGB 1.4.0 output on mjenv.testing.fan_gen case (seed 20261130), reviewed"
    for fan in Fan:
        name = FAN_NAME_ZH[fan]
        for _ in range(200_000):
            kw = random_case(rng)
            exp = call(kw)
            if not isinstance(exp, str) and any(x[2] == name for x in exp):
                break
        else:
            raise RuntimeError(f"no case for {name}")
        rows.append(record(kw, ref_src, f"positive: {fan.name}"))
        for _ in range(10_000):  # near miss: one tile or flag changed and the fan is gone
            m = dict(kw)
            hand = list(m["hand"])
            u = rng.integers(3)
            if u == 0 and hand:
                hand[int(rng.integers(len(hand)))] = str(rng.choice(list(MahjongGB_codes())))
                m["hand"] = tuple(sorted(hand))
            elif u == 1:
                m["winTile"] = str(rng.choice(list(MahjongGB_codes())))
            else:
                k = str(rng.choice(["isSelfDrawn", "is4thTile", "isAboutKong", "isWallLast"]))
                m[k] = not m[k]
                m["flowerCount"] = 0 if fan == Fan.FLOWER_TILES else m["flowerCount"]
            try:  # stay within 4 copies of a tile (the reference scores impossible hands; see docs/verification.md)
                ours.MahjongFanCalculator(**m)
            except TypeError as e:
                if "GREATER_THAN_4" in str(e):
                    continue
            got = call(m)
            if (
                isinstance(got, str)
                and got == "ERROR_NOT_WIN"
                or not isinstance(got, str)
                and all(x[2] != name for x in got)
            ):
                rows.append(record(m, ref_src, f"near miss: {fan.name}"))
                break
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    print(f"wrote {len(rows)} cases to {OUT}")


def MahjongGB_codes():
    from mjenv.tiles import BOTZONE_CODES

    return BOTZONE_CODES[:34]


if __name__ == "__main__":
    main()
