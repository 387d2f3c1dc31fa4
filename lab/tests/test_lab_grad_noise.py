"""The lab probes of session 32: the gradient noise scale's estimator and the temperature tool.

``lab/probes/grad_noise.py`` estimates ``|G|^2`` and ``tr(Sigma)/B`` from K per-batch gradients; on synthetic
gradients of known mean and covariance it must find them (and refuse to call an unresolved signal). The
temperature tool must divide every logit by T and nothing else.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lab.probes.grad_noise import finite_json, jackknife, noise_stats  # noqa: E402 (after the importorskip)
from lab.probes.temperature import at_temperature  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]  # the repository root


def _synthetic(k: int, p: int, g_norm: float, noise_sd: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    mean = rng.normal(size=p)
    mean *= g_norm / np.linalg.norm(mean)
    return mean + rng.normal(scale=noise_sd, size=(k, p))


def test_noise_scale_recovers_known_signal_and_noise():
    # |G|^2 = 1, tr(Sigma)/B = 200 * 0.5^2 = 50: a noise scale of 50 batches
    g = _synthetic(k=4000, p=200, g_norm=1.0, noise_sd=0.5, seed=0)
    r = jackknife(g[:400])
    full = noise_stats(g)
    assert full["G2"] == pytest.approx(1.0, abs=0.1)
    assert full["noise_per_batch"] == pytest.approx(50.0, rel=0.02)
    assert full["B_noise"] == pytest.approx(50.0, rel=0.15)
    assert r["B_noise"] is not None and r["G2"] > 2 * r["G2_se"]
    assert r["mean_cos"] == pytest.approx(1 / 51, abs=3 * r["mean_cos_se"])


def test_pure_noise_gives_a_lower_bound_only():
    g = _synthetic(k=64, p=500, g_norm=0.0, noise_sd=1.0, seed=1)
    r = jackknife(g)
    assert r["B_noise"] is None
    # tr(Sigma)/B = 500 and the SE of |G|^2 about sqrt(2 * 500 / (64 * 63)) = 0.5: the bound is near 500 / 1.5
    assert math.isfinite(r["B_noise_lower"]) and 100 < r["B_noise_lower"] < 1000
    assert abs(r["mean_cos"]) < 3 * r["mean_cos_se"]


def test_unbounded_figures_are_written_as_strict_json():
    import json

    r = {"B_noise_lower": math.inf, "by_parameter": [{"cos": -math.nan, "n": 3}], "G2": 0.5}
    text = json.dumps(finite_json(r), allow_nan=False)
    assert json.loads(text) == {"B_noise_lower": None, "by_parameter": [{"cos": None, "n": 3}], "G2": 0.5}


def test_temperature_divides_the_logits_and_keeps_the_value():
    from agents import nn as ann
    from mjenv.vector import VectorEnv

    path = str(ROOT / "agents" / "zoo" / "avg109-2026-12-06.safetensors")
    env = VectorEnv(8, seed=5)
    env.reset()
    base, hot = ann.load(path), at_temperature(path, 0.5)
    with torch.no_grad():
        l0, v0 = base(env.obs, env.masks)
        l1, v1 = hot(env.obs, env.masks)
    legal = torch.from_numpy(env.masks)
    assert torch.allclose(l1[legal], 2 * l0[legal], rtol=1e-5, atol=1e-4)
    assert torch.equal(v0, v1)
    assert torch.equal(l0.argmax(1), l1.argmax(1))
    with pytest.raises(ValueError, match="temperature"):
        at_temperature(path, 0.0)


def test_group_probe_gradients_match_the_one_advantage_gradient():
    # session 33's probe shares one forward pass among the four advantages: each must be the gradient that
    # grad_noise.policy_gradient computes alone, and the group advantages of a deal's plays must sum to 0
    from agents import nn as ann
    from agents.rule import RulePolicy
    from lab.probes.grad_noise import policy_gradient
    from lab.probes.group_baseline import advantages, as_batch, play_deals
    from lab.probes.group_noise import ESTIMATORS, policy_gradients
    from mjenv.rules import RuleConfig
    from mjenv.vector import VectorEnv

    b, k = 3, 4
    net = ann.load(str(ROOT / "agents" / "zoo" / "avg109-2026-12-06.safetensors"))
    env = VectorEnv(b * k, seed=3, rules=RuleConfig(min_fan=8), after_schedule="stop", obs_dtype=np.uint8)
    p = play_deals(
        net, env, RulePolicy(b * k), np.random.default_rng(3), torch.Generator().manual_seed(3), b, k
    )
    assert np.allclose(p["adv_table"].reshape(b, k).sum(1), 0.0, atol=1e-5)
    a = advantages(p, b, k, None)
    a["none"] = a["returns"]
    together = policy_gradients(net, p, {e: a[e] for e in ESTIMATORS})
    batch = as_batch(p)
    for e in ESTIMATORS:
        alone = policy_gradient(net, {**batch, "advantages": a[e].numpy()}, torch.device("cpu")).numpy()
        np.testing.assert_allclose(together[e], alone, rtol=1e-4, atol=1e-7)
        assert np.linalg.norm(alone) > 0
    assert not np.allclose(together["group"], together["none"])  # the baseline changes the gradient


def test_group_accumulate_steps_only_every_m_iterations():
    # group_baseline --accumulate: gradients add up without a step, then one Adam step moves the network
    from agents import nn as ann
    from agents.rule import RulePolicy
    from lab.probes.group_baseline import accumulate_step, play_deals
    from mjenv.rules import RuleConfig
    from mjenv.vector import VectorEnv

    b, k = 3, 4
    net = ann.load(str(ROOT / "agents" / "zoo" / "avg109-2026-12-06.safetensors"))
    before = [q.detach().clone() for q in net.parameters()]
    opt = torch.optim.Adam(net.parameters(), lr=1e-4, eps=1e-5)
    env = VectorEnv(b * k, seed=3, rules=RuleConfig(min_fan=8), after_schedule="stop", obs_dtype=np.uint8)
    p = play_deals(
        net, env, RulePolicy(b * k), np.random.default_rng(3), torch.Generator().manual_seed(3), b, k
    )
    adv = torch.from_numpy(p["adv_table"][p["table"]])
    assert adv.abs().max() > 0  # the deals' plays differ (the advantages are not all 0)
    assert accumulate_step(net, opt, p, adv, False, 2) == (0.0, 0.0, 0)
    first = [None if q.grad is None else q.grad.clone() for q in net.parameters()]
    assert all(torch.equal(q, b0) for q, b0 in zip(net.parameters(), before, strict=True))
    assert sum(float(g.abs().sum()) for g in first if g is not None) > 0
    kl, _, steps = accumulate_step(net, opt, p, adv, True, 2)
    assert steps == 1 and kl > 0 and all(q.grad is None for q in net.parameters())
    assert not all(torch.equal(q, b0) for q, b0 in zip(net.parameters(), before, strict=True))
