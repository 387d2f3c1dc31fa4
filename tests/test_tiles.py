import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mjenv import melds
from mjenv.tiles import (
    BOTZONE_CODES,
    IS_GREEN,
    IS_REVERSIBLE,
    IS_TERMINAL,
    STYLES,
    counts_to_tiles,
    format_tiles,
    parse_tiles,
    tile_from_botzone,
    tiles_to_counts,
)


def test_ids_follow_botzone_order():
    assert BOTZONE_CODES[0] == "W1" and BOTZONE_CODES[9] == "T1" and BOTZONE_CODES[18] == "B1"
    assert BOTZONE_CODES[27] == "F1" and BOTZONE_CODES[31] == "J1" and BOTZONE_CODES[34] == "H1"
    assert len(BOTZONE_CODES) == 42


def test_attribute_tables():
    assert IS_GREEN.sum() == 6 and IS_GREEN[32] and not IS_GREEN[9]
    assert IS_REVERSIBLE.sum() == 14 and IS_REVERSIBLE[33]
    assert list(np.flatnonzero(IS_TERMINAL)) == [0, 8, 9, 17, 18, 26]


@pytest.mark.parametrize(
    "text,expected",
    [
        ("123m", [0, 1, 2]),
        ("19s19p", [9, 17, 18, 26]),
        ("ESWNCFP", list(range(27, 34))),
        ("1234567z", list(range(27, 34))),
        ("18f", [34, 41]),
        ("W1 T9, B5 F4 J3 H8", [0, 17, 22, 30, 33, 41]),
        ("一万九条五饼东风红中发财白板春", [0, 17, 22, 27, 31, 32, 33, 34]),
        ("🀇🀄🀆", [0, 31, 33]),
    ],
)
def test_parse(text, expected):
    assert parse_tiles(text) == expected


@given(st.lists(st.integers(0, 41), max_size=20))
def test_round_trip_every_style(tiles):
    for style in STYLES:
        assert parse_tiles(format_tiles(tiles, style)) == tiles


@pytest.mark.parametrize("bad", ["0m", "8z", "9f", "12x", "W0", "X1", "一", "🀪", "1m?"])
def test_parse_rejects_bad_strings(bad):
    with pytest.raises(ValueError):
        parse_tiles(bad)


def test_type_errors():
    with pytest.raises(TypeError):
        parse_tiles(5)
    with pytest.raises(TypeError):
        tile_from_botzone(3)
    with pytest.raises(ValueError, match="unknown tile style"):
        format_tiles([0], "nope")
    with pytest.raises(ValueError, match="out of range"):
        format_tiles([42])


def test_counts():
    c = tiles_to_counts(parse_tiles("1123m"))
    assert c.dtype == np.int8 and c.shape == (34,) and c[0] == 2
    assert counts_to_tiles(c) == [0, 0, 1, 2]
    with pytest.raises(ValueError, match="flower"):
        tiles_to_counts([34])
    assert tiles_to_counts([34], 42)[34] == 1


def test_meld_pack_round_trip():
    for p in [("CHI", "W2", 1), ("CHI", "B8", 3), ("PENG", "F1", 2), ("GANG", "J3", 0), ("GANG", "T5", 3)]:
        m = melds.from_pack(p)
        assert melds.to_pack(m) == p
    m = melds.pack(melds.KONG, 4, 1, added=True)
    assert melds.is_added(m) and melds.meld_tiles(m) == [4] * 4
    assert melds.is_concealed(melds.pack(melds.KONG, 4, 0))
    with pytest.raises(ValueError, match="middle tile"):
        melds.pack(melds.CHOW, 0, 1)
    with pytest.raises(ValueError, match="offer"):
        melds.pack(melds.PUNG, 0, 0)
