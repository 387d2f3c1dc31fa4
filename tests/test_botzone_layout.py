"""mjenv's 109 actions <-> the course agents' 235-action layout (mjenv.botzone.layout), exhaustively."""

import numpy as np
import pytest

from mjenv import actions as A
from mjenv.botzone import layout as L
from mjenv.tiles import BOTZONE_CODES


def _pairs():
    """Every (mjenv action, offer tile) that has a course index."""
    out = []
    for a in range(A.NUM_ACTIONS):
        if a in (A.PUNG, A.KONG) or A.CHOW <= a < A.PUNG:
            for t in range(34):
                if A.CHOW <= a < A.PUNG:
                    num = t % 9
                    if t >= 27 or not 1 <= num - (a - A.CHOW) + 1 <= 7:
                        continue
                out.append((a, t))
        else:
            out.append((a, -1))
    return out


def test_bijection():
    pairs = _pairs()
    idx = [L.to_course(a, t) for a, t in pairs]
    assert sorted(idx) == list(range(L.COURSE_ACTIONS))  # onto and one to one
    for (a, t), i in zip(pairs, idx):
        assert L.from_course(i) == (a, t)
    assert np.array_equal(L.to_course_array([a for a, _ in pairs], [t for _, t in pairs]), idx)


def test_course_order_matches_feature_agent():
    # the course FeatureAgent's formulas, written independently of the module
    assert L.to_course(A.PASS) == 0 and L.to_course(A.WIN) == 1
    assert L.to_course(A.DISCARD + 33) == 2 + 33
    for t, code in enumerate(BOTZONE_CODES[:34]):
        assert L.course_action_name(L.to_course(A.DISCARD + t)) == f"Play {code}"
        assert L.to_course(A.PUNG, t) == 99 + t
        assert L.to_course(A.KONG, t) == 133 + t
        assert L.to_course(A.CONCEALED_KONG + t) == 167 + t
        assert L.to_course(A.ADDED_KONG + t) == 201 + t
    for color in "WTB":
        for num in range(1, 10):
            t = BOTZONE_CODES.index(f"{color}{num}")
            base = 36 + "WTB".index(color) * 21
            if num >= 3:  # claimed tile highest: tmp[0], tmp[1] in hand
                assert L.to_course(A.CHOW + 2, t) == base + (num - 3) * 3 + 2
            if 2 <= num <= 8:
                assert L.to_course(A.CHOW + 1, t) == base + (num - 2) * 3 + 1
            if num <= 7:
                assert L.to_course(A.CHOW + 0, t) == base + (num - 1) * 3
    assert L.course_action_name(36 + 21 + 3 * 3 + 1) == "Chi T5 1"


def test_masks_map():
    rng = np.random.default_rng(0)
    pairs = _pairs()
    for _ in range(200):
        t = int(rng.integers(34))
        ok = [a for a, tt in pairs if tt in (-1, t)]
        m = np.zeros(A.NUM_ACTIONS, bool)
        m[rng.choice(ok, size=int(rng.integers(1, 8)), replace=False)] = True
        c = L.mask_to_course(m, t)
        assert c.sum() == m.sum()
        back, offer = L.mask_from_course(c)
        assert np.array_equal(back, m)
        claims = m[A.CHOW : A.KONG + 1].any()
        assert offer == (t if claims else -1)


def test_bad_input():
    with pytest.raises(ValueError, match="needs the tile on offer"):
        L.to_course(A.PUNG)
    with pytest.raises(ValueError, match="no chow"):
        L.to_course(A.CHOW + 2, 0)  # W1 cannot be the highest tile
    with pytest.raises(ValueError, match="no chow"):
        L.to_course(A.CHOW, 27)
    with pytest.raises(ValueError):
        L.to_course(A.NUM_ACTIONS)
    with pytest.raises(TypeError):
        L.to_course(1.5)
    with pytest.raises(ValueError):
        L.from_course(235)
    m = np.zeros(235, bool)
    m[[99, 100]] = True
    with pytest.raises(ValueError, match="two different tiles"):
        L.mask_from_course(m)
    with pytest.raises(ValueError, match="dimension"):
        L.mask_to_course(np.zeros(10, bool))
    with pytest.raises(ValueError, match="entry 1"):
        L.to_course_array([0, A.CHOW + 2], [-1, 0])
