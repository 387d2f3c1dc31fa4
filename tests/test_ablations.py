"""Every ablation switch of PPO runs at tiny scale (train.ppo, train.diagnose), and bad settings fail
before any work starts."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("openskill")

from mjenv import VectorEnv  # noqa: E402
from train.ppo import PPOConfig, Trainer, masked_logits, read_checkpoint, train  # noqa: E402 (after the importorskip)

TINY = dict(num_envs=16, rollout_steps=12, threads=1, torch_threads=1, channels=4, hidden=16, updates=3,
            minibatch_size=64, epochs=1, eval_every=0, save_every=1, progress=False, min_fan=4,
            opponents=("rule", "pool"), opponent_prob=0.6, pool_every=1, pool_size=2, value_warmup=0,
            critic_channels=4, critic_hidden=16)  # fmt: skip


def _resume_matches(tmp_path, kw, ref):
    """A run of settings ``kw`` stopped after 2 updates and resumed ends with every tensor of run ``ref``'s
    checkpoint; returns both checkpoints' metadata."""
    b = PPOConfig(run_dir=str(tmp_path / "b"), **kw)
    train(b, stop_after=2)
    train(dataclasses.replace(b, resume=True))
    ta, ma = read_checkpoint(ref / "checkpoint.safetensors")
    tb, mb = read_checkpoint(tmp_path / "b" / "checkpoint.safetensors")
    for k in ta:
        assert torch.equal(ta[k], tb[k]), k
    return ma, mb


@pytest.mark.parametrize(
    "switch",
    [
        {"critic": "oracle"},
        {"pool_ratings": True, "rollout_steps": 64},
        {"critic": "oracle", "pool_ratings": True, "rollout_steps": 64},
        {"value_warmup": 1, "lr_warmup": 2},
    ],
    ids=["oracle-critic", "pool-ratings", "all", "lr-warmup"],
)
def test_each_switch_trains_and_resumes_exactly(tmp_path, switch):
    a = PPOConfig(run_dir=str(tmp_path / "a"), **{**TINY, **switch})
    out = train(a)
    assert out["counters"]["update"] == 3
    ma, mb = _resume_matches(tmp_path, {**TINY, **switch}, tmp_path / "a")
    if switch.get("pool_ratings"):
        ra, rb = json.loads(ma["ratings"]), json.loads(mb["ratings"])
        assert ra == rb and {"learner", "rule", "pool0"} <= set(ra)
        rows = (tmp_path / "a" / "progress.csv").read_text().splitlines()
        assert "rating_learner" in rows[0] and rows[-1].split(",")[rows[0].split(",").index("rating_rule")]


def test_lr_warmup_ramps_the_rate_after_the_value_warmup(tmp_path):
    """lr_warmup N: the value warm-up at the full rate, then 1/N, 2/N, ... of the (annealed) rate."""
    import csv

    cfg = PPOConfig(run_dir=str(tmp_path / "w"), **{**TINY, "updates": 6, "value_warmup": 2, "lr_warmup": 3,
                                                    "lr": 1e-3, "anneal_lr": False})  # fmt: skip
    train(cfg)
    lrs = [float(r["lr"]) for r in csv.DictReader(open(tmp_path / "w" / "progress.csv"))]
    np.testing.assert_allclose(lrs, [1e-3, 1e-3, 1e-3 / 3, 2e-3 / 3, 1e-3, 1e-3], rtol=1e-6)


def test_time_budget_stops_after_saving(tmp_path):
    cfg = PPOConfig(run_dir=str(tmp_path / "t"), **{**TINY, "updates": 50, "time_budget_s": 1e-6})
    out = train(cfg)
    assert out["counters"]["update"] == 1  # the first update already spent the budget
    assert (tmp_path / "t" / "checkpoint.safetensors").is_file()


