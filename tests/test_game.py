"""Scenario tests of every table rule (states built directly) plus invariants of random play."""

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv.melds import CHOW, KONG, PUNG, pack
from mjenv.testing.table import build_state, random_playout, validate_state
from mjenv.tiles import parse_tiles


def _oracle():
    """The reference calculator, or skip the calling test (only the tests that use it) when it is absent."""
    return pytest.importorskip("MahjongGB", reason="the PyMahjongGB oracle (test extra) is not installed")


def T(s):
    return parse_tiles(s)[0]


def mask(st, seat=None):
    return G.legal_mask(st, int(st[G.CUR]) if seat is None else seat)


def legal(st, seat=None):
    return {A.action_to_str(a) for a in np.flatnonzero(mask(st, seat))}


def oracle_fans(record):
    out = {}
    for _pts, cnt, _zh, en in _oracle().MahjongFanCalculator(**record, verbose=True):
        out[en] = out.get(en, 0) + cnt
    return out


# seat 1 waits on 5p (closed wait) with a pure straight: 123456789s 11p 46p -> 16+ fan
WAIT_5P = "123456789s1146p"
# seat 3 waits on 2p/5p: 123456789m 11p 34p
WAIT_25P = "123456789m1134p"


def test_reset_deals_and_replaces_flowers_dealer_first():
    st = G.new_state()
    for seed in range(50):
        dealer = seed % 4
        G.reset(st, seed, dealer, 1)
        validate_state(st)
        sizes = [int(st[G.HAND + 34 * s : G.HAND + 34 * s + 34].sum()) for s in range(4)]
        assert sizes == [14 if s == dealer else 13 for s in range(4)]
        assert st[G.CUR] == dealer and st[G.PHASE] == G.PH_TURN
        # the deal takes 53 tiles from the front, each flower one replacement from the back
        assert st[G.FRONT] == 53 and 144 - st[G.BACK] == st[G.FLOWERS : G.FLOWERS + 4].sum()
        assert 11 <= st[G.DICE] // 10 * 10 + st[G.DICE] % 10 <= 66


def test_initial_flower_order_dealer_first():
    """Find a seed where two seats were dealt flowers and check the back tiles went to the dealer first."""
    st = G.new_state()
    for seed in range(500):
        G.reset(st, seed, 2, 0)
        wall = st[G.WALL : G.WALL + 144].copy()
        dealt = np.zeros(4, int)
        order = [2, 3, 0, 1]
        pos = 0
        for rnd in range(4):
            for s in order:
                for _ in range(4 if rnd < 3 else 1):
                    dealt[s] += wall[pos] >= 34
                    pos += 1
        dealt[2] += wall[pos] >= 34
        if (dealt > 0).sum() >= 2 and not (wall[100:] >= 34).any():
            back = 144
            for s in order:
                got = []
                for _ in range(dealt[s]):
                    back -= 1
                    got.append(int(wall[back]))
                for t in got:
                    assert st[G.HAND + 34 * s + t] >= 1
            return
    pytest.fail("no seed with flowers dealt to two seats")


S0 = "1112345678999s5m"  # seat 0 holding 14, about to discard 5m


def test_chow_only_for_next_player_all_three_positions():
    st = build_state({0: S0, 1: "34678mSSSWWWNC", 2: "46m1223344pNCCP", 3: "11p99mFFFPPP7sEE"}, turn=0)
    G.step(st, A.DISCARD + T("5m"))
    assert st[G.PHASE] == G.PH_CLAIM and st[G.CUR] == 1  # seat 2 (46m, not next) is not asked
    assert st[G.CLAIM + 2] == G.NOT_ASKED and st[G.CLAIM + 3] == G.NOT_ASKED
    assert {"chow low", "chow mid", "chow high", "pass"} == legal(st)
    assert not mask(st, 2).any()
    G.step(st, A.CHOW + 1)
    assert G.seat_melds(st, 1) == [pack(CHOW, T("5m"), 2)]
    assert st[G.CUR] == 1 and st[G.JUST_CLAIMED] == 1
    assert all(s.startswith("discard") for s in legal(st))  # no kong right after a chow
    assert G.seat_discards(st, 0) == [(T("5m"), True)]


