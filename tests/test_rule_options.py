"""RuleConfig as the single source of rule options: the rules block, amounts, flowers=False, claim windows that
reveal nothing, and conflicting options rejected."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

import mjenv
from mjenv import actions as A
from mjenv import game as G
from mjenv import observation as O
from mjenv.pettingzoo_env import raw_env
from mjenv.record import replay
from mjenv.rules import RULE_FIELDS, RULE_WORDS, RuleConfig, check_rules
from mjenv.testing.golden import play_case
from mjenv.testing.table import CHECK_ERRORS, playout_kernel, validate_state
from mjenv.vector import VectorEnv

GOLDEN = json.loads((Path(__file__).parent / "golden" / "hands.json").read_text(encoding="utf-8"))


def test_rules_block_is_written_once_by_reset():
    rules = RuleConfig(
        min_fan=5,
        base_payment=3,
        false_win_payment=4,
        illegal_payment=6,
        illegal="penalty",
        flowers=False,
        claim_windows="all",
    )
    st = G.new_state()
    G.reset(st, 1, rules=rules)
    block = st[G.RULES : G.RULES + RULE_WORDS]
    assert block.tolist() == rules.encode().tolist() == [5, 3, 4, 6, 2, 0, 1, 0, 1]
    assert len(RULE_FIELDS) == RULE_WORDS
    assert st[G.MIN_FAN] == 5 and st[G.BASE_PAY] == 3 and st[G.ILLEGAL_MODE] == 2 and st[G.ASK_ALL] == 1
    assert RuleConfig.from_dict(rules.to_dict()) == rules


def test_bad_rule_options_are_clear_errors():
    for bad, err in (
        ({"flowers": 1}, TypeError),
        ({"claim_windows": "some"}, ValueError),
        ({"base_payment": -1}, ValueError),
        ({"illegal_payment": 1.5}, ValueError),
    ):
        with pytest.raises(err):
            RuleConfig(**bad)
    with pytest.raises(ValueError, match="unknown rule options"):
        RuleConfig.from_dict({"min_fan": 8, "flower": False})
    with pytest.raises(TypeError):
        G.reset(G.new_state(), 1, 0, 0, 8)  # the old min_fan argument: rules are a RuleConfig now


def test_numpy_scalars_are_normalised_so_records_stay_json():
    """Found 2026-12-03: ``RuleConfig(dealer=np.int64(2))`` was accepted but broke ``to_dict()`` / ``hand_log()``."""
    rules = RuleConfig(
        dealer=np.int64(2), prevalent_wind=np.int8(1), min_fan=np.uint16(6), flowers=np.bool_(True)
    )
    assert rules == RuleConfig(dealer=2, prevalent_wind=1, min_fan=6)
    assert all(type(v) in (int, bool, str) for v in rules.to_dict().values())
    e = raw_env(rules=rules)
    e.reset(seed=4)
    log = json.loads(json.dumps(e.hand_log()))
    assert (log["dealer"], log["prevalent_wind"], log["rules"]["min_fan"]) == (2, 1, 6)


def test_reset_options_are_validated_as_the_rule_config_validates():
    """Found 2026-12-03: ``reset(options={"dealer": 1.7, "prevalent_wind": True})`` and ``"1"`` were taken as dealer 1
    and wind South; now the same check as ``RuleConfig``'s, and nothing changes on error."""
    e = raw_env()
    e.reset(seed=5, options={"dealer": 3, "prevalent_wind": np.int64(2)})
    before = (e.state_array.copy(), e.hand_log())
    assert (before[1]["dealer"], before[1]["prevalent_wind"]) == (3, 2)
    for bad in (
        {"dealer": 1.7},
        {"prevalent_wind": True},
        {"dealer": "1"},
        {"prevalent_wind": 4},
        {"dealer": None},
    ):
        (name,) = bad
        with pytest.raises(ValueError, match=rf"{name} must be an int in 0\.\.3, got {bad[name]!r}"):
            RuleConfig(**bad)
        with pytest.raises(ValueError, match=rf"{name} must be an int in 0\.\.3, got {bad[name]!r}"):
            e.reset(seed=6, options=bad)
        assert (e.state_array == before[0]).all() and e.hand_log() == before[1]
    e.reset(seed=6, options={"unrelated": 1})  # other keys are ignored (pettingzoo's api_test passes some)
    assert e.hand_log()["dealer"] == 0


