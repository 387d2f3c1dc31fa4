"""Lab probe (issue 25): how much of a PPO update's policy gradient is signal? The gradient noise scale.

    PYTHONPATH=. python lab/probes/grad_noise.py agents/zoo/avg109-2026-12-06.safetensors --rollouts 32 --seed 32001

For each checkpoint, the PPO loop of :mod:`train.ppo` (its defaults and the settings of the runs of sessions
25-31: ``--gae-lambda 0.8``, three rule agents beside the learner at most tables) first fits the value head alone
for ``--value-warmup`` updates (the policy does not move, as at the start of those runs), then collects
``--rollouts`` more rollouts without updating and computes, for each rollout k, the gradient ``g_k`` of PPO's
policy loss at ratio 1, ``-mean(A_hat log pi(a|s))`` over the rollout's learner decisions (``A_hat`` the GAE
advantages standardised over the rollout, as PPO standardises them per minibatch; the actor's parameters only,
without the entropy term). Each ``g_k`` is the true gradient ``G`` plus noise of covariance ``Sigma / B`` (B: one
rollout), so over the K rollouts

* ``|G|^2`` is estimated without bias by the mean dot product of two different rollouts' gradients,
  ``sum_{k != l} g_k . g_l / (K (K - 1))``;
* ``tr(Sigma) / B`` by the mean ``|g_k|^2`` less that;
* the **noise scale** ``B_noise = tr(Sigma) / |G|^2`` (McCandlish et al., 2018, "An empirical model of
  large-batch training"), here in rollouts: the batch at which a step's expected signal equals its noise. An
  update of one rollout has signal share ``1 / (1 + B_noise)`` of its squared length, and two rollouts' gradients
  meet at a mean cosine of about the same.

The same figures with every coordinate divided by its root-mean-square over the K gradients (the scaling Adam's
second moment applies) are given as ``adam_*``. The standard errors are the jackknife's over rollouts; where
``|G|^2`` is within two standard errors of 0 the noise scale is reported as a lower bound only. One strict JSON
line per checkpoint on stdout (an unbounded figure as null). docs/training.md, "Session 32", has the figures.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import torch

import agents.nn as ann
from train.ppo import PPOConfig, Trainer, explained_variance, masked_logits


def warmed_trainer(
    checkpoint: str, *, seed: int, gae_lambda: float, value_warmup: int, threads: int, lr: float = 2.5e-4
) -> tuple[Trainer, dict[str, float], list[float]]:
    """The PPO loop (:class:`train.ppo.Trainer`) from ``checkpoint`` after ``value_warmup`` value-only updates
    at rate ``lr`` (the policy does not move), with its timers and each warm-up update's explained variance."""
    with tempfile.TemporaryDirectory() as tmp:  # the Trainer writes nothing unless it runs
        cfg = PPOConfig(
            run_dir=tmp, seed=seed, init_from=checkpoint, lr=lr, anneal_lr=False, gae_lambda=gae_lambda,
            value_warmup=value_warmup, updates=value_warmup + 1, threads=threads, torch_threads=threads,
            eval_every=0, progress=False,
        )  # fmt: skip
        tr = Trainer(cfg)
    timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
    ev = [tr.step(timers)["value_ev"] for _ in range(value_warmup)]
    return tr, timers, ev


def standardised_advantages(batch: dict[str, Any]) -> torch.Tensor:
    """A rollout's advantages less their mean, over their standard deviation (PPO does it per minibatch)."""
    adv = torch.from_numpy(batch["advantages"]).double()
    return ((adv - adv.mean()) / (adv.std() + 1e-8)).float()


