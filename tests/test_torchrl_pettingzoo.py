"""TorchRL's own PettingZooWrapper over the AEC env ``mjenv.env()`` (torchrl extra; nothing of mjenv's in between)."""

from __future__ import annotations

import numpy as np
import pytest

torchrl = pytest.importorskip("torchrl", reason="torchrl not installed (torchrl extra)")

import torch  # noqa: E402
from torchrl.envs import PettingZooWrapper  # noqa: E402
from torchrl.envs.utils import check_env_specs  # noqa: E402

import mjenv  # noqa: E402
from mjenv.observation import OBS_SIZE  # noqa: E402

AGENTS = [f"player_{i}" for i in range(4)]
# TorchRL warns that it tests its wrapper with PettingZoo 1.24.3 (mjenv pins 1.27.0)
pytestmark = pytest.mark.filterwarnings("ignore:PettingZoo in TorchRL is tested:UserWarning")


def make(seed=0, **kwargs):
    return PettingZooWrapper(env=mjenv.env(**kwargs), use_mask=True, seed=seed)


def random_masked_policy(td):
    """A legal random action for every group, drawn from the "action_mask" TorchRL exposes (all True for the
    players not to act: their actions are never read)."""
    for agent in AGENTS:
        mask = td[agent, "action_mask"]  # bool[1, 109]
        td[agent, "action"] = torch.multinomial(mask.float(), 1).squeeze(-1)
    return td


def test_specs():
    env = make()
    assert env.group_map == {a: [a] for a in AGENTS}  # turn-based: one group per player
    for a in AGENTS:
        assert env.observation_spec[a, "observation", "observation"].shape == (1, OBS_SIZE)
        assert env.observation_spec[a, "action_mask"].shape == (1, 109)
        assert env.observation_spec[a, "mask"].shape == (1,)
        assert env.action_spec[a, "action"].space.n == 109
    check_env_specs(env)
    env.close()


def test_hands_rolled_out_are_the_aec_env_step_by_step():
    """Rollouts of whole hands with the random masked policy: the player to act ("mask"), its action mask, every
    player's observation, rewards and terminations are those of mjenv.env() fed the same actions."""
    env = make()
    twin = mjenv.env()
    torch.manual_seed(0)
    steps = 0
    for seed in (11, 12, 13):
        td = env.reset(seed=seed)
        twin.reset(seed=seed)
        r = env.rollout(2000, random_masked_policy, auto_reset=False, tensordict=td)
        assert r["next", "done"][-1].item() and not r["next", "done"][:-1].any()  # one hand, to its end
        for t in range(r.shape[0]):
            acting = [a for a in AGENTS if r[a, "mask"][t].item()]
            assert acting == [twin.agent_selection]
            agent = acting[0]
            mask = twin.observe(agent)["action_mask"].astype(bool)
            np.testing.assert_array_equal(r[agent, "action_mask"][t, 0].numpy(), mask)
            for a in AGENTS:
                np.testing.assert_array_equal(
                    r[a, "observation", "observation"][t, 0].numpy(), twin.observe(a)["observation"]
                )
            action = int(r[agent, "action"][t, 0])
            assert mask[action]
            twin.step(action)
            for a in AGENTS:
                assert r["next", a, "reward"][t, 0, 0].item() == twin.rewards[a]
                assert r["next", a, "terminated"][t, 0, 0].item() == twin.terminations[a]
                assert not r["next", a, "truncated"][t, 0, 0].item()
                np.testing.assert_array_equal(
                    r["next", a, "observation", "observation"][t, 0].numpy(), twin.observe(a)["observation"]
                )
        assert all(twin.terminations.values())
        steps += r.shape[0]
    assert steps > 150
    env.close()


def test_rewards_of_an_illegal_action():
    """The default illegal="terminate": an action outside the mask ends the hand, -30 for the offender and +10
    for every other player, as in the AEC env."""
    env = make(seed=5)
    td = env.reset(seed=5)
    agent = next(a for a in AGENTS if td[a, "mask"].item())
    illegal = int(torch.nonzero(~td[agent, "action_mask"][0])[0, 0])
    for a in AGENTS:
        td[a, "action"] = torch.tensor([illegal])
    out = env.step(td)["next"]
    assert out["done"].item() and out["terminated"].item()
    for a in AGENTS:
        assert out[a, "reward"].item() == (-30.0 if a == agent else 10.0)
        assert out[a, "terminated"].item()
    env.close()


def test_a_rollout_with_resets():
    """env.rollout across hands (TorchRL resets the AEC env after each), the actions always legal."""
    env = make(seed=1)
    torch.manual_seed(1)
    r = env.rollout(400, random_masked_policy, break_when_any_done=False)
    assert r["next", "done"].sum() >= 1
    for a in AGENTS:
        acting = r[a, "mask"].squeeze(-1)
        legal = r[a, "action_mask"][:, 0].gather(-1, r[a, "action"]).squeeze(-1)
        assert legal[acting].all()
    assert sum(int(r[a, "mask"].sum()) for a in AGENTS) == 400  # exactly one player acts at each step
    env.close()
