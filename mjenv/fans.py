"""Fan scoring (算番): the 81 fans of MCR, the five counting principles, and the scorer kernels.

Rules
-----
MCR (``docs/rules.md``; source 000: 番种表 and 番种释义; source 001: the five counting principles with worked
examples). A win is scored by the fans (番) its tiles and context make; the highest-scoring way to read the
hand counts (就高不就低). A fan implied by another is not counted again (不重复, the ``EXCLUDES`` table); a fan once
formed is not split to form new fans (不拆移); sets that formed a fan do not form the same fan again with another
set (不得相同); a set not yet used combines only once with the sets of a fan (套算一次).
Flowers add 1 fan each and never count toward the 8-fan minimum.

Specification in mjenv
----------------------
The rule interpretation, fan set and tie-breaks are those of the reference calculator PyMahjongGB 1.4.0
(checked by ``scripts/diff_fans.py`` and ``tests/test_fans.py``): its 明暗杠 fan (5: one concealed
and one exposed kong), no blessings (天和 etc.), and the way it validates context flags (a robbed-kong or
last-tile flag that the tiles make impossible is ignored; 杠上开花 needs a kong). ``Fan`` values follow the
point order 88 down to 1 (明暗杠 between the 6- and 4-fan groups, flowers last); ``REFERENCE_ORDER`` is the
order the reference prints them in.

Kernel contract (``docs/design.md``)::

    score_kernel(concealed int8[34], melds int16[4], n_melds, win_tile, flags, seat_wind, prevalent_wind,
                 flower_count, fan_counts int16[NUM_FANS]) -> total fan (>= 0) or ERR_* (< 0)
"""

from __future__ import annotations

from enum import IntEnum

import numba
import numpy as np
from numba import types as _nt

from mjenv._jit import njit, shared_kernel
from mjenv.hand import (
    honors_knitted_kernel,
    knitted_perm_kernel,
    single_wait_kernel,
    special_shape_kernel,
    suit_sets_kernel,
    take_knitted_kernel,
)
from mjenv.melds import meld_kind, meld_offer, meld_tile
from mjenv.rules import MIN_WIN_FAN  # ScoreResult.is_legal_win (also mjenv.fans.MIN_WIN_FAN, as before)
from mjenv.tiles import IS_GREEN, IS_REVERSIBLE, IS_TERMINAL_OR_HONOR, KNITS, NUM_TILE_TYPES

# count trailing zeros as one instruction (numba's own intrinsic; internal, so it has a fallback, which is also
# what plain Python runs under NUMBA_DISABLE_JIT: an intrinsic cannot run there)
try:
    if numba.config.DISABLE_JIT:
        raise ImportError("numba intrinsics need the JIT")
    from numba.cpython.unsafe.numbers import trailing_zeros
except ImportError:

    @njit
    def trailing_zeros(x):
        """Index of the lowest set bit of ``x`` (64 for 0, as the intrinsic's ``cttz``)."""
        if x == 0:
            return 64
        n = 0
        while (x & 1) == 0:
            x >>= 1
            n += 1
        return n


# --- win flags (bitmask) ---------------------------------------------------------------------------------
WIN_SELF_DRAWN = 1
WIN_4TH_TILE = 2
WIN_ABOUT_KONG = 4
WIN_WALL_LAST = 8
ALL_FLAGS = 15
#: scorer option bit (not a win context): the Botzone judge's bundled calculator, which counts no edge, closed or
#: single wait (边张/嵌张/单钓将) in a knitted-straight reading when the winning tile is one of the knitted
#: straight's nine tiles (``RuleConfig.knitted_wait_fans=False``). Without the bit the scoring is PyMahjongGB's.
WIN_KNITTED_NO_WAIT = 16
SCORER_FLAGS = ALL_FLAGS | WIN_KNITTED_NO_WAIT

# --- error codes (kernel return values) ------------------------------------------------------------------
ERR_WRONG_TILES_COUNT = -1
ERR_TILE_COUNT_GREATER_THAN_4 = -2
ERR_NOT_WIN = -3
ERR_BAD_MELD = -4
ERR_BAD_ARGUMENT = -5


# --- the fan table: one line per fan (value, points, Chinese and English names); the rest is derived -------
# ``F_*`` are the plain-int values the kernels use (numba freezes ints, not enum members); ``Fan`` is the enum
# of the same values, ``FAN_POINTS`` / ``FAN_NAME_ZH`` / ``FAN_NAME_EN`` are indexed by them. The values follow
# the point order 88 down to 1; the names are spelt as the reference calculator prints them (Chinese in its
# result, English in its verbose output).
_FAN_ROWS: list[tuple[int, str, str]] = []


def _fan(points: int, zh: str, en: str) -> int:
    """Append a row to the fan table; returns the fan's value (its row)."""
    _FAN_ROWS.append((points, zh, en))
    return len(_FAN_ROWS) - 1


F_BIG_FOUR_WINDS = _fan(88, "大四喜", "Big Four Winds")
F_BIG_THREE_DRAGONS = _fan(88, "大三元", "Big Three Dragons")
F_ALL_GREEN = _fan(88, "绿一色", "All Green")
F_NINE_GATES = _fan(88, "九莲宝灯", "Nine Gates")
F_FOUR_KONGS = _fan(88, "四杠", "Four Kongs")
F_SEVEN_SHIFTED_PAIRS = _fan(88, "连七对", "Seven Shifted Pairs")
F_THIRTEEN_ORPHANS = _fan(88, "十三幺", "Thirteen Orphans")
F_ALL_TERMINALS = _fan(64, "清幺九", "All Terminals")
F_LITTLE_FOUR_WINDS = _fan(64, "小四喜", "Little Four Winds")
F_LITTLE_THREE_DRAGONS = _fan(64, "小三元", "Little Three Dragons")
F_ALL_HONORS = _fan(64, "字一色", "All Honors")
F_FOUR_CONCEALED_PUNGS = _fan(64, "四暗刻", "Four Concealed Pungs")
F_PURE_TERMINAL_CHOWS = _fan(64, "一色双龙会", "Pure Terminal Chows")
F_QUADRUPLE_CHOW = _fan(48, "一色四同顺", "Quadruple Chow")
F_FOUR_PURE_SHIFTED_PUNGS = _fan(48, "一色四节高", "Four Pure Shifted Pungs")
F_FOUR_PURE_SHIFTED_CHOWS = _fan(32, "一色四步高", "Four Pure Shifted Chows")
F_THREE_KONGS = _fan(32, "三杠", "Three Kongs")
F_ALL_TERMINALS_AND_HONORS = _fan(32, "混幺九", "All Terminals and Honors")
F_SEVEN_PAIRS = _fan(24, "七对", "Seven Pairs")
F_GREATER_HONORS_AND_KNITTED_TILES = _fan(24, "七星不靠", "Greater Honors and Knitted Tiles")
F_ALL_EVEN_PUNGS = _fan(24, "全双刻", "All Even Pungs")
F_FULL_FLUSH = _fan(24, "清一色", "Full Flush")
F_PURE_TRIPLE_CHOW = _fan(24, "一色三同顺", "Pure Triple Chow")
F_PURE_SHIFTED_PUNGS = _fan(24, "一色三节高", "Pure Shifted Pungs")
F_UPPER_TILES = _fan(24, "全大", "Upper Tiles")
F_MIDDLE_TILES = _fan(24, "全中", "Middle Tiles")
F_LOWER_TILES = _fan(24, "全小", "Lower Tiles")
F_PURE_STRAIGHT = _fan(16, "清龙", "Pure Straight")
F_THREE_SUITED_TERMINAL_CHOWS = _fan(16, "三色双龙会", "Three-Suited Terminal Chows")
F_PURE_SHIFTED_CHOWS = _fan(16, "一色三步高", "Pure Shifted Chows")
F_ALL_FIVE = _fan(16, "全带五", "All Five")
F_TRIPLE_PUNG = _fan(16, "三同刻", "Triple Pung")
F_THREE_CONCEALED_PUNGS = _fan(16, "三暗刻", "Three Concealed Pungs")
F_LESSER_HONORS_AND_KNITTED_TILES = _fan(12, "全不靠", "Lesser Honors and Knitted Tiles")
F_KNITTED_STRAIGHT = _fan(12, "组合龙", "Knitted Straight")
F_UPPER_FOUR = _fan(12, "大于五", "Upper Four")
F_LOWER_FOUR = _fan(12, "小于五", "Lower Four")
F_BIG_THREE_WINDS = _fan(12, "三风刻", "Big Three Winds")
F_MIXED_STRAIGHT = _fan(8, "花龙", "Mixed Straight")
F_REVERSIBLE_TILES = _fan(8, "推不倒", "Reversible Tiles")
F_MIXED_TRIPLE_CHOW = _fan(8, "三色三同顺", "Mixed Triple Chow")
F_MIXED_SHIFTED_PUNGS = _fan(8, "三色三节高", "Mixed Shifted Pungs")
F_CHICKEN_HAND = _fan(8, "无番和", "Chicken Hand")
F_LAST_TILE_DRAW = _fan(8, "妙手回春", "Last Tile Draw")
F_LAST_TILE_CLAIM = _fan(8, "海底捞月", "Last Tile Claim")
F_OUT_WITH_REPLACEMENT_TILE = _fan(8, "杠上开花", "Out with Replacement Tile")
F_ROBBING_THE_KONG = _fan(8, "抢杠和", "Robbing The Kong")
F_ALL_PUNGS = _fan(6, "碰碰和", "All Pungs")
F_HALF_FLUSH = _fan(6, "混一色", "Half Flush")
F_MIXED_SHIFTED_CHOWS = _fan(6, "三色三步高", "Mixed Shifted Chows")
F_ALL_TYPES = _fan(6, "五门齐", "All Types")
F_MELDED_HAND = _fan(6, "全求人", "Melded Hand")
F_TWO_CONCEALED_KONGS = _fan(6, "双暗杠", "Two Concealed Kongs")
F_TWO_DRAGONS_PUNGS = _fan(6, "双箭刻", "Two Dragons Pungs")
F_CONCEALED_KONG_AND_MELDED_KONG = _fan(
    5, "明暗杠", "Concealed Kong and Melded Kong"
)  # (the reference's extra fan)
F_OUTSIDE_HAND = _fan(4, "全带幺", "Outside Hand")
F_FULLY_CONCEALED_HAND = _fan(4, "不求人", "Fully Concealed Hand")
F_TWO_MELDED_KONGS = _fan(4, "双明杠", "Two Melded Kongs")
F_LAST_TILE = _fan(4, "和绝张", "Last Tile")
F_DRAGON_PUNG = _fan(2, "箭刻", "Dragon Pung")
F_PREVALENT_WIND = _fan(2, "圈风刻", "Prevalent Wind")
F_SEAT_WIND = _fan(2, "门风刻", "Seat Wind")
F_CONCEALED_HAND = _fan(2, "门前清", "Concealed Hand")
F_ALL_CHOWS = _fan(2, "平和", "All Chows")
F_TILE_HOG = _fan(2, "四归一", "Tile Hog")
F_DOUBLE_PUNG = _fan(2, "双同刻", "Double Pung")
F_TWO_CONCEALED_PUNGS = _fan(2, "双暗刻", "Two Concealed Pungs")
F_CONCEALED_KONG = _fan(2, "暗杠", "Concealed Kong")
F_ALL_SIMPLES = _fan(2, "断幺", "All Simples")
F_PURE_DOUBLE_CHOW = _fan(1, "一般高", "Pure Double Chow")
F_MIXED_DOUBLE_CHOW = _fan(1, "喜相逢", "Mixed Double Chow")
F_SHORT_STRAIGHT = _fan(1, "连六", "Short Straight")
F_TWO_TERMINAL_CHOWS = _fan(1, "老少副", "Two Terminal Chows")
F_PUNG_OF_TERMINALS_OR_HONORS = _fan(1, "幺九刻", "Pung of Terminals or Honors")
F_MELDED_KONG = _fan(1, "明杠", "Melded Kong")
F_ONE_VOIDED_SUIT = _fan(1, "缺一门", "One Voided Suit")
F_NO_HONORS = _fan(1, "无字", "No Honors")
F_EDGE_WAIT = _fan(1, "独听・边张", "Edge Wait")
F_CLOSED_WAIT = _fan(1, "独听・嵌张", "Closed Wait")
F_SINGLE_WAIT = _fan(1, "独听・单钓", "Single Wait")
F_SELF_DRAWN = _fan(1, "自摸", "Self-Drawn")
F_FLOWER_TILES = _fan(1, "花牌", "Flower Tiles")  # each

