"""Randomized play of thousands of hands with every invariant checked after every step (see scripts/fuzz_games.py)."""

import numpy as np
import pytest

from mjenv import game as G
from mjenv.testing.table import CHECK_ERRORS, playout_kernel, validate_state


def _oracle():
    """The reference calculator, or skip the calling test (only the tests that use it) when it is absent."""
    return pytest.importorskip("MahjongGB", reason="the PyMahjongGB oracle (test extra) is not installed")


def test_thousands_of_hands_every_invariant_every_event():
    st = G.new_state()
    tab = G.win_tables()
    rs = np.array([0x9E3779B97F4A7C15], np.uint64)
    seen = 0
    wins = 0
    for h in range(3000):
        G.reset_kernel(st, 777_000 + h, h % 4, (h // 4) % 4, G.rules_block(), *tab)
        n = playout_kernel(
            st, 1 if h % 3 else 0, rs, True, *tab
        )  # two thirds biased (wins often), one third uniform
        assert n > 0, CHECK_ERRORS.get(n, n)
        validate_state(st)
        seen |= int(st[G.EVENTS])
        if st[G.WINNER] >= 0:
            wins += 1
            ref = {}
            for _p, c, _zh, en in _oracle().MahjongFanCalculator(**G.win_record(st), verbose=True):
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
        G.reset(st, h, 0, 0)
        while st[G.PHASE] != G.PH_OVER:
            seat = int(st[G.CUR])
            G.legal_mask_kernel(st, seat, mask)
            for s in range(4):
                assert [G._legal(st, s, a) for a in range(G.NUM_ACTIONS)] == list(G.legal_mask(st, s))
            G.step(st, int(np.flatnonzero(mask)[(x >> 33) % int(mask.sum())]))
            x = (x * 6364136223846793005 + 1442695040888963407) % 2**64


def test_cached_waits_are_the_rules_core_waits():
    """The engine's cached waits (game.update_waits_kernel) hold the win tile of every hand the scorer calls a win, and
    equal the brute-force waits of mjenv.hand's win test (every tile tried) on waiting hands near and far from
    ready."""
    from mjenv.fans import score_kernel
    from mjenv.hand import KNITS, _k_win_code
    from mjenv.melds import from_pack
    from mjenv.testing.fan_gen import random_case
    from mjenv.tiles import tile_from_botzone

    suit_win, honor_win = tab = G.win_tables()
    rng = np.random.default_rng(42)
    st = G.new_state()
    fans = np.zeros(G.NUM_FANS, np.int16)
    n_wins = n_compared = n_ready = 0
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
        if st[G.HAND + 34 : G.HAND + 68].max() > 4:
            continue
        conc = st[G.HAND + 34 : G.HAND + 68].astype(np.int8)
        mk = np.zeros(4, np.int16)
        mk[: len(melds)] = melds
        for i, m in enumerate(melds):
            st[G.MELDS + 4 + i] = m
        st[G.N_MELDS + 1] = len(melds)
        total = score_kernel(conc, mk, len(melds), win, 0, 0, 0, 0, fans)
        G.update_waits_kernel(st, 1, *tab)
        if total >= 0 and conc[win] < 4:
            n_wins += 1
            assert G.waits_on_kernel(st, 1, win), kw
        # a variant: swap one tile of the hand for a random one (mostly not ready any more)
        variants = [conc.copy()]
        v = conc.copy()
        held = np.flatnonzero(v)
        v[held[rng.integers(len(held))]] -= 1
        t = int(rng.integers(34))
        if v[t] < 4:
            v[t] += 1
            variants.append(v)
        for c in variants:
            st[G.HAND + 34 : G.HAND + 68] = c
            G.update_waits_kernel(st, 1, *tab)
            want = []
            for t in range(34):
                if c[t] < 4:
                    c[t] += 1
                    if _k_win_code(c, suit_win, honor_win, KNITS) == 1:
                        want.append(t)
                    c[t] -= 1
            got = [t for t in range(34) if G.waits_on_kernel(st, 1, t)]
            assert got == want, (c, len(melds))
            n_compared += 1
            n_ready += bool(want)
    assert n_wins > 1000 and n_compared > 3000 and n_ready > 1000
