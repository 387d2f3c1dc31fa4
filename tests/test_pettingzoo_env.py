"""The PettingZoo AEC env and the Gymnasium wrapper: API compliance, illegal-action modes, match, records."""

import json

import gymnasium
import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, render_test, seed_test

import mjenv
from mjenv import actions as A
from mjenv import game as G
from mjenv import observation as O
from mjenv.pettingzoo_env import GLOBAL_SIZE, env, raw_env
from mjenv.record import replay


def _oracle():
    """The reference calculator, or skip the calling test (only the tests that use it) when it is absent."""
    return pytest.importorskip("MahjongGB", reason="the PyMahjongGB oracle (test extra) is not installed")


def play_random(e, rng, prefer_win=True, max_steps=100_000):
    """Random legal play through the AEC loop; returns the list of infos with a result."""
    results = []
    for agent in e.agent_iter(max_steps):
        obs, rew, term, trunc, info = e.last()
        if "result" in info and (not results or results[-1] is not info["result"]):
            results.append(info["result"])
        if term or trunc:
            e.step(None)
            continue
        mask = obs["action_mask"]
        assert mask.any(), f"empty mask for {agent}"
        a = A.WIN if (prefer_win and mask[A.WIN]) else int(rng.choice(np.flatnonzero(mask)))
        e.step(a)
    return results


def test_api_seed_render():
    api_test(env(), num_cycles=1000)
    seed_test(env, num_cycles=300)
    render_test(lambda render_mode=None: env(render_mode=render_mode))


def test_registry_make():
    e = pettingzoo.make("aec", "mjenv/mahjong-v0")
    e.reset(seed=3)
    assert e.agent_selection == "player_0" and e.observation_space("player_0") is e.observation_space(
        "player_0"
    )


def test_rewards_sum_to_zero_and_results_rescore():
    e = env()
    rng = np.random.default_rng(0)
    n_win = 0
    for seed in range(60):
        e.reset(seed=seed)
        totals = dict.fromkeys(e.possible_agents, 0.0)
        for agent in e.agent_iter():
            obs, rew, term, trunc, info = e.last()
            totals[agent] += rew
            if term:
                e.step(None)
                continue
            mask = obs["action_mask"]
            e.step(A.WIN if mask[A.WIN] else int(rng.choice(np.flatnonzero(mask))))
        assert sum(totals.values()) == 0
        r = info["result"]
        assert totals == {a: float(v) for a, v in r["payments"].items()}
        if r["winner"] is not None:
            n_win += 1
            ref = {}
            for _p, c, _zh, en in _oracle().MahjongFanCalculator(**r["hand"], verbose=True):
                ref[en] = ref.get(en, 0) + c
            assert ref == r["fans"]
        json.dumps(r)
    assert n_win > 0


def test_illegal_terminate_default():
    e = env()
    e.reset(seed=1)
    mask = e.observe(e.agent_selection)["action_mask"]
    bad = int(np.flatnonzero(mask == 0)[0])
    e.step(bad)
    assert all(e.terminations.values())
    assert e.rewards == {"player_0": -30.0, "player_1": 10.0, "player_2": 10.0, "player_3": 10.0}
    assert e.infos["player_1"]["result"]["win_type"] == "illegal"


def test_illegal_raise_leaves_state_unchanged():
    e = raw_env(illegal="raise")
    e.reset(seed=1)
    before = e.state_array.copy()
    with pytest.raises(ValueError, match="illegal action"):
        e.step(A.PASS)
    assert (e.state_array == before).all()


def test_penalty_mode_false_win():
    e = raw_env(illegal="penalty")
    for seed in range(100):
        e.reset(seed=seed)
        if not e.observe(e.agent_selection)["action_mask"][A.WIN]:
            break
    agent = e.agent_selection
    e.step(A.WIN)  # a false win
    assert e.agent_selection == agent and not any(e.terminations.values())
    assert e.rewards[agent] == -30 and all(e.rewards[a] == 10 for a in e.agents if a != agent)
    assert e.state_array[G.NO_WIN + 0] == 1 and e.observe(agent)["observation"][O.O_NOWIN] == 1
    e.step(int(np.flatnonzero(e.observe(agent)["action_mask"])[0]))  # must act again, legally
    assert e.agent_selection != agent or e.state_array[G.PHASE] != G.PH_OVER


def test_match_mode_rotates_seats_and_walls():
    e = raw_env(match=True)
    e.reset(seed=11)
    results = play_random(e, np.random.default_rng(1))
    assert [r["hand_index"] for r in results] == list(range(16))
    seats = [r["seats"] for r in results]
    for rnd in range(4):
        assert seats[4 * rnd] == {f"player_{p}": int(mjenv.rules.SEATING[rnd, p]) for p in range(4)}
    for p in range(4):  # every player sits once at every chair
        assert sorted(seats[4 * r][f"player_{p}"] for r in range(4)) == [0, 1, 2, 3]
    walls = {json.dumps(e.hand_log(i)["wall"]) for i in range(16)}
    assert len(walls) == 16
    assert sum(results[-1]["match_scores"].values()) == 0