NUM_FANS = len(_FAN_ROWS)
#: The fans, in point order (88 down to 1); the value indexes ``fan_counts``.
Fan = IntEnum("Fan", [(_k[2:], _v) for _k, _v in list(globals().items()) if _k.startswith("F_")])
Fan.__doc__ = "The fans, in point order (88 down to 1); the value indexes ``fan_counts``."
F = Fan
assert [int(f) for f in Fan] == list(range(NUM_FANS))
#: points of one occurrence of each fan, ``int16[NUM_FANS]``
FAN_POINTS = np.array([_r[0] for _r in _FAN_ROWS], dtype=np.int16)
FAN_POINTS.setflags(write=False)
assert all(FAN_POINTS[:-1] >= FAN_POINTS[1:]), "the fan values follow the point order"
#: Chinese names, spelt as the reference calculator prints them
FAN_NAME_ZH: tuple[str, ...] = tuple(_r[1] for _r in _FAN_ROWS)
#: English names, spelt as the reference calculator's verbose output prints them
FAN_NAME_EN: tuple[str, ...] = tuple(_r[2] for _r in _FAN_ROWS)

#: the order in which the reference calculator lists fans: the rulebook numbering 1..81, then 明暗杠
REFERENCE_ORDER: tuple[Fan, ...] = tuple(f for f in Fan if f != F.CONCEALED_KONG_AND_MELDED_KONG) + (
    F.CONCEALED_KONG_AND_MELDED_KONG,
)

# --- exclusions (不重复原则), written once ----------------------------------------------------------------
# A counted fan removes the fans listed for it. Rule text from 番种释义 (source 000, docs/rules.md) unless
# marked "ref": the reference calculator's reading, found by differential testing (scripts/diff_fans.py).
# Partial 幺九刻 exclusions (the pungs of a wind/dragon fan) are not here: _pung_fans counts 幺九刻 only on
# pungs that no wind/dragon fan used ("组成大三元的三副刻子不计幺九刻" etc.).
EXCLUDES: dict[Fan, tuple[Fan, ...]] = {
    # 大四喜: 不计三风刻、碰碰和、圈风刻、门风刻、幺九刻
    F.BIG_FOUR_WINDS: (F.BIG_THREE_WINDS, F.ALL_PUNGS, F.PREVALENT_WIND, F.SEAT_WIND),
    # 大三元: 不计双箭刻、箭刻
    F.BIG_THREE_DRAGONS: (F.TWO_DRAGONS_PUNGS, F.DRAGON_PUNG),
    # 绿一色: 不计混一色
    F.ALL_GREEN: (F.HALF_FLUSH,),
    # 九莲宝灯: 不计清一色、不求人、门前清、无字、幺九刻×1 (the ×1 in _eval_ws)
    F.NINE_GATES: (F.FULL_FLUSH, F.FULLY_CONCEALED_HAND, F.CONCEALED_HAND, F.NO_HONORS),
    # 四杠: 不计碰碰和、单钓将
    F.FOUR_KONGS: (F.ALL_PUNGS, F.SINGLE_WAIT),
    # 连七对: 不计清一色、七对、不求人、门前清、无字、单钓将
    F.SEVEN_SHIFTED_PAIRS: (
        F.FULL_FLUSH,
        F.SEVEN_PAIRS,
        F.FULLY_CONCEALED_HAND,
        F.CONCEALED_HAND,
        F.NO_HONORS,
        F.SINGLE_WAIT,
    ),
    # 十三幺: 不计混幺九、五门齐、不求人、门前清、单钓将
    F.THIRTEEN_ORPHANS: (
        F.ALL_TERMINALS_AND_HONORS,
        F.ALL_TYPES,
        F.FULLY_CONCEALED_HAND,
        F.CONCEALED_HAND,
        F.SINGLE_WAIT,
    ),
    # 清幺九: 不计碰碰和、全带幺、双同刻、幺九刻、无字
    F.ALL_TERMINALS: (F.ALL_PUNGS, F.OUTSIDE_HAND, F.DOUBLE_PUNG, F.PUNG_OF_TERMINALS_OR_HONORS, F.NO_HONORS),
    # 小四喜: 不计三风刻 (its three wind pungs' 幺九刻 in _pung_fans)
    F.LITTLE_FOUR_WINDS: (F.BIG_THREE_WINDS,),
    # 小三元: 不计双箭刻、箭刻
    F.LITTLE_THREE_DRAGONS: (F.TWO_DRAGONS_PUNGS, F.DRAGON_PUNG),
    # 字一色: 不计碰碰和、全带幺、幺九刻
    F.ALL_HONORS: (F.ALL_PUNGS, F.OUTSIDE_HAND, F.PUNG_OF_TERMINALS_OR_HONORS),
    # 四暗刻: 不计碰碰和、不求人、门前清
    F.FOUR_CONCEALED_PUNGS: (F.ALL_PUNGS, F.FULLY_CONCEALED_HAND, F.CONCEALED_HAND),
    # 一色双龙会: 不计七对、清一色、平和、一般高、老少副、无字
    F.PURE_TERMINAL_CHOWS: (
        F.SEVEN_PAIRS,
        F.FULL_FLUSH,
        F.ALL_CHOWS,
        F.PURE_DOUBLE_CHOW,
        F.TWO_TERMINAL_CHOWS,
        F.NO_HONORS,
    ),
    # 一色四同顺: 不计一色三同顺、一色三节高、四归一、一般高
    F.QUADRUPLE_CHOW: (F.PURE_TRIPLE_CHOW, F.PURE_SHIFTED_PUNGS, F.TILE_HOG, F.PURE_DOUBLE_CHOW),
    # 一色四节高: 不计一色三同顺、一色三节高、碰碰和
    F.FOUR_PURE_SHIFTED_PUNGS: (F.PURE_TRIPLE_CHOW, F.PURE_SHIFTED_PUNGS, F.ALL_PUNGS),
    # 一色四步高: 不计一色三步高、连六、老少副
    F.FOUR_PURE_SHIFTED_CHOWS: (F.PURE_SHIFTED_CHOWS, F.SHORT_STRAIGHT, F.TWO_TERMINAL_CHOWS),
    # 混幺九: 不计碰碰和、全带幺、幺九刻
    F.ALL_TERMINALS_AND_HONORS: (F.ALL_PUNGS, F.OUTSIDE_HAND, F.PUNG_OF_TERMINALS_OR_HONORS),
    # 双暗杠 (ref): its two kongs do not count 双暗刻 again
    F.TWO_CONCEALED_KONGS: (F.TWO_CONCEALED_PUNGS,),
    # 七对: 不计不求人、门前清、单钓将
    F.SEVEN_PAIRS: (F.FULLY_CONCEALED_HAND, F.CONCEALED_HAND, F.SINGLE_WAIT),
    # 七星不靠: 不计全不靠、五门齐、不求人、门前清 (番种表: 单钓)
    F.GREATER_HONORS_AND_KNITTED_TILES: (
        F.LESSER_HONORS_AND_KNITTED_TILES,
        F.ALL_TYPES,
        F.FULLY_CONCEALED_HAND,
        F.CONCEALED_HAND,
        F.SINGLE_WAIT,
    ),
    # 全双刻: 不计碰碰和、断幺、无字
    F.ALL_EVEN_PUNGS: (F.ALL_PUNGS, F.ALL_SIMPLES, F.NO_HONORS),
    # 清一色: 不计无字
    F.FULL_FLUSH: (F.NO_HONORS,),
    # 一色三同顺: 不计一色三节高、一般高
    F.PURE_TRIPLE_CHOW: (F.PURE_SHIFTED_PUNGS, F.PURE_DOUBLE_CHOW),
    # 一色三节高: 不计一色三同顺
    F.PURE_SHIFTED_PUNGS: (F.PURE_TRIPLE_CHOW,),
    # 全大: 不计大于五、无字
    F.UPPER_TILES: (F.UPPER_FOUR, F.NO_HONORS),
    # 全中: 不计断幺、无字
    F.MIDDLE_TILES: (F.ALL_SIMPLES, F.NO_HONORS),
    # 全小: 不计小于五、无字
    F.LOWER_TILES: (F.LOWER_FOUR, F.NO_HONORS),
    # 清龙: 不计连六、老少副
    F.PURE_STRAIGHT: (F.SHORT_STRAIGHT, F.TWO_TERMINAL_CHOWS),
    # 三色双龙会: 不计平和、老少副、喜相逢、无字
    F.THREE_SUITED_TERMINAL_CHOWS: (F.ALL_CHOWS, F.TWO_TERMINAL_CHOWS, F.MIXED_DOUBLE_CHOW, F.NO_HONORS),
    # 全带五: 不计断幺、无字
    F.ALL_FIVE: (F.ALL_SIMPLES, F.NO_HONORS),
    # 三同刻: 不计双同刻
    F.TRIPLE_PUNG: (F.DOUBLE_PUNG,),
    # 全不靠: 不计五门齐、不求人、门前清 (番种表: 单钓)
    F.LESSER_HONORS_AND_KNITTED_TILES: (F.ALL_TYPES, F.FULLY_CONCEALED_HAND, F.CONCEALED_HAND, F.SINGLE_WAIT),
    # 大于五: 不计无字
    F.UPPER_FOUR: (F.NO_HONORS,),
    # 小于五: 不计无字
    F.LOWER_FOUR: (F.NO_HONORS,),
    # 推不倒: 不计缺一门
    F.REVERSIBLE_TILES: (F.ONE_VOIDED_SUIT,),
    # 三色三同顺: 不计喜相逢
    F.MIXED_TRIPLE_CHOW: (F.MIXED_DOUBLE_CHOW,),
    # 妙手回春: 不计自摸
    F.LAST_TILE_DRAW: (F.SELF_DRAWN,),
    # 杠上开花: 不计自摸
    F.OUT_WITH_REPLACEMENT_TILE: (F.SELF_DRAWN,),
    # 抢杠和: 不计和绝张
    F.ROBBING_THE_KONG: (F.LAST_TILE,),
    # 全求人: 不计单钓将
    F.MELDED_HAND: (F.SINGLE_WAIT,),
    # 双箭刻: 不计箭刻
    F.TWO_DRAGONS_PUNGS: (F.DRAGON_PUNG,),
    # 不求人: 不计自摸
    F.FULLY_CONCEALED_HAND: (F.SELF_DRAWN,),
    # 平和: 不计无字
    F.ALL_CHOWS: (F.NO_HONORS,),
    # 断幺: 不计无字
    F.ALL_SIMPLES: (F.NO_HONORS,),
}

