"""``agents.waits``: the waits a discard leaves, counted and valued from the player's own view under the table's
rules, the check of a policy's discards by them (:class:`agents.waits.WaitCheck`) and the wrapper
``agents.waits:checked`` (``agents.nn:baseline`` is it over the zoo's ``BASELINE`` network). Only the tests of
the network need torch: the others play the rule agent."""

from __future__ import annotations

import numpy as np
import pytest

from agents import rule
from agents import waits as W
from agents.features import to_uint8
from mjenv import game as G
from mjenv import observation as O
from mjenv.actions import DISCARD, NUM_TILE_TYPES, PASS
from mjenv.fans import WIN_SELF_DRAWN, score_batch
from mjenv.hand import Hand, batch_waits
from mjenv.observation import O_DSEQ, O_MSEQ, ORACLE_OFFSETS
from mjenv.policy import load_policy
from mjenv.rules import RuleConfig
from mjenv.shanten import batch_shanten
from mjenv.tiles import parse_tiles
from mjenv.view import decode_views

T = NUM_TILE_TYPES


def _play(steps: int, n: int = 32, oracle: bool = False, seed: int = 35):
    """``steps`` decisions of ``n`` tables of the rule agent: ``(obs, masks, oracle, melds)`` per step, ``melds``
    the acting seat's packed melds read from the table."""
    from mjenv.vector import VectorEnv

    env = VectorEnv(n, seed=seed, oracle=oracle, observations=True)
    env.reset()
    net = rule.make(n, 0)
    for _ in range(steps):
        seat = env.seats
        melds = env.states[np.arange(n)[:, None], G.MELDS + 4 * seat[:, None] + np.arange(4)[None, :]]
        yield env.obs.copy(), env.masks.copy(), (env.oracle.copy() if oracle else None), melds
        env.step(net(env.obs, env.masks))


def test_unseen_copies_and_melds_agree_with_the_table():
    """The copies the player cannot see are the other hands' and the wall's (where no other seat holds a faceless
    concealed kong), its hand is its concealed tiles and its melds packed from the observation are the table's."""
    hands, wall = ORACLE_OFFSETS["hands"], ORACLE_OFFSETS["wall_counts"]
    checked = 0
    for obs, masks, oracle, melds in _play(80, oracle=True):
        packed = W._packed_melds(obs)
        assert np.array_equal(packed.astype(np.int64), melds.astype(np.int64))
        hand, _, n_melds = W.own_view(obs)
        assert np.array_equal(hand, oracle[:, hands : hands + T]) and np.array_equal(
            n_melds, (melds != 0).sum(1)
        )
        others_ckong = np.zeros(obs.shape[0], dtype=bool)
        for p in (1, 2, 3):
            others_ckong |= (obs[:, O_MSEQ + 12 * p : O_MSEQ + 12 * p + 12 : 3] == 5).any(axis=1)
        rows = ~masks[:, PASS] & ~others_ckong
        _, unseen, _ = W.own_view(obs[rows])
        hidden = oracle[rows, hands + T : hands + 4 * T].reshape(-1, 3, T).sum(axis=1)
        assert np.array_equal(unseen, hidden + oracle[rows, wall : wall + T])
        checked += int(rows.sum())
    assert checked > 1000


def test_values_mark_the_discards_into_waiting_and_near_hands():
    tenpai = near = dead = 0
    for obs, masks, _, _ in _play(80):
        legal = masks[:, DISCARD : DISCARD + T]
        for fn, want in ((W.discard_values, 0), (W.near_values, 1)):
            vals = fn(obs, masks)
            assert (vals[masks[:, PASS]] == -1).all() and (vals[~legal] == -1).all()
            r, d = np.nonzero(vals >= 0)
            hand, _, n = W.own_view(obs[r])
            hand[np.arange(r.size), d] -= 1
            assert (batch_shanten(hand, n) == want).all()  # valued: the discard leaves that shanten
            if want == 0:
                assert batch_waits(hand, n).any(axis=1).all()
                tenpai, dead = tenpai + r.size, dead + int((vals[r, d] == 0).sum())
            else:
                near += r.size
    assert tenpai > 100 and near > 100 and dead > 0


