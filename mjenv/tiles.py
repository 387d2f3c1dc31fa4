"""Tiles: ids, attribute tables and string codecs.

Rules
-----
MCR (``docs/rules.md``; source 000, 牌张): 144 tiles. Characters 万 1-9, bamboo 条 1-9, dots 饼 1-9, four of
each; winds 东南西北 and dragons 中發白, four of each; eight flowers 春夏秋冬梅兰竹菊, one of each.

Specification in mjenv
----------------------
Tile ids (equal to the order of the reference calculator's Botzone codes)::

    0-8    1m-9m   characters  W1-W9   一万..九万
    9-17   1s-9s   bamboo      T1-T9   一条..九条
    18-26  1p-9p   dots        B1-B9   一饼..九饼
    27-30  E S W N winds       F1-F4   东风 南风 西风 北风
    31-33  C F P   dragons     J1-J3   红中 发财 白板  (中 發 白)
    34-41  1f-8f   flowers     H1-H8   春 夏 秋 冬 梅 兰 竹 菊

Hands are count arrays of length 34 (``int8``), or 42 with flowers.

Notations understood by :func:`parse_tiles` and written by :func:`format_tiles`:

* ``compact``: ``123m456s789p`` with honours as letters ``ESWNCFP`` (中 發 白 = C F P) or as digits with
  ``z`` (``1234567z``); flowers as ``1-8f``. Formatting writes honours as letters.
* ``botzone``: whitespace/comma separated codes ``W1 T5 B9 F1 J3 H2``.
* ``unicode``: the Mahjong Tiles block glyphs (🀇 .. 🀡, 🀀 .. 🀆, 🀢 .. 🀩).
* ``zh``: Chinese names (``一万``, ``九条``, ``五饼``, ``东风``, ``红中``, ``春`` ...), written without separators or
  with spaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import numpy as np

NUM_TILE_TYPES = 34  # tile kinds without flowers
NUM_TILE_TYPES_WITH_FLOWERS = 42
NUM_TILES = 144  # physical tiles in the wall, flowers included
NUM_FLOWERS = 8
COPIES = 4

EAST, SOUTH, WEST, NORTH = 27, 28, 29, 30
RED, GREEN, WHITE = 31, 32, 33  # 中 發 白
FLOWER0 = 34

WIND_NAMES = ("E", "S", "W", "N")

# --- attribute tables (module-level constants, usable as frozen globals in kernels) -------------------
_ids = np.arange(NUM_TILE_TYPES_WITH_FLOWERS)
#: suit of each tile: 0 characters, 1 bamboo, 2 dots, 3 winds, 4 dragons, 5 flowers
SUIT = np.where(_ids < 27, _ids // 9, np.where(_ids < 31, 3, np.where(_ids < 34, 4, 5))).astype(np.int8)
#: rank 1..9 for suited tiles, 1..4 for winds, 1..3 for dragons, 1..8 for flowers
RANK = np.where(
    _ids < 27, _ids % 9 + 1, np.where(_ids < 31, _ids - 26, np.where(_ids < 34, _ids - 30, _ids - 33))
).astype(np.int8)
IS_SUITED = _ids < 27
IS_HONOR = (_ids >= 27) & (_ids < 34)
IS_WIND = (_ids >= 27) & (_ids < 31)
IS_DRAGON = (_ids >= 31) & (_ids < 34)
IS_FLOWER = _ids >= 34
IS_TERMINAL = IS_SUITED & ((RANK == 1) | (RANK == 9))
IS_TERMINAL_OR_HONOR = IS_TERMINAL | IS_HONOR
#: 绿一色 tiles: 2 3 4 6 8 bamboo and 發
IS_GREEN = np.zeros(NUM_TILE_TYPES_WITH_FLOWERS, dtype=np.bool_)
IS_GREEN[[10, 11, 12, 14, 16, GREEN]] = True
#: 推不倒 (reversible) tiles: 1234589 dots, 245689 bamboo, 白
IS_REVERSIBLE = np.zeros(NUM_TILE_TYPES_WITH_FLOWERS, dtype=np.bool_)
IS_REVERSIBLE[[18, 19, 20, 21, 22, 25, 26, 10, 12, 13, 14, 16, 17, WHITE]] = True
for _a in (IS_SUITED, IS_HONOR, IS_WIND, IS_DRAGON, IS_FLOWER, IS_TERMINAL, IS_TERMINAL_OR_HONOR):
    _a.setflags(write=False)
#: the 13 orphans (幺九, 十三幺's tiles): terminals and honours, in tile order
ORPHANS = np.flatnonzero(IS_TERMINAL_OR_HONOR).astype(np.int64)
#: the six knitted combinations (组合龙 / 全不靠): ``KNITS[i, s]`` is the rank class (0: 147, 1: 258, 2: 369)
#: of suit ``s`` in combination ``i``
KNITS = np.array([[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]], dtype=np.int64)
for _a in (SUIT, RANK, IS_GREEN, IS_REVERSIBLE, ORPHANS, KNITS):
    _a.setflags(write=False)
del _ids, _a

# --- names ---------------------------------------------------------------------------------------------
_SUIT_LETTER = "msp"
_HONOR_LETTERS = "ESWNCFP"
_CN_DIGITS = "一二三四五六七八九"
_CN_SUIT = "万条饼"

BOTZONE_CODES: tuple[str, ...] = tuple(
    [f"W{r}" for r in range(1, 10)]
    + [f"T{r}" for r in range(1, 10)]
    + [f"B{r}" for r in range(1, 10)]
    + [f"F{r}" for r in range(1, 5)]
    + [f"J{r}" for r in range(1, 4)]
    + [f"H{r}" for r in range(1, 9)]
)
COMPACT_NAMES: tuple[str, ...] = tuple(
    [f"{r}{s}" for s in _SUIT_LETTER for r in range(1, 10)]
    + list(_HONOR_LETTERS)
    + [f"{r}f" for r in range(1, 9)]
)
UNICODE_GLYPHS: tuple[str, ...] = tuple(
    [chr(0x1F007 + i) for i in range(9)]  # 🀇..🀏 characters
    + [chr(0x1F010 + i) for i in range(9)]  # 🀐..🀘 bamboo
    + [chr(0x1F019 + i) for i in range(9)]  # 🀙..🀡 dots
    + [chr(0x1F000 + i) for i in range(4)]  # 🀀..🀃 winds
    + [chr(0x1F004), chr(0x1F005), chr(0x1F006)]  # 🀄 🀅 🀆
    + [chr(0x1F026 + i) for i in range(4)]  # 🀦..🀩 spring summer autumn winter
    + [chr(0x1F022 + i) for i in range(4)]  # 🀢..🀥 plum orchid bamboo chrysanthemum
)
ZH_NAMES: tuple[str, ...] = tuple(
    [f"{_CN_DIGITS[r]}{_CN_SUIT[s]}" for s in range(3) for r in range(9)]
    + ["东风", "南风", "西风", "北风", "红中", "发财", "白板"]
    + list("春夏秋冬梅兰竹菊")
)
ENGLISH_NAMES: tuple[str, ...] = tuple(
    [f"{r} of characters" for r in range(1, 10)]
    + [f"{r} of bamboo" for r in range(1, 10)]
    + [f"{r} of dots" for r in range(1, 10)]
    + ["East wind", "South wind", "West wind", "North wind", "Red dragon", "Green dragon", "White dragon"]
    + ["Spring", "Summer", "Autumn", "Winter", "Plum", "Orchid", "Bamboo", "Chrysanthemum"]
)

_BOTZONE_INDEX = {c: i for i, c in enumerate(BOTZONE_CODES)}
_GLYPH_INDEX = {g: i for i, g in enumerate(UNICODE_GLYPHS)}
_ZH_INDEX = {n: i for i, n in enumerate(ZH_NAMES)}
# common alternative Chinese spellings
_ZH_INDEX.update(
    {
        "萬": None,
        "東風": 27,
        "東": 27,
        "南": 28,
        "西": 29,
        "北": 30,
        "中": 31,
        "發": 32,
        "发": 32,
        "白": 33,
        "發財": 32,
        "紅中": 31,
    }
)
_ZH_INDEX.pop("萬")
for _i in range(9):
    _ZH_INDEX[f"{_CN_DIGITS[_i]}萬"] = _i
    _ZH_INDEX[f"{_CN_DIGITS[_i]}索"] = 9 + _i
    _ZH_INDEX[f"{_CN_DIGITS[_i]}筒"] = 18 + _i
    _ZH_INDEX[f"{_CN_DIGITS[_i]}餅"] = 18 + _i
    _ZH_INDEX[f"{_CN_DIGITS[_i]}條"] = 9 + _i
_ZH_KEYS = sorted(_ZH_INDEX, key=len, reverse=True)

STYLES = ("compact", "botzone", "unicode", "zh")


def _check_tile(tile: object) -> int:
    if isinstance(tile, bool) or not isinstance(tile, (int, np.integer)):
        raise TypeError(f"tile id must be an int, got {type(tile).__name__}")
    t = int(tile)
    if not 0 <= t < NUM_TILE_TYPES_WITH_FLOWERS:
        raise ValueError(f"tile id {t} out of range 0..{NUM_TILE_TYPES_WITH_FLOWERS - 1}")
    return t


def tile_from_botzone(code: str) -> int:
    """Tile id of a Botzone code such as ``"W1"`` or ``"J3"``."""
    if not isinstance(code, str):
        raise TypeError(f"tile code must be a str, got {type(code).__name__}")
    try:
        return _BOTZONE_INDEX[code.strip().upper()]
    except KeyError:
        raise ValueError(
            f"unknown Botzone tile code {code!r} (expected W1-9, T1-9, B1-9, F1-4, J1-3, H1-8)"
        ) from None


def tile_to_botzone(tile: int) -> str:
    """Botzone code of a tile id: ``0 -> "W1"``."""
    return BOTZONE_CODES[_check_tile(tile)]


_COMPACT_RE = re.compile(r"\s*(?:([0-9]+)([mspzf])|([ESWNCFP]))\s*")


def _parse_compact(s: str) -> list[int]:
    out: list[int] = []
    pos = 0
    while pos < len(s):
        m = _COMPACT_RE.match(s, pos)
        if m is None or m.end() == pos:
            raise ValueError(f"cannot parse tiles {s!r} at position {pos}: {s[pos : pos + 8]!r}")
        digits, suit, letter = m.groups()
        if letter:
            out.append(27 + _HONOR_LETTERS.index(letter))
        else:
            for d in digits:
                r = int(d)
                if suit in "msp":
                    if not 1 <= r <= 9:
                        raise ValueError(f"rank {r} out of range 1..9 in {s!r}")
                    out.append(9 * _SUIT_LETTER.index(suit) + r - 1)
                elif suit == "z":
                    if not 1 <= r <= 7:
                        raise ValueError(f"honour {r}z out of range 1z..7z in {s!r}")
                    out.append(26 + r)
                else:
                    if not 1 <= r <= 8:
                        raise ValueError(f"flower {r}f out of range 1f..8f in {s!r}")
                    out.append(33 + r)
        pos = m.end()
    return out


def _parse_zh(s: str) -> list[int]:
    out: list[int] = []
    pos = 0
    s = s.strip()
    while pos < len(s):
        if s[pos] in " ,，、\t":
            pos += 1
            continue
        for key in _ZH_KEYS:
            if s.startswith(key, pos):
                out.append(_ZH_INDEX[key])
                pos += len(key)
                break
        else:
            raise ValueError(f"cannot parse Chinese tile names {s!r} at position {pos}: {s[pos : pos + 4]!r}")
    return out


def parse_tiles(text: str | Iterable[str]) -> list[int]:
    """Parse tiles in any supported notation into a list of tile ids (order kept).

    The notation is detected: Unicode glyphs, Chinese names, Botzone codes (``W1 T2 ...``) or the compact
    notation (``123m45s6p ESWN``, ``1234567z``, ``12f``). A sequence of Botzone codes is accepted too.

    >>> parse_tiles("123m EE")
    [0, 1, 2, 27, 27]
    >>> parse_tiles("W1 T9 J1")
    [0, 17, 31]
    """
    if not isinstance(text, str):
        if isinstance(text, Iterable):
            items = list(text)
            if not all(isinstance(x, str) for x in items):
                raise TypeError("tiles must be a string or a sequence of tile code strings")
            return [tile_from_botzone(x) for x in items]
        raise TypeError(f"tiles must be a str, got {type(text).__name__}")
    s = text.strip()
    if not s:
        return []
    if any(ord(ch) >= 0x1F000 for ch in s):
        out = []
        for ch in s:
            if ch.isspace() or ch == ",":
                continue
            if ch not in _GLYPH_INDEX:
                raise ValueError(f"unknown tile glyph {ch!r} in {text!r}")
            out.append(_GLYPH_INDEX[ch])
        return out
    if any("\u4e00" <= ch <= "\u9fff" for ch in s):
        return _parse_zh(s)
    tokens = re.split(r"[\s,]+", s)
    if all(re.fullmatch(r"[WTBFJHwtbfjh][1-9]", t) for t in tokens):
        return [tile_from_botzone(t) for t in tokens]
    return _parse_compact(s)


def format_tiles(tiles: Iterable[int], style: str = "compact") -> str:
    """Format tile ids in one notation (``compact``, ``botzone``, ``unicode`` or ``zh``).

    ``compact`` groups consecutive tiles of one suit: ``[0, 1, 2, 27] -> "123mE"``.

    >>> format_tiles([0, 1, 2, 9, 27, 31])
    '123m1sEC'
    >>> format_tiles([0, 31], "botzone")
    'W1 J1'
    """
    ts = [_check_tile(t) for t in tiles]
    if style == "botzone":
        return " ".join(BOTZONE_CODES[t] for t in ts)
    if style == "unicode":
        return "".join(UNICODE_GLYPHS[t] for t in ts)
    if style == "zh":
        return "".join(ZH_NAMES[t] for t in ts)
    if style != "compact":
        raise ValueError(f"unknown tile style {style!r}; expected one of {STYLES}")
    out: list[str] = []
    run: list[str] = []
    run_suit = ""
    for t in ts:
        if t < 27 or t >= 34:
            suit = _SUIT_LETTER[t // 9] if t < 27 else "f"
            if suit != run_suit and run:
                out.append("".join(run) + run_suit)
                run = []
            run_suit = suit
            run.append(str(RANK[t]))
        else:
            if run:
                out.append("".join(run) + run_suit)
                run, run_suit = [], ""
            out.append(_HONOR_LETTERS[t - 27])
    if run:
        out.append("".join(run) + run_suit)
    return "".join(out)


def tiles_to_counts(tiles: Iterable[int], size: int = NUM_TILE_TYPES) -> np.ndarray:
    """Count array (``int8[size]``, size 34 or 42) of a list of tile ids; raises on flowers when size is 34."""
    if size not in (NUM_TILE_TYPES, NUM_TILE_TYPES_WITH_FLOWERS):
        raise ValueError(f"size must be 34 or 42, got {size}")
    counts = np.zeros(size, dtype=np.int8)
    for t in tiles:
        t = _check_tile(t)
        if t >= size:
            raise ValueError(f"flower tile {tile_to_botzone(t)} not allowed in a 34-tile count array")
        counts[t] += 1
    return counts


def counts_to_tiles(counts: np.ndarray) -> list[int]:
    """Sorted list of tile ids of a count array (length 34 or 42)."""
    c = np.asarray(counts)
    if c.ndim != 1 or c.shape[0] not in (NUM_TILE_TYPES, NUM_TILE_TYPES_WITH_FLOWERS):
        raise ValueError(f"counts must have shape (34,) or (42,), got {c.shape}")
    if (c < 0).any():
        raise ValueError("counts must be non-negative")
    return [int(t) for t in np.repeat(np.arange(c.shape[0]), c.astype(np.int64))]