#: ``EXCLUDES`` as a boolean matrix: ``EXCLUDE_MATRIX[a, b]`` means a counted ``a`` removes ``b``
EXCLUDE_MATRIX = np.zeros((NUM_FANS, NUM_FANS), dtype=np.bool_)
for _a, _bs in EXCLUDES.items():
    for _b in _bs:
        EXCLUDE_MATRIX[_a, _b] = True
EXCLUDE_MATRIX.setflags(write=False)
#: ``EXCLUDES`` as padded lists for the kernels: ``EXCLUDE_LIST[a, :EXCLUDE_LEN[a]]`` are removed by ``a``
EXCLUDE_LIST = np.zeros((NUM_FANS, 8), dtype=np.int8)
EXCLUDE_LEN = np.zeros(NUM_FANS, dtype=np.int8)
for _a, _bs in EXCLUDES.items():
    EXCLUDE_LIST[_a, : len(_bs)] = _bs
    EXCLUDE_LEN[_a] = len(_bs)
EXCLUDE_LIST.setflags(write=False)
_EXCLUDERS = np.array(sorted(EXCLUDES), dtype=np.int8)


def _fan_mask(fans) -> np.ndarray:
    """Fans as two int64 mask words (bit f % 64 of word f // 64)."""
    words = [0, 0]
    for f in fans:
        words[int(f) >> 6] |= 1 << (int(f) & 63)
    return np.array(words, dtype=np.uint64).view(np.int64)


#: ``EXCLUDES`` as masks for the kernels: the excluding fans, and the fans each one removes
_EXCLUDER_MASK = _fan_mask(EXCLUDES)
_EXCLUDED_MASK = np.stack([_fan_mask(EXCLUDES.get(Fan(a), ())) for a in range(NUM_FANS)])
_EXCLUDER_MASK.setflags(write=False)
_EXCLUDED_MASK.setflags(write=False)  # the fans that exclude something, in fan order
_EXCLUDERS.setflags(write=False)
EXCLUDE_LEN.setflags(write=False)
del _a, _bs, _b

# --- kernels ----------------------------------------------------------------------------------------------
# Sets inside the kernels: kind 1 chow (tile = LOWEST tile), 2 pung, 3 kong; fixed melds first.
_CHOW, _PUNG, _KONG = 1, 2, 3
_TERM_HONOR = np.ascontiguousarray(IS_TERMINAL_OR_HONOR[:NUM_TILE_TYPES])
_GREEN = np.ascontiguousarray(IS_GREEN[:NUM_TILE_TYPES])
_REVERSIBLE = np.ascontiguousarray(IS_REVERSIBLE[:NUM_TILE_TYPES])
#: the six knitted straights (组合龙): suit of 147, 258, 369 (mjenv.tiles.KNITS)
_KNITTED = KNITS
for _x in (_TERM_HONOR, _GREEN, _REVERSIBLE):
    _x.setflags(write=False)


def _bits(flags) -> int:
    return sum(1 << int(t) for t in np.flatnonzero(flags))


# the same tile sets as 34-bit masks (bit t: tile t) for the mask kernels
_TERM_HONOR_M = _bits(_TERM_HONOR)
_GREEN_M = _bits(_GREEN)
_REVERSIBLE_M = _bits(_REVERSIBLE)
#: the nine tiles of each knitted straight as a mask
_KNITTED_M = np.array(
    [sum(1 << (9 * int(_KNITTED[k, s]) + s + 3 * j) for s in range(3) for j in range(3)) for k in range(6)],
    dtype=np.int64,
)
_KNITTED_M.setflags(write=False)


@njit
def _copy(dst, src):
    """``dst[:] = src`` as a plain loop (numba's slice assignment is slower on these short arrays)."""
    for k in range(src.shape[0]):
        dst[k] = src[k]


@njit
def _apply_excludes(fan_counts):
    """Apply ``EXCLUDES`` (in fan order) to a count vector; return the total points."""
    total = 0
    for j in range(_EXCLUDERS.shape[0]):
        a = _EXCLUDERS[j]
        if fan_counts[a] > 0:
            for k in range(EXCLUDE_LEN[a]):
                fan_counts[EXCLUDE_LIST[a, k]] = 0
    for a in range(NUM_FANS):
        total += fan_counts[a] * FAN_POINTS[a]
    return total


@njit
def _tile_fans(tile_counts, fan_counts):
    """Fans decided by the set of tiles alone (suits, honours, ranks, colours). ``tile_counts``: all 14+ tiles."""
    mask = 0
    for t in range(34):
        if tile_counts[t] > 0:
            mask |= 1 << t
    _tile_fans_mask(mask, fan_counts, 0)


@njit
def _tile_fans_mask(mask, fan_counts, o):
    """``_tile_fans`` of the tiles in ``mask`` (bit t: tile t is held or melded), into ``fan_counts[o + o:]``."""
    s0 = mask & 0x1FF
    s1 = (mask >> 9) & 0x1FF
    s2 = (mask >> 18) & 0x1FF
    # np.int64: numpy bools add as a logical or (NUMBA_DISABLE_JIT), numba's as integers
    nsuits = np.int64(s0 != 0) + np.int64(s1 != 0) + np.int64(s2 != 0)
    winds = (mask >> 27) & 0xF
    dragons = (mask >> 31) & 0x7
    honors = (winds | dragons) != 0
    ranks = s0 | s1 | s2  # bit r: rank r + 1 in some suit
    if mask & ~_GREEN_M == 0:
        fan_counts[o + F_ALL_GREEN] = 1
    if nsuits == 0:
        fan_counts[o + F_ALL_HONORS] = 1
    elif not honors and ranks & ~0x101 == 0:  # suited terminals only
        fan_counts[o + F_ALL_TERMINALS] = 1
    elif mask & ~_TERM_HONOR_M == 0 and honors:
        fan_counts[o + F_ALL_TERMINALS_AND_HONORS] = 1
    if nsuits == 1:
        fan_counts[o + (F_HALF_FLUSH if honors else F_FULL_FLUSH)] = 1
    elif nsuits == 2:
        fan_counts[o + F_ONE_VOIDED_SUIT] = 1
    if nsuits == 3 and winds != 0 and dragons != 0:
        fan_counts[o + F_ALL_TYPES] = 1
    if not honors:
        fan_counts[o + F_NO_HONORS] = 1
        if mask & _TERM_HONOR_M == 0:
            fan_counts[o + F_ALL_SIMPLES] = 1
        if ranks & 0x3F == 0:  # ranks 7-9 only
            fan_counts[o + F_UPPER_TILES] = 1
        elif ranks & 0x1C7 == 0:  # 4-6
            fan_counts[o + F_MIDDLE_TILES] = 1
        elif ranks & 0x1F8 == 0:  # 1-3
            fan_counts[o + F_LOWER_TILES] = 1
        if ranks & 0x1F == 0:  # 6-9
            fan_counts[o + F_UPPER_FOUR] = 1
        elif ranks & 0x1F0 == 0:  # 1-4
            fan_counts[o + F_LOWER_FOUR] = 1
    if mask & ~_REVERSIBLE_M == 0:
        fan_counts[o + F_REVERSIBLE_TILES] = 1


@njit
def _chow3(s0, r0, s1, r1, s2, r2):
    """Best fan of three chows (suit, lowest rank), or -1."""
    a = min(r0, r1, r2)
    c = max(r0, r1, r2)
    b = r0 + r1 + r2 - a - c
    if s0 == s1 and s1 == s2:
        if a == c:
            return F_PURE_TRIPLE_CHOW
        if a == 1 and b == 4 and c == 7:
            return F_PURE_STRAIGHT
        if b - a == c - b and (b - a == 1 or b - a == 2):
            return F_PURE_SHIFTED_CHOWS
    elif s0 != s1 and s1 != s2 and s0 != s2:
        if a == c:
            return F_MIXED_TRIPLE_CHOW
        if a == 1 and b == 4 and c == 7:
            return F_MIXED_STRAIGHT
        if b - a == 1 and c - b == 1:
            return F_MIXED_SHIFTED_CHOWS
    return -1


@njit
def _chow2(s0, r0, s1, r1):
    """Fan of two chows, or -1."""
    if s0 == s1:
        if r0 == r1:
            return F_PURE_DOUBLE_CHOW
        if abs(r0 - r1) == 3:
            return F_SHORT_STRAIGHT
        if abs(r0 - r1) == 6:
            return F_TWO_TERMINAL_CHOWS
    elif r0 == r1:
        return F_MIXED_DOUBLE_CHOW
    return -1


@njit
def _pung3(s0, r0, s1, r1, s2, r2):
    """Best fan of three suited pungs (suit, rank), or -1."""
    a = min(r0, r1, r2)
    c = max(r0, r1, r2)
    b = r0 + r1 + r2 - a - c
    if s0 == s1 and s1 == s2:
        if b - a == 1 and c - b == 1:
            return F_PURE_SHIFTED_PUNGS
    elif s0 != s1 and s1 != s2 and s0 != s2:
        if a == c:
            return F_TRIPLE_PUNG
        if b - a == 1 and c - b == 1:
            return F_MIXED_SHIFTED_PUNGS
    return -1


