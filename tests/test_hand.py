"""Unit, property and reference tests of mjenv.hand (win detection, waits, shanten)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mjenv import hand as H
from mjenv.hand import Hand
from mjenv.melds import CHOW, KONG, PUNG, pack
from mjenv.testing.hands import BIASES, random_hand, random_win
from mjenv.tiles import format_tiles, parse_tiles
from tests.reference import naive_shanten as N


def T_(s: str) -> tuple[str, ...]:
    from mjenv.tiles import tile_to_botzone

    return tuple(tile_to_botzone(t) for t in sorted(parse_tiles(s)))


ORPHAN_STR = "19m19s19pESWNCFP"


def T(s: str) -> tuple[int, ...]:
    return tuple(sorted(parse_tiles(s)))


# --- win detection per shape --------------------------------------------------------------------------------


def test_regular_win_and_melds():
    assert H.win_shapes("123m456m789m123s55p") == 1 << H.REGULAR
    assert H.is_win("[123m,1][EEE,2] 456m789m55p")
    assert H.is_win("[1111m,0][2222m,0][3333m,0][4444m,0] 55p")
    assert not H.is_win("123m456m789m124s55p")
    assert not H.is_win("[123m,1] 456m789m135s55p")


def test_seven_pairs_with_four_identical():
    assert H.win_shapes("11223344556677m") == (1 << H.REGULAR) | (1 << H.SEVEN_PAIRS)
    assert H.win_shapes("1111m22s33p4456pEE") & (1 << H.SEVEN_PAIRS) == 0  # 6 is single
    assert H.win_shapes("1111m2233s44pEECC") == 1 << H.SEVEN_PAIRS
    assert H.win_shapes("1111m3333sEEEECC") == 1 << H.SEVEN_PAIRS
    assert H.shanten_by_shape("1111m3333sEEEEC")["seven_pairs"] == (0, (31,))


@pytest.mark.parametrize("pair", list(parse_tiles(ORPHAN_STR)))
def test_thirteen_orphans_with_each_pair(pair):
    c = np.zeros(34, np.int8)
    for t in parse_tiles(ORPHAN_STR):
        c[t] += 1
    ready = c.copy()
    c[pair] += 1
    assert H.win_shapes(c) == 1 << H.THIRTEEN_ORPHANS
    assert H.waits(ready) == tuple(sorted(parse_tiles(ORPHAN_STR)))  # 13-sided wait
    assert pair in H.waits(ready)


def test_honors_and_knitted():
    assert H.win_shapes("147m258s369pESWNC") == 1 << H.HONORS_KNITTED
    assert H.win_shapes("147m258s36pESWNCF") == 1 << H.HONORS_KNITTED
    assert H.win_shapes("14m258s369pESWNCF") == 1 << H.HONORS_KNITTED
    assert not H.is_win("147m258s369pESWNN")  # a pair is not allowed
    assert not H.is_win("148m258s369pESWNC")  # 8m is not in the 147m group


def test_knitted_straight_plus_set_and_pair():
    assert H.win_shapes("147m258s369p123mEE") & (1 << H.KNITTED_STRAIGHT)
    assert H.win_shapes("147m258s369pEEECC") == 1 << H.KNITTED_STRAIGHT
    assert not H.is_win("147m258s369pEEECF")


def test_knitted_straight_with_a_fixed_meld():
    assert H.win_shapes("[EEE,1] 147m258s369pCC") == 1 << H.KNITTED_STRAIGHT
    assert H.win_shapes("[123p,1] 147m258s369pCC") == 1 << H.KNITTED_STRAIGHT
    assert H.waits("[123p,1] 147m258s369pC") == (31,)
    r = H.shanten_by_shape("[123p,2] 147m258s369pC")
    assert r["knitted_straight"] == (0, (31,))
    assert set(r) == {"regular", "knitted_straight"}
    assert "knitted_straight" not in H.shanten_by_shape("[123p,2][EEE,1] 147m258sC")


# --- waits and shanten -------------------------------------------------------------------------------------


def test_nine_gates_waits():
    assert H.waits("1112345678999m") == tuple(range(9))


def test_waits_exclude_tiles_held_four_times():
    assert H.waits("[1111m,0] 234p567p789s5s") == (13,)
    assert H.waits("1111m234p567p789s") == ()  # only a 5th 1m would complete it
    assert H.waits("[111m,1] 1m234p567p789s") == ()


def test_shanten_values():
    assert H.shanten("123m456m789m123s5p") == (0, (22,))
    assert H.shanten("147m258s369pESWN").shanten == 0  # 13 tiles: honours-and-knitted, ready
    assert H.shanten("19m19s19pESWNCFP").shanten == 0
    assert H.shanten("19m19s19pESWNCFP").useful == T(ORPHAN_STR)
    assert H.shanten("135m246s79pESWNC").shanten == 5


@pytest.mark.reference
def test_shanten_value_agrees_with_the_reference():
    MahjongGB = pytest.importorskip(
        "MahjongGB", reason="the PyMahjongGB oracle (test extra) is not installed"
    )
    assert H.shanten("135m246s79pESWNC").shanten == MahjongGB.MahjongShanten((), T_("135m246s79pESWNC"))


def test_shanten_of_complete_hands():
    assert H.shanten("123m456m789m123s55p") == (-1, ())
    assert H.shanten_by_shape("11223344556677m")["seven_pairs"].shanten == -1


def test_physical_convention():
    # MahjongGB counts the 5th copy as useful only when ready
    assert 0 in H.shanten("1111m234p567p789s", physical=False).useful
    assert 0 not in H.shanten("1111m234p567p789s").useful


# --- hand model and bad input -----------------------------------------------------------------------------


def test_hand_parse_and_format_round_trip():
    h = Hand.parse("[567m,2][EEE,1] 123m45p99s")
    assert h.melds == (pack(CHOW, 5, 2), pack(PUNG, 27, 1))
    assert Hand.parse(str(h)).melds == h.melds
    assert (Hand.parse(str(h)).counts == h.counts).all()
    k = Hand.parse("[EEEE] 123m45p99s1m22p")
    assert k.melds == (pack(KONG, 27, 0),)
    assert Hand.parse("123m456m789m123s5p 12f").flowers == 2


def test_hand_from_botzone():
    h = Hand.from_botzone(
        pack=(("PENG", "F1", 1), ("CHI", "W6", 2)), hand=("W1", "W2", "W3", "B4", "B5", "T9", "T9")
    )
    assert str(h) == "[EEE,1][567m,2] 123m99s45p"
    assert Hand.from_botzone(*h.to_botzone()).melds == h.melds


@pytest.mark.parametrize(
    "text,exc,msg",
    [
        ("123m456m789m123s5x", ValueError, "cannot parse"),
        ("11111m456m789m123s", ValueError, "more than 4 copies"),
        ("[111m,1] 11m456m789m12s", ValueError, "more than 4 copies"),
        ("123m456m789m12s", ValueError, "needs 13 or 14"),
        ("[123m,1] 123m456m789m123s", ValueError, "needs 10 or 11"),
        ("[124m,1] 123m456m789m", ValueError, "not a chow"),
        ("[123m,1 456m789m123s5p", ValueError, "unbalanced"),
        ("[111m,0] 456m789m123s5p", ValueError, "offer"),
        ("[123m,x] 456m789m123s5p", ValueError, "offer"),
    ],
)
def test_bad_hand_strings(text, exc, msg):
    with pytest.raises(exc, match=msg):
        Hand.parse(text)


def test_bad_inputs_to_functions():
    with pytest.raises(TypeError, match="Hand, a str or a count array"):
        H.shanten(5)
    with pytest.raises(ValueError, match="complete hand"):
        H.is_win("123m456m789m123s5p")
    with pytest.raises(ValueError, match="waiting hand"):
        H.waits("123m456m789m123s55p")
    with pytest.raises(ValueError, match="shape"):
        H.as_hand(np.zeros(33, np.int8))
    with pytest.raises(TypeError, match="int8"):
        H.batch_shanten(np.zeros((2, 34), np.int64))
    with pytest.raises(ValueError, match="row 1"):
        c = np.zeros((2, 34), np.int8)
        c[:, :13] = 1
        c[1, 0] = 5
        H.batch_shanten(c)
    with pytest.raises(ValueError, match="row 0"):
        H.batch_is_win(np.zeros((1, 34), np.int8))
    with pytest.raises(ValueError, match="n_melds"):
        H.batch_shanten(np.zeros((1, 34), np.int8), n_melds=5)
    with pytest.raises(TypeError, match="numpy array"):
        H.batch_is_win([[0] * 34])


# --- batch API = per-hand API = naive reference ------------------------------------------------------------


def _hands(seed, n, size):
    rng = np.random.default_rng(seed)
    return np.stack([random_hand(rng, size, BIASES[i % len(BIASES)]) for i in range(n)])


@pytest.mark.parametrize("size", [1, 4, 7, 10, 13])
def test_batch_matches_naive_reference(size):
    c = _hands(size, 60, size)
    k = (13 - size) // 3
    by = H.batch_shanten_by_shape(c, k)
    total = H.batch_shanten(c, k)
    for i, row in enumerate(c):
        counts = [int(x) for x in row]
        exp = [N.regular(counts)]
        exp.append(N.seven_pairs(counts) if size == 13 else H.NO_SHANTEN)
        exp.append(N.thirteen_orphans(counts) if size == 13 else H.NO_SHANTEN)
        exp.append(N.honors_knitted(counts) if size == 13 else H.NO_SHANTEN)
        exp.append(N.knitted_straight(counts) if size >= 10 else H.NO_SHANTEN)
        assert by[i].tolist() == exp, format_tiles(np.repeat(np.arange(34), row))
        assert total[i] == min(exp)
        for shape in range(5):
            if exp[shape] == H.NO_SHANTEN:
                continue
            s, u = H.batch_useful(c[i : i + 1], shape, k)
            fn = N.SHAPES[H.SHAPE_NAMES[shape]]
            exp_u = [t for t in N.useful(fn, counts) if row[t] < 4]
            assert s[0] == exp[shape] and np.nonzero(u[0])[0].tolist() == exp_u


def test_batch_waits_and_wins_match_per_hand():
    c = _hands(3, 80, 13)
    w = H.batch_waits(c)
    for i in range(len(c)):
        assert tuple(np.nonzero(w[i])[0]) == H.waits(c[i])
        for t in range(34):
            if c[i, t] < 4:
                d = c[i].copy()
                d[t] += 1
                assert bool(w[i, t]) == H.is_win(d)
    rng = np.random.default_rng(5)
    wins = np.stack([random_win(rng) for _ in range(50)])
    assert H.batch_is_win(wins).all()
    assert (H.batch_win_shapes(wins) & 1).all()
    assert (H.batch_shanten(wins) == -1).all()
    # complete hands: shanten -1 exactly when is_win
    c14 = np.stack([random_hand(rng, 14, BIASES[i % len(BIASES)]) for i in range(300)])
    assert ((H.batch_shanten(c14) == -1) == H.batch_is_win(c14)).all()


def test_batch_is_win_agrees_with_win_shapes():
    """The fast batch win test (SWAR first pass, filtered special shapes) against the per-shape kernel."""
    rng = np.random.default_rng(11)
    for n in (14, 11, 8, 5, 2):
        rows = [random_hand(rng, n, BIASES[i % len(BIASES)]) for i in range(1600)]
        if n == 14:
            rows += [random_win(rng) for _ in range(200)]
        c = np.stack(rows)
        k = (14 - n) // 3
        w = H.batch_is_win(c, k)
        assert w.dtype == np.bool_ and w.any()
        assert (w == (H.batch_win_shapes(c, k) != 0)).all()


def test_batch_with_melds():
    c = np.zeros((2, 34), np.int8)
    c[0, [0, 1, 2, 3, 4, 5, 6, 7]] = 1
    c[0, 27] = 3  # 12345678m EEE: 8 + 3 = 11 standing tiles with one meld
    c[1, [0, 1, 2, 3, 4, 5, 6, 7, 27, 28, 29]] = 1
    assert H.batch_is_win(c, np.array([1, 1], np.int8)).tolist() == [False, False]
    c[0, :9] = 1
    c[0, 27] = 2  # 123456789m EE + 1 meld: a win
    assert H.batch_is_win(c[:1], 1).tolist() == [True]


# --- properties ---------------------------------------------------------------------------------------------

_PERMS = [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)]


def _relabel(counts: np.ndarray, perm) -> np.ndarray:
    out = counts.copy()
    for s in range(3):
        out[9 * perm[s] : 9 * perm[s] + 9] = counts[9 * s : 9 * s + 9]
    return out


@st.composite
def hands13(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    bias = draw(st.sampled_from(BIASES))
    return random_hand(np.random.default_rng(seed), 13, bias)


@st.composite
def winning_hands(draw):
    seed = draw(st.integers(0, 2**32 - 1))
    return random_win(np.random.default_rng(seed))


@settings(max_examples=150, deadline=None)
@given(hands13(), st.sampled_from(_PERMS))
def test_suit_relabelling_invariance(c, perm):
    d = _relabel(c, perm)
    assert H.batch_shanten_by_shape(c[None]).tolist() == H.batch_shanten_by_shape(d[None]).tolist()
    assert H.shanten(d).shanten == H.shanten(c).shanten
    ws = np.zeros(34, np.int8)
    ws[list(H.waits(c))] = 1
    assert H.waits(d) == tuple(np.nonzero(_relabel(ws, perm))[0])


@settings(max_examples=150, deadline=None)
@given(winning_hands(), st.data())
def test_removing_a_tile_from_a_win_waits_on_it(c, data):
    assert H.is_win(c)
    t = data.draw(st.sampled_from(np.nonzero(c)[0].tolist()))
    d = c.copy()
    d[t] -= 1
    assert t in H.waits(d)
    assert H.shanten(d).shanten == 0
    assert t in H.shanten(d).useful


@settings(max_examples=100, deadline=None)
@given(winning_hands(), st.sampled_from(_PERMS))
def test_wins_stay_wins_under_relabelling(c, perm):
    assert H.win_shapes(_relabel(c, perm)) == H.win_shapes(c)


# --- the scorer's table-free shape and wait predicates against the win tables ----------------------------
# mjenv.fans reads a hand with its own table-free predicates (regular_ok_kernel, single_wait_kernel, ...: see
# the comment above them in mjenv/hand.py); the engine and the API use the table kernels (win_code_at_kernel,
# _win_shapes, waits_bits_kernel). These tests pin the two equal over many random hands.


def _special_win(rng, shape):
    """A random complete hand of a special shape (1 seven pairs, 2 thirteen orphans, 3 honours and knitted,
    4 knitted straight: 14 tiles, or 11 with one meld half the time) as ``(counts, n_melds)``."""
    c = np.zeros(34, np.int8)
    perm = H.KNITS[rng.integers(6)]
    knit = [9 * s + int(perm[s]) + 3 * j for s in range(3) for j in range(3)]
    if shape == 1:
        for t in rng.choice(34, size=7, replace=False)[: 7 - int(rng.random() < 0.3)]:
            c[t] += 2
        c[np.flatnonzero(c)[0]] += 14 - c.sum()  # a pair of pairs (four identical) 30% of the time
    elif shape == 2:
        c[H.ORPHANS] = 1
        c[H.ORPHANS[rng.integers(13)]] += 1
    elif shape == 3:
        c[rng.choice(knit + list(range(27, 34)), size=14, replace=False)] = 1
    else:
        c[knit] = 1
        rest = random_win(rng, 5 if rng.random() < 0.5 else 2)
        if (c + rest).max() > 4:
            return _special_win(rng, shape)
        c += rest
        return c, (14 - int(c.sum())) // 3
    return c, 0


def _scorer_corpus(rng, n_hands=3000):
    """Complete hands ``(counts int8[34], n_melds)``: regular and special-shape wins, the same with one tile
    swapped (mostly no win), shape-biased random hands, every size."""
    out = []
    for i in range(n_hands):
        k = int(rng.integers(0, 5)) if i % 3 else 0
        n = 14 - 3 * k
        if i % 4 == 0:
            c, k = _special_win(rng, 1 + (i // 4) % 4)
        elif i % 4 == 1:
            c = random_win(rng, n)
        else:
            c = random_hand(rng, n, BIASES[i % len(BIASES)])
        if i % 5 == 4 or i % 7 == 0:  # swap one tile for another
            c = c.copy()
            c[rng.choice(np.flatnonzero(c))] -= 1
            t = int(rng.integers(34))
            c[t] += 1 if c[t] < 4 else 0
            if c.sum() != 14 - 3 * k:
                continue
        out.append((c, k))
    return out


def test_the_scorers_shape_predicates_equal_the_win_tables():
    rng = np.random.default_rng(27)
    corpus = _scorer_corpus(rng)
    counts = np.stack([c for c, _ in corpus])
    melds = np.array([k for _, k in corpus], np.int8)
    shapes = H.batch_win_shapes(counts, melds)
    seen = np.zeros(5, np.int64)
    for (c, k), bits in zip(corpus, shapes):
        h = c.astype(np.int64)
        assert bool(H.regular_ok_kernel(h, (12 - 3 * k) // 3)) == bool(bits & 1), (str(c), k)
        if k == 0:
            assert bool(H.special_shape_kernel(h, 0)) == bool(bits & 2), str(c)
            assert bool(H.special_shape_kernel(h, 1)) == bool(bits & 4), str(c)
            assert (H.honors_knitted_kernel(h) > 0) == bool(bits & 8), str(c)
        if k <= 1:
            assert bool(H.knitted_win_kernel(h, k)) == bool(bits & 16), (str(c), k)
            assert np.array_equal(h, c)  # restored in place
        seen += [(bits >> s) & 1 for s in range(5)]
    assert (seen > 50).all(), seen


def test_the_scorers_single_wait_equals_the_engines_waits():
    """``single_wait_kernel`` (is the win tile the only wait: 边张/嵌张/单钓) against the waits of
    ``waits_bits_kernel`` (the engine's and :func:`mjenv.hand.waits`), on every tile of many winning hands."""
    rng = np.random.default_rng(28)
    scratch = np.zeros(34, np.int64)
    n_single = n_checked = 0
    for c, k in _scorer_corpus(rng, 4000):
        if not H.batch_is_win(c[None], k)[0]:
            continue
        regular = bool(H.batch_win_shapes(c[None], k)[0] & 1)
        for win in np.flatnonzero(c):
            conc = c.copy()
            conc[win] -= 1
            if conc.max() >= 4:
                continue  # the scorer also tries a 5th copy of a tile held 4 times; the win tables cannot
            waits = H.waits(conc)
            assert win in waits
            got = bool(H.single_wait_kernel(conc.astype(np.int64), k, int(win), scratch, regular))
            assert got == (waits == (win,)), (str(conc), k, win, waits)
            n_single += got
            n_checked += 1
    assert n_checked > 5000 and n_single > 500, (n_checked, n_single)