def test_vector_env_takes_its_rules_from_the_config_and_rejects_conflicts():
    env = VectorEnv(2, seed=0, rules=RuleConfig(illegal="penalty"), observations=False)
    assert env.illegal_policy == "penalty"  # was silently replaced by the illegal= default before
    assert VectorEnv(2, observations=False).illegal_policy == "raise"  # the vector env's own default
    assert VectorEnv(2, illegal="terminate", observations=False).rules.illegal == "terminate"
    with pytest.raises(ValueError, match="conflicting rule options"):
        VectorEnv(2, rules=RuleConfig(illegal="terminate"), illegal="raise")
    with pytest.raises(ValueError, match="conflicting"):
        check_rules(RuleConfig(min_fan=8), min_fan=6)
    with pytest.raises(ValueError):
        raw_env(rules=RuleConfig(), min_fan=6)


def _replay_with(name: str, rules: dict) -> dict:
    case = GOLDEN[name]
    return play_case({**case["rules"], **rules}, case["seed"], case["seed"], actions=case["actions"])


@pytest.mark.parametrize("name", ["head_bump", "self_drawn_win", "robbed_kong"])
def test_payment_amount_is_one_field(name):
    base = GOLDEN[name]["hands"][0]["result"]
    got = _replay_with(name, {"base_payment": 3})["hands"][0]["result"]
    w, loser, fan = base["winner"], base["loser"], base["fan_total"]
    want = [0] * 4
    for p in range(4):
        if p != w:
            pay = 3 + fan if loser in (None, p) else 3
            want[p] -= pay
            want[w] += pay
    assert got["payments"] == want and got["fans"] == base["fans"]


def test_penalty_amounts_are_fields():
    got = _replay_with("illegal_terminate", {"illegal_payment": 7})
    assert sorted(got["final"]["match_scores"]) == [-21, 7, 7, 7]
    got = _replay_with("false_win_penalty", {"false_win_payment": 2})
    assert sorted(got["final"]["match_scores"]) == [-6, 2, 2, 2]


# ------------------------------------------------------------------------------------------ flowers=False
def test_no_flowers_wall_and_full_hands():
    rules = RuleConfig(flowers=False)
    st = G.new_state()
    tab = G.win_tables()
    rs = np.array([12345], np.uint64)
    wins = 0
    for seed in range(300):
        G.reset(st, seed, seed % 4, 0, rules)
        assert (
            st[G.BACK] == 136
            and (st[G.WALL : G.WALL + 136] < 34).all()
            and (st[G.WALL + 136 : G.WALL + 144] == 0).all()
        )
        assert np.bincount(st[G.WALL : G.WALL + 136], minlength=34).tolist() == [4] * 34
        assert st[G.FLOWERS : G.FLOWERS + 4].sum() == 0 and st[G.FRONT] == 53
        validate_state(st)
        n = playout_kernel(st, seed % 2, rs, True, *tab)
        assert n > 0, CHECK_ERRORS.get(n, n)
        validate_state(st)
        assert not st[G.EVENTS] & (G.EV_INITIAL_FLOWER | G.EV_FLOWER_IN_PLAY)
        wins += st[G.WINNER] >= 0
    assert wins > 30


def test_no_flowers_in_every_front_and_in_records():
    rules = RuleConfig(flowers=False)
    e = mjenv.env(rules=rules)
    e.reset(seed=3)
    rng = np.random.default_rng(0)
    while not all(e.terminations.values()):
        mask = e.observe(e.agent_selection)["action_mask"]
        e.step(A.WIN if mask[A.WIN] else int(rng.choice(np.flatnonzero(mask))))
    log = e.unwrapped.hand_log()
    assert len(log["wall"]) == 136 and log["rules"]["flowers"] is False
    assert not any("flower" in ev for ev in log["events"])
    assert G.result(replay(log)[-1])["payments"] == log["result"]["payments"]
    env = VectorEnv(16, seed=1, rules=RuleConfig(flowers=False, illegal="raise"), observations=True)
    obs, masks, seats = env.reset()
    pol = mjenv.RandomPolicy(0, env=env)
    for _ in range(400):
        obs, masks, seats, *_ = env.step(pol(obs, masks, seats))
        assert (O.views(obs)["flowers"] == 0).all()
    assert (env.states[:, G.BACK] <= 136).all() and env.hands_done.sum() > 0
    g = mjenv.MahjongGymEnv(rules=rules)
    g.reset(seed=0)
    assert g.aec.rules.flowers is False and g.aec.state_array[G.BACK] <= 136