@njit
def _pung2(s0, r0, s1, r1):
    if s0 != s1 and r0 == r1:
        return F_DOUBLE_PUNG
    return -1


@njit
def _group3(chow, s0, r0, s1, r1, s2, r2):
    return _chow3(s0, r0, s1, r1, s2, r2) if chow else _pung3(s0, r0, s1, r1, s2, r2)


@njit
def _group2(chow, s0, r0, s1, r1):
    return _chow2(s0, r0, s1, r1) if chow else _pung2(s0, r0, s1, r1)


@njit
def _group4(chow, ws, o):
    """Four-set fans: 一色四同顺 / 一色四步高 (chows), 一色四节高 (pungs); or -1."""
    if ws[o] != ws[o + 1] or ws[o + 1] != ws[o + 2] or ws[o + 2] != ws[o + 3]:
        return -1
    lo = min(ws[o + 4], ws[o + 4 + 1], ws[o + 4 + 2], ws[o + 4 + 3])
    hi = max(ws[o + 4], ws[o + 4 + 1], ws[o + 4 + 2], ws[o + 4 + 3])
    d = (hi - lo) // 3
    if (hi - lo) % 3:
        return -1
    for k in range(4):  # four distinct ranks lo, lo+d, lo+2d, lo+3d (or all equal when d == 0)
        for j in range(k):
            if ws[o + 4 + j] == ws[o + 4 + k] and d != 0:
                return -1
        if (ws[o + 4 + k] - lo) % max(d, 1):
            return -1
    if chow:
        if d == 0:
            return F_QUADRUPLE_CHOW
        if d == 1 or d == 2:
            return F_FOUR_PURE_SHIFTED_CHOWS
    elif d == 1:
        return F_FOUR_PURE_SHIFTED_PUNGS
    return -1


@njit
def _combo_fans(chow, ws, o, n):
    """Fans between chows (or suited pungs): 不拆移, 不得相同, 套算一次.

    Four sets: a four-set fan, else the best three-set fan plus at most one pair fan of the fourth set with
    one of those three (套算一次), else pair fans chosen as an acyclic set of pairs in which no set takes
    part twice in the same fan (不得相同), as many as possible.
    """
    if n == 4:
        f = _group4(chow, ws, o)
        if f >= 0:
            _add(ws, f, 1)
            return
    if n >= 3:
        best = -1
        skip = -1
        for k in range(4):
            i0, i1, i2 = (
                (1, 2, 3) if k == 0 else ((0, 2, 3) if k == 1 else ((0, 1, 3) if k == 2 else (0, 1, 2)))
            )
            if n == 3 and k != 3:
                continue
            f = _group3(
                chow, ws[o + i0], ws[o + 4 + i0], ws[o + i1], ws[o + 4 + i1], ws[o + i2], ws[o + 4 + i2]
            )
            if f >= 0 and (best < 0 or FAN_POINTS[f] > FAN_POINTS[best]):
                best = f
                skip = k
        if best >= 0:
            _add(ws, best, 1)
            if n == 4:  # 套算一次: the fourth set pairs once, best 一般高 > 喜相逢 > 连六 > 老少副 (ref)
                pick = -1
                for j in range(4):
                    if j != skip:
                        f = _group2(chow, ws[o + skip], ws[o + 4 + skip], ws[o + j], ws[o + 4 + j])
                        if (
                            f >= 0
                            and not EXCLUDE_MATRIX[best, f]
                            and (pick < 0 or _PAIR_KEY[f] > _PAIR_KEY[pick])
                        ):
                            pick = f
                if pick >= 0:
                    _add(ws, pick, 1)
            return
    _pair_fans(chow, ws, o, n)


_PAIR_KEY = np.zeros(NUM_FANS, dtype=np.int64)
_PAIR_KEY[[Fan.PURE_DOUBLE_CHOW, Fan.MIXED_DOUBLE_CHOW, Fan.SHORT_STRAIGHT, Fan.TWO_TERMINAL_CHOWS]] = [
    1000,
    100,
    10,
    1,
]
_PAIR_KEY.setflags(write=False)


@njit
def _pair_fans(chow, ws, o, n):
    """Pair fans among n <= 4 sets with no three-set fan: the largest valid set of pairs (see _combo_fans)."""
    if n < 2:
        return
    if not chow:  # 双同刻: pungs of one rank (never of one suit); three of them would be 三同刻
        for i in range(n):
            for j in range(i + 1, n):
                if ws[o + 4 + i] == ws[o + 4 + j]:
                    _add(ws, F_DOUBLE_PUNG, 1)
        return
    # the six pairs of sets (0,1) (0,2) (0,3) (1,2) (1,3) (2,3) are edges 0..5; ``ef``: 4 bits per edge, the
    # edge's fan - 64 (pair fans are 69..72), 0 for none. Two edges share a set unless their indices sum to 5.
    ef = np.int64(0)  # int64, not the literal 0: no Literal specialization of _best_pairs (see _score)
    present = np.int64(0)
    e = 0
    for i in range(3):
        for j in range(i + 1, 4):
            if j < n:
                f = _chow2(ws[o + i], ws[o + 4 + i], ws[o + j], ws[o + 4 + j])
                if f >= 0:
                    present |= 1 << e
                    ef |= (f - 64) << (4 * e)
            e += 1
    if present & (present - 1) == 0:  # at most one pair fan: nothing to choose
        best_mask = present
    else:
        best_mask = _best_pairs(present, ef)
    for e in range(6):
        if (best_mask >> e) & 1:
            _add(ws, 64 + ((ef >> (4 * e)) & 15), 1)


#: the subsets of the six pair edges (see ``_pair_fans``) by size, 3 then 2 then 1; triangles left out
_EDGE_SUBSETS = np.array(
    [m for k in (3, 2, 1) for m in range(1, 64) if m.bit_count() == k and m not in (11, 21, 38, 56)],
    dtype=np.int64,
)
_EDGE_SUBSETS.setflags(write=False)


@njit
def _best_pairs(present, ef):
    """The best valid subset of the pair-fan edges ``present`` (``_pairs_key``): the most pairs first, so the
    subsets are tried by size and the first size with a valid one decides (equal keys: equal fans)."""
    best_mask = 0
    best_key = -1
    size = 3
    for j in range(_EDGE_SUBSETS.shape[0]):
        m = _EDGE_SUBSETS[j]
        k = 3 if j < 16 else (2 if j < 31 else 1)
        if k < size:
            if best_key >= 0:
                break
            size = k
        if m & present == m:
            key = _pairs_key(m, ef)
            if key > best_key:
                best_key = key
                best_mask = m
    return best_mask


@njit
def _pairs_key(sub, ef):
    """Rank of a set of pair fans (edges ``sub``), -1 if not allowed: a set joins one fan once (不得相同), at
    most three pairs and no triangle (套算一次); most pairs first, then the most 一般高, 喜相逢, 连六, 老少副."""
    if sub == 11 or sub == 21 or sub == 38 or sub == 56:  # the four triangles
        return -1
    m = 0
    key = 0
    for e in range(6):
        if (sub >> e) & 1:
            m += 1
            x = (ef >> (4 * e)) & 15
            key += _PAIR_KEY[64 + x]
            for g in range(e):
                if (sub >> g) & 1 and e + g != 5 and ((ef >> (4 * g)) & 15) == x:
                    return -1
    if m > 3:
        return -1
    return key + 10000 * m


@njit
def _pung_fans(ws, n, pair, seat, prevalent):
    """Wind and dragon fans, 幺九刻 on the terminal/honour pungs no wind/dragon fan used."""
    nw = 0
    nd = 0
    yj = 0
    has_prev = False
    has_seat = False
    for i in range(n):
        if ws[_WS_SK + i] >= _PUNG:
            t = ws[_WS_ST + i]
            if _TERM_HONOR[t]:
                yj += 1
            if 27 <= t <= 30:
                nw += 1
                has_prev |= t - 27 == prevalent
                has_seat |= t - 27 == seat
            elif t >= 31:
                nd += 1
    if nw == 4:
        _add(ws, F_BIG_FOUR_WINDS, 1)
        yj -= 4
    elif nw == 3:
        _add(ws, F_LITTLE_FOUR_WINDS if 27 <= pair <= 30 else F_BIG_THREE_WINDS, 1)
        yj -= 3
    if nd == 3:
        _add(ws, F_BIG_THREE_DRAGONS, 1)
    elif nd == 2:
        _add(ws, F_LITTLE_THREE_DRAGONS if pair >= 31 else F_TWO_DRAGONS_PUNGS, 1)
    elif nd == 1:
        _add(ws, F_DRAGON_PUNG, 1)
    yj -= nd
    if has_prev:
        _add(ws, F_PREVALENT_WIND, 1)
    if has_seat:
        _add(ws, F_SEAT_WIND, 1)
    if nw < 3:
        if has_prev:
            yj -= 1
        if has_seat and seat != prevalent:
            yj -= 1
    if yj > 0:
        _add(ws, F_PUNG_OF_TERMINALS_OR_HONORS, yj)


@njit
def _division_sets(ws, n, n_fixed, pair, win, self_drawn, knitted):
    """Shape fans of one reading (组合龙, 平和, 碰碰和, 全双刻, 全带幺, 全带五, 暗刻) into the reading's fan counts.

    Writes the chows and the suited pungs as (suit, rank 1..9) into ``ws[0:16]``; returns (chows, suited
    pungs, wait): wait 1 for an edge wait (边张), 2 for a closed wait (嵌张), else 0.
    """
    nch = 0
    npu = 0
    nps = 0
    conc = 0
    outside = _TERM_HONOR[pair]
    five = pair < 27 and pair % 9 == 4
    even = pair < 27 and pair % 9 % 2 == 1
    edge = False
    mid = False
    inchow = False
    inpung = False
    for i in range(n):
        t = ws[_WS_ST + i]
        if ws[_WS_SK + i] == _CHOW:
            ws[nch] = t // 9
            ws[4 + nch] = t % 9 + 1
            nch += 1
            outside &= t % 9 == 0 or t % 9 == 6
            five &= 2 <= t % 9 <= 4
            even = False
            if ws[_WS_SC + i] and t <= win <= t + 2:  # a standing (or offer-0) chow holds the win tile
                inchow = True
                if i >= n_fixed:
                    mid |= win == t + 1
                    edge |= (win == t + 2 and t % 9 == 0) or (win == t and t % 9 == 6)
        else:
            npu += 1
            outside &= _TERM_HONOR[t]
            five &= t < 27 and t % 9 == 4
            even &= t < 27 and t % 9 % 2 == 1
            if t < 27:
                ws[8 + nps] = t // 9
                ws[12 + nps] = t % 9 + 1
                nps += 1
            if ws[_WS_SC + i]:
                conc += 1
                inpung |= i >= n_fixed and t == win
    if inpung and not self_drawn and pair != win and not inchow:
        conc -= 1  # the pung completed by the discard is exposed
    if knitted:
        _add(ws, F_KNITTED_STRAIGHT, 1)
        outside = False
        five = False
    if nch + 3 * knitted == 4 and pair < 27:
        _add(ws, F_ALL_CHOWS, 1)
    if npu == 4:
        _add(ws, F_ALL_PUNGS, 1)
        if even:
            _add(ws, F_ALL_EVEN_PUNGS, 1)
    if outside:
        _add(ws, F_OUTSIDE_HAND, 1)
    if five:
        _add(ws, F_ALL_FIVE, 1)
    if conc >= 2:
        _add(
            ws,
            F_TWO_CONCEALED_PUNGS
            if conc == 2
            else (F_THREE_CONCEALED_PUNGS if conc == 3 else F_FOUR_CONCEALED_PUNGS),
            1,
        )
    return nch, nps, 1 if edge else (2 if mid else 0)


