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


_NOT_INTEGERS = ["5", None, 3.0, [5], True, np.bool_(False), np.array([5]), np.array(3.0), np.float32(2)]


@pytest.mark.parametrize("illegal", ["terminate", "raise", "penalty"])
def test_step_takes_integer_scalars_and_rejects_other_types(illegal):
    """Found 2026-12-03: a 0-d integer array (``tensor.numpy()``) or a numpy integer is the action it holds; any other
    type is a TypeError in every illegal mode (a caller's bug, never a move to penalise) and an integer beyond
    int64 a ValueError, with the env unchanged."""
    e = raw_env(illegal=illegal)
    e.reset(seed=3)
    legal = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])
    for bad in [*_NOT_INTEGERS, 2**64, -(2**63) - 1]:
        before = (e.state_array.copy(), e.agent_selection, dict(e._cumulative_rewards), len(e._ops))
        with pytest.raises(ValueError if isinstance(bad, int) and not isinstance(bad, bool) else TypeError):
            e.step(bad)
        after = (e.state_array, e.agent_selection, e._cumulative_rewards, len(e._ops))
        assert (before[0] == after[0]).all() and before[1:] == after[1:], repr(bad)
    first = e.agent_selection
    e.step(np.array(legal[0]))  # 0-d int64 array, as tensor.numpy() gives
    assert not any(e.terminations.values()) and e.agent_selection != first
    assert e._ops[-1] == ("act", 0, int(legal[0])) and type(e._ops[-1][2]) is int
    nxt = np.flatnonzero(e.observe(e.agent_selection)["action_mask"])[0]
    e.step(np.int16(nxt))
    assert not any(e.terminations.values()) and e.hand_log()["ops"][-1][2] == int(nxt)


def test_gym_and_vector_fronts_check_action_types_like_the_aec_env():
    from mjenv.vector import VectorEnv

    g = gymnasium.make("mjenv/Mahjong-v0", opponents="random").unwrapped
    with pytest.raises(RuntimeError, match="before reset"):
        g.step(0)
    g.reset(seed=1)
    before = g.aec.state_array.copy()
    for bad in _NOT_INTEGERS:
        with pytest.raises(TypeError):
            g.step(bad)
    with pytest.raises(ValueError):
        g.step(2**64)
    assert (g.aec.state_array == before).all()
    g.step(np.array(np.flatnonzero(g.action_masks())[0]))  # a 0-d array is the action it holds
    assert not (g.aec.state_array == before).all()

    v = VectorEnv(2, seed=1, illegal="terminate", observations=False)
    _, masks, _ = v.reset()
    states = v.states.copy()
    for bad in (np.array([0.0, 1.0]), np.array([True, False]), ["5", "6"], [None, None]):
        with pytest.raises(TypeError):
            v.step(bad)
    for bad in (np.array([2**64 - 1, 0], np.uint64), [2**64, 0]):
        with pytest.raises(ValueError, match="int64"):
            v.step(bad)
    assert (v.states == states).all()
    v.step(np.array([np.flatnonzero(m)[0] for m in masks], np.int8))
    assert not v.terminated.any() and not (v.states == states).all()


def test_observe_step_render_before_reset_are_clear_errors():
    e = raw_env(render_mode="ansi")
    for call in (lambda: e.observe("player_0"), lambda: e.step(0), e.render, e.action_mask):
        with pytest.raises(RuntimeError, match=r"before reset\(\): call reset\(\) first"):
            call()
    e.reset(seed=0)
    assert e.observe("player_0")["action_mask"].shape == (A.NUM_ACTIONS,)


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


def _reshuffle_unseen(st, keep, rng, tab):
    """A copy of ``st`` with the tiles that the seats ``keep`` cannot see dealt again at random: the concealed
    tiles of the other seats and the tiles of the live wall, except that the flowers keep their places in the
    wall (whether the next draw is a flower is the only part of the wall a non-asked view may differ by)."""
    alt = st.copy()
    others = [s for s in range(4) if s not in keep]
    counts = [int(alt[G.HAND + 34 * s : G.HAND + 34 * s + 34].sum()) for s in others]
    pool = [t for s in others for t in range(34) for _ in range(int(alt[G.HAND + 34 * s + t]))]
    live = [i for i in range(int(alt[G.FRONT]), int(alt[G.BACK])) if alt[G.WALL + i] < 34]
    pool += [int(alt[G.WALL + i]) for i in live]
    pool = list(rng.permutation(pool))
    for s, n in zip(others, counts):
        alt[G.HAND + 34 * s : G.HAND + 34 * s + 34] = np.bincount(pool[:n], minlength=34)
        del pool[:n]
        G.update_waits_kernel(alt, s, *tab)
    alt[[G.WALL + i for i in live]] = pool
    return alt


@pytest.mark.parametrize("flowers", [False, True])
def test_unasked_observation_does_not_tell_whether_a_window_is_open(flowers):
    """Found 2026-12-03: in the default mode (only seats with a claim are asked) a seat that is not asked must see the
    same table whether or not anyone can claim a discard. After each discard of random play, the tiles that an
    observer cannot see are reshuffled (which changes who can claim) and the discard is played in both tables:
    every observer that is not to act in either sees the same observation in both. With flowers the views may
    differ only where the no-window table's next player drew a flower (documented in docs/rules.md)."""
    rng = np.random.default_rng(27)
    tab = G.win_tables()
    rules = mjenv.RuleConfig(flowers=flowers)
    st, mask = G.new_state(), np.zeros(A.NUM_ACTIONS, bool)
    ob1, ob2 = np.empty(O.OBS_SIZE, np.float32), np.empty(O.OBS_SIZE, np.float32)
    compared = window_in_one = flower_diffs = 0
    seed = 0
    while compared < 600:
        G.reset(st, seed, rules=rules)
        seed += 1
        while st[G.PHASE] != G.PH_OVER:
            d = int(st[G.CUR])
            G.legal_mask_kernel(st, d, mask)
            a = int(rng.choice(np.flatnonzero(mask)))
            if st[G.PHASE] == G.PH_TURN and a < A.CHOW:
                x = int(rng.choice([s for s in range(4) if s != d]))
                one, two = st.copy(), _reshuffle_unseen(st, (x, d), rng, tab)
                G.step(one, a)
                G.step(two, a)
                if x not in (one[G.CUR], two[G.CUR]):
                    O.observe_kernel(one, x, ob1)
                    O.observe_kernel(two, x, ob2)
                    windows = [t[G.PHASE] in (G.PH_CLAIM, G.PH_ROB) for t in (one, two)]
                    window_in_one += windows[0] != windows[1]
                    if not np.array_equal(ob1, ob2):
                        drawn_flower = [
                            t[G.FLOWERS + (d + 1) % 4] > st[G.FLOWERS + (d + 1) % 4] for t in (one, two)
                        ]
                        assert flowers and windows[0] != windows[1] and any(drawn_flower), (seed, x)
                        flower_diffs += 1
                    compared += 1
            G.step(st, a)
    assert window_in_one >= 40  # the reshuffle often opened or closed a window: the test has teeth
    assert flower_diffs <= 0.05 * compared


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