def test_no_window_when_only_a_non_next_player_could_chow():
    st = build_state({0: S0, 1: "19mSSSWWWNNCCE", 2: "46m1223344pNCCP", 3: "11p99mFFFPPP7sEE"}, turn=0)
    G.step(st, A.DISCARD + T("5m"))
    assert st[G.PHASE] == G.PH_TURN and st[G.CUR] == 1 and st[G.FRONT] == 1  # seat 1 drew


def test_pung_beats_chow_and_no_kong_after_pung():
    st = build_state({0: S0, 1: "46mSSSWWWNNCCP", 2: "55m5555p23pNNCCP", 3: "11p99mFFFF7sEEE1m"}, turn=0)
    G.step(st, A.DISCARD + T("5m"))
    assert st[G.CUR] == 1 and "chow mid" in legal(st)
    G.step(st, A.CHOW + 1)
    assert st[G.CUR] == 2 and {"pung", "pass"} == legal(st)  # seat 2 does not see seat 1's answer
    G.step(st, A.PUNG)
    assert st[G.CUR] == 2 and G.seat_melds(st, 2) == [pack(PUNG, T("5m"), 2)]
    assert G.seat_melds(st, 1) == [] and st[G.EVENTS] & G.EV_PUNG_OVER_CHOW
    assert all(s.startswith("discard") for s in legal(st))  # 5555p in hand, but no concealed kong now


def test_exposed_kong_draws_replacement_from_back():
    st = build_state(
        {0: S0, 1: "19mSSSWWNNCCPE", 2: "555m123pNNCCFWW", 3: "11p99mFFF7sEEEP1m"}, turn=0, wall_back="7p"
    )
    G.step(st, A.DISCARD + T("5m"))
    assert st[G.CUR] == 2 and {"pung", "kong", "pass"} == legal(st)
    back = int(st[G.BACK])
    G.step(st, A.KONG)
    assert G.seat_melds(st, 2) == [pack(KONG, T("5m"), 2)]
    assert (
        st[G.CUR] == 2
        and st[G.DRAWN] == T("7p")
        and st[G.DRAW_KIND] == G.KIND_KONG
        and st[G.BACK] == back - 1
    )


def _robbing_state():
    hands = {0: "1234567mEES5p", 1: WAIT_5P, 2: "1122334455667m", 3: "99m789pWWWCCCFP"}
    return build_state(hands, melds={0: [pack(PUNG, T("5p"), 1)]}, turn=0, drawn="S")


def test_robbing_an_added_kong():
    st = _robbing_state()
    assert "added_kong B5" in legal(st)
    G.step(st, A.ADDED_KONG + T("5p"))
    assert st[G.PHASE] == G.PH_ROB and st[G.CUR] == 1 and {"win", "pass"} == legal(st)
    rewards = G.step(st, A.WIN)
    r = G.result(st)
    assert r["winner"] == 1 and r["loser"] == 0 and r["win_type"] == "robbed_kong"
    assert st[G.WIN_FLAGS] == G.WIN_ABOUT_KONG  # not 和绝张 although the other three 5p are exposed
    assert "Robbing The Kong" in r["fans"] and r["fans"] == oracle_fans(r["hand"])
    assert G.seat_melds(st, 0) == [pack(PUNG, T("5p"), 1)]  # the kong is void
    F = r["fan_total"]
    assert rewards.tolist() == [-(8 + F), 8 + F + 16, -8, -8]