def test_compact_observations_give_the_same_values():
    """uint8 observations (``discard_seq`` as int8 two's complement, claimed discards negative) value every
    discard as their float32 decoding does."""
    from mjenv.observation import decode
    from mjenv.vector import VectorEnv

    env = VectorEnv(32, seed=7, obs_dtype=np.uint8)
    env.reset()
    net = rule.make(32, 0)
    claimed = 0
    for _ in range(80):
        obs, masks = env.obs, env.masks
        for fn in (W.discard_values, W.near_values):
            np.testing.assert_array_equal(fn(obs, masks), fn(decode(obs), masks))
        claimed += int((decode(obs)[:, O_DSEQ:O_MSEQ] < 0).sum())
        env.step(net(obs, masks))
    assert claimed > 0


def _ctx(flowers: int = 0) -> dict[str, np.ndarray]:
    """The context of one concealed hand of East in an East round with ``flowers`` flowers."""
    return {"melds": np.zeros((1, 4), np.int16), "n_melds": np.zeros(1, np.int64), "seat": np.zeros(1, np.int64),
            "prev": np.zeros(1, np.int64), "flowers": np.full(1, flowers, np.int64)}  # fmt: skip


def _value(text: str, p: float = 0.3, rules: RuleConfig | None = None, flowers: int = 0) -> float:
    """:func:`agents.waits._wait_values` of one concealed 13-tile hand, every copy outside it unseen."""
    counts = Hand.parse(text).counts.astype(np.int8)[None, :T]
    v, ready = W._wait_values(counts, _ctx(flowers), np.clip(4 - counts, 0, 4).astype(np.int64), p, rules)
    assert ready[0]
    return float(v[0])


#: waits 1s (5 fan by a discard, 7 self-drawn) and 4s (11 / 13), 4 unseen copies each
CHOWS = "123m345p567s23s55p"


def test_a_dead_wait_is_worth_nothing_and_a_live_one_its_unseen_copies_times_its_takings():
    """All chows and little else: waits short of 8 fan are dead (value 0); a hand with one live wait is worth that
    wait's unseen copies times the takings of its win, by the formula of the module docstring."""
    assert _value("123m345p567s78s55p") == 0  # waits 6s and 9s: 4 fan by a discard, 6 self-drawn
    counts = Hand.parse(CHOWS).counts.astype(np.int8)[None, :T]
    fans = [int(score_batch(counts, np.zeros((1, 4), np.int16), 0, t, f, 0, 0, 0)[0][0]) for t in (9, 12)
            for f in (0, WIN_SELF_DRAWN)]  # fmt: skip
    assert fans == [5, 7, 11, 13]
    for p in (0.0, 0.3, 1.0):
        assert _value(CHOWS, p) == pytest.approx(4 * (p * 3 * (13 + 8) + (1 - p) * (11 + 24)))
    # two flowers: 2 fan more on every win, the minimum without them (1s stays dead at 7 + 2 self-drawn)
    assert _value(CHOWS, flowers=2) == pytest.approx(4 * (0.9 * (13 + 2 + 8) + 0.7 * (11 + 2 + 24)))  # 186.4
    # a table without flowers counts none
    assert _value(CHOWS, rules=RuleConfig(flowers=False), flowers=2) == pytest.approx(
        4 * (0.9 * 21 + 0.7 * 35)
    )


def test_values_follow_the_rules_minimum_fan_and_payments():
    """Under ``RuleConfig(min_fan=6, base_payment=5)`` the 1s wait is live by self-draw (7 fan), dead by a discard
    (5), and a win takes ``3 * (fan + 5)`` self-drawn and ``fan + 15`` on a discard (hand-computed)."""
    rules = RuleConfig(min_fan=6, base_payment=5)
    tk = W.Takings.of(rules)
    assert (tk.min_fan, tk.self_k, tk.self_c, tk.discard_k, tk.discard_c) == (6, 3, 5, 1, 15)
    # 1s: 4 x 0.3 x 3 x (7 + 5) = 43.2; 4s: 4 x (0.9 x (13 + 5) + 0.7 x (11 + 15)) = 137.6
    assert _value(CHOWS, 0.3, rules) == pytest.approx(180.8)
    assert _value(CHOWS, 0.3, RuleConfig(min_fan=14)) == 0  # every wait dead
    assert _value(CHOWS, 0.3, RuleConfig(base_payment=0)) == pytest.approx(4 * (0.9 * 13 + 0.7 * 11))