def rollout_chunks(
    net: ann.Net, batch: dict[str, Any], device: torch.device, chunk: int = 4096
) -> Iterator[tuple[slice, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The network on a rollout's learner decisions, ``chunk`` rows at a time (with autograd): for each chunk
    ``(rows, logp_all, logp, values, illegal)``, the masked log-softmax over every action, the log-probability
    of the action taken, the values and the illegal mask."""
    k = batch["actions"].shape[0]
    for s in range(0, k, chunk):
        sl = slice(s, min(s + chunk, k))
        tile = torch.from_numpy(batch["tile"][sl]).to(device)
        glob = torch.from_numpy(batch["glob"][sl]).to(device)
        illegal = ~torch.from_numpy(batch["masks"][sl]).to(device)
        logits, v = masked_logits(net, tile, glob, illegal)
        logp_all = torch.log_softmax(logits, 1)
        lp = logp_all.gather(1, torch.from_numpy(batch["actions"][sl]).to(device)[:, None]).squeeze(1)
        yield sl, logp_all, lp, v, illegal


def policy_gradient(net: ann.Net, batch: dict[str, Any], device: torch.device) -> torch.Tensor:
    """The gradient of ``-mean(A_hat log pi(a|s))`` over a rollout (advantages standardised over it), as one
    flat float64 vector over the actor's parameters (every parameter but the value head's)."""
    k = batch["actions"].shape[0]
    adv = standardised_advantages(batch)
    value = {id(p) for p in net.value_head.parameters()}
    actor = [p for p in net.parameters() if id(p) not in value]
    net.zero_grad(set_to_none=True)
    for sl, _, lp, _, _ in rollout_chunks(net, batch, device):
        (-(adv[sl].to(device) * lp).sum() / k).backward()
    flat = torch.cat([p.grad.reshape(-1).double().cpu() for p in actor])
    net.zero_grad(set_to_none=True)
    return flat


def noise_stats(g: np.ndarray) -> dict[str, float]:
    """``|G|^2``, ``tr(Sigma)/B`` and ``B_noise`` (in batches) from K per-batch gradients ``g`` [K, P]."""
    k = g.shape[0]
    sq = (g * g).sum(1)
    s = g.sum(0)
    g2 = (float(s @ s) - float(sq.sum())) / (k * (k - 1))
    noise = float(sq.mean()) - g2
    return {"G2": g2, "noise_per_batch": noise, "B_noise": noise / g2 if g2 > 0 else math.inf,
            "mean_cos": _mean_cos(g)}  # fmt: skip


def _mean_cos(g: np.ndarray) -> float:
    u = g / np.linalg.norm(g, axis=1, keepdims=True)
    c = u @ u.T
    k = g.shape[0]
    return float((c.sum() - np.trace(c)) / (k * (k - 1)))


def jackknife(g: np.ndarray) -> dict[str, float]:
    """:func:`noise_stats` with the jackknife's standard errors of ``G2`` and ``mean_cos``, and ``B_noise``
    as an estimate where ``G2`` is above two standard errors, else a lower bound (``B_noise_lower``)."""
    k = g.shape[0]
    full = noise_stats(g)
    loo = [noise_stats(np.delete(g, i, axis=0)) for i in range(k)]
    out = dict(full)
    for key in ("G2", "mean_cos"):
        v = np.array([r[key] for r in loo])
        out[key + "_se"] = float(math.sqrt((k - 1) / k * ((v - v.mean()) ** 2).sum()))
    hi = full["G2"] + 2 * out["G2_se"]  # the largest |G|^2 the data allow (about 97.5%)
    out["B_noise_lower"] = full["noise_per_batch"] / hi if hi > 0 else math.inf
    if full["G2"] <= 2 * out["G2_se"]:
        out["B_noise"] = None  # not resolved: only the lower bound holds
    return out


def noise_fields(g: np.ndarray, per: float, prefix: str = "") -> dict[str, float | None]:
    """:func:`jackknife` of the gradients ``g`` [K, P] as they are (``{prefix}raw_*``) and with each coordinate
    divided by its root-mean-square over the K (``{prefix}adam_*``), six significant digits; each noise scale (or
    its lower bound) also in the learner's decisions (``*_B_noise_learner_decisions``, ``per`` of them a batch)."""
    rms = np.sqrt((g * g).mean(0))
    out: dict[str, float | None] = {}
    for name, r in (("raw", jackknife(g)), ("adam", jackknife(g / np.where(rms > 0, rms, 1.0)))):
        for key, val in r.items():
            out[f"{prefix}{name}_{key}"] = None if val is None else float(f"{val:.6g}")
        bn = r["B_noise"] if r["B_noise"] is not None else r["B_noise_lower"]
        out[f"{prefix}{name}_B_noise_learner_decisions"] = round(bn * per) if math.isfinite(bn) else None
    return out


def measure(checkpoint: str, args: argparse.Namespace) -> dict[str, Any]:
    """Warm the value head on ``checkpoint``'s own play, then the noise statistics of K rollouts' gradients."""
    t0 = time.perf_counter()
    tr, timers, ev = warmed_trainer(
        checkpoint, seed=args.seed, gae_lambda=args.gae_lambda, value_warmup=args.value_warmup,
        threads=args.threads, lr=args.lr,
    )  # fmt: skip
    t1 = time.perf_counter()
    grads, dec, ldec, ev_m, pts, hands = [], 0, 0, [], 0.0, 0
    for _ in range(args.rollouts):
        batch = tr.col.collect(tr.net, tr.pool, tr.gen, tr.device, timers)
        grads.append(policy_gradient(tr.net, batch, tr.device).numpy())
        dec += batch["decisions"]
        ldec += int(batch["actions"].size)
        pts += batch["learner_points"]
        hands += batch["learner_hands"]
        ev_m.append(explained_variance(batch["values"], batch["returns"]))
    t2 = time.perf_counter()
    g = np.stack(grads)
    per = ldec / args.rollouts
    out: dict[str, Any] = {
        "checkpoint": checkpoint, "seed": args.seed, "rollouts": args.rollouts,
        "learner_decisions_per_rollout": round(per, 1), "decisions_per_rollout": dec / args.rollouts,
        "learner_points_per_hand": round(pts / max(hands, 1), 3), "learner_hands": hands,
        "value_ev_warmup_last5": round(float(np.mean(ev[-5:])), 3) if ev else None,
        "value_ev_measured": round(float(np.mean(ev_m)), 3),
        "params": int(g.shape[1]), "warmup_s": round(t1 - t0, 1), "measure_s": round(t2 - t1, 1),
    }  # fmt: skip
    out.update(noise_fields(g, per))
    return out


def finite_json(obj: Any) -> Any:
    """``obj`` with every non-finite float (an unbounded lower bound is ``inf``) as ``None``, so that
    ``json.dumps`` writes strict JSON (``null``, not ``Infinity``)."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite_json(v) for v in obj]
    return obj


def check_checkpoints(ap: argparse.ArgumentParser, paths: list[str]) -> None:
    """Load each checkpoint once before any work starts; one that cannot be read ends the run with ``ap.error``
    naming it (the probes' shared check)."""
    for c in paths:
        try:
            ann.load(c)
        except (OSError, ValueError) as e:
            ap.error(f"{c}: {e}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+", help="agents.nn checkpoints (planes or mlp)")
    ap.add_argument(
        "--rollouts", type=int, default=32, help="K rollouts measured per checkpoint (default 32)"
    )
    ap.add_argument("--value-warmup", type=int, default=20, help="value-only updates first (default 20)")
    ap.add_argument(
        "--gae-lambda", type=float, default=0.8, help="GAE lambda (default 0.8, the runs' setting)"
    )
    ap.add_argument("--lr", type=float, default=2.5e-4, help="the value warm-up's Adam rate (default 2.5e-4)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="Numba and torch threads (default 2)")
    args = ap.parse_args(argv)
    if args.rollouts < 3:
        ap.error(f"--rollouts must be at least 3 (the jackknife of pairs), got {args.rollouts}")
    if args.value_warmup < 0:
        ap.error(f"--value-warmup must be >= 0, got {args.value_warmup}")
    check_checkpoints(ap, args.checkpoints)
    for c in args.checkpoints:
        r = measure(c, args)
        print(json.dumps(finite_json(r), allow_nan=False), flush=True)
        line = [f"{c}:"]
        for name in ("raw", "adam"):
            bn = r[f"{name}_B_noise"]
            line.append(
                f"{name} B_noise "
                + (f"{bn:.1f}" if bn is not None else f"> {r[name + '_B_noise_lower']:.1f}")
            )
            line.append(f"mean cos {r[name + '_mean_cos']:+.4f} +- {r[name + '_mean_cos_se']:.4f};")
        print(" ".join(line), file=sys.stderr)


if __name__ == "__main__":
    main()