@njit
def _eval_ws(ws, concealed13, n, n_fixed, pair, win, self_drawn, seat, prevalent, knitted):
    """Fans of one reading of the hand into ``_WS_FC`` of the work space ``ws``; returns points.

    The reading: the sets at ``_WS_SK/ST/SC[:n]`` (fixed melds first), the pair at tile ``pair``; ``base`` (the
    reading-independent fans) at ``_WS_BASE``; ``ws[_S_WAIT]`` caches whether ``win`` is the only wait (-1 =
    not computed yet), ``ws[_S_STATE]`` whether ``_WS_FC`` holds ``base`` except the touched fans (see
    ``_WS_LAYOUT``). One array argument: numba reference-counts every array passed to a call."""
    _start_reading(ws)
    nch, nps, wait = _division_sets(ws, n, n_fixed, pair, win, self_drawn, knitted)
    if nch >= 2 and not (nch == 4 and _terminal_chows(ws, pair)):
        _combo_fans(True, ws, 0, nch)  # chows at ws[0:8]
    if nps >= 2:
        _combo_fans(False, ws, 8, nps)  # suited pungs at ws[8:16]
    if nch < n:
        _pung_fans(ws, n, pair, seat, prevalent)
    if ws[_WS_FC + F_NINE_GATES] and ws[_WS_FC + F_PUNG_OF_TERMINALS_OR_HONORS]:  # 九莲宝灯: 不计幺九刻×1
        _add(ws, F_PUNG_OF_TERMINALS_OR_HONORS, -1)
    if (wait > 0 or pair == win) and ws[_S_WAIT] < 0:
        ws[_S_WAIT] = single_wait_kernel(
            concealed13, n_fixed, win, ws[_WS_WAIT_H : _WS_WAIT_H + 34], knitted == 0
        )
    if ws[_S_WAIT] == 1 and (wait > 0 or pair == win):
        _add(ws, F_EDGE_WAIT if wait == 1 else (F_CLOSED_WAIT if wait == 2 else F_SINGLE_WAIT), 1)
    return _excluded_points(ws)


# ``scr`` slots of a reading's evaluation. A reading changes few fans of ``base``, so its fan counts are not
# rebuilt from ``base`` for every reading: they keep ``base`` except the fans in the "touched" mask, which
# the next reading restores. Masks are two int64 words, bit f % 64 of word f // 64 for fan f.
#: Layout of the int64 work space ``ws`` of one scoring call, in order: (name, length, use). The offsets
#: below (``_WS_*`` for arrays, ``_S_*`` for single slots) are derived from it, as ``mjenv.game`` derives its
#: state offsets. Kernels that get ``ws`` (also called ``scr``, "scratch") reach every work array through one
#: argument: numba counts references per array argument, so one array is cheaper than many slices.
_WS_LAYOUT: tuple[tuple[str, int, str], ...] = (
    ("sets", 16, "chows (suit, rank) at 0..7 and suited pungs at 8..15 of a reading (_division_sets)"),
    ("wait", 1, "1 when win is the only wait, 0 when not, -1 not computed yet (see _eval_ws)"),
    ("state", 1, "1: the fan counts are base except the touched fans; else rebuild them (fresh: 0)"),
    ("touch", 2, "mask of the fans the current reading changed"),
    ("choice", 4, "_regular_best: choice per depth, -1 none yet, 0 pung, 1 chow"),
    ("applied", 4, "_regular_best: 1 when the choice at this depth is applied to w"),
    ("pos", 4, "_regular_best: lowest tile at this depth"),
    ("base_mask", 2, "mask of the fans present in base"),
    ("base_pts", 1, "points of base (no exclusions applied)"),
    ("mask", 2, "mask of the fans present in the reading"),
    ("pts", 1, "points of the reading (exclusions applied so far)"),
    ("spare0", 2, "unused"),
    ("wait_h", 34, "the single-wait test's tile counts (single_wait_kernel)"),
    ("spare1", 6, "unused"),
    ("h", 34, "the 14 concealed tiles (counts)"),
    ("w", 34, "_regular_best: the tiles not yet read into sets"),
    ("tile_counts", 34, "all tiles of the hand, melds included (counts)"),
    ("sk", 4, "set kinds: 1 chow, 2 pung, 3 kong; fixed melds first"),
    ("st", 4, "set tiles (a chow by its LOWEST tile)"),
    ("sc", 4, "1 for a concealed set"),
    ("base", NUM_FANS, "fan counts of the hand's tiles and context, before a reading"),
    ("fan_counts", NUM_FANS, "fan counts of the current reading"),
)
_WS_OFFSET: dict[str, int] = {}
_WS_LEN = 0
for _name, _n, _ in _WS_LAYOUT:
    _WS_OFFSET[_name] = _WS_LEN
    _WS_LEN += _n
_WS_SETS, _WS_CHOICE, _WS_APPLIED, _WS_POS, _WS_WAIT_H = (
    _WS_OFFSET[k] for k in ("sets", "choice", "applied", "pos", "wait_h")
)
_WS_H, _WS_W, _WS_TC, _WS_SK, _WS_ST, _WS_SC, _WS_BASE, _WS_FC = (
    _WS_OFFSET[k] for k in ("h", "w", "tile_counts", "sk", "st", "sc", "base", "fan_counts")
)
_S_WAIT, _S_STATE, _S_TOUCH, _S_BASE_MASK, _S_BASE_PTS, _S_MASK, _S_PTS = (
    _WS_OFFSET[k] for k in ("wait", "state", "touch", "base_mask", "base_pts", "mask", "pts")
)
# the kernels' literal uses of the sets area (chows at 0..7, pungs at 8..15) rely on it starting at 0
assert _WS_SETS == 0 and _WS_OFFSET["wait"] == 16 and _WS_H == 80 and _WS_LEN == 194 + 2 * NUM_FANS


@njit
def _start_reading(ws):
    """Make the reading's fan counts equal ``base`` again (a full copy the first time, else only the touched fans)."""
    if ws[_S_STATE] != 1:
        m0 = 0
        m1 = 0
        pts = 0
        for k in range(64):  # branch-free loops: they vectorize
            v = ws[_WS_BASE + k]
            ws[_WS_FC + k] = v
            pts += v * FAN_POINTS[k]
            m0 |= np.int64(v > 0) << k
        for k in range(64, NUM_FANS):
            v = ws[_WS_BASE + k]
            ws[_WS_FC + k] = v
            pts += v * FAN_POINTS[k]
            m1 |= np.int64(v > 0) << (k - 64)
        ws[_S_BASE_MASK] = m0
        ws[_S_BASE_MASK + 1] = m1
        ws[_S_BASE_PTS] = pts
        ws[_S_STATE] = 1
    else:
        for w in range(2):
            x = ws[_S_TOUCH + w]
            while x != 0:
                k = 64 * w + trailing_zeros(x)
                ws[_WS_FC + k] = ws[_WS_BASE + k]
                x &= x - 1
    ws[_S_TOUCH] = 0
    ws[_S_TOUCH + 1] = 0
    ws[_S_MASK] = ws[_S_BASE_MASK]
    ws[_S_MASK + 1] = ws[_S_BASE_MASK + 1]
    ws[_S_PTS] = ws[_S_BASE_PTS]


@njit
def _add(ws, f, k):
    """Count fan ``f`` ``k`` more times for a reading begun with ``_start_reading``, keeping its masks and points."""
    v = ws[_WS_FC + f] + k
    ws[_WS_FC + f] = v
    w = f >> 6
    bit = np.int64(1) << (f & 63)  # np.int64: under NUMBA_DISABLE_JIT a Python 1 << 63 exceeds int64
    ws[_S_TOUCH + w] |= bit
    if v > 0:
        ws[_S_MASK + w] |= bit
    else:
        ws[_S_MASK + w] &= ~bit
    ws[_S_PTS] += k * FAN_POINTS[f]


@njit
def _excluded_points(ws):
    """``_apply_excludes`` of a reading begun with ``_start_reading``: only the excluding fans present are
    visited, in fan order, each removing those of its excluded fans still present."""
    m0 = ws[_S_MASK]
    m1 = ws[_S_MASK + 1]
    pts = ws[_S_PTS]
    t0 = ws[_S_TOUCH]
    t1 = ws[_S_TOUCH + 1]
    for w in range(2):
        x = (m0 if w == 0 else m1) & _EXCLUDER_MASK[w]
        while x != 0:
            a = 64 * w + trailing_zeros(x)
            x &= x - 1
            if ((m0 if a < 64 else m1) >> (a & 63)) & 1 == 0:  # removed by an earlier fan
                continue
            r0 = m0 & _EXCLUDED_MASK[a, 0]
            r1 = m1 & _EXCLUDED_MASK[a, 1]
            m0 &= ~r0
            m1 &= ~r1
            t0 |= r0
            t1 |= r1
            while r0 != 0:
                k = trailing_zeros(r0)
                pts -= ws[_WS_FC + k] * FAN_POINTS[k]
                ws[_WS_FC + k] = 0
                r0 &= r0 - 1
            while r1 != 0:
                k = 64 + trailing_zeros(r1)
                pts -= ws[_WS_FC + k] * FAN_POINTS[k]
                ws[_WS_FC + k] = 0
                r1 &= r1 - 1
    ws[_S_MASK] = m0
    ws[_S_MASK + 1] = m1
    ws[_S_TOUCH] = t0
    ws[_S_TOUCH + 1] = t1
    ws[_S_PTS] = pts
    return pts