def test_takings_are_the_engines_payments():
    """The defaults are the check as first shipped (``3 * (fan + 8)``, ``fan + 24``, 8 fan); a rules object or
    None; the botzone rules add the scorer's knitted option; bad rules fail clearly."""
    from mjenv.fans import WIN_KNITTED_NO_WAIT
    from mjenv.rules import payments

    assert W.Takings.of(None) == W.Takings.of(RuleConfig()) == W.Takings()
    assert W.Takings.of(RuleConfig.botzone()) == W.Takings(flowers=False, flags=WIN_KNITTED_NO_WAIT)
    for base in (0, 1, 5, 8, 13):
        tk = W.Takings.of(RuleConfig(base_payment=base))
        for fan in (0, 8, 27, 88):
            assert tk.self_k * (fan + tk.self_c) == payments(0, -1, fan, base)[0]
            assert tk.discard_k * (fan + tk.discard_c) == payments(2, 1, fan, base)[2]
    with pytest.raises(TypeError, match="RuleConfig"):
        W.Takings.of({"min_fan": 6})


def _dealer_view(text: str, rules: RuleConfig | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The observation and legal mask of the dealer (East, East round) holding the 14 tiles ``text`` at its first
    turn: a wall without flowers dealing them to chair 0."""
    mine = sorted(parse_tiles(text))
    assert len(mine) == 14
    rest = list(np.repeat(np.arange(T), 4))
    for t in mine:
        rest.remove(t)
    slots = [*range(4), *range(16, 20), *range(32, 36), 48, 52]  # the dealer's tiles in the deal's order
    wall = np.array(rest[: 136 - 14])
    wall = np.insert(wall, [s - i for i, s in enumerate(slots)], mine)
    st = G.new_state()
    G.reset_wall(st, wall, rules=RuleConfig(flowers=False) if rules is None else rules)
    obs, mask = np.zeros(O.OBS_SIZE, np.float32), np.zeros(G.NUM_ACTIONS, np.int8)
    O.observe_mask_kernel(st, 0, True, obs, mask)
    hand, _, _ = W.own_view(obs[None])
    assert sorted(np.repeat(np.arange(T), hand[0])) == mine
    return obs[None], mask[None].astype(bool)


def test_near_values_by_hand():
    """The dealer's 111m 999m EEE 55p C F 9s: discarding 9s leaves a hand one tile from waiting whose draws to a
    wait are C or F (3 unseen each: discard the other dragon, waiting on 5p or the pair drawn, 2 unseen each)
    and 5p (2 unseen: a single wait on C or F, 3 unseen). The fans (the scorer's, listed) and the value of
    each wait are hand-computed."""
    obs, masks = _dealer_view("111m999mEEE55pCF9s")
    c, f, p5, s9 = parse_tiles("CF5p9s")
    shanpon, single = Hand.parse("111m999mEEE55pCC").counts[:T], Hand.parse("111m999mEEE555pC").counts[:T]
    fan = {}  # (hand, wait, self-drawn): total fan
    for name, h, w in (("shanpon", shanpon, c), ("shanpon", shanpon, p5), ("single", single, c)):
        for sd in (0, 1):
            fan[name, w, sd] = int(score_batch(h[None].astype(np.int8), np.zeros((1, 4), np.int16), 0, w,
                                               WIN_SELF_DRAWN * sd, 0, 0, 0)[0][0])  # fmt: skip
    # on C: three concealed pungs 16, all pungs 6, dragon pung 2, prevalent and seat wind 2 + 2, concealed hand
    # 2, two terminal pungs 2, one voided suit 1 = 33; self-drawn: four concealed pungs 64 (all pungs and the
    # concealed hand inside it), dragon 2, winds 4, terminals 2, voided 1, self-drawn 1 = 74; on 5p the same
    # without the dragon pung (31, 72); the single wait: four concealed pungs 64, winds 4, terminals 2, voided 1,
    # single wait 1 = 72, and self-drawn 73
    assert fan == {("shanpon", c, 0): 33, ("shanpon", c, 1): 74, ("shanpon", p5, 0): 31,
                   ("shanpon", p5, 1): 72, ("single", c, 0): 72, ("single", c, 1): 73}  # fmt: skip

    def by_hand(k_self: int, c_self: int, c_disc: int, min_fan: int) -> float:
        def take(fd: int, fs: int) -> float:
            return 0.3 * k_self * (fs + c_self) * (fs >= min_fan) + 0.7 * (fd + c_disc) * (fd >= min_fan)

        pair = 2 * take(33, 74) + 2 * take(31, 72)  # waits C and 5p, 2 unseen each
        lone = 3 * take(72, 73)  # wait C (or F), 3 unseen
        return 3 * pair + 3 * pair + 2 * lone  # draws C, F (3 each) and 5p (2)

    assert by_hand(3, 8, 24, 8) == pytest.approx(3531.0)
    near = W.near_values(obs, masks)
    assert near[0, s9] == pytest.approx(by_hand(3, 8, 24, 8))
    assert set(np.flatnonzero(near[0] >= 0)) == {s9, c, f}  # the discards that leave shanten 1
    assert (W.discard_values(obs, masks) == -1).all()  # no discard leaves a waiting hand
    # under other rules: by a discard only the single wait reaches 40 fan; a win takes 3 (fan + 4) / fan + 12
    rules = RuleConfig(min_fan=40, base_payment=4)
    assert by_hand(3, 4, 12, 40) == pytest.approx(2431.8)
    assert W.near_values(obs, masks, rules=rules)[0, s9] == pytest.approx(2431.8)


def test_check_discards_moves_only_discards_to_better_valued_ones():
    moved = 0
    net = rule.make(32, 0)
    for obs, masks, _, _ in _play(80):
        a = net(obs, masks)
        b = W.check_discards(obs, masks, a, margin=0.5, near=0.5)
        c = W.check_discards(obs, masks, a, margin=0.5)
        t, n = W.discard_values(obs, masks), W.near_values(obs, masks)
        diff = np.flatnonzero(a != c)  # the tenpai check alone: a better-valued discard into a waiting hand
        assert (t[diff, a[diff]] >= 0).all() and (t[diff, c[diff]] > 1.5 * t[diff, a[diff]]).all()
        more = np.flatnonzero(b != c)  # the near check on top: only discards that leave shanten 1
        assert (n[more, c[more]] >= 0).all() and (n[more, b[more]] > 1.5 * n[more, c[more]]).all()
        assert masks[np.arange(b.size), b].all()
        np.testing.assert_array_equal(W.WaitCheck().apply(obs, masks, a), b)
        moved += diff.size + more.size
    assert moved > 0


def _danger_by_hand(obs: np.ndarray) -> np.ndarray:
    """The docstring of ``agents.waits.deal_in_ways_kernel`` read as a plain loop over the decoded views."""
    v = decode_views(obs)
    out = np.zeros((obs.shape[0], T))
    for i in range(obs.shape[0]):
        u = v.unseen[i].astype(float)
        for r in (1, 2, 3):
            thrown = {abs(int(x)) - 1 for x in v.discards[i, r, : v.n_discards[i, r]]}
            for t in range(T):
                ways = u[t] + u[t] * (u[t] - 1) / 2
                k = t % 9
                if t < 27:
                    ways += (u[t - 2] * u[t - 1] if k >= 2 else 0) + (
                        u[t - 1] * u[t + 1] if 1 <= k <= 7 else 0
                    )
                    ways += u[t + 1] * u[t + 2] if k <= 6 else 0
                out[i, t] += (1 + v.n_melds[i, r]) * ways * (0.2 if t in thrown else 1)
    return out


def _ranked_above(d: np.ndarray, label: np.ndarray, legal: np.ndarray) -> float:
    """The share of pairs of legal discards of one row, one a real wait (``label``) and one not, where ``d`` ranks
    the wait above (ties half): the estimate's power to tell the dangerous discards within a decision."""
    above = pairs = 0.0
    for i in range(d.shape[0]):
        pos, neg = d[i][legal[i] & label[i]], d[i][legal[i] & ~label[i]]
        above += (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
        pairs += pos.size * neg.size
    return above / pairs


def test_danger_counts_the_ways_opponents_could_wait_and_ranks_their_real_waits_above_other_discards():
    """:func:`agents.waits.deal_in_ways` is its docstring's count (a plain loop over the decoded views, float32 and uint8
    observations alike). Against the tiles the opponents really wait on (read from the table), among the legal
    discards of a decision it ranks a real wait above a tile no opponent waits on in about 70% of pairs, more
    than the unseen copies alone and than the rule agent's heuristic."""
    hands = ORACLE_OFFSETS["hands"]
    ours, copies, rules, labels, legals = [], [], [], [], []
    for step, (obs, masks, oracle, _) in enumerate(_play(150, oracle=True)):
        d = W.deal_in_ways(obs)
        if step % 30 == 0:
            np.testing.assert_allclose(d, _danger_by_hand(obs))
            np.testing.assert_array_equal(W.deal_in_ways(to_uint8(obs)), d)
        turn = np.flatnonzero(~masks[:, PASS] & masks[:, DISCARD : DISCARD + T].any(axis=1))
        v = decode_views(obs[turn])
        label = np.zeros((turn.size, T), dtype=bool)
        for r in (1, 2, 3):
            held = oracle[turn, hands + T * r : hands + T * (r + 1)].astype(np.int8)
            nm = v.n_melds[:, r]
            regular = held.sum(1) == 13 - 3 * nm
            label[regular] |= batch_waits(held[regular], nm[regular])
        ours.append(d[turn])
        copies.append(v.unseen.astype(float))
        rules.append(
            np.array(
                [
                    [rule.discard_danger(t, v.visible[i], v.by_others[i]) for t in range(T)]
                    for i in range(turn.size)
                ]
            )
        )
        labels.append(label)
        legals.append(masks[turn, DISCARD : DISCARD + T])
    label, legal = np.concatenate(labels), np.concatenate(legals)
    assert label[legal].sum() > 200
    share = _ranked_above(np.concatenate(ours), label, legal)
    assert share > 0.65
    assert share > _ranked_above(np.concatenate(copies), label, legal) + 0.02
    assert share > _ranked_above(np.concatenate(rules), label, legal)


def test_the_danger_weight_lowers_each_valued_discard_by_its_danger_and_moves_to_safer_ones():
    """:func:`agents.waits.weigh_danger` scales each valued discard by ``1 - w * danger / the row's largest``;
    a weight of 0 is the check without danger, and with a weight the check moves discards only where the
    weighed values say so (some moves differ from the check without danger)."""
    net = rule.make(32, 0)
    changed = 0
    for obs, masks, _, _ in _play(80):
        a = net(obs, masks)
        t = W.discard_values(obs, masks)
        w = W.weigh_danger(t, obs, masks, 0.5)
        d = W.deal_in_ways(obs) * masks[:, DISCARD : DISCARD + T]
        rel = d / np.where(d.max(1, keepdims=True) > 0, d.max(1, keepdims=True), 1)
        np.testing.assert_allclose(w, np.where(t >= 0, t * (1 - 0.5 * rel), t))
        np.testing.assert_array_equal(
            W.check_discards(obs, masks, a, danger=0.0), W.check_discards(obs, masks, a)
        )
        b = W.check_discards(obs, masks, a, near=None, danger=0.5)
        moved = np.flatnonzero(a != b)
        assert (w[moved, b[moved] - DISCARD] > 1.5 * w[moved, a[moved] - DISCARD]).all()
        assert (w[moved, a[moved] - DISCARD] >= 0).all() and masks[np.arange(b.size), b].all()
        changed += int((b != W.check_discards(obs, masks, a, near=None)).sum())
        np.testing.assert_array_equal(W.WaitCheck(near=None, danger=0.5).apply(obs, masks, a), b)
    assert changed > 0


def test_wait_check_settings_check_themselves():
    assert W.WaitCheck() == W.WaitCheck(0.5, 0.5, 0.3) and W.WaitCheck(1, None, 0).near is None
    assert isinstance(W.WaitCheck(1).margin, float)
    for bad in (
        {"margin": -0.1},
        {"p_self": 1.5},
        {"margin": float("nan")},
        {"near": -1},
        {"p_self": float("inf")},
        {"claims": -0.5},
        {"danger": 1.5},
        {"danger": -0.1},
    ):
        with pytest.raises(ValueError, match="WaitCheck"):
            W.WaitCheck(**bad)
    for bad in (
        {"near": True},
        {"margin": "0.5"},
        {"p_self": None},
        {"margin": None},
        {"claims": True},
        {"danger": "0.5"},
    ):
        with pytest.raises(TypeError, match="WaitCheck"):
            W.WaitCheck(**bad)
    assert (
        W.WaitCheck.of(True) == W.WaitCheck()
        and W.WaitCheck.of(False) is None
        and W.WaitCheck.of(None) is None
    )
    assert W.WaitCheck.of({"near": None}) == W.WaitCheck(near=None)
    assert W.WaitCheck.of({"claims": 0.5}).claims == 0.5 and W.WaitCheck().claims is None
    assert W.WaitCheck(claims=1).describe().endswith("claims 1")
    assert W.WaitCheck.of({"danger": 0.5}).danger == 0.5 and W.WaitCheck().danger is None
    assert W.WaitCheck(claims=1, danger=0.5).describe().endswith("claims 1, danger 0.5")
    with pytest.raises(ValueError, match="margin, near, p_self, claims and danger"):
        W.WaitCheck.of({"depth": 2})
    with pytest.raises(TypeError, match="waits"):
        W.WaitCheck.of("yes")
    with pytest.raises(AttributeError):
        W.WaitCheck().margin = 1.0  # frozen


def test_checked_wraps_any_agent_and_records_both_actions():
    """``agents.waits:checked`` over the rule agent: its actions are the rule agent's checked, ``info`` holds the
    inner action and the checked one; options reach the inner agent; bad settings fail before it is built."""
    chk = load_policy("agents.waits:checked", 32, 0, inner="agents.rule:make", inner_opt={"max_eval": 1})
    base = rule.make(32, 0, max_eval=1)
    assert chk.needs_observations and not chk.row_streams and chk.inner.max_eval == 1
    assert "agents.rule:make" in chk.describe() and "margin 0.5, near 0.5, p_self 0.3" in chk.describe()
    six = W.checked(
        32, 0, inner="agents.rule:make", inner_opt={"max_eval": 1}, near=None, rules={"min_fan": 6}
    )
    assert six.takings.min_fan == 6 and "min_fan=6" in six.describe()
    moved = moved6 = 0
    for obs, masks, _, _ in _play(60):
        a = base(obs, masks)
        b, info = chk.act_with_info(obs, masks, np.zeros(obs.shape[0], np.int32))
        np.testing.assert_array_equal(b, W.check_discards(obs, masks, a, 0.5, 0.5, 0.3))
        np.testing.assert_array_equal(chk(obs, masks), b)
        assert set(info) == {"inner_action", "action"}
        np.testing.assert_array_equal(info["inner_action"], a)
        np.testing.assert_array_equal(info["action"], b)
        c = six(obs, masks)
        np.testing.assert_array_equal(
            c, W.check_discards(obs, masks, a, 0.5, None, 0.3, RuleConfig(min_fan=6))
        )
        moved, moved6 = moved + int((a != b).sum()), moved6 + int((a != c).sum())
    assert moved > 0 and moved6 > 0
    assert W.checked(1, 0, inner="agents.rule:make", rules="botzone").rules == RuleConfig.botzone()
    for kw, err in (({"margin": -1}, ValueError), ({"near": "x"}, TypeError), ({"rules": "nope"}, ValueError),
                    ({"rules": 3}, TypeError), ({"rules": {"min_fan": -1}}, ValueError),
                    ({"inner": "agents.rule:nope"}, ValueError), ({"inner": 3}, TypeError),
                    ({"inner_opt": ["x"]}, TypeError), ({"inner_opt": {"bogus": 1}}, TypeError)):  # fmt: skip
        with pytest.raises(err):
            W.checked(1, 0, **{"inner": "agents.rule:make", **kw})
    with pytest.raises(ValueError, match="observations"):
        chk(None, masks)


def _old_wait_values(hands, ctx, unseen, p_self, rules=None):
    """The value function of the check as shipped at commit caf698d (fixed payments and minimum), for the
    identity tests."""
    assert rules is None or W._takings(rules) == W.Takings()
    waits = batch_waits(hands, ctx["n_melds"])
    ci, w = np.nonzero(waits & (unseen > 0))
    value = np.zeros(hands.shape[0])
    if ci.size:
        args = (hands[ci], ctx["melds"][ci], ctx["n_melds"][ci], w)
        winds = (ctx["seat"][ci], ctx["prev"][ci], 0)
        fan_d, _ = score_batch(*args, 0, *winds)
        fan_s, _ = score_batch(*args, WIN_SELF_DRAWN, *winds)
        flowers = ctx["flowers"][ci]
        v = p_self * 3 * (fan_s + flowers + 8) * (fan_s >= 8)
        v = v + (1 - p_self) * (fan_d + flowers + 24) * (fan_d >= 8)
        np.add.at(value, ci, unseen[ci, w] * v)
    return value, waits.any(axis=1)


def test_default_rules_give_the_values_as_first_shipped(monkeypatch):
    """Under the default rules the values are bit for bit those of the check as shipped at caf698d (its value
    function, above) on the rule agent's decisions, with flowers in play."""
    seen = 0
    for obs, masks, _, _ in _play(60, seed=9):
        new = [fn(obs, masks, 0.3, RuleConfig()) for fn in (W.discard_values, W.near_values)]
        with monkeypatch.context() as mp:
            mp.setattr(W, "_wait_values", _old_wait_values)
            old = [fn(obs, masks, 0.3) for fn in (W.discard_values, W.near_values)]
        for a, b in zip(new, old, strict=True):
            np.testing.assert_array_equal(a, b)
        seen += int((new[0] >= 0).sum() + (new[1] >= 0).sum())
    assert seen > 100


# ------------------------------------------------------------------------------------------------ the network
def test_the_baseline_is_the_check_over_its_zoo_network(monkeypatch):
    """``agents.nn:baseline`` is ``agents.waits:checked`` over the zoo's ``agents.zoo_meta.BASELINE`` (greedy): on
    5,000 decisions of self-play its actions are the network's checked by the value function as shipped at
    caf698d (the 100,000-decision comparison with that commit's baseline: docs/agents.md); ``info`` keeps the
    network's probabilities as ``inner_probs``, beside the network's and the checked action; ``waits=False`` is the
    network alone and ``agents.nn:make(waits=...)`` the same wrapper."""
    pytest.importorskip("torch")
    import agents.nn as ann
    from mjenv.vector import VectorEnv

    n = 64
    checked, plain = ann.baseline(n, 0), ann.baseline(n, 0, waits=False)
    wrapped = load_policy("agents.waits:checked", n, 0, claims=0.5, inner="agents.nn:zoo",
                          inner_opt={"name": ann.BASELINE})  # fmt: skip
    custom = ann.make(n, 0, checkpoint=ann.zoo_path(ann.BASELINE), greedy=True, waits={"near": None})
    assert isinstance(checked, W.CheckedPolicy) and checked.check == W.BASELINE_CHECK == W.WaitCheck(
        claims=0.5
    )
    assert isinstance(plain, ann.NNPolicy) and "wait value" in checked.describe()
    assert checked.row_streams and isinstance(custom, W.CheckedPolicy) and custom.check.near is None
    env = VectorEnv(n, seed=35)
    env.reset()
    decisions = differ = 0
    while decisions < 5000:
        obs, masks = env.obs, env.masks
        a, info = checked.act_with_info(obs, masks, env.seats)
        b = plain(obs, masks)
        np.testing.assert_array_equal(wrapped(obs, masks), a)
        with monkeypatch.context() as mp:
            mp.setattr(W, "_wait_values", _old_wait_values)
            np.testing.assert_array_equal(a, W.check_discards(obs, masks, b, 0.5, 0.5, 0.3, claims=0.5))
        np.testing.assert_array_equal(custom(obs, masks), W.check_discards(obs, masks, b, 0.5, None, 0.3))
        assert set(info) == {"inner_probs", "inner_value", "inner_action", "action"}
        np.testing.assert_array_equal(info["inner_action"], b)
        np.testing.assert_array_equal(info["inner_probs"].argmax(axis=1), b)
        np.testing.assert_array_equal(info["action"], a)
        decisions, differ = decisions + n, differ + int((a != b).sum())
        env.step(a)
    assert differ > 0
    with pytest.raises(ValueError, match="margin, near, p_self, claims and danger"):
        ann.make(1, 0, waits={"depth": 2})
    with pytest.raises(TypeError, match="waits"):
        ann.make(1, 0, waits="yes")


def test_checked_passes_the_arenas_threads_to_an_inner_agent_that_takes_them():
    """``mjenv eval --threads`` fills ``threads`` of a factory that names it: the wrapper names it and hands it
    on to an inner agent whose factory takes it (the rule agent's does not, and is built without it)."""
    pytest.importorskip("torch")
    from agents.waits import checked
    from mjenv.policy import takes_option

    assert takes_option("agents.waits:checked", "threads")
    pol = checked(4, 0, inner="agents.nn:latest", threads=1)
    assert pol.inner.threads == 1
    assert checked(4, 0, inner="agents.nn:latest", inner_opt={"threads": 2}, threads=1).inner.threads == 2
    checked(4, 0, inner="agents.rule:make", threads=1)  # no threads option: not passed


def test_claim_values_are_the_waits_the_engine_gives_after_the_claim():
    """At claim windows of rule-agent tables: each legal chow or pung's value is the best discard value
    (:func:`W.discard_values`) of the claimer's next turn after the engine takes that claim; an exposed kong's
    the wait of the hand it leaves; passing's the wait the hand holds now."""
    from mjenv.actions import CHOW, KONG
    from mjenv.vector import VectorEnv

    n = 64
    env = VectorEnv(n, seed=11, observations=True, threads=1)
    env.reset()
    branch = VectorEnv(n, seed=11, observations=True, threads=1)
    agent = load_policy("agents.rule:make", n, 0)
    checked = {"chow": 0, "pung": 0, "kong": 0, "pass": 0}
    for _ in range(300):
        obs, m = env.obs.copy(), env.masks.copy()
        acts = np.asarray(agent(obs, m, env.seats.copy()), dtype=np.int64)
        claims, passing = W.claim_values(obs, m)
        windows = np.flatnonzero(passing >= 0)
        assert ((claims >= 0) == (m[:, list(W.CLAIMS)] & (passing >= 0)[:, None])).all()
        for i in windows:
            hand, unseen, n_melds = W.own_view(obs[i : i + 1])
            ctx = {"melds": W._packed_melds(obs[i : i + 1]), "n_melds": n_melds,
                   "seat": obs[i : i + 1, O.O_SEAT : O.O_SEAT + 4].argmax(1),
                   "prev": obs[i : i + 1, O.O_PREV : O.O_PREV + 4].argmax(1),
                   "flowers": np.rint(obs[i : i + 1, O.O_FLOWERS]).astype(np.int64)}  # fmt: skip
            assert passing[i] == pytest.approx(W._wait_values(hand, ctx, unseen, 0.3)[0][0])
            checked["pass"] += 1
        for i, j in zip(*np.nonzero(claims >= 0), strict=True):
            if W.CLAIMS[j] == KONG:
                continue  # the kong's replacement draw comes first: checked below by the wait it leaves
            branch.restore(env.snapshot())
            a = acts.copy()
            a[i] = W.CLAIMS[j]
            seat = env.seats[i]
            branch.step(a)
            if branch.seats[i] != seat or not branch.masks[i, DISCARD : DISCARD + NUM_TILE_TYPES].any():
                continue  # another player's claim came first
            after = W.discard_values(branch.obs[i : i + 1], branch.masks[i : i + 1])[0]
            assert claims[i, j] == pytest.approx(max(after.max(), 0.0)), (i, j)
            checked["chow" if W.CLAIMS[j] < CHOW + 3 else "pung"] += 1
        kong_rows = np.flatnonzero(claims[:, 4] >= 0)
        for (
            i
        ) in kong_rows:  # the hand after an exposed kong: 3 copies of the offered tile fewer, one more meld
            c = obs[i, O.O_OFFER : O.O_OFFER + NUM_TILE_TYPES].argmax()
            hand, unseen, n_melds = W.own_view(obs[i : i + 1])
            hand[0, c] -= 3
            melds = W._packed_melds(obs[i : i + 1]).copy()
            frm = obs[i, O.O_FROM : O.O_FROM + 4].argmax()
            melds[0, n_melds[0]] = (3 << 8) | (frm << 6) | c
            ctx = {"melds": melds, "n_melds": n_melds + 1,
                   "seat": obs[i : i + 1, O.O_SEAT : O.O_SEAT + 4].argmax(1),
                   "prev": obs[i : i + 1, O.O_PREV : O.O_PREV + 4].argmax(1),
                   "flowers": np.rint(obs[i : i + 1, O.O_FLOWERS]).astype(np.int64)}  # fmt: skip
            assert claims[i, 4] == pytest.approx(W._wait_values(hand, ctx, unseen, 0.3)[0][0])
            checked["kong"] += 1
        env.step(acts)
    assert checked["chow"] > 50 and checked["pung"] > 50 and checked["kong"] > 10 and checked["pass"] > 200, (
        checked
    )


def test_move_claims_takes_the_best_claim_only_over_a_pass_that_is_worth_less():
    claims = np.array(
        [[-1, 10.0, -1, 30.0, -1], [5.0, -1, -1, -1, -1], [0.0, -1, -1, 0.0, -1], [8.0, -1, -1, 9, -1]]
    )
    passing = np.array([0.0, 4.0, 0.0, 1.0])
    acts = np.array([PASS, PASS, PASS, DISCARD + 3])
    moved = W.move_claims(acts, claims, passing, 0.5)
    assert moved.tolist() == [0] and acts.tolist() == [W.CLAIMS[3], PASS, PASS, DISCARD + 3]