def test_flowers_default_is_unchanged():
    """The 144-tile default deals exactly as before the option existed (the golden records pin the rest)."""
    a, b = G.new_state(), G.new_state()
    G.reset(a, 99)
    G.reset(b, 99, rules=RuleConfig(flowers=True))
    assert (a == b).all() and a[G.BACK] == 144 - a[G.FLOWERS : G.FLOWERS + 4].sum()


# ------------------------------------------------------------------------------------------ claim windows
def _window_states(rules: RuleConfig, hands: int = 60):
    """States with a claim or robbing window open, from random play."""
    rng = np.random.default_rng(5)
    tab = G.win_tables()
    rewards = np.zeros(4, np.float32)
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    st = G.new_state()
    for seed in range(hands):
        G.reset(st, 5000 + seed, rules=rules)
        while st[G.PHASE] != G.PH_OVER:
            if st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
                yield st.copy()
            G.legal_mask_kernel(st, int(st[G.CUR]), mask)
            G.step_kernel(st, int(rng.choice(np.flatnonzero(mask))), rewards, *tab)


def _obs(st, seat):
    o = np.zeros(O.OBS_SIZE, np.float32)
    O.observe_kernel(st, seat, o)
    return o


def test_issue_example_player_not_asked_sees_no_window():
    """The example reported 2026-12-03: mid-window, the players not asked see what they would see had nobody been able to
    claim the discard (the next player has drawn and is to play), not a state that only a window produces."""
    e = mjenv.env()
    e.reset(seed=1000000)
    e.step(25)
    e.step(24)
    raw = e.unwrapped
    asked = e.agent_selection
    closed = copy.deepcopy(raw)
    while closed.state_array[G.PHASE] == G.PH_CLAIM:
        closed.step(A.PASS)
    for agent in raw.possible_agents:
        v = O.views(e.observe(agent)["observation"])
        if agent == asked:
            assert v["phase"][2] + v["phase"][3] == 1 and v["offer_tile"].sum() == 1
        else:
            assert v["phase"][2:].sum() == 0 and v["offer_tile"].sum() == 0 and v["offer_from"].sum() == 0, (
                agent
            )
            assert (e.observe(agent)["observation"] == closed.observe(agent)["observation"]).all(), agent
            assert v["phase"][0] == 1 and v["turn"][(2 - int(agent[-1])) % 4] == 1  # player_2 has drawn


def test_who_holds_a_claim_does_not_change_the_observations_of_the_others():
    """Perturb who is asked (and who could claim) in an open window: every observation but the asked seats' is
    unchanged, so nothing a non-asked player sees depends on the hidden claims."""
    n = 0
    for st in _window_states(RuleConfig()):
        cur, d = int(st[G.CUR]), int(st[G.OFFER_SEAT])
        for other in range(4):
            if other in (cur, d):
                continue
            alt = st.copy()  # now `other` is the one asked, and `cur` holds nothing
            alt[G.CUR] = other
            alt[G.CLAIM + cur] = G.NOT_ASKED
            alt[G.CLAIM + other] = G.ASKED
            alt[G.WIN_FAN + cur], alt[G.WIN_FAN + other] = alt[G.WIN_FAN + other], alt[G.WIN_FAN + cur]
            for seat in range(4):
                if seat not in (cur, other):
                    assert (_obs(st, seat) == _obs(alt, seat)).all()
            n += 1
        # and a non-asked player's view equals the one of the same table with the window closed
        closed = st.copy()
        closed[G.PHASE], closed[G.CUR] = G.PH_CLAIM, -1
        for seat in range(4):
            if seat != cur:
                assert (_obs(st, seat) == _obs(closed, seat)).all()
    assert n > 100


