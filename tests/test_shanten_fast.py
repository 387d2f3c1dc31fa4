"""Tests of the fast overall shanten (``mjenv.shanten.batch_shanten``): packed increment tables, SWAR helpers, knitted bound.

The fast path must give exactly the minimum of the per-shape kernels (``batch_shanten_by_shape``), which the
differential tests compare with PyMahjongGB; here each of its pieces is checked on its own.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv import shanten as S
from mjenv._tables import gen_shanten_tables as G
from mjenv.testing.hands import BIASES, random_hand, random_win
from tests.reference import naive_shanten as N


def _digits(keys: np.ndarray, nranks: int) -> np.ndarray:
    return np.stack([(keys // 5**r) % 5 for r in range(nranks)], axis=1)


# --- packed increments ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("which", ["suit", "honor"])
def test_packed_increments_reproduce_every_concave_row(which):
    """Every row not flagged INC_EXACT is ``f(b) = greedy(twos, ones, b)`` (+1 on the pair row), exhaustively."""
    suit, honor, _, _ = S.load_tables()
    suit_inc, honor_inc = S.load_shanten_tables()
    g, x = (suit, suit_inc) if which == "suit" else (honor, honor_inc)
    x = x.astype(np.int64)
    ok = (x & S.INC_EXACT) == 0
    assert ok.mean() > 0.999
    g, x = g[ok].astype(np.int64), x[ok]
    pair = (x & S.INC_PAIR) != 0
    assert np.array_equal(pair, g[:, 5] > -64)
    for b in range(5):
        for p, shift in ((0, 0), (1, 6)):
            t, o = (x >> shift) & 7, (x >> (shift + 3)) & 7
            m = np.minimum(t, b)
            want = 2 * m + np.minimum(o, b - m) + p
            rows = pair if p else slice(None)
            assert np.array_equal(g[rows, 5 * p + b], want[rows]), (p, b)


def test_table_constants_agree_with_generator():
    assert (S.INC_PAIR, S.INC_EXACT) == (G.INC_PAIR, G.INC_EXACT)


@numba.njit(cache=False)
def _scores(keys, needs, suit, honor, suit_inc, honor_inc, out):
    for i in range(keys.shape[0]):
        k0, k1, k2, k3 = keys[i, 0], keys[i, 1], keys[i, 2], keys[i, 3]
        out[i, 0] = S.inc_score_kernel(suit_inc[k0], suit_inc[k1], suit_inc[k2], honor_inc[k3], needs[i])
        out[i, 1] = S.regular_score_kernel(suit, honor, k0, k1, k2, k3, needs[i])


def _check_scores(keys: np.ndarray, needs: np.ndarray) -> int:
    suit, honor, _, _ = S.load_tables()
    out = np.empty((len(keys), 2), np.int64)
    _scores(keys, needs, suit, honor, *S.load_shanten_tables(), out)
    fast = out[:, 0] >= 0
    assert np.array_equal(out[fast, 0], out[fast, 1])
    return int(fast.sum())


def test_inc_score_equals_the_convolution_on_random_keys():
    rng = np.random.default_rng(0)
    n = 200_000
    keys = np.stack([rng.integers(5**9, size=n)] * 3 + [rng.integers(5**7, size=n)], axis=1)
    # also keys of real hands (few tiles per group), where the non-concave rows live
    hands = np.stack([random_hand(rng, 14, BIASES[i % len(BIASES)]) for i in range(4000)])
    real = np.stack(
        [
            (hands[:, 9 * g : 9 * g + (9 if g < 3 else 7)] * 5 ** np.arange(9 if g < 3 else 7)).sum(1)
            for g in range(4)
        ],
        axis=1,
    )
    keys = np.concatenate([keys, real])
    needs = rng.integers(0, 5, size=len(keys))
    assert _check_scores(keys, needs) > 0.99 * len(keys)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 5**9 - 1), min_size=3, max_size=3),
    st.integers(0, 5**7 - 1),
    st.integers(0, 4),
)
def test_inc_score_equals_the_convolution_hypothesis(suits, honors, need):
    _check_scores(np.array([[*suits, honors]], np.int64), np.array([need]))


# --- SWAR helpers --------------------------------------------------------------------------------------------


@numba.njit(cache=False)
def _suit_parts(rows, out):
    for i in range(rows.shape[0]):
        w = S.count_word(rows, i, 0)
        e = np.int64(rows[i, 8])
        out[i, 0] = S._key8(w) + 390625 * e
        out[i, 1] = S._knit_classes(w, e)
        out[i, 2] = S._levels(w, e)


def test_swar_suit_helpers_match_plain_arithmetic():
    rng = np.random.default_rng(1)
    rows = np.zeros((50_000, 16), np.int8)
    rows[:, :9] = rng.integers(0, 5, size=(50_000, 9))
    rows[:3, :9] = [[0] * 9, [4] * 9, [1, 0, 2, 0, 3, 0, 4, 0, 1]]
    out = np.empty((len(rows), 3), np.int64)
    _suit_parts(rows, out)
    c = rows[:, :9].astype(np.int64)
    assert np.array_equal(out[:, 0], (c * 5 ** np.arange(9)).sum(1))
    for k in range(3):
        assert np.array_equal((out[:, 1] >> (8 * k)) & 0xFF, (c[:, k::3] > 0).sum(1))
    assert np.array_equal(out[:, 1] >> 24, ((c > 0) << np.arange(9)).sum(1))
    for k in range(1, 5):
        assert np.array_equal((out[:, 2] >> (9 * (k - 1))) & 511, ((c >= k) << np.arange(9)).sum(1))


# --- knitted straight lower bound ----------------------------------------------------------------------------


@numba.njit(cache=False)
def _bounds(counts, out):
    """Per combination j: (held, _knitted_bound) as the batch kernel computes them."""
    n = 0
    for t in range(34):
        n += counts[0, t]
    rest_need = 1 if n >= 12 else 0
    wh = S.count_word(counts, 0, 26) >> 8
    hblocks = (1 if S._halves(wh) else 0) | (2 if (wh + 0x7D * S.BYTES_01) & S.BYTES_80 else 0)
    q = np.empty(3, np.int64)
    c = np.empty(3, np.int64)
    for s in range(3):
        w = S.count_word(counts, 0, 9 * s)
        e = np.int64(counts[0, 9 * s + 8])
        q[s] = S._levels(w, e)
        c[s] = S._knit_classes(w, e)
    lanes = S._knit_lanes(c[0], c[1], c[2])
    for j in range(6):
        held = (lanes >> (8 * j)) & 0xFF
        blocks = hblocks
        for s in range(3):
            blocks |= S._rest_blocks(q[s], S.KNIT_MASK[S.KNITS[j, s]] & q[s])
        out[j, 0] = held
        out[j, 1] = S._knitted_bound(held, rest_need, blocks)


def _check_bound(counts: np.ndarray) -> int:
    """Assert the bound never exceeds the exact per-combination shanten; return how often it is exact."""
    out = np.empty((6, 2), np.int64)
    _bounds(counts[None].astype(np.int8), out)
    exact = N.knitted_straight_by_combination([int(x) for x in counts])
    perms = N.KNITS
    for j in range(6):
        held = sum(1 for t in N._knit_tiles(perms[j]) if counts[t])
        assert out[j, 0] == held
        assert out[j, 1] <= exact[j], (counts.tolist(), j, out[j, 1], exact[j])
        assert exact[j] <= 9 - held + 2 * (1 if counts.sum() >= 12 else 0)  # the rest scores >= 0
    return int((out[:, 1] == np.array(exact)).sum())


@pytest.mark.parametrize("size", [10, 11, 13, 14])
def test_knitted_bound_never_exceeds_exact_shanten(size):
    rng = np.random.default_rng(size)
    tight = 0
    for i in range(120):
        bias = ("knitted", "uniform", "pairs", "near_win", "quads")[i % 5]
        tight += _check_bound(random_hand(rng, size, bias))
    assert tight > 0  # the bound is attained, not vacuous


@st.composite
def _hands(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    size = draw(st.sampled_from([10, 11, 13, 14]))
    return random_hand(np.random.default_rng(seed), size, draw(st.sampled_from(BIASES)))


@settings(max_examples=150, deadline=None)
@given(_hands())
def test_knitted_bound_never_exceeds_exact_shanten_hypothesis(counts):
    _check_bound(counts)


# --- the whole fast path --------------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 2, 4, 5, 7, 8, 10, 11, 13, 14])
def test_batch_shanten_is_the_minimum_over_shapes(size):
    rng = np.random.default_rng(100 + size)
    k = (14 - size) // 3
    rows = [random_hand(rng, size, BIASES[i % len(BIASES)]) for i in range(1500)]
    if size == 14:
        rows += [random_win(rng) for _ in range(300)]
    c = np.stack(rows)
    assert np.array_equal(S.batch_shanten(c, k), S.batch_shanten_by_shape(c, k).min(axis=1))


@settings(max_examples=150, deadline=None)
@given(_hands())
def test_batch_shanten_is_the_minimum_over_shapes_hypothesis(counts):
    k = (14 - int(counts.sum())) // 3
    assert S.batch_shanten(counts[None], k)[0] == S.batch_shanten_by_shape(counts[None], k).min()


@pytest.mark.parametrize("bad", [5, -1, 127, -128])
def test_batch_shanten_rejects_a_bad_count_at_every_position(bad):
    base = np.zeros((34, 34), np.int8)
    base[:, 27:34] = 1  # 7 honours; the rest of 13 below
    base[:, :6] = 1
    for t in range(34):
        c = base.copy()
        c[t, t] = bad  # row t is the only bad row
        with pytest.raises(ValueError, match=f"row {t} has a count outside 0..4"):
            S.batch_shanten(c)


def test_batch_shanten_rejects_wrong_sizes():
    c = np.zeros((3, 34), np.int8)
    c[0, :13] = 1
    c[1, :12] = 1  # 12 tiles fit no meld count
    c[2, :14] = 1
    with pytest.raises(ValueError, match="row 1 has a tile count that does not fit its melds"):
        S.batch_shanten(c)
    assert S.batch_shanten(c[[0, 2]]).tolist() == S.batch_shanten_by_shape(c[[0, 2]]).min(axis=1).tolist()
    with pytest.raises(ValueError, match="row 0"):
        S.batch_shanten(c[:1], n_melds=1)
