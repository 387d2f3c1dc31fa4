"""mjenv.integrations.tianshou: Tianshou's PettingZoo path over the four-player AEC env (tianshou extra)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

tianshou = pytest.importorskip("tianshou", reason="tianshou not installed (tianshou extra)")

import torch  # noqa: E402
from tianshou.algorithm import (  # noqa: E402
    DQN,
    MARLRandomDiscreteMaskedOffPolicyAlgorithm,
    MultiAgentOffPolicyAlgorithm,
)
from tianshou.algorithm.modelfree.dqn import DiscreteQLearningPolicy  # noqa: E402
from tianshou.algorithm.optim import AdamOptimizerFactory  # noqa: E402
from tianshou.data import Collector, CollectStats, VectorReplayBuffer  # noqa: E402
from tianshou.env import DummyVectorEnv, PettingZooEnv  # noqa: E402
from tianshou.trainer import OffPolicyTrainerParams  # noqa: E402
from tianshou.utils.net.common import Net  # noqa: E402

import mjenv  # noqa: E402
from mjenv.integrations.tianshou import WIN_TYPES, MahjongPettingZooEnv, make_env  # noqa: E402
from mjenv.observation import OBS_SIZE  # noqa: E402

AGENTS = [f"player_{i}" for i in range(4)]


def random_players(env):
    return [MARLRandomDiscreteMaskedOffPolicyAlgorithm(action_space=env.action_space) for _ in AGENTS]


def test_importing_the_package_imports_no_library():
    code = "import sys, mjenv.integrations; print('tianshou' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "False", out.stderr[-2000:]


def test_steps_are_the_aec_env():
    """Hands played through the wrapper (a random policy that wins when it can) against mjenv.env() fed the same
    actions: the player to act, its observation and mask, the four rewards, termination and the numeric info."""
    env, twin = make_env(), mjenv.env()
    assert isinstance(env, MahjongPettingZooEnv) and isinstance(env, PettingZooEnv)
    assert env.observation_space["observation"].shape == (OBS_SIZE,) and env.action_space.n == 109
    rng = np.random.default_rng(0)
    winners = 0
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        twin.reset(seed=seed)
        assert info == {**info, "hand_over": False, "winner": -1, "win_type": -1}
        term = False
        while not term:
            agent = twin.agent_selection
            want = twin.observe(agent)
            assert obs["agent_id"] == agent
            np.testing.assert_array_equal(obs["obs"], want["observation"])
            mask = np.asarray(obs["mask"], bool)
            np.testing.assert_array_equal(mask, want["action_mask"].astype(bool))
            action = 107 if mask[107] else int(rng.choice(np.flatnonzero(mask)))
            obs, rew, term, trunc, info = env.step(action)
            twin.step(action)
            assert list(rew) == [twin.rewards[a] for a in AGENTS]
            assert term == all(twin.terminations.values()) and not trunc
            assert info["hand_over"] == term
        result = twin.infos["player_0"]["result"]
        assert WIN_TYPES[info["win_type"]] == result["win_type"] and info["fan_total"] == result["fan_total"]
        assert info["winner"] == (-1 if result["winner"] is None else AGENTS.index(result["winner"]))
        assert info["loser"] == (-1 if result["loser"] is None else AGENTS.index(result["loser"]))
        assert info["payments"].tolist() == [result["payments"][a] for a in AGENTS] == list(rew)
        winners += result["winner"] is not None
    assert winners >= 1


def collect_one_hand(env_fn):
    env = env_fn()
    collector = Collector[CollectStats](
        MultiAgentOffPolicyAlgorithm(algorithms=random_players(env), env=env),
        DummyVectorEnv([env_fn]),
        VectorReplayBuffer(1000, 1),
    )
    collector.reset()
    collector.collect(n_episode=1)
    return collector.buffer


def test_the_plain_wrapper_s_infos_are_nulls_in_the_buffer():
    """Why the subclass: the AEC env's infos (None for a draw's winner, a "result" only at the hand's end) are
    missing values in Tianshou's buffer, where its trainers stop (MalformedBufferError); the numeric infos are
    not."""
    assert collect_one_hand(lambda: PettingZooEnv(mjenv.env())).hasnull()
    buf = collect_one_hand(make_env)
    assert not buf.hasnull()
    assert buf.terminated.sum() == 1 and buf.info.hand_over[len(buf) - 1]


def first_observations(env, hands):
    """The first observation of each of the next ``hands`` unseeded resets."""
    return np.array([env.reset()[0]["obs"] for _ in range(hands)])


def test_seeded_deals():
    """make_env(seed=s) / reset(seed=s) / seed(s) deal mjenv.env().reset(seed=s)'s hand, then a sequence of hands
    that the seed fixes (Tianshou's collectors reset without a seed)."""
    twin = mjenv.env()
    twin.reset(seed=5)
    first = twin.observe(twin.agent_selection)["observation"]
    a, b = make_env(seed=5), make_env()
    np.testing.assert_array_equal(a.env.observe(a.env.agent_selection)["observation"], first)
    np.testing.assert_array_equal(b.reset(seed=5)[0]["obs"], first)
    after_a, after_b = first_observations(a, 3), first_observations(b, 3)
    np.testing.assert_array_equal(after_a, after_b)
    assert len({o.tobytes() for o in after_a}) == 3
    a.seed(5)
    np.testing.assert_array_equal(first_observations(a, 3), after_a)
    c = make_env(seed=6)
    assert not np.array_equal(first_observations(c, 3), after_a)
    for bad in (-1, 1.5, True, 2**63):
        with pytest.raises(ValueError, match="seed"):
            make_env(seed=bad)


def collect(env_fns, seed, steps):
    np.random.seed(seed)  # noqa: NPY002  (Tianshou's masked random policy draws from numpy's global generator)
    env = env_fns[0]()
    envs = DummyVectorEnv(env_fns)
    envs.seed(seed)
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=random_players(env), env=env)
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(2 * steps, len(envs)))
    collector.reset()
    collector.collect(n_step=steps)
    buf = collector.buffer
    return buf[buf.sample_indices(0)]


