"""The lab probes of session 32: the gradient noise scale's estimator and the temperature tool.

``benchmarks/lab/grad_noise.py`` estimates ``|G|^2`` and ``tr(Sigma)/B`` from K per-batch gradients; on synthetic
gradients of known mean and covariance it must find them (and refuse to call an unresolved signal). The
temperature tool must divide every logit by T and nothing else.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from benchmarks.lab.grad_noise import jackknife, noise_stats  # noqa: E402 (after the importorskip)
from benchmarks.lab.temperature import at_temperature  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


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


def test_temperature_divides_the_logits_and_keeps_the_value():
    from agents import nn as ann
    from mjenv.vector import VectorEnv

    path = str(ROOT / "agents" / "baseline.safetensors")
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
