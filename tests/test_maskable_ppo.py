"""Smoke test: sb3-contrib's MaskablePPO learns a few steps on the Gymnasium wrapper (test extra)."""

import pytest

sb3_contrib = pytest.importorskip("sb3_contrib", reason="sb3-contrib (and torch) not installed")


def test_maskable_ppo_learn_runs():
    import gymnasium

    import mjenv  # noqa: F401  (registers mjenv/Mahjong-v0)

    env = gymnasium.make("mjenv/Mahjong-v0", opponents="random")
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        seed=0,
        verbose=0,
        policy_kwargs={"net_arch": [32]},
    )
    model.learn(total_timesteps=128)
    obs, info = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.unwrapped.action_masks())
    assert info["action_mask"][int(action)]
