"""mjenv.integrations.torchrl: TorchRL's GymWrapper over the single-learner vector env (torchrl extra)."""

from __future__ import annotations

import numpy as np
import pytest

torchrl = pytest.importorskip("torchrl", reason="torchrl not installed (torchrl extra)")

import torch  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

from mjenv.gym_vector import MahjongVectorEnv  # noqa: E402
from mjenv.integrations.torchrl import make_env  # noqa: E402
from mjenv.observation import OBS_SIZE  # noqa: E402


def test_specs():
    env = make_env(3, seed=0)
    assert env.batch_size == torch.Size([3])
    assert env.observation_spec["observation"].shape == (3, OBS_SIZE)
    assert env.observation_spec["action_mask"].shape == (3, 109)
    assert env.action_spec.space.n == 109 and env.action_spec.shape == (3,)
    check_env_specs(env)
    env.close()


def test_a_rollout_is_the_gymnasium_env_step_by_step():
    """Masked random actions are legal; observations, rewards and dones are the Gymnasium env's, and where a
    hand ends ("next", "observation") is its final observation and the next root observation the new hand's."""
    n, steps = 4, 160
    env = make_env(n, seed=3, seat="random")
    torch.manual_seed(0)
    r = env.rollout(steps, break_when_any_done=False)  # resets first: the env's second deal after the seed
    actions = r["action"]
    assert r["action_mask"].gather(-1, actions.unsqueeze(-1)).all()

    twin = MahjongVectorEnv(n, seat="random")
    twin.reset(seed=3)
    obs, infos = twin.reset()
    ends = 0
    for t in range(steps):
        np.testing.assert_array_equal(r["observation"][:, t].numpy(), obs)
        np.testing.assert_array_equal(r["action_mask"][:, t].numpy(), infos["action_mask"])
        obs, rewards, term, _, infos = twin.step(actions[:, t].numpy())
        np.testing.assert_array_equal(r["next", "reward"][:, t, 0].numpy(), rewards.astype(np.float32))
        np.testing.assert_array_equal(r["next", "done"][:, t, 0].numpy(), term)
        for i in range(n):
            want = infos["final_obs"][i] if term[i] else obs[i]
            np.testing.assert_array_equal(r["next", "observation"][i, t].numpy(), want)
        ends += int(term.sum())
    assert ends > 5
    env.close()


def test_seed_reproduces_a_rollout():
    def run():
        env = make_env(3, seed=7, seat="random")
        torch.manual_seed(1)
        return env.rollout(60, break_when_any_done=False)

    a, b = run(), run()
    assert (a == b).all()


def test_bad_arguments():
    with pytest.raises(ValueError, match="seed"):
        make_env(2, seed=-1)
    with pytest.raises(ValueError, match="seat"):
        make_env(2, seat=5)


def test_a_lean_env_base_with_legal_random_actions_and_reusable_rollouts():
    """make_env is a TorchRL EnvBase; its rand_action takes legal actions from torch's generator, and a rollout
    stacked into the previous one's memory (rollout(out=)) continues exactly."""
    from torchrl.envs import EnvBase

    env = make_env(5, seed=1)
    assert isinstance(env, EnvBase)
    td = env.reset()
    torch.manual_seed(3)
    a = env.rand_action(td.clone())["action"]
    torch.manual_seed(3)
    assert (env.rand_action()["action"] == a).all()
    assert td["action_mask"].gather(-1, a.unsqueeze(-1)).all()
    before = env.venv.decisions
    out = env.rollout(20, break_when_any_done=False, auto_reset=False, tensordict=td)
    assert env.venv.decisions >= before + 5 * 20  # every table's learner, and the opponents
    again = make_env(5, seed=1)
    td2 = again.reset()
    torch.manual_seed(3)
    again.rand_action(td2.clone())
    first = again.rollout(20, break_when_any_done=False, auto_reset=False, tensordict=td2)
    assert (first == out).all()
    torch.manual_seed(7)  # one generator for both envs: the same draws for both second rollouts
    nxt = again.rollout(
        20, break_when_any_done=False, auto_reset=False, tensordict=again.step_mdp(first[..., -1])
    )
    torch.manual_seed(7)
    reused = env.rollout(
        20,
        break_when_any_done=False,
        auto_reset=False,
        tensordict=env.step_mdp(out[..., -1]).clone(),  # out is written over
        out=out,
    )
    assert reused is out and (reused == nxt).all()


def test_the_partial_reset_is_envbases_at_the_cost_of_the_ended_rows():
    """MahjongTorchRLEnv.maybe_reset (the ended rows only) gives what EnvBase.maybe_reset (torch.where over
    every entry) gives, after every step of a rollout; the step's own output is left as it was."""
    from torchrl.envs import EnvBase

    env = make_env(16, seed=5, seat="random")
    torch.manual_seed(2)
    td = env.reset()
    fast_steps = 0
    for _ in range(120):
        stepped = env.step(env.rand_action(td))
        nxt = env.step_mdp(stepped)
        kept = stepped.clone()
        want = EnvBase.maybe_reset(env, nxt.clone())
        got = env.maybe_reset(nxt.clone())
        assert set(got.keys()) == set(want.keys())
        assert all((got[k] == want[k]).all() for k in want.keys()), [
            k for k in want.keys() if not (got[k] == want[k]).all()
        ]
        assert (stepped == kept).all()
        fast_steps += bool(env._ended.any())
        td = got
    assert fast_steps > 10


def test_compact_observations():
    """obs_dtype=np.uint8: the spec and every observation are the float env's in the compact encoding."""
    from agents.features import to_uint8

    env8, env32 = make_env(4, seed=9, obs_dtype=np.uint8), make_env(4, seed=9)
    assert env8.observation_spec["observation"].dtype == torch.uint8
    check_env_specs(make_env(2, seed=0, obs_dtype=np.uint8))
    torch.manual_seed(4)
    a = env8.rollout(80, break_when_any_done=False)
    torch.manual_seed(4)
    b = env32.rollout(80, break_when_any_done=False)
    assert (a["action"] == b["action"]).all() and b["next", "done"].any()
    for key in ("observation", ("next", "observation")):
        np.testing.assert_array_equal(
            a[key].numpy(), to_uint8(b[key].numpy().reshape(-1, OBS_SIZE)).reshape(a[key].shape)
        )
