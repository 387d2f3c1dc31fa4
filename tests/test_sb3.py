"""mjenv.integrations.sb3: the SB3 VecEnv over the single-learner vector env, and MaskablePPO on it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

sb3_contrib = pytest.importorskip("sb3_contrib", reason="sb3-contrib (and torch) not installed")

from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from mjenv.integrations.sb3 import MahjongSB3VecEnv, make_vec_env  # noqa: E402
from mjenv.observation import OBS_SIZE  # noqa: E402
from mjenv.policy import random_legal_actions  # noqa: E402


def test_importing_the_package_imports_no_library():
    code = "import sys, mjenv.integrations; print(sorted({'stable_baselines3', 'torch'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr[-2000:]


def test_vec_env_api_masks_and_same_step_reset():
    env = make_vec_env(6, seed=3, seat="random", monitor=False)
    assert isinstance(env, MahjongSB3VecEnv) and isinstance(env, VecEnv) and env.num_envs == 6
    assert env.observation_space.shape == (OBS_SIZE,) and env.action_space.n == 109
    assert is_masking_supported(env)
    obs = env.reset()
    assert obs.shape == (6, OBS_SIZE) and obs.dtype == np.float32
    rng = np.random.default_rng(0)
    ret = np.zeros(6)
    done_seen = 0
    for _ in range(150):
        masks = get_action_masks(env)
        assert masks.shape == (6, 109) and masks.dtype == np.bool_ and masks.any(axis=1).all()
        np.testing.assert_array_equal(masks, env.venv.vector_env.masks)
        obs, rewards, dones, infos = env.step(random_legal_actions(masks, rng))
        assert rewards.dtype == np.float32 and dones.shape == (6,) and len(infos) == 6
        assert all(info["TimeLimit.truncated"] is False for info in infos)
        ret += rewards
        for i in np.flatnonzero(dones):
            assert infos[i]["terminal_observation"].shape == (OBS_SIZE,)
            res = infos[i]["result"]
            assert ret[i] == res["scores"][res["seat"]]
            ret[i] = 0
            done_seen += 1
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~dones))
    assert done_seen > 10
    assert env.env_method("action_masks", indices=[1, 2])[1].shape == (109,)
    assert env.get_attr("num_envs", indices=0) == [6]
    assert env.env_is_wrapped(VecMonitor) == [False] * 6
    with pytest.raises(ValueError, match="all of them"):
        env.set_attr("copy", True, indices=[0])
    with pytest.raises(ValueError, match="indices"):
        env.get_attr("num_envs", indices=[7])
    with pytest.raises(AttributeError):
        env.get_attr("no_such_attribute")
    env.close()


def test_seed_reproduces_the_env():
    def run():
        env = make_vec_env(4, seed=11, seat="random")
        obs = [env.reset()]
        rng = np.random.default_rng(1)
        for _ in range(60):
            obs.append(env.step(random_legal_actions(get_action_masks(env), rng))[0])
        return np.stack(obs)

    np.testing.assert_array_equal(run(), run())


def _ppo(seed):
    env = make_vec_env(8, illegal="raise")  # an illegal action would raise: the masks are honoured
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=32,
        batch_size=64,
        n_epochs=1,
        seed=seed,
        verbose=0,
        policy_kwargs={"net_arch": [32]},
    )
    model.learn(total_timesteps=512)
    return model, env


def test_maskable_ppo_learns_and_is_reproducible():
    import torch

    a, env = _ppo(0)
    b, _ = _ppo(0)
    assert a.num_timesteps >= 512
    for pa, pb in zip(a.policy.parameters(), b.policy.parameters()):
        assert torch.equal(pa, pb)
    obs = env.reset()
    actions, _ = a.predict(obs, action_masks=get_action_masks(env))
    masks = get_action_masks(env)
    assert masks[np.arange(8), actions].all()
    assert len(a.ep_info_buffer) > 0  # VecMonitor: SB3 sees the finished hands


def test_bad_arguments():
    with pytest.raises(TypeError, match="MahjongVectorEnv"):
        MahjongSB3VecEnv(object())
    with pytest.raises(ValueError, match="seed"):
        make_vec_env(2, seed=-1)
    with pytest.raises(TypeError, match="monitor"):
        make_vec_env(2, monitor=1)
    with pytest.raises(ValueError, match="opponent"):
        make_vec_env(2, opponents="nobody")
    env = make_vec_env(2, monitor=False)
    env.reset()
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(3, np.int64))