def test_game_log_replays_exact_states():
    e = raw_env()
    e.reset(seed=5)
    states = [e.state_array.copy()]
    rng = np.random.default_rng(3)
    for _agent in e.agent_iter():
        obs, _, term, _, _ = e.last()
        if term:
            e.step(None)
            continue
        mask = obs["action_mask"]
        e.step(A.WIN if mask[A.WIN] else int(rng.choice(np.flatnonzero(mask))))
        states.append(e.state_array.copy())
    log = json.loads(json.dumps(e.hand_log(0)))
    assert (
        log["seed"] == 5
        and len(log["wall"]) == 144
        and log["result"]["payments"] == list(e.state_array[G.SCORES : G.SCORES + 4])
    )
    assert any("draw" in ev for ev in log["events"])
    replayed = replay(log)
    assert len(replayed) == len(states)
    for a, b in zip(states, replayed):
        assert (a == b).all()
    log["wall"][0], log["wall"][1] = log["wall"][1], log["wall"][0]
    if log["wall"][0] != log["wall"][1]:
        with pytest.raises(ValueError, match="wall"):
            replay(log)


def test_observation_ignores_hidden_information():
    """Changing only what seat 0 cannot see (others' hands, the wall order, claims, RNG) leaves its view unchanged."""
    rng = np.random.default_rng(9)
    st = G.new_state()
    mask = np.zeros(A.NUM_ACTIONS, bool)
    checked = 0
    for seed in range(40):
        G.reset(st, seed)
        for _ in range(int(rng.integers(5, 60))):
            if st[G.PHASE] == G.PH_OVER:
                break
            G.legal_mask_kernel(st, int(st[G.CUR]), mask)
            G.step(st, int(rng.choice(np.flatnonzero(mask))))
        if st[G.PHASE] == G.PH_OVER:
            continue
        obs = np.empty(O.OBS_SIZE, np.float32)
        O.observe_kernel(st, 0, obs)
        alt = st.copy()
        # swap a concealed tile of seat 1 with a different tile in the live wall
        hand1 = np.flatnonzero(alt[G.HAND + 34 : G.HAND + 68])
        wall_pos = [i for i in range(int(alt[G.FRONT]), int(alt[G.BACK])) if alt[G.WALL + i] < 34]
        t = int(hand1[0])
        i = next(i for i in wall_pos if alt[G.WALL + i] != t)
        u = int(alt[G.WALL + i])
        alt[G.HAND + 34 + t] -= 1
        alt[G.HAND + 34 + u] += 1
        alt[G.WALL + i] = t
        alt[G.WALL + alt[G.FRONT] : G.WALL + alt[G.BACK]] = rng.permutation(
            alt[G.WALL + alt[G.FRONT] : G.WALL + alt[G.BACK]]
        )
        alt[G.RNG_LO] += 12345
        for s in (1, 2, 3):
            alt[G.WIN_FAN + s] = 99 if alt[G.WIN_FAN + s] < 0 else -1
            if alt[G.CLAIM + s] != G.NOT_ASKED:
                alt[G.CLAIM + s] = A.PUNG
        obs2 = np.empty(O.OBS_SIZE, np.float32)
        O.observe_kernel(alt, 0, obs2)
        assert (obs == obs2).all()
        # sanity: the observer's own hand does change its view
        O.observe_kernel(alt, 1, obs2)
        obs1 = np.empty(O.OBS_SIZE, np.float32)
        O.observe_kernel(st, 1, obs1)
        assert not (obs1 == obs2).all()
        checked += 1
    assert checked >= 20


def test_observation_views_and_global_state():
    e = raw_env(global_state=True)
    e.reset(seed=2)
    o = e.observe("player_0")
    assert o["observation"].shape == (O.OBS_SIZE,) and o["global_state"].shape == (GLOBAL_SIZE,)
    v = O.views(o["observation"])
    assert v["hand"].sum() == 14 and v["seat_wind"][0] == 1 and v["wall"][0] == 144 - 53 - v["flowers"].sum()
    g = o["global_state"]
    assert (g[: O.OBS_SIZE] == o["observation"]).all() and g[-42:].sum() == v["wall"][0]
    assert e.observation_space("player_0").contains(o)


def test_gymnasium_wrapper():
    from gymnasium.utils.env_checker import check_env

    gym_env = gymnasium.make("mjenv/Mahjong-v0", opponents="random")
    check_env(gym_env.unwrapped)
    calls = []

    def first_legal(obs, mask, rng):
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    e = gymnasium.make("mjenv/Mahjong-v0", opponents=first_legal, seat="random")
    obs, info = e.reset(seed=0)
    rng = np.random.default_rng(0)
    total, done, n = 0.0, False, 0
    while not done:
        m = e.unwrapped.action_masks()
        assert (m == info["action_mask"]).all() and m.any()
        obs, r, done, trunc, info = e.step(int(rng.choice(np.flatnonzero(m))))
        total += r
        n += 1
    assert calls and "result" in info and total == info["result"]["payments"][e.unwrapped.learner]
    with pytest.raises(TypeError):
        gymnasium.make("mjenv/Mahjong-v0", opponents=[first_legal])
