"""The single-learner Gymnasium vector env (mjenv.gym_vector) and VectorEnv's Gymnasium attributes."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import AutoresetMode

import mjenv
from mjenv.gym_vector import MahjongVectorEnv
from mjenv.observation import OBS_SIZE
from mjenv.pettingzoo_env import raw_env
from mjenv.policy import RandomPolicy, random_legal_actions
from mjenv.vector import VectorEnv


def _play(env, steps, seed=0, actions=None):
    """Random legal learner actions for ``steps`` steps; returns everything the env returned."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset(seed=seed)
    out = [(obs, infos)]
    for _ in range(steps):
        a = random_legal_actions(infos["action_mask"], rng)
        obs, rewards, term, trunc, infos = env.step(a)
        out.append((obs, rewards, term, trunc, infos))
    return out


def _same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (tuple, list)) or (isinstance(a, np.ndarray) and a.dtype == object):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif a is None:
        assert b is None
    else:
        np.testing.assert_array_equal(a, b)


# ------------------------------------------------------------------------------------------- VectorEnv
def test_vector_env_declares_gymnasium_conventions():
    env = VectorEnv(2, seed=0)
    assert env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.single_observation_space == spaces.Box(-42.0, 144.0, (OBS_SIZE,), np.float32)
    assert env.single_action_space == spaces.Discrete(109)
    obs, masks, _ = env.reset()
    assert all(env.single_observation_space.contains(o) for o in obs)
    assert VectorEnv(2, obs_dtype=np.uint8).single_observation_space.dtype == np.uint8
    assert VectorEnv(2, observations=False).single_observation_space is None


# ------------------------------------------------------------------------------------------- spaces, API
def test_spaces_and_api_shapes():
    env = MahjongVectorEnv(4)
    assert isinstance(env, gymnasium.vector.VectorEnv)
    assert env.num_envs == 4 and env.metadata["autoreset_mode"] is AutoresetMode.SAME_STEP
    assert env.autoreset_mode is AutoresetMode.SAME_STEP  # as gymnasium's own vector envs (TorchRL reads it)
    assert env.single_observation_space == spaces.Box(-42.0, 144.0, (OBS_SIZE,), np.float32)
    assert env.observation_space.shape == (4, OBS_SIZE)
    assert env.single_action_space == spaces.Discrete(109)
    assert env.action_space == spaces.MultiDiscrete([109] * 4)
    one = mjenv.MahjongGymEnv()
    assert env.single_observation_space == one.observation_space
    for item in _play(env, 40):
        obs, infos = item[0], item[-1]
        assert env.observation_space.contains(obs)
        assert infos["action_mask"].dtype == np.bool_ and infos["action_mask"].shape == (4, 109)
        if len(item) == 5:
            _, rewards, term, trunc, _ = item
            assert rewards.shape == (4,) and rewards.dtype == np.float64
            assert term.dtype == np.bool_ and term.shape == (4,) and not trunc.any()
    env.action_space.seed(0)
    env.step(env.action_masks().argmax(axis=1))
    env.close()
    assert env.closed
    with pytest.raises(RuntimeError, match="closed"):
        env.reset()


def test_make_vec_returns_the_vector_env():
    import mjenv.gym_env

    for mode in (None, "vector_entry_point"):
        env = gymnasium.make_vec(
            mjenv.GYM_ID, num_envs=3, vectorization_mode=mode, opponents="random", seat=2
        )
        assert isinstance(env.unwrapped, MahjongVectorEnv) and env.num_envs == 3
        _, infos = env.reset(seed=0)
        assert (infos["seat"] == 2).all()
        env.close()
    sync = gymnasium.make_vec(mjenv.GYM_ID, num_envs=2, vectorization_mode="sync")
    assert isinstance(sync.envs[0].unwrapped, mjenv.gym_env.MahjongGymEnv)
    sync.close()


# ------------------------------------------------------------------------------------------- seeding
def test_seeding_is_reproducible():
    a = _play(MahjongVectorEnv(6, seat="random"), 60, seed=5)
    b = _play(MahjongVectorEnv(6, seat="random"), 60, seed=5)
    _same(a, b)
    env = MahjongVectorEnv(6, seat="random")
    _same(_play(env, 60, seed=5), a)
    _same(_play(env, 60, seed=5), a)  # reset(seed=) again replays
    c = _play(MahjongVectorEnv(6, seat="random"), 5, seed=6)
    assert not np.array_equal(c[0][0], a[0][0])
    seats = np.concatenate([item[-1]["seat"] for item in a])
    assert set(seats.tolist()) == {0, 1, 2, 3}  # rotating learner chairs
    # per-table seeds: the tables' first deals
    env = MahjongVectorEnv(2)
    env.reset(seed=[11, 12])
    assert env.vector_env.table_seeds.tolist() == [11, 12]