def test_pool_ratings_prefer_the_snapshots_that_beat_the_learner():
    from train.ratings import Ratings

    r = Ratings()
    names = ["learner", "rule", "random", "pool0", "pool1"]
    owners = np.array([[0, 3, 4, 1]] * 5)
    scores = np.array([[-8, 24, -8, -8]] * 5)  # pool0 wins every hand, pool1 pays like the learner
    for _ in range(5):
        r.update(names, owners, scores)
    p = r.pool_probs(2)
    assert p[0] > p[1] and abs(p.sum() - 1) < 1e-12
    assert r.mu("pool0") > r.mu("learner")


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"critic": "perfect"}, "critic must be one of"),
        ({"critic": "oracle", "workers": 1}, "workers=0"),
        ({"pool_ratings": True, "workers": 1}, "workers=0"),
        ({"time_budget_s": -1.0}, "time_budget_s"),
        ({"critic_hidden": 0}, "critic_hidden"),
    ],
)
def test_bad_ablation_settings_fail_before_any_work(tmp_path, kw, match):
    with pytest.raises(ValueError, match=match):
        Trainer(PPOConfig(run_dir=str(tmp_path / "x"), **kw))
    assert not (tmp_path / "x").exists()


def test_diagnose_runs_at_tiny_scale(tmp_path):
    from train.diagnose import DiagConfig, diagnose

    res = diagnose(DiagConfig(init_from="agents/zoo/mlp-2026-12-01.safetensors", out=str(tmp_path / "d"), walls=6, replays=2,
                              updates=2, value_warmup=1, num_envs=16, rollout_steps=8, threads=1, torch_threads=1,
                              progress=False, fit_rollouts=1, fit_steps=96, fit_epochs=2))  # fmt: skip
    v = res["variance"]
    assert v["hands"] == 12 and 0 <= v["deal_share"] <= 1
    for c in ("shared", "oracle"):
        cls = res["runs"][c]["classes"]
        assert sum(s["count"] for s in cls.values()) > 0
        assert abs(sum(s["adv_sumsq_share"] for s in cls.values()) - 1) < 1e-9
    assert "of the variance comes from the deal" in res["markdown"]
    fit = res["critic_fit"]
    assert fit["decisions"] > fit["held_out"] > 0
    assert len(fit["with the oracle block"]["curve"]) == 2 and "held-out EV" in res["markdown"]
    with pytest.raises(ValueError, match="replays"):
        diagnose(DiagConfig(replays=1, out=str(tmp_path / "e")))


def test_anchor_kl_keeps_the_policy_near_its_start_and_resumes_exactly(tmp_path):
    """anchor_kl: the loss's KL to the (frozen) init_from network holds the trained policy nearer to it (mean
    KL over the decisions of a random rollout) than the same run without it; the anchored run resumes exactly; anchor_kl without init_from is refused."""
    from agents import nn as N

    init = tmp_path / "init.safetensors"
    N.save(N.make(4, 0, channels=4, hidden=16).net, init)
    base = {**TINY, "init_from": str(init), "lr": 3e-2, "anneal_lr": False, "updates": 4, "epochs": 2}

    env = VectorEnv(32, seed=9, threads=1)
    obs, masks, _ = env.reset()
    batches, rng = [], np.random.default_rng(0)
    for _ in range(30):
        batches.append((obs.copy(), masks.copy()))
        obs, masks, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    obs = np.concatenate([o for o, _ in batches])
    masks = np.concatenate([m for _, m in batches])
    tile, glob = N.obs_features(obs, masks)
    illegal = ~torch.from_numpy(masks)

    def logp(net):
        with torch.no_grad():
            return torch.log_softmax(masked_logits(net, tile, glob, illegal)[0], 1)

    start = logp(N.load(init))

    def drift(run):  # mean KL(start || trained) over the decisions
        return float(
            (start.exp() * (start - logp(N.load(tmp_path / run / "policy.safetensors")))).sum(1).mean()
        )

    train(PPOConfig(run_dir=str(tmp_path / "free"), **base))
    train(PPOConfig(run_dir=str(tmp_path / "held"), **{**base, "anchor_kl": 50.0}))
    assert 0 < drift("held") < 0.5 * drift("free")
    _resume_matches(tmp_path, {**base, "anchor_kl": 50.0}, tmp_path / "held")
    with pytest.raises(ValueError, match="anchor_kl > 0 needs init_from"):
        Trainer(PPOConfig(run_dir=str(tmp_path / "x"), anchor_kl=1.0))
    assert not (tmp_path / "x").exists()