@njit
def _terminal_chows(ws, pair):
    """一色双龙会 / 三色双龙会 on four chows and the pair; True when one was counted."""
    if pair >= 27 or pair % 9 != 4:
        return False
    lo = 0  # 4-bit count per suit of 123 chows
    hi = 0  # and of 789 chows
    for i in range(4):
        if ws[4 + i] == 1:
            lo += 1 << (4 * ws[i])
        elif ws[4 + i] == 7:
            hi += 1 << (4 * ws[i])
        else:
            return False
    ps = pair // 9
    if lo == hi == 2 << (4 * ps):
        _add(ws, F_PURE_TERMINAL_CHOWS, 1)
        return True
    if lo == hi and lo == 0x111 - (1 << (4 * ps)):
        _add(ws, F_THREE_SUITED_TERMINAL_CHOWS, 1)
        return True
    return False


@njit
def _context_ws(mask, fours, ws, n_fixed, concealed13, win, flags):
    """Fans that do not depend on how the hand is read (tiles, kongs, 四归一, concealment and win flags), on the
    work space ``ws`` (``_WS_TC/SK/SC`` in, ``_WS_BASE`` out), given the mask of the
    tiles in ``tile_counts`` and how many of them are held four times."""
    for k in range(NUM_FANS):
        ws[_WS_BASE + k] = 0
    _tile_fans_mask(mask, ws, _WS_BASE)
    nk = 0
    nck = 0
    nexp = 0
    hog = fours
    for i in range(n_fixed):
        if ws[_WS_SK + i] == _KONG:
            nk += 1
            nck += ws[_WS_SC + i]
            hog -= 1
        if not ws[_WS_SC + i]:
            nexp += 1
    if hog > 0:
        ws[_WS_BASE + F_TILE_HOG] = hog
    if n_fixed == 0 and _nine_gates(concealed13, win):
        ws[_WS_BASE + F_NINE_GATES] = 1
    if nk == 4:
        ws[_WS_BASE + F_FOUR_KONGS] = 1
    elif nk == 3:
        ws[_WS_BASE + F_THREE_KONGS] = 1
    elif nk == 2:
        ws[
            _WS_BASE
            + (
                F_TWO_CONCEALED_KONGS
                if nck == 2
                else (F_CONCEALED_KONG_AND_MELDED_KONG if nck == 1 else F_TWO_MELDED_KONGS)
            )
        ] = 1
    elif nk == 1:
        ws[_WS_BASE + (F_CONCEALED_KONG if nck == 1 else F_MELDED_KONG)] = 1
    self_drawn = flags & WIN_SELF_DRAWN
    if self_drawn:
        ws[_WS_BASE + F_SELF_DRAWN] = 1
    if nexp == 0:
        ws[_WS_BASE + (F_FULLY_CONCEALED_HAND if self_drawn else F_CONCEALED_HAND)] = 1
    elif nexp == 4 and not self_drawn:
        ws[_WS_BASE + F_MELDED_HAND] = 1
    if flags & WIN_WALL_LAST:
        ws[_WS_BASE + (F_LAST_TILE_DRAW if self_drawn else F_LAST_TILE_CLAIM)] = 1
    # a flag the tiles make impossible is ignored, as the reference does
    if flags & WIN_ABOUT_KONG:
        if self_drawn:
            if nk > 0:
                ws[_WS_BASE + F_OUT_WITH_REPLACEMENT_TILE] = 1
        elif ws[_WS_TC + win] == 1:
            ws[_WS_BASE + F_ROBBING_THE_KONG] = 1
    # 和绝张: never with a copy of the win tile among the standing tiles; always when the melds show the
    # other three (ref)
    if concealed13[win] == 0 and (flags & WIN_4TH_TILE or ws[_WS_TC + win] == 4):
        ws[_WS_BASE + F_LAST_TILE] = 1


@njit
def _nine_gates(concealed13, win):
    """九莲宝灯: the 13 standing tiles are 1112345678999 of one suit and ``win`` is of that suit."""
    if win >= 27:
        return False
    b = win - win % 9
    for r in range(9):
        if concealed13[b + r] != (3 if r == 0 or r == 8 else 1):
            return False
    return True


#: fans of at least this many points decide between equal-scoring readings (see ``_tie_prefers``)
_TIE_MIN_POINTS = 16
_TIE_FANS = int((FAN_POINTS >= _TIE_MIN_POINTS).sum())  # fans are in point order: ids [0, _TIE_FANS)


@njit
def _tie_prefers(fan_counts, best_fc):
    """Does a reading scoring ``fan_counts`` replace an equal-scoring best reading ``best_fc``? (the reference's tie-break)

    The first fan of >= 16 points, in fan order, that the two count differently decides: the reading with more
    of it wins (三同刻 + 双暗刻 over 三暗刻 + 双同刻, 一色三同顺 over 一色三节高). Otherwise the later reading in
    ``_regular_best``'s order wins, except when both count 一色三同顺 (built from different chows): then the
    earlier one stays (fixed chows 123 + 234, concealed 1122344, won on 3: the reference shows pair 11 + 234 +
    234 with 嵌张, not pair 44 + 123 + 123 with 边张; likewise its mirror 678 + 789). Found by black-box
    experiment (lab/scripts/tie_break_lab.py): every equal-score tie between readings that differ only in fans of 1
    or 2 points follows the reading order, both ways round; exhaustive one-suit hands with 0 to 3 fixed melds
    (``--family``) hold no other tie whose readings share a >= 16 point fan built from sets.
    """
    for k in range(_TIE_FANS):
        if fan_counts[k] != best_fc[k]:
            return fan_counts[k] > best_fc[k]
    return fan_counts[F_PURE_TRIPLE_CHOW] == 0


@njit
def _pair_range(h):
    """Tiles ``[lo, hi)`` where the pair of a regular reading of ``h`` can lie; (0, 0) when there is no regular
    reading. The pair's group is the one whose count is 2 mod 3 when all others are 0 mod 3; in it, a pair
    must leave sets (``suit_sets_kernel``), and its rank r has 2r = the group's rank sum mod 3 (a chow or pung adds
    0 mod 3). Only pairs that give no reading are left out, so the readings and their order are unchanged.
    """
    pg = -1
    for g in range(4):
        b = 9 * g
        e = 34 if g == 3 else b + 9
        n = 0
        for t in range(b, e):
            n += h[t]
        if n % 3 == 1 or (n % 3 == 2 and pg >= 0):
            return 0, 0
        if n % 3 == 2:
            pg = g
    if pg < 0:
        return 0, 0
    if pg == 3:  # honours: pungs and one pair
        p = -1
        for t in range(27, 34):
            if h[t] % 3 == 1 or (h[t] % 3 == 2 and p >= 0):
                return 0, 0
            if h[t] % 3 == 2:
                p = t
        return p, p + 1
    b = 9 * pg
    wsum = 0
    for r in range(9):
        wsum += r * h[b + r]
    lo = -1
    hi = 0
    for r in range((2 * wsum) % 3, 9, 3):
        if h[b + r] >= 2 and suit_sets_kernel(h, b, b + r):
            if lo < 0:
                lo = b + r
            hi = b + r + 1
    if lo < 0:
        return 0, 0
    return lo, hi


@njit(inline="always")  # into _regular_best_c: compiled once, called through a symbol
def _regular_best(ws, n_fixed, n_need, win, self_drawn, seat, prevalent, knitted, concealed13, best_fc, best):
    """Every reading of the hand ``h`` of work space ``ws`` as pair + ``n_need`` sets after the fixed sets;
    keeps the best in ``best_fc``. The sets go to ``sk``/``st``/``sc`` of ``ws`` (``_WS_LAYOUT``).

    Pairs in tile order; for each, the sets depth-first over the lowest remaining tile, pung before chow. Equal
    totals: ``_tie_prefers`` (else a later reading replaces an earlier one), the reference's tie-break
    (tests/golden/fans.jsonl "tie-break" cases, tests/test_fans.py::test_tie_breaks).
    """
    h = ws[_WS_H : _WS_H + 34]
    w = ws[_WS_W : _WS_W + 34]
    sk = ws[_WS_SK : _WS_SK + 4]
    st = ws[_WS_ST : _WS_ST + 4]
    sc = ws[_WS_SC : _WS_SC + 4]
    scr = ws
    _copy(w, h)
    ch = scr[_WS_CHOICE : _WS_CHOICE + 4]  # choice per depth: -1 none yet, 0 pung, 1 chow
    app = scr[_WS_APPLIED : _WS_APPLIED + 4]  # 1 when the choice at this depth is applied to w
    pos = scr[_WS_POS : _WS_POS + 4]  # lowest tile at this depth
    lo, hi = _pair_range(h)
    for p in range(lo, hi):
        if h[p] < 2:
            continue
        w[p] -= 2
        j = 0 if n_need > 0 else -1
        ch[0] = -1
        app[0] = 0
        while j >= 0:
            i = pos[j]
            if app[j]:
                _unapply(w, i, ch[j])
                app[j] = 0
            ch[j] += 1
            if ch[j] > 1:
                j -= 1
                continue
            if ch[j] == 0:
                i = pos[j - 1] if j > 0 else 0
                while w[i] == 0:
                    i += 1
                pos[j] = i
                if w[i] < 3:
                    continue
                w[i] -= 3
                sk[n_fixed + j] = _PUNG
            else:
                if i >= 27 or i % 9 > 6 or w[i + 1] == 0 or w[i + 2] == 0:
                    continue
                w[i] -= 1
                w[i + 1] -= 1
                w[i + 2] -= 1
                sk[n_fixed + j] = _CHOW
            st[n_fixed + j] = i
            sc[n_fixed + j] = 1
            app[j] = 1
            if j < n_need - 1:
                j += 1
                ch[j] = -1
                app[j] = 0
            else:
                best = _consider(
                    n_fixed + n_need,
                    n_fixed,
                    p,
                    win,
                    self_drawn,
                    seat,
                    prevalent,
                    knitted,
                    concealed13,
                    best_fc,
                    best,
                    scr,
                )
        if n_need == 0:
            best = _consider(
                n_fixed,
                n_fixed,
                p,
                win,
                self_drawn,
                seat,
                prevalent,
                knitted,
                concealed13,
                best_fc,
                best,
                scr,
            )
        w[p] += 2
    return best


@njit
def _unapply(w, i, choice):
    if choice == 0:
        w[i] += 3
    else:
        w[i] += 1
        w[i + 1] += 1
        w[i + 2] += 1