def test_reset_without_seed_deals_new_hands():
    env = MahjongVectorEnv(4)
    obs0, _ = env.reset(seed=1)
    obs1, _ = env.reset()
    assert not np.array_equal(obs0, obs1)


# ------------------------------------------------------------------------------------------- masks
def test_masks_are_the_learners_and_legal():
    env = MahjongVectorEnv(8, seat="random")
    venv = env.vector_env
    rng = np.random.default_rng(2)
    _, infos = env.reset(seed=2)
    for _ in range(80):
        infos = env.step(random_legal_actions(infos["action_mask"], rng))[-1]
        assert (venv.seats == infos["seat"]).all()  # the learner is to act at every table
        np.testing.assert_array_equal(infos["action_mask"], venv.masks)
        assert infos["action_mask"].any(axis=1).all()
        assert not infos["illegal"].any()
    np.testing.assert_array_equal(env.action_masks(), venv.masks)


# ------------------------------------------------------------------------------------------- autoreset, rewards
def test_episode_rewards_add_up_to_the_learners_hand_score():
    env = MahjongVectorEnv(16, seat="random", illegal="penalty")
    rng = np.random.default_rng(0)
    obs, infos = env.reset(seed=3)
    ret = np.zeros(16)
    episodes = 0
    for _ in range(400):
        a = random_legal_actions(infos["action_mask"], rng)
        a[rng.random(16) < 0.01] = 107  # a few illegal actions: false wins pay 30 in penalty mode
        obs, rewards, term, _, infos = env.step(a)
        ret += rewards
        if term.any():
            fi = infos["final_info"]
            assert (infos["_final_obs"] == term).all() and (infos["_final_info"] == term).all()
            assert all(infos["final_obs"][i] is None for i in np.flatnonzero(~term))
            for i in np.flatnonzero(term):
                assert ret[i] == fi["scores"][i, fi["seat"][i]]
                assert infos["final_obs"][i].shape == (OBS_SIZE,)
            ret[term] = 0
            episodes += int(term.sum())
    assert episodes > 50


@pytest.mark.parametrize("seat", [0, 2])
def test_a_table_plays_as_the_aec_env(seat):
    """Table by table, the vector env is the AEC env: the learner's observations, its rewards over the hand and
    the final observation of a finished hand (each hand replayed in the AEC env from its seed)."""
    log = []  # (hand, chair, action) in the order they were played

    class Recorder:  # a random batched opponent that logs what it plays
        rng = np.random.default_rng(9)

        def __call__(self, obs, masks, seats):
            assert obs.shape == (len(seats), OBS_SIZE)
            acts = random_legal_actions(masks, self.rng)
            log.extend((int(venv.hands_done[0]), c, a) for c, a in zip(seats.tolist(), acts.tolist()))
            return acts

    env = MahjongVectorEnv(1, opponents=Recorder(), seat=seat)
    venv = env.vector_env
    rng = np.random.default_rng(4)
    obs, infos = env.reset(seed=8)
    decisions, returns, finals = {}, {}, {}
    while len(finals) < 3:
        h = int(venv.hands_done[0])
        decisions.setdefault(h, []).append(obs[0].copy())
        a = random_legal_actions(infos["action_mask"], rng)
        log.append((h, seat, int(a[0])))
        obs, rewards, term, _, infos = env.step(a)
        returns[h] = returns.get(h, 0.0) + float(rewards[0])
        if term[0]:
            finals[h] = (infos["final_obs"][0], int(infos["final_info"]["seed"][0]))
    assert env.skipped_hands == 0
    me = f"player_{seat}"
    for h, (final_obs, hand_seed) in finals.items():
        aec = raw_env()
        aec.reset(seed=hand_seed)
        seen, paid = [], 0.0
        for _, chair, action in (x for x in log if x[0] == h):
            assert aec.agent_selection == f"player_{chair}"
            if chair == seat:
                seen.append(aec.observe(me)["observation"])
            aec.step(action)
            paid += aec.rewards[me]
        assert aec.terminations[me]
        assert len(seen) == len(decisions[h])
        for got, want in zip(seen, decisions[h]):
            np.testing.assert_array_equal(got, want)
        assert paid == returns[h]
        np.testing.assert_array_equal(aec.observe(me)["observation"], final_obs)