def test_added_kong_not_robbed_when_passed():
    st = _robbing_state()
    G.step(st, A.ADDED_KONG + T("5p"))
    G.step(st, A.PASS)
    assert G.seat_melds(st, 0) == [pack(KONG, T("5p"), 1, added=True)]
    assert st[G.CUR] == 0 and st[G.DRAW_KIND] == G.KIND_KONG


def test_no_robbing_a_concealed_kong():
    hands = {0: "5555p123mEESSWNN", 1: WAIT_5P, 2: "1122334455667m", 3: "99m789pWWCCCFPN"}
    st = build_state(hands, turn=0, drawn="N", wall_back="9p")
    G.step(st, A.CONCEALED_KONG + T("5p"))
    assert st[G.PHASE] == G.PH_TURN and st[G.CUR] == 0 and st[G.DRAWN] == T("9p")
    assert G.seat_melds(st, 0) == [pack(KONG, T("5p"), 0)]


def test_two_winners_head_bump_first_in_play_order():
    hands = {0: "EEESSSWWWNNCC5p", 1: WAIT_5P, 2: "2233667788999s", 3: WAIT_25P}
    st = build_state(hands, turn=0, drawn="5p")
    G.step(st, A.DISCARD + T("5p"))
    assert st[G.CUR] == 1 and st[G.CLAIM + 3] == G.ASKED and st[G.CLAIM + 2] == G.NOT_ASKED
    G.step(st, A.WIN)
    assert st[G.CUR] == 3 and st[G.PHASE] == G.PH_CLAIM  # seat 3 still asked, seat 1's answer hidden
    G.step(st, A.WIN)
    r = G.result(st)
    assert r["winner"] == 1 and r["loser"] == 0 and st[G.EVENTS] & G.EV_HEAD_BUMP
    F = r["fan_total"]
    assert r["payments"] == [-(8 + F), 8 + F + 16, -8, -8]


def test_head_bump_order_wraps_around_the_discarder():
    hands = {2: "EEESSSWWWNNCC5p", 3: WAIT_5P, 0: "2233667788999s", 1: WAIT_25P}
    st = build_state(hands, turn=2, drawn="5p")
    G.step(st, A.DISCARD + T("5p"))
    assert st[G.CUR] == 3
    G.step(st, A.PASS)
    assert st[G.CUR] == 1
    G.step(st, A.WIN)  # seat 1 wins after seat 3 passed
    assert G.result(st)["winner"] == 1 and G.result(st)["loser"] == 2


def test_win_on_flower_replacement_is_self_drawn_not_kong():
    hands = {0: WAIT_5P, 1: "1122334455667m", 2: "99m789pWWCCCFPN", 3: "EEESSSWWNNNCF9m"}
    st = build_state(hands, turn=3, drawn="F", wall="1f", wall_back="5p")
    G.step(st, A.DISCARD + T("F"))
    assert st[G.CUR] == 0 and st[G.DRAWN] == T("5p") and st[G.DRAW_KIND] == G.KIND_FLOWER
    assert st[G.FLOWERS] == 1 and "win" in legal(st)
    G.step(st, A.WIN)
    r = G.result(st)
    assert r["win_type"] == "self_drawn" and st[G.WIN_FLAGS] == G.WIN_SELF_DRAWN
    assert "Out with Replacement Tile" not in r["fans"] and r["fans"]["Flower Tiles"] == 1
    assert r["fans"] == oracle_fans(r["hand"])
    F = r["fan_total"]
    assert r["payments"] == [3 * (8 + F), -(8 + F), -(8 + F), -(8 + F)]


def test_win_on_kong_replacement_is_about_kong():
    hands = {0: "EEEE123456789s4p", 1: "1122334455667m", 2: "99m789pWWWCCCFP", 3: "SSSWNNNCF99mPP"}
    st = build_state(hands, turn=0, drawn="E", wall_back="4p")
    G.step(st, A.CONCEALED_KONG + T("E"))
    assert "win" in legal(st)
    G.step(st, A.WIN)
    r = G.result(st)
    assert st[G.WIN_FLAGS] == G.WIN_SELF_DRAWN | G.WIN_ABOUT_KONG and st[G.EVENTS] & G.EV_KONG_REPLACEMENT_WIN
    assert "Out with Replacement Tile" in r["fans"] and r["fans"] == oracle_fans(r["hand"])