def test_a_seeded_collection_is_reproducible():
    a, b = (collect([make_env, make_env], seed=3, steps=300) for _ in range(2))
    assert len(a) == len(b) == 300
    np.testing.assert_array_equal(a.act, b.act)
    np.testing.assert_array_equal(a.obs.obs, b.obs.obs)
    np.testing.assert_array_equal(a.rew, b.rew)


def test_dqn_trains_against_three_random_players():
    """A short off-policy training run: DQN plays player_0, masked random policies the others."""
    torch.manual_seed(0)
    np.random.seed(0)  # noqa: NPY002  (Tianshou's random players and exploration use numpy's global generator)
    env = make_env()
    net = Net(state_shape=env.observation_space["observation"].shape, action_shape=109, hidden_sizes=[32])
    learner = DQN(
        policy=DiscreteQLearningPolicy(model=net, action_space=env.action_space, eps_training=0.2),
        optim=AdamOptimizerFactory(lr=1e-3),
        target_update_freq=20,
    )
    algorithm = MultiAgentOffPolicyAlgorithm(algorithms=[learner, *random_players(env)[1:]], env=env)
    envs = DummyVectorEnv([make_env, make_env])
    envs.seed(0)  # two sequences of deals, seeded 0 and 1
    collector = Collector[CollectStats](algorithm, envs, VectorReplayBuffer(1000, 2), exploration_noise=True)
    collector.reset()
    collector.collect(n_step=64)
    before = [p.detach().clone() for p in net.parameters()]
    result = algorithm.run_training(
        OffPolicyTrainerParams(
            training_collector=collector,
            max_epochs=1,
            epoch_num_steps=320,
            collection_step_num_env_steps=16,
            batch_size=32,
            update_step_num_gradient_steps_per_sample=0.125,
            multi_agent_return_reduction=lambda rews: rews[:, 0],  # player_0's points
            test_step_num_episodes=0,
            show_progress=False,
            verbose=False,
        )
    )
    assert result.train_step >= 320 and result.update_step > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, net.parameters()))
    buf = collector.buffer
    data = buf[buf.sample_indices(0)]  # every stored transition
    assert len(data) == len(buf) >= 320
    assert set(data.obs.agent_id) == set(AGENTS)
    assert np.asarray(data.obs.mask, bool)[np.arange(len(data)), data.act].all()  # every action was legal
    ends = data.info.hand_over
    assert ends.sum() >= 1 and (data.terminated == ends).all()
    np.testing.assert_array_equal(data.rew[ends], data.info.payments[ends])
    assert not data.rew[~ends].any()