def test_illegal_actions_follow_the_rules():
    env = MahjongVectorEnv(2)  # default: "terminate", as the one-table wrapper
    _, infos = env.reset(seed=0)
    a = infos["action_mask"].argmax(axis=1)
    a[0] = np.flatnonzero(~infos["action_mask"][0])[0]
    _, rewards, term, _, infos = env.step(a)
    assert term[0] and rewards[0] == -30 and infos["illegal"].tolist() == [True, False]
    assert infos["final_info"]["aborted"][0]

    env = MahjongVectorEnv(2, illegal="raise")
    twin = MahjongVectorEnv(2, illegal="raise")
    _, infos = env.reset(seed=0)
    twin.reset(seed=0)
    bad = infos["action_mask"].argmax(axis=1)
    bad[1] = np.flatnonzero(~infos["action_mask"][1])[0]
    with pytest.raises(ValueError, match="illegal action"):
        env.step(bad)
    good = infos["action_mask"].argmax(axis=1)
    _same(env.step(good), twin.step(good))  # nothing moved


# ------------------------------------------------------------------------------------------- opponents
def test_opponents_each_play_their_own_chairs():
    seen = {}

    class Chairs:
        def __init__(self, k):
            self.k = k
            self.rng = np.random.default_rng(k)

        def __call__(self, obs, masks, seats):
            seen.setdefault(self.k, set()).update(seats.tolist())
            return random_legal_actions(masks, self.rng)

    env = MahjongVectorEnv(4, opponents=[Chairs(0), Chairs(1), Chairs(2)], seat=1)
    _play(env, 30)
    assert seen == {0: {2}, 1: {3}, 2: {0}}  # seat order after the learner


def test_one_opponent_object_is_called_once_per_inner_step_and_import_strings_load():
    sizes = []
    policy = RandomPolicy(seed=0)

    def batched(obs, masks, seats):
        sizes.append(len(seats))
        return policy(obs, masks, seats)

    env = MahjongVectorEnv(8, opponents=batched)
    _play(env, 10)
    assert max(sizes) > 1  # tables batched together
    env = MahjongVectorEnv(3, opponents=["random", "mjenv.policy:make_random", batched])
    _play(env, 20)
    a = _play(MahjongVectorEnv(3, opponents="mjenv.policy:make_random"), 30, seed=1)
    b = _play(MahjongVectorEnv(3, opponents="mjenv.policy:make_random"), 30, seed=1)
    _same(a, b)


def test_gymnasium_episode_statistics_wrapper():
    env = gymnasium.wrappers.vector.RecordEpisodeStatistics(MahjongVectorEnv(8))
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=0)
    for _ in range(200):
        _, _, term, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
        if term.any():
            assert (infos["_episode"] == term).all()
            fi = infos["final_info"]
            want = fi["scores"][term, fi["seat"][term]]
            np.testing.assert_array_equal(infos["episode"]["r"][term], want)
    assert len(env.return_queue) > 0