def test_last_tile_win_with_three_copies_visible():
    hands = {0: "EEESSSWWWNNCC5p", 1: WAIT_5P, 2: "2233667788999s", 3: "123m456m789mCPPP"}
    st = build_state(hands, turn=0, drawn="5p", discards={2: "5p5p", 3: "5p"})
    G.step(st, A.DISCARD + T("5p"))
    G.step(st, A.WIN)
    r = G.result(st)
    assert st[G.WIN_FLAGS] & G.WIN_4TH_TILE and "Last Tile" in r["fans"]
    assert r["fans"] == oracle_fans(r["hand"])


def test_seven_fan_hand_cannot_win_even_with_flowers():
    hand = "123m456m789s234p5s"  # waits on 5s with fewer than 8 fan
    rec = dict(
        pack=(),
        hand=("W1", "W2", "W3", "W4", "W5", "W6", "T7", "T8", "T9", "B2", "B3", "B4", "T5"),
        winTile="T5",
        flowerCount=3,
        isSelfDrawn=False,
        is4thTile=False,
        isAboutKong=False,
        isWallLast=False,
        seatWind=1,
        prevalentWind=0,
    )
    total = sum(p * c for p, c, _, _ in _oracle().MahjongFanCalculator(**rec, verbose=True))
    assert 8 <= total < 8 + 3  # a win shape, >= 8 only with the 3 flowers
    hands = {0: "EEESSSWWWNNCC5s", 1: hand, 2: "2233667788999p", 3: "11m99m11s99s567pCC"}
    st = build_state(hands, turn=0, drawn="5s", flowers={1: 3})
    G.step(st, A.DISCARD + T("5s"))
    assert st[G.PHASE] == G.PH_TURN and st[G.CUR] == 1 and st[G.FRONT] == 1  # not even asked
    st = build_state(hands, turn=0, drawn="5s", flowers={1: 3}, min_fan=5)
    G.step(st, A.DISCARD + T("5s"))
    assert st[G.PHASE] == G.PH_CLAIM and "win" in legal(st)  # the same hand wins under min_fan=5


def test_last_discard_only_claimable_for_a_win():
    hands = {0: "EEESSSWWWNNCC5p", 1: "46p19sSNNCCFFPP", 2: "55p123m789mFF1s9s5s", 3: "11m99m11s99s567pW3p"}
    st = build_state(hands, turn=0, drawn="5p", wall_left=0)
    assert {"chow mid", "pung"} <= {A.action_to_str(a) for a in range(A.NUM_ACTIONS)}
    G.step(st, A.DISCARD + T("5p"))
    assert st[G.PHASE] == G.PH_OVER and G.result(st)["win_type"] == "draw"  # no chow / pung offered
    assert G.result(st)["payments"] == [0, 0, 0, 0]
    hands[1] = WAIT_5P
    st = build_state(hands, turn=0, drawn="5p", wall_left=0)
    G.step(st, A.DISCARD + T("5p"))
    assert st[G.CUR] == 1 and legal(st) == {"win", "pass"}
    G.step(st, A.WIN)
    assert st[G.WIN_FLAGS] & G.WIN_WALL_LAST and "Last Tile Claim" in G.result(st)["fans"]


def test_same_claims_offered_when_wall_not_empty():
    hands = {0: "EEESSSWWWNNCC5p", 1: "46p19sSNNCCFFPP", 2: "55p123m789mFF1s9s5s", 3: "11m99m11s99s567pW3p"}
    st = build_state(hands, turn=0, drawn="5p")
    G.step(st, A.DISCARD + T("5p"))
    assert st[G.CUR] == 1 and legal(st) == {"chow mid", "pass"}
    G.step(st, A.PASS)
    assert st[G.CUR] == 2 and legal(st) == {"pung", "pass"}