def _play_ask_all_like(case: dict) -> tuple[raw_env, list]:
    """Replay a claimants-mode case in claim_windows='all': the seats asked only there pass."""
    e = raw_env(**{**case["rules"], "claim_windows": "all"})
    e.reset(seed=case["seed"])
    ref = raw_env(**case["rules"])
    ref.reset(seed=case["seed"])
    extra = []
    acts = list(case["actions"])
    i = 0
    while not all(e.terminations.values()):
        agent = e.agent_selection
        st, rs = e.state_array, ref.state_array
        window = st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB)
        if window and not (
            rs[G.PHASE] == st[G.PHASE] and rs[G.CUR] == st[G.CUR]
        ):  # asked only in ask-all mode
            mask = e.observe(agent)["action_mask"]
            extra.append(int(mask.sum()))
            assert mask[A.PASS] == 1
            e.step(A.PASS)
            continue
        a = acts[i]
        i += 1
        try:
            ref.step(a)
        except ValueError:
            with pytest.raises(ValueError):
                e.step(a)
            continue
        e.step(a)
    return e, extra


@pytest.mark.parametrize("name", ["head_bump", "robbed_kong", "exhaustive_draw"])
def test_ask_all_mode_asks_every_seat_and_plays_the_same_hand(name):
    case = GOLDEN[name]
    e, extra = _play_ask_all_like(case)
    assert extra and set(extra) == {1}  # seats without a claim get pass-only masks
    log = e.hand_log()
    want = case["hands"][0]
    assert json.loads(json.dumps(log["result"])) == want["result"]
    assert [ev for ev in log["events"] if "claim" not in ev] == [
        ev for ev in want["events"] if "claim" not in ev
    ]


def test_ask_all_mode_every_discard_asks_three_seats():
    rules = RuleConfig(claim_windows="all")
    st = G.new_state()
    G.reset(st, 11, rules=rules)
    tab = G.win_tables()
    rewards = np.zeros(4, np.float32)
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    G.legal_mask_kernel(st, int(st[G.CUR]), mask)
    d = int(st[G.CUR])
    G.step_kernel(st, int(np.flatnonzero(mask[:34])[0]), rewards, *tab)
    asked = []
    while st[G.PHASE] == G.PH_CLAIM:
        asked.append(int(st[G.CUR]))
        G.step_kernel(st, A.PASS, rewards, *tab)
    assert asked == [(d + k) % 4 for k in (1, 2, 3)]
    assert st[G.PHASE] == G.PH_TURN and st[G.CUR] == (d + 1) % 4


def test_cli_rule_flags_reach_every_command(tmp_path):
    from mjenv.cli import main

    log = tmp_path / "h.json"
    assert main(["play", "--seed", "2", "--quiet", "--no-flowers", "--min-fan", "6", "--log", str(log)]) == 0
    rec = json.loads(log.read_text())
    assert rec["rules"]["flowers"] is False and rec["rules"]["min_fan"] == 6 and len(rec["wall"]) == 136
    from mjenv.selfplay import run_selfplay

    out = run_selfplay(
        tables=4, hands=8, seconds=None, progress=False, rules=RuleConfig(flowers=False, illegal="raise")
    )
    assert out["rules"]["flowers"] is False
    with pytest.raises(SystemExit):
        main(["play", "--claim-windows", "some"])


def test_cli_variant_rejects_flags_that_contradict_it(tmp_path, capsys):
    """``--variant botzone`` fixes min fan, flowers and claim windows: a flag that agrees is accepted, one that
    contradicts the variant is an error (never silently dropped), and no record is written."""
    from mjenv.cli import main

    log = tmp_path / "b.json"
    ok = ["play", "--seed", "3", "--quiet", "--variant", "botzone", "--log", str(log)]
    assert main([*ok, "--min-fan", "8", "--no-flowers", "--claim-windows", "all"]) == 0
    rec = json.loads(log.read_text())
    assert rec["rules"] == {**RuleConfig.botzone().to_dict(), "illegal": rec["rules"]["illegal"]}
    log.unlink()
    for flags, named in (
        (["--min-fan", "6"], "min_fan=6"),
        (["--claim-windows", "claimants"], "claim_windows='claimants'"),
    ):
        assert main([*ok, *flags]) == 2
        err = capsys.readouterr().err
        assert "--variant botzone fixes" in err and named in err, err
        assert not log.exists()
    # without a variant the flags are the rules; unset flags are RuleConfig's defaults
    assert main(["play", "--seed", "3", "--quiet", "--log", str(log)]) == 0
    rules = json.loads(log.read_text())["rules"]
    assert (rules["min_fan"], rules["flowers"], rules["claim_windows"]) == (8, True, "claimants")