# ------------------------------------------------------------------------------------------- bad input
def test_bad_input_raises_and_nothing_moves():
    with pytest.raises(ValueError, match="seat"):
        MahjongVectorEnv(2, seat=4)
    with pytest.raises(ValueError, match="opponent"):
        MahjongVectorEnv(2, opponents="greedy")
    with pytest.raises(ValueError, match="list of 3"):
        MahjongVectorEnv(2, opponents=["random", "random"])
    with pytest.raises(TypeError, match="opponents"):
        MahjongVectorEnv(2, opponents=3)
    with pytest.raises(ValueError, match="cannot import"):
        MahjongVectorEnv(2, opponents="no_such_module:make")
    with pytest.raises(TypeError, match="unexpected keyword"):
        MahjongVectorEnv(2, colour="red")
    with pytest.raises(ValueError, match="single hands"):
        MahjongVectorEnv(2, match=True)
    with pytest.raises(TypeError, match="num_envs"):
        MahjongVectorEnv(2.5)
    env = MahjongVectorEnv(2)
    twin = MahjongVectorEnv(2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step([0, 0])
    for bad_seed, err in ((-1, ValueError), ([1, 2, 3], ValueError), ("x", TypeError), (1.5, TypeError)):
        with pytest.raises(err):
            env.reset(seed=bad_seed)
    with pytest.raises(ValueError, match="reset_mask"):
        env.reset(seed=0, options={"reset_mask": np.ones(2, bool)})
    with pytest.raises(ValueError, match="dealer"):
        env.reset(seed=0, options={"dealer": 5})
    with pytest.raises(TypeError, match="options"):
        env.reset(seed=0, options=[1])
    _, infos = env.reset(seed=0)
    twin.reset(seed=0)
    good = infos["action_mask"].argmax(axis=1)
    for bad, err in (
        (good[:1], ValueError),
        (good.astype(np.float32), TypeError),
        ("ab", TypeError),
        (np.array([True, False]), TypeError),
    ):
        with pytest.raises(err):
            env.step(bad)
    _same(env.step(good), twin.step(good))


def test_a_malformed_opponent_batch_is_a_clear_error():
    env = MahjongVectorEnv(2, opponents=lambda obs, masks, seats: np.zeros(len(seats) + 1, np.int64))
    _, infos = env.reset(seed=0)  # the learner (chair 0) deals: no opponent acts before it
    with pytest.raises(ValueError, match="one integer action per row"):
        env.step(infos["action_mask"].argmax(axis=1))
    with pytest.raises(RuntimeError, match="reset"):
        env.step([0, 0])


def test_options_set_the_dealer():
    env = MahjongVectorEnv(4, seat=0)
    env.reset(seed=0, options={"dealer": 2, "prevalent_wind": [0, 1, 2, 3]})
    assert env.vector_env.dealers.tolist() == [2] * 4
    assert env.vector_env.prevalents.tolist() == [0, 1, 2, 3]


class _FirstMove:
    """A random opponent whose first decision at the dealer's chair is ``action`` (an illegal one)."""

    def __init__(self, action):
        self.action = action
        self.done = False
        self.rng = np.random.default_rng(0)

    def __call__(self, obs, masks, seats):
        acts = random_legal_actions(masks, self.rng)
        if not self.done:
            assert seats.tolist() == [0]  # the dealer opens the hand
            acts[0] = self.action
            self.done = True
        return acts


def test_a_hand_over_before_the_learners_first_decision_is_skipped():
    """An opponent's illegal opening in "terminate" mode ends the hand before the learner (chair 1) acts: no
    episode, its payment (+10 to the learner) not counted, the next hand dealt."""
    env = MahjongVectorEnv(1, opponents=_FirstMove(107), seat=1)
    obs, infos = env.reset(seed=0)
    assert env.skipped_hands == 1 and env.vector_env.hands_done[0] == 1
    assert infos["seat"][0] == 1 and env.vector_env.seats[0] == 1
    rng = np.random.default_rng(0)
    ret = 0.0
    while True:
        obs, rewards, term, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
        ret += rewards[0]
        if term[0]:
            break
    assert ret == infos["final_info"]["scores"][0, 1]


def test_a_payment_before_the_learners_first_decision_counts_in_its_first_step():
    """In "penalty" mode an opponent's false win at the opening pays the learner 10 and the hand goes on: the
    payment is in the learner's first reward of the hand, and the hand's rewards add up to its score."""
    env = MahjongVectorEnv(1, opponents=_FirstMove(107), seat=1, illegal="penalty")
    _, infos = env.reset(seed=0)
    assert env.skipped_hands == 0
    rng = np.random.default_rng(0)
    _, rewards, term, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
    assert not term[0] and rewards[0] == 10  # the carried payment (a first discard pays nothing)
    ret = float(rewards[0])
    while not term[0]:
        _, rewards, term, _, infos = env.step(random_legal_actions(infos["action_mask"], rng))
        ret += rewards[0]
    assert ret == infos["final_info"]["scores"][0, 1]


def test_copy_false_returns_the_envs_buffer():
    env = MahjongVectorEnv(2, copy=False)
    obs, infos = env.reset(seed=0)
    assert obs is env.vector_env.obs
    obs2 = env.step(infos["action_mask"].argmax(axis=1))[0]
    assert obs2 is obs
    with pytest.raises(TypeError, match="copy"):
        MahjongVectorEnv(2, copy=1)


def test_a_one_table_opponent_gets_a_hint():
    from mjenv.gym_env import random_policy  # (obs, mask, rng) -> action: the one-table env's opponents

    env = MahjongVectorEnv(2, opponents=random_policy)
    _, infos = env.reset(seed=0)
    with pytest.raises(Exception) as caught:
        env.step(infos["action_mask"].argmax(axis=1))
    assert any("batched policy" in note for note in getattr(caught.value, "__notes__", []))