def test_no_kong_on_empty_wall_and_self_drawn_last_tile():
    hands = {0: "EEEE123m456m789m9m", 1: WAIT_5P, 2: "2233667788999s", 3: "11m55s11p99p567pNN"}
    st = build_state(hands, turn=0, drawn="9m", wall_left=1)
    assert "concealed_kong F1" in legal(st)
    st = build_state(hands, turn=0, drawn="9m", wall_left=0)
    assert not any(s.startswith("concealed_kong") for s in legal(st))
    hands = {0: "123456789s1146p5p", 1: "1122334455667m", 2: "99m789pWWWCCCFP", 3: "EEESSSWNNNCFP"}
    st = build_state(hands, turn=0, drawn="5p", wall_left=0)
    G.step(st, A.WIN)
    assert st[G.WIN_FLAGS] & G.WIN_WALL_LAST and "Last Tile Draw" in G.result(st)["fans"]


def test_illegal_action_raises_and_leaves_state_unchanged():
    st = G.new_state()
    G.reset(st, 7)
    before = st.copy()
    m = mask(st)
    bad = int(np.flatnonzero(~m)[0])
    with pytest.raises(ValueError, match="illegal action"):
        G.step(st, bad)
    assert (st == before).all()
    for wrong in (1.5, "5", None, [5], np.array([5]), True):  # not integers: the caller's bug
        with pytest.raises(TypeError):
            G.step(st, wrong)
    with pytest.raises(ValueError, match="out of range"):
        G.step(st, 2**64)
    assert (st == before).all()
    good = int(np.flatnonzero(m)[0])  # a 0-d integer array (tensor.numpy()) and a numpy integer are actions
    alt = st.copy()
    G.step(st, np.array(good))
    G.step(alt, np.int16(good))
    assert (st == alt).all() and not (st == before).all()
    with pytest.raises(ValueError):
        G.legal_mask(st, 4)
    with pytest.raises(ValueError):
        G.reset(st, -1)


def test_determinism_and_walls_differ():
    a, b = G.new_state(), G.new_state()
    G.reset(a, 123)
    G.reset(b, 123)
    assert (a == b).all()
    random_playout(a, np.random.default_rng(5))
    random_playout(b, np.random.default_rng(5))
    assert (a == b).all()
    walls = set()
    for seed in range(20):
        G.reset(a, seed)
        walls.add(a[G.WALL : G.WALL + 144].tobytes())
    assert len(walls) == 20
    G.reset(a, 123)
    nxt = G.next_seed_kernel(a)
    G.reset(b, nxt)
    assert nxt != 123 and a[G.WALL : G.WALL + 144].tobytes() != b[G.WALL : G.WALL + 144].tobytes()


