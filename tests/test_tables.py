"""The shipped lookup tables match SHA256SUMS and their generator."""

from __future__ import annotations

from importlib import resources

import numpy as np
import pytest

from mjenv import hand as H


def _sums() -> dict[str, str]:
    text = resources.files("mjenv._tables").joinpath("SHA256SUMS").read_text()
    return {name: digest for digest, name in (line.split() for line in text.splitlines() if line.strip())}


def test_table_hash_matches_sums():
    assert _sums()["suit_tables.npz"] == H.table_sha256()
    assert _sums()["shanten_tables.npz"] == H.table_sha256("shanten_tables.npz")


def test_table_shapes():
    suit, honor, suit_win, honor_win = H.load_tables()
    assert suit.shape == (5**9, 10) and suit.dtype == np.int8
    assert honor.shape == (5**7, 10) and honor.dtype == np.int8
    assert suit_win.shape == (5**9,) and honor_win.shape == (5**7,)
    # a few known entries: 123 in a suit is a set; 11 is a pair
    assert suit_win[1 + 5 + 25] & 1 and suit_win[2] & 2
    suit_inc, honor_inc = H.load_shanten_tables()
    assert suit_inc.shape == (5**9,) and honor_inc.shape == (5**7,)
    assert suit_inc.dtype == honor_inc.dtype == np.uint16
    # 123: one increment of 2 (a set), no pair; 11: one increment of 1 (a partial) without the pair, or the pair
    assert suit_inc[1 + 5 + 25] == 1 and suit_inc[2] == H.INC_PAIR | 1 << 3


@pytest.mark.slow
def test_regenerated_tables_equal_shipped():
    from mjenv._tables.gen_suit_tables import generate

    fresh = generate()
    shipped = H.load_tables()
    for name, arr in zip(("suit", "honor", "suit_win", "honor_win"), shipped):
        assert np.array_equal(fresh[name], arr), name


@pytest.mark.slow
def test_regenerated_shanten_tables_equal_shipped():
    from mjenv._tables.gen_shanten_tables import generate

    fresh = generate()
    for name, arr in zip(("suit_inc", "honor_inc"), H.load_shanten_tables()):
        assert np.array_equal(fresh[name], arr), name
