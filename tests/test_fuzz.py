"""Randomized play of thousands of hands with every invariant checked after every step (see scripts/fuzz_games.py)."""

import numpy as np
import pytest

from mjenv import game as G
from mjenv.testing.table import CHECK_ERRORS, playout_kernel, validate_state

MahjongGB = pytest.importorskip("MahjongGB")


def test_thousands_of_hands_every_invariant_every_event():
    st = G.new_state()
    rs = np.array([0x9E3779B97F4A7C15], np.uint64)
    seen = 0
    wins = 0
    for h in range(3000):
        G.reset_kernel(st, 777_000 + h, h % 4, (h // 4) % 4, 8)
        n = playout_kernel(st, 1 if h % 3 else 0, rs, True)  # two thirds biased (wins often), one third uniform
        assert n > 0, CHECK_ERRORS.get(n, n)
        validate_state(st)
        seen |= int(st[G.EVENTS])
        if st[G.WINNER] >= 0:
            wins += 1
            ref = {}
            for _p, c, _zh, en in MahjongGB.MahjongFanCalculator(**G.win_record(st), verbose=True):
                ref[en] = ref.get(en, 0) + c
            assert ref == G.fan_breakdown(st), G.win_record(st)
            assert st[G.WIN_TOTAL] - st[G.FLOWERS + st[G.WINNER]] >= 8
    missing = [name for bit, name in G.EV_NAMES.items() if not seen & bit]
    assert not missing, f"rule events never seen: {missing}"
    assert wins > 1000


def test_legal_mask_agrees_with_single_action_legality():
    st = G.new_state()
    x = 12345
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    for h in range(30):
        G.reset_kernel(st, h, 0, 0, 8)
        while st[G.PHASE] != G.PH_OVER:
            seat = int(st[G.CUR])
            G.legal_mask_kernel(st, seat, mask)
            for s in range(4):
                assert [G._legal(st, s, a) for a in range(G.NUM_ACTIONS)] == list(G.legal_mask(st, s))
            G.step(st, int(np.flatnonzero(mask)[(x >> 33) % int(mask.sum())]))
            x = (x * 6364136223846793005 + 1442695040888963407) % 2**64
