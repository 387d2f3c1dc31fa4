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


def test_win_precheck_never_rejects_a_win():
    """The engine's fast shape test (game._may_win) must hold for every hand the scorer calls a win."""
    from mjenv.fans import score_kernel
    from mjenv.melds import from_pack
    from mjenv.testing.fan_gen import random_case
    from mjenv.tiles import tile_from_botzone

    rng = np.random.default_rng(42)
    st = G.new_state()
    fans = np.zeros(G.NUM_FANS, np.int16)
    n_wins = 0
    for _ in range(4000):
        kw = random_case(rng)
        try:
            melds = [from_pack(tuple(p)) for p in kw["pack"]]
            hand = [tile_from_botzone(c) for c in kw["hand"]]
            win = tile_from_botzone(kw["winTile"])
        except (ValueError, TypeError, KeyError):
            continue
        if len(melds) > 4 or len(hand) != 13 - 3 * len(melds):
            continue
        st[:] = 0
        for t in hand:
            st[G.HAND + 34 + t] += 1
        if st[G.HAND + 34:G.HAND + 68].max() > 4:
            continue
        conc = st[G.HAND + 34:G.HAND + 68].astype(np.int8)
        mk = np.zeros(4, np.int16)
        mk[:len(melds)] = melds
        for i, m in enumerate(melds):
            st[G.MELDS + 4 + i] = m
        st[G.N_MELDS + 1] = len(melds)
        total = score_kernel(conc, mk, len(melds), win, 0, 0, 0, 0, fans)
        if total >= 0:
            n_wins += 1
            assert G._may_win(st, 1, win, False), kw
    assert n_wins > 1000
