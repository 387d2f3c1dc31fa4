"""Differential tests of mjenv.compat.mahjonggb against PyMahjongGB (the black-box oracle, a test dependency)."""

from __future__ import annotations

import numpy as np
import pytest

from mjenv.compat import mahjonggb as C
from tests.reference.diff_mahjonggb import SHAPE_FUNCS, compare, make_hands


def _oracle():
    """The reference calculator, or skip the calling test (only the tests that use it) when it is absent."""
    return pytest.importorskip("MahjongGB", reason="the PyMahjongGB oracle (test extra) is not installed")


pytestmark = pytest.mark.reference

FUNCS = ["MahjongShanten"] + [name for name, _, _ in SHAPE_FUNCS]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_hands_agree(seed):
    _oracle()
    rng = np.random.default_rng(1000 + seed)
    counts = make_hands(rng, 1000)
    stats = compare(counts, rng)
    assert stats["checks"] > 30000
    assert stats["mismatches"] == []


def test_every_size_and_bias_is_generated():
    rng = np.random.default_rng(7)
    counts = make_hands(rng, 400)
    sizes = set(counts.sum(axis=1).tolist())
    assert sizes == {1, 4, 7, 10, 13}


H13 = ("W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "T1", "T1", "T1", "T2")
H10 = H13[3:]


class _Tup(tuple):
    pass


class _Str(str):
    pass


BAD_PACK_HAND = [
    ((), list(H13)),
    ((), 5),
    ((), "W1"),
    ((), None),
    ((), ("w1",) + H13[1:]),
    ((), ("X1",) + H13[1:]),
    ((), ("W0",) + H13[1:]),
    ((), ("H1",) + H13[1:]),
    ((), (1,) + H13[1:]),
    ((), ("Q", 5)),
    ((), ("W1", 5)),
    ((), (b"W1",)),
    ((), ("W1 ",)),
    ((), ()),
    ((), H13 + ("B1",)),
    ((), H13[:2]),
    ((), H13[:5]),
    ([], H13),
    ([], []),
    ((["PENG", "W1", 1],), H10),
    ((("PENG", "W1"),), H10),
    ((("PENG", "W1", 1, 0),), H10),
    (((),), H10),
    ((("PONG", "W1", 1),), H10),
    ((("peng", "W1", 1),), H10),
    ((("PENG", "X1", 1),), H10),
    ((("PENG", "H1", 1),), H10),
    ((("PENG", "W1", 4),), H10),
    ((("PENG", "W1", -1),), H10),
    ((("GANG", "W1", 5),), H10),
    ((("PENG", "W1", "1"),), H10),
    ((("PENG", "W1", 1.0),), H10),
    ((("PENG", "W1", None),), H10),
    ((("PENG", 1, 1),), H10),
    (((1, "W1", 1),), H10),
    ((("PENG", "W1", 2**40),), H10),
    ((("PENG", "W1", -(2**40)),), H10),
    ((("PENG", "W1\0", 1),), H10),
    ((("PENG", "W1", 1), 5), H10),
    ((("X", "W1", 1), ["x"]), ("W1",)),
    ((("X", "W1", 1),), []),
    ((("PENG", "W1", 1),), ("Q",) * 14),
    ((("PENG", "W1", 9),), ("W1",) * 14),
    ((("PENG", "W1", 0),), H10),
    ((("CHI", "W1", 1),), H10),
    ((("CHI", "F1", 0),), H10),
    ((("GANG", "W1", 0),), H10),
    ((("PENG", "W1", True),), H10),
    ((("PENG", "W1", 1),), H13),
    ((("PENG", "W2", 1),) * 4, ("W1",)),
    ((("PENG", "W1", 1),), ("W1",) + H10[1:]),
    (_Tup(()), _Tup(("W1",))),
    ((), (_Str("W1"),)),
]


def _outcome(f, *args, **kwargs):
    try:
        return ("ok", f(*args, **kwargs))
    except Exception as e:  # noqa: BLE001 - comparing the exact exception
        return (type(e).__name__, str(e))


@pytest.mark.parametrize("case", range(len(BAD_PACK_HAND)))
def test_mahjong_shanten_inputs_match(case):
    pack, hand = BAD_PACK_HAND[case]
    assert _outcome(C.MahjongShanten, pack, hand) == _outcome(_oracle().MahjongShanten, pack, hand)
    assert _outcome(C.MahjongShanten, pack=pack, hand=hand) == _outcome(
        _oracle().MahjongShanten, pack=pack, hand=hand
    )


BAD_HAND = [
    list(H13),
    5,
    None,
    "W1",
    ("w1",) + H13[1:],
    ("X1",) + H13[1:],
    (),
    H13 + ("B1",),
    H13[:4],
    H13[:7],
    H13[:10],
    H13[:1],
    (1,) + H13[1:],
    ("Q", 5),
    H13[:2],
    ("W1",) * 4,
    _Tup(H13),
]


@pytest.mark.parametrize("name", FUNCS[1:])
@pytest.mark.parametrize("case", range(len(BAD_HAND)))
def test_shape_inputs_match(name, case):
    hand = BAD_HAND[case]
    assert _outcome(getattr(C, name), hand) == _outcome(getattr(_oracle(), name), hand)
    assert _outcome(getattr(C, name), hand=hand) == _outcome(getattr(_oracle(), name), hand=hand)


CALLS = [
    ((), {}),
    ((H13, H13), {}),
    ((), {"foo": 1}),
    ((H13,), {"hand": H13}),
    ((), {"hand": H13, "foo": 2}),
    ((H13,), {"foo": 1}),
]


@pytest.mark.parametrize("case", range(len(CALLS)))
@pytest.mark.parametrize("name", FUNCS)
def test_signature_errors_match(name, case):
    args, kwargs = CALLS[case]
    if name == "MahjongShanten" and args:
        args = ((),) + args
    assert _outcome(getattr(C, name), *args, **kwargs) == _outcome(getattr(_oracle(), name), *args, **kwargs)


@pytest.mark.parametrize(
    "args,kwargs",
    [
        (((), H13, 1), {}),
        (((),), {"pack": ()}),
        ((), {"pack": ()}),
        ((), {"hand": H13}),
        (((),), {"hand": H13}),
    ],
)
def test_mahjong_shanten_signature_errors(args, kwargs):
    assert _outcome(C.MahjongShanten, *args, **kwargs) == _outcome(_oracle().MahjongShanten, *args, **kwargs)


def test_documented_differences():
    # more than 4 copies: the reference returns numbers of its own; we refuse
    with pytest.raises(TypeError, match="ERROR_TILE_COUNT_GREATER_THAN_4"):
        C.MahjongShanten((), ("W1",) * 5 + H13[5:])
    with pytest.raises(TypeError, match="ERROR_TILE_COUNT_GREATER_THAN_4"):
        C.RegularShanten(("W1",) * 13)
    # more than 4 packs crash the reference; we raise
    with pytest.raises(TypeError, match="ERROR_INVALID_HAND_OR_PACK"):
        C.MahjongShanten((("PENG", "W2", 1),) * 5, ("W1",))


def test_examples():
    assert C.MahjongShanten((), H13) == 0
    assert C.RegularShanten(H13) == (0, ("T2", "T3"))
    assert C.SevenPairsShanten(hand=H13)[0] == 5
    assert C.KnittedStraightShanten(("W1", "W4", "W7", "T2", "T5", "T8", "B3", "B6", "B9", "J2")) == (
        0,
        ("J2",),
    )


@pytest.mark.slow
def test_many_random_hands_agree():
    _oracle()
    rng = np.random.default_rng(99)
    stats = compare(make_hands(rng, 20000), rng)
    assert stats["mismatches"] == []