@njit(inline="always")
def _consider(n, n_fixed, p, win, self_drawn, seat, prevalent, knitted, concealed13, best_fc, best, ws):
    """Score one reading; copy it to ``best_fc`` when it beats (or wins the tie with) the best so far.

    ``ws``: the work space (the reading's sets, ``base`` and fan counts at ``_WS_*``; ``_regular_best`` passes
    it as ``scr``)."""
    pts = _eval_ws(ws, concealed13, n, n_fixed, p, win, self_drawn, seat, prevalent, knitted)
    if pts > best or (pts == best and _tie_prefers(ws[_WS_FC : _WS_FC + NUM_FANS], best_fc)):
        _copy(best_fc, ws[_WS_FC : _WS_FC + NUM_FANS])
        return pts
    return best


@njit
def _knitted_of_mask(hmask):
    """``knitted_perm_kernel`` of the tiles in ``hmask`` (bit t: tile t held)."""
    for k in range(6):
        if hmask & _KNITTED_M[k] == _KNITTED_M[k]:
            return k
    return -1


@njit
def _unpack_melds(melds, n_melds, ws):
    """Fixed melds -> kernel sets (chow by lowest tile), at ``_WS_SK/ST/SC`` of ``ws``, their tiles added to ``_WS_TC``; False if malformed."""
    for i in range(n_melds):
        m = melds[i]
        kind = meld_kind(m)
        t = meld_tile(m)
        offer = meld_offer(m)
        if kind == 0 or t >= 34 or m < 0:
            return False
        ws[_WS_SK + i] = kind
        ws[_WS_SC + i] = offer == 0  # offer 0: concealed (the reference also accepts a concealed chow/pung)
        if kind == _CHOW:
            if t >= 27 or t % 9 == 0 or t % 9 == 8:
                return False
            ws[_WS_ST + i] = t - 1
            ws[_WS_TC + t - 1] += 1
            ws[_WS_TC + t] += 1
            ws[_WS_TC + t + 1] += 1
        else:
            ws[_WS_ST + i] = t
            ws[_WS_TC + t] += kind + 1
    return True


@njit
def _special_best(h, n_fixed, distinct, odd, base, fan_counts, best_fc, best):
    """七对 / 连七对, 十三幺, 全不靠 / 七星不靠 (no fixed melds); keeps the best in ``best_fc``.

    ``distinct`` / ``odd``: how many tiles of ``h`` are held at all / an odd number of times. A special shape
    replaces a regular reading only with a strictly higher total.
    """
    if n_fixed != 0:
        return best
    for shape in range(3):
        if shape == 0 and odd == 0:
            _copy(fan_counts, base)
            f = F_SEVEN_PAIRS
            for b in range(27):
                if b % 9 <= 2:
                    run = True
                    for r in range(7):
                        run &= h[b + r] == 2
                    if run:
                        f = F_SEVEN_SHIFTED_PAIRS
            fan_counts[f] += 1
        elif shape == 1 and distinct == 13 and special_shape_kernel(h, 1):
            _copy(fan_counts, base)
            fan_counts[F_THIRTEEN_ORPHANS] += 1
        elif shape == 2 and distinct == 14 and honors_knitted_kernel(h) > 0:
            _copy(fan_counts, base)
            hk = honors_knitted_kernel(h)
            fan_counts[
                F_GREATER_HONORS_AND_KNITTED_TILES if hk == 2 else F_LESSER_HONORS_AND_KNITTED_TILES
            ] += 1
            if knitted_perm_kernel(h) >= 0:
                fan_counts[F_KNITTED_STRAIGHT] += 1
        else:
            continue
        pts = _apply_excludes(fan_counts)
        if pts > best:
            best = pts
            _copy(best_fc, fan_counts)
    return best


@njit
def score_kernel(
    concealed, melds, n_melds, win_tile, flags, seat_wind, prevalent_wind, flower_count, fan_counts
):
    """Best fan total of a win (flowers included) over every reading; per-fan counts into ``fan_counts``.

    ``concealed`` int8[34]: standing tiles without ``win_tile``; ``melds`` int16[4] packed (mjenv.melds),
    the first ``n_melds`` used; ``flags``: WIN_* bits. Returns the total, or ERR_* (< 0). The arrays must be
    C-contiguous: the scorer itself is compiled once and called through a symbol (``_score_shared``).
    """
    ws = np.empty(_WS_LEN, dtype=np.int64)
    return _score_shared(
        concealed, melds, n_melds, win_tile, flags, seat_wind, prevalent_wind, flower_count, fan_counts, ws
    )


@njit
def _check_args(concealed, n_melds, win_tile, flags, seat_wind, prevalent_wind, flower_count):
    """0, or the ERR_* code of malformed arguments (before the melds are read)."""
    if n_melds < 0 or n_melds > 4 or win_tile < 0 or win_tile >= 34 or flags < 0 or flags > SCORER_FLAGS:
        return ERR_BAD_ARGUMENT
    if seat_wind < 0 or prevalent_wind < 0 or flower_count < 0:  # a wind >= 4 matches no wind
        return ERR_BAD_ARGUMENT
    n = 0
    neg = False
    for t in range(34):  # no early exit: the loop vectorizes
        neg |= concealed[t] < 0
        n += concealed[t]
    if neg:
        return ERR_BAD_ARGUMENT
    if n != 13 - 3 * n_melds:
        return ERR_WRONG_TILES_COUNT
    return 0


@njit(inline="always")
def _score(
    concealed, melds, n_melds, win_tile, flags, seat_wind, prevalent_wind, flower_count, fan_counts, ws
):
    """``score_kernel`` with its int64 work space ``ws`` (``_WS_LEN``) passed in: allocates nothing."""
    for k in range(NUM_FANS):
        fan_counts[k] = 0
    err = _check_args(concealed, n_melds, win_tile, flags, seat_wind, prevalent_wind, flower_count)
    if err < 0:
        return err
    for t in range(34):
        ws[_WS_TC + t] = 0
    if not _unpack_melds(melds, n_melds, ws):
        return ERR_BAD_MELD
    # int64 from the start (not the literal 0): typing would otherwise also compile the callees below for
    # Literal[int](0) arguments, a specialization never run (cold-start time, mjenv._jit.shared_kernel)
    distinct = np.int64(0)
    odd = np.int64(0)
    mask = np.int64(0)  # tiles held or melded
    hmask = np.int64(0)  # tiles held
    fours = np.int64(0)
    over = False
    for t in range(34):  # no early exit or branch: the loop vectorizes
        c = np.int64(concealed[t]) + (t == win_tile)
        ws[_WS_H + t] = c
        x = ws[_WS_TC + t] + c
        ws[_WS_TC + t] = x
        over |= x > 4
        mask |= np.int64(x > 0) << t
        hmask |= np.int64(c > 0) << t
        fours += x == 4
        distinct += c > 0
        odd += c & 1
    if over:
        return ERR_TILE_COUNT_GREATER_THAN_4
    _context_ws(mask, fours, ws, n_melds, concealed, win_tile, flags)
    best = _best_reading(
        concealed, n_melds, win_tile, flags, seat_wind, prevalent_wind, distinct, odd, hmask, fan_counts, ws
    )
    if best < 0:
        return ERR_NOT_WIN
    if best == 0:
        fan_counts[F_CHICKEN_HAND] = 1
        best = FAN_POINTS[F_CHICKEN_HAND]
    fan_counts[F_FLOWER_TILES] = flower_count
    return best + flower_count


@njit(inline="always")
def _best_reading(concealed, n_fixed, win, flags, seat, prevalent, distinct, odd, hmask, best_fc, ws):
    """Best points (no flowers) over the regular, special and knitted-straight readings of ``ws``'s hand, or -1;
    the winning reading's fan counts in ``best_fc`` (written only by a reading that wins)."""
    h = ws[_WS_H : _WS_H + 34]
    scr = ws  # the scratch slots are part of the work space (_WS_LAYOUT)
    base = ws[_WS_BASE : _WS_BASE + NUM_FANS]
    fan_counts = ws[_WS_FC : _WS_FC + NUM_FANS]
    scr[_S_WAIT] = -1  # single wait: not computed yet
    scr[_S_STATE] = 0  # fan_counts: not built from this hand's base yet
    self_drawn = (flags & WIN_SELF_DRAWN) != 0
    # knitted (0 / 1) and best as int64, not literals: one specialization of the reading chain, not two
    best = _regular_best_shared(
        ws,
        n_fixed,
        4 - n_fixed,
        win,
        self_drawn,
        seat,
        prevalent,
        np.int64(0),
        concealed,
        best_fc,
        np.int64(-1),
    )
    if n_fixed == 0 and (odd == 0 or distinct >= 13):  # the shapes of _special_best
        best = _special_best(h, n_fixed, distinct, odd, base, fan_counts, best_fc, best)
    if n_fixed <= 1 and distinct >= 9:
        k = _knitted_of_mask(hmask)
        if k >= 0:
            scr[_S_STATE] = 0  # _special_best rewrote fan_counts
            if flags & WIN_KNITTED_NO_WAIT and (_KNITTED_M[k] >> win) & 1:
                scr[_S_WAIT] = (
                    0  # the judge's calculator: no wait fan when the win tile is in the knitted straight
                )
            take_knitted_kernel(h, k, -1)
            best = _regular_best_shared(
                ws,
                n_fixed,
                1 - n_fixed,
                win,
                self_drawn,
                seat,
                prevalent,
                np.int64(1),
                concealed,
                best_fc,
                best,
            )
    return best


@njit
def _score_batch_kernel(concealed, melds, n_melds, win_tile, flags, seat, prevalent, flowers, totals, counts):
    ws = np.empty(_WS_LEN, dtype=np.int64)
    for i in range(concealed.shape[0]):
        totals[i] = _score_shared(
            concealed[i],
            melds[i],
            n_melds[i],
            win_tile[i],
            flags[i],
            seat[i],
            prevalent[i],
            flowers[i],
            counts[i],
            ws,
        )


# --- Python API -------------------------------------------------------------------------------------------
class ScoreResult:
    """The score of one win: ``total`` (with flowers), ``base`` (without), ``fans`` ({Fan: count})."""

    __slots__ = ("total", "base", "fans")

    def __init__(self, total: int, fans: dict[Fan, int], flowers: int):
        self.total = total
        self.base = total - flowers
        self.fans = fans

    def __repr__(self) -> str:
        fans = ", ".join(f"{f.name}: {n}" for f, n in self.fans.items())
        return f"ScoreResult(total={self.total}, base={self.base}, fans={{{fans}}})"

    @property
    def is_legal_win(self) -> bool:
        """At least ``MIN_WIN_FAN`` (8) fan without flowers."""
        return self.base >= MIN_WIN_FAN

    def pretty(self) -> str:
        """One line per fan: points, Chinese and English names, count; then the total."""
        lines = [
            f"{int(FAN_POINTS[f]) * n:3d}  {FAN_NAME_ZH[f]}  {FAN_NAME_EN[f]}" + (f" x{n}" if n > 1 else "")
            for f, n in self.fans.items()
        ]
        lines.append(
            f"{self.total:3d}  total" + (f" ({self.base} without flowers)" if self.base != self.total else "")
        )
        return "\n".join(lines)