def test_random_play_invariants_and_oracle():
    """Random legal play (taking every win) checking every invariant after every step, wins re-scored by PyMahjongGB."""
    rng = np.random.default_rng(2024)
    st = G.new_state()
    wins = 0
    for h in range(100):
        G.reset(st, 10_000 + h, h % 4, (h // 4) % 4)
        validate_state(st)
        random_playout(st, rng, check=True)
        r = G.result(st)
        assert sum(r["payments"]) == 0
        if r["winner"] is not None:
            wins += 1
            assert r["fan_total"] - r["hand"]["flowerCount"] >= 8
            assert r["fans"] == oracle_fans(r["hand"]), r
    assert wins > 0


def test_illegal_reason_names_the_move_and_the_rule():
    """mjenv.game.illegal_reason: the action, its tile and the engine's reason, branch by branch (a false win's
    fan count against the minimum, with the fans, from the scorer)."""
    from mjenv.rules import RuleConfig

    why = G.illegal_reason
    hands = {0: "EEESSSWWWNNCC5p", 1: WAIT_5P, 2: "2233667788999s", 3: "123m456m789mCPPP"}
    st = build_state(hands, turn=0, drawn="5p")
    assert why(st, 0, A.DISCARD + T("1m")) == "discard W1 with no W1 in hand"
    assert why(st, 0, A.WIN).startswith("win on B5: not a winning hand (F1 F1 F1 ")
    assert (
        why(st, 0, A.CONCEALED_KONG + T("E"))
        == "concealed_kong F1 with 3 F1 in hand (a concealed kong needs 4)"
    )
    assert why(st, 0, A.ADDED_KONG + T("E")) == "added_kong F1 with no exposed pung of F1 to add it to"
    assert why(st, 0, A.PUNG) == "pung on its own turn: no discard is on offer"
    assert why(st, 1, A.PASS) == "pass: seat 1 is not to act (seat 0 is)"
    assert why(st, 0, A.DISCARD + T("5p")) == "discard B5 is legal"
    G.step(st, A.DISCARD + T("5p"))
    assert why(st, 1, A.PUNG) == "pung B5 with 0 B5 in hand (a pung needs 2)"
    assert why(st, 1, A.CHOW) == "chow low B5 needs B6 and B7 in hand (1 B6 in hand, 0 B7 in hand)"
    assert why(st, 1, A.DISCARD) == "discard W1 out of turn: seat 1 is answering seat 0's discard B5"
    st = build_state(hands, turn=0, drawn="5p", wall_left=0)
    assert why(st, 0, A.CONCEALED_KONG + T("E")) == "concealed_kong F1 while the wall is empty"
    # the Botzone variant: every seat is asked in every window; private walls
    hands = {0: "EEESSSWWWNNCC5s", 1: "123m456m789s234p5s", 2: "2233667788999p", 3: "11m99m11s55s567pCC"}
    st = build_state(hands, turn=0, drawn="5s", rules=RuleConfig.botzone())
    st[G.PWALL : G.PWALL + 4] = 5
    G.step(st, A.DISCARD + T("5s"))
    assert why(st, 1, A.WIN) == (
        "win on T5 with 6 fan (< 8): Concealed Hand 2, All Chows 2, Short Straight 1, Single Wait 1"
    )
    assert why(st, 1, A.CHOW + 2) == "chow high T5 needs T3 and T4 in hand (0 T3 in hand, 0 T4 in hand)"
    G.step(st, A.PASS)
    G.step(st, A.PASS)
    assert why(st, 3, A.KONG) == "kong T5 with 2 T5 in hand (an exposed kong needs 3)"
    assert why(st, 3, A.CHOW + 1) == "chow mid T5: only the next seat (1) may chow seat 0's discard"
    st = build_state(hands, turn=0, drawn="5s", rules=RuleConfig.botzone(), flowers={1: 3})
    st[G.PWALL : G.PWALL + 4] = 5
    G.step(st, A.DISCARD + T("5s"))
    assert why(st, 1, A.WIN).endswith("Flower Tiles 1 x3 (flowers do not count toward the 8)")
    st = build_state(hands, turn=0, drawn="5s", rules=RuleConfig.botzone())
    st[G.PWALL : G.PWALL + 4] = [5, 0, 5, 5]  # the next seat's part is empty: the discard is the last one
    G.step(st, A.DISCARD + T("5s"))
    G.step(st, A.PASS)
    G.step(st, A.PASS)
    assert why(st, 3, A.PUNG) == (
        "pung T5 on the last discard: the next seat's part of the wall is empty, so only a win may claim it"
    )
    with pytest.raises(ValueError, match="seat"):
        why(st, 4, A.PASS)
    with pytest.raises(TypeError, match="state"):
        why([0], 0, A.PASS)
