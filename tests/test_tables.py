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


def _shipped(name: str, keys) -> list[np.ndarray]:
    with resources.files("mjenv._tables").joinpath(name).open("rb") as f:
        z = np.load(f)
        return [z[k] for k in keys]


def test_table_copies_in_the_cache_equal_the_shipped_tables(tmp_path, monkeypatch):
    """The first load writes plain copies into the cache folder and later loads read them; a truncated copy
    falls back to the shipped file (and is written again); copies of another version of the file go."""
    from mjenv import _jit

    monkeypatch.setattr(_jit, "cache_dir", lambda: tmp_path)
    keys = ("suit_inc", "honor_inc")
    ref = _shipped("shanten_tables.npz", keys)
    stale = tmp_path / "mjenv-table-shanten_tables-0123456789abcdef-suit_inc.npy"
    stale.write_bytes(b"old")
    first = H._load_npz("shanten_tables.npz", keys)
    copies = sorted(tmp_path.glob("mjenv-table-shanten_tables-*.npy"))
    assert len(copies) == 2 and not stale.exists()
    suit_copy = next(p for p in copies if p.name.endswith("-suit_inc.npy"))
    suit_copy.write_bytes(suit_copy.read_bytes()[:1000])  # a partly written copy
    for arrays in (first, H._load_npz("shanten_tables.npz", keys), H._load_npz("shanten_tables.npz", keys)):
        for a, b in zip(arrays, ref):
            assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
            assert a.flags.c_contiguous and a.flags.writeable
    assert suit_copy.stat().st_size > 1000  # written again by the fallback


def test_tables_load_without_a_writable_cache(tmp_path, monkeypatch):
    from mjenv import _jit

    missing = tmp_path / "file"
    missing.write_text("not a folder")
    monkeypatch.setattr(_jit, "cache_dir", lambda: missing)  # mkdir / writes fail: inflate, as before
    keys = ("suit_inc", "honor_inc")
    for a, b in zip(H._load_npz("shanten_tables.npz", keys), _shipped("shanten_tables.npz", keys)):
        assert a.dtype == b.dtype and np.array_equal(a, b)


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