_ERR_TEXT = {
    ERR_WRONG_TILES_COUNT: "wrong number of tiles: the standing tiles must be 13 - 3 * len(melds)",
    ERR_TILE_COUNT_GREATER_THAN_4: "more than 4 copies of a tile",
    ERR_NOT_WIN: "not a winning hand",
    ERR_BAD_MELD: "malformed meld",
    ERR_BAD_ARGUMENT: "argument out of range",
}


def _score_c(
    concealed, melds, n_melds, win_tile, flags, seat_wind, prevalent_wind, flower_count, fan_counts, ws
):
    """C-callable :func:`_score` (pointers to ``int8[34]``, ``int16[4]``, ``int16[NUM_FANS]``, ``int64[_WS_LEN]``)."""
    return _score(
        numba.carray(concealed, 34), numba.carray(melds, 4), n_melds, win_tile, flags, seat_wind, prevalent_wind,
        flower_count, numba.carray(fan_counts, NUM_FANS), numba.carray(ws, _WS_LEN),
    )  # fmt: skip


def _regular_best_c(
    ws, n_fixed, n_need, win, self_drawn, seat, prevalent, knitted, concealed13, best_fc, best
):
    """C-callable :func:`_regular_best` (pointers to ``int64[_WS_LEN]``, ``int8[34]``, ``int16[NUM_FANS]``)."""
    return _regular_best(
        numba.carray(ws, _WS_LEN), n_fixed, n_need, win, self_drawn, seat, prevalent, knitted,
        numba.carray(concealed13, 34), numba.carray(best_fc, NUM_FANS), best,
    )  # fmt: skip


# The reading enumeration (_regular_best and the reading evaluation below it) compiled ONCE: the scorer calls
# it through a symbol, so the scorer's own library does not link and optimize the whole chain again.
_regular_best_shared = shared_kernel(
    "mjenv_fans_regular_best_kernel_v1",
    _nt.int64(
        _nt.CPointer(_nt.int64),
        *([_nt.int64] * 3),
        _nt.boolean,
        *([_nt.int64] * 3),
        _nt.CPointer(_nt.int8),
        _nt.CPointer(_nt.int16),
        _nt.int64,
    ),
    _regular_best_c,
)
if _regular_best_shared is None:  # NUMBA_DISABLE_JIT: plain Python
    _regular_best_shared = _regular_best


# The scorer (_score and its callees) compiled ONCE, as a C-callable kernel; score_kernel, the batch kernel and
# the engine (mjenv.game, through score_kernel) hold a call to its symbol instead of a copy of the scorer (see
# mjenv._jit.shared_kernel). Arguments as _score's (C-contiguous arrays, any integers).
_score_shared = shared_kernel(
    "mjenv_fans_score_ws_kernel_v1",
    _nt.int64(
        _nt.CPointer(_nt.int8),
        _nt.CPointer(_nt.int16),
        *([_nt.int64] * 6),
        _nt.CPointer(_nt.int16),
        _nt.CPointer(_nt.int64),
    ),
    _score_c,
)
if _score_shared is None:  # NUMBA_DISABLE_JIT: plain Python
    _score_shared = _score
#: the engine's scorer (``score_kernel``: a thin kernel over the shared one)
shared_score_kernel = score_kernel


def _wind(x, name: str) -> int:
    if isinstance(x, str):
        if x.upper() not in ("E", "S", "W", "N"):
            raise ValueError(f"{name} must be 0..3 or one of E S W N, got {x!r}")
        return "ESWN".index(x.upper())
    if isinstance(x, bool) or not isinstance(x, (int, np.integer)) or not 0 <= int(x) <= 3:
        raise ValueError(f"{name} must be 0..3 or one of E S W N, got {x!r}")
    return int(x)


def _melds_array(melds) -> np.ndarray:
    from mjenv import melds as _m
    from mjenv.tiles import parse_tiles

    if isinstance(melds, str):
        melds = [m for m in melds.replace(",", " ").split() if m]
    out = np.zeros(4, dtype=np.int16)
    if len(melds) > 4:
        raise ValueError(f"at most 4 melds, got {len(melds)}")
    for i, m in enumerate(melds):
        if isinstance(m, str):  # "123m" chow, "555p" pung, "EEEE" kong, "[EEEE]" or "EEEE!" concealed kong
            concealed = m.startswith("[") or m.endswith("!")
            ts = sorted(parse_tiles(m.strip("[]!")))
            if (
                len(ts) == 3
                and ts[1] == ts[0] + 1
                and ts[2] == ts[1] + 1
                and ts[0] < 27
                and ts[0] // 9 == ts[2] // 9
            ):
                m = _m.pack(_m.CHOW, ts[1], 1)
            elif len(ts) in (3, 4) and len(set(ts)) == 1:
                kind = _m.PUNG if len(ts) == 3 else _m.KONG
                if concealed and kind == _m.PUNG:
                    raise ValueError(f"only a kong can be concealed: {m!r}")
                m = _m.pack(kind, ts[0], 0 if concealed else 1)
            else:
                raise ValueError(f"not a chow, pung or kong: {m!r}")
        elif isinstance(m, tuple):
            m = _m.from_pack(m)
        elif isinstance(m, (int, np.integer)):
            _m.meld_tiles(int(m))
        else:
            raise TypeError(f"a meld must be a str, a pack tuple or a packed int, got {type(m).__name__}")
        out[i] = int(m)
    return out


def score(
    hand,
    win_tile,
    *,
    melds=(),
    self_drawn=False,
    fourth_tile=False,
    about_kong=False,
    wall_last=False,
    seat_wind=0,
    prevalent_wind=0,
    flowers=0,
) -> ScoreResult:
    """Score one win.

    Parameters
    ----------
    hand : str or sequence of tile ids
        The standing tiles without the win tile (any notation of :func:`mjenv.tiles.parse_tiles`).
    win_tile : str or int
    melds : str or sequence
        Fixed melds: strings (``"123m 555p EEEE [CCCC]"``, ``[...]`` a concealed kong), reference pack
        tuples (``("PENG", "W5", 1)``) or packed ints (:mod:`mjenv.melds`).
    self_drawn, fourth_tile, about_kong, wall_last : bool
        The context flags (``WIN_*``).
    seat_wind, prevalent_wind : int 0..3 or "E"/"S"/"W"/"N"
    flowers : int 0..8

    Returns
    -------
    ScoreResult

    Raises
    ------
    ValueError
        Malformed input, or a hand that is not a win.

    Examples
    --------
    >>> r = score("1112345678999m", "5m")
    >>> r.total, [f.name for f in r.fans]
    (91, ['NINE_GATES', 'TWO_CONCEALED_PUNGS', 'PUNG_OF_TERMINALS_OR_HONORS'])
    """
    from mjenv.tiles import parse_tiles, tiles_to_counts

    tiles = parse_tiles(hand) if isinstance(hand, str) else [int(t) for t in hand]
    concealed = tiles_to_counts(tiles)
    wt = parse_tiles(win_tile) if isinstance(win_tile, str) else [win_tile]
    if len(wt) != 1 or isinstance(wt[0], bool) or not 0 <= int(wt[0]) < 34:
        raise ValueError(f"win_tile must be one tile (not a flower), got {win_tile!r}")
    if isinstance(flowers, bool) or not isinstance(flowers, (int, np.integer)) or not 0 <= flowers <= 8:
        raise ValueError(f"flowers must be 0..8, got {flowers!r}")
    m = _melds_array(melds)
    n_melds = int((m != 0).sum())
    flags = (
        WIN_SELF_DRAWN * bool(self_drawn)
        | WIN_4TH_TILE * bool(fourth_tile)
        | WIN_ABOUT_KONG * bool(about_kong)
        | WIN_WALL_LAST * bool(wall_last)
    )
    counts = np.zeros(NUM_FANS, dtype=np.int16)
    total = int(
        score_kernel(
            concealed,
            m,
            n_melds,
            int(wt[0]),
            flags,
            _wind(seat_wind, "seat_wind"),
            _wind(prevalent_wind, "prevalent_wind"),
            int(flowers),
            counts,
        )
    )
    if total < 0:
        raise ValueError(_ERR_TEXT.get(total, f"error {total}"))
    return ScoreResult(total, {Fan(f): int(counts[f]) for f in REFERENCE_ORDER if counts[f]}, int(flowers))


def score_batch(concealed, melds, n_melds, win_tile, flags, seat_wind, prevalent_wind, flowers):
    """Score N wins at once.

    Parameters
    ----------
    concealed : ndarray[int8, (N, 34)]   standing tiles without the win tile
    melds : ndarray[int16, (N, 4)]       packed melds (:mod:`mjenv.melds`)
    n_melds, win_tile, flags, seat_wind, prevalent_wind, flowers : ndarray[int, (N,)] or scalars

    Returns
    -------
    totals : ndarray[int32, (N,)]          total fan with flowers, or ERR_* (< 0) per hand
    counts : ndarray[int16, (N, NUM_FANS)] per-fan counts
    """
    concealed = np.ascontiguousarray(concealed, dtype=np.int8)
    if concealed.ndim != 2 or concealed.shape[1] != 34:
        raise ValueError(f"concealed must have shape (N, 34), got {concealed.shape}")
    n = concealed.shape[0]
    melds = np.ascontiguousarray(melds, dtype=np.int16)
    if melds.shape != (n, 4):
        raise ValueError(f"melds must have shape ({n}, 4), got {melds.shape}")
    cols = []
    for name, x in (
        ("n_melds", n_melds),
        ("win_tile", win_tile),
        ("flags", flags),
        ("seat_wind", seat_wind),
        ("prevalent_wind", prevalent_wind),
        ("flowers", flowers),
    ):
        a = np.ascontiguousarray(np.broadcast_to(np.asarray(x, dtype=np.int64), (n,)))
        if a.ndim != 1:
            raise ValueError(f"{name} must be a scalar or shape ({n},)")
        cols.append(a)
    totals = np.zeros(n, dtype=np.int32)
    counts = np.zeros((n, NUM_FANS), dtype=np.int16)
    _score_batch_kernel(concealed, melds, *cols, totals, counts)
    return totals, counts


def warmup() -> float:
    """Compile (or load from the cache) the scoring kernels; returns the seconds it took."""
    import time

    t0 = time.perf_counter()
    c = np.zeros((1, 34), dtype=np.int8)
    c[0, [0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 27, 27, 33]] = 1
    c[0, 27] = 3
    score_batch(c, np.zeros((1, 4), dtype=np.int16), 0, 33, 0, 0, 0, 0)
    return time.perf_counter() - t0
