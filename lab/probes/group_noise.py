"""Lab probe (issue 25): the gradient noise scale of the policy gradient under four advantages on the same plays.

    PYTHONPATH=. python lab/probes/group_noise.py agents/zoo/avg109-2026-12-06.safetensors --iterations 128 --seed 33001

``lab/probes/grad_noise.py`` measured the noise scale of PPO's gradient with GAE advantages (session 32: 80
rollouts or more, about 1.2M of the learner's decisions). This probe measures it on the plays of
``lab/probes/group_baseline.py``: each iteration deals ``--groups`` hands and plays each ``--replays`` times,
the learner (sampling) in one chair per deal against three rule agents, every hand to its end (Monte Carlo returns,
nothing bootstrapped). For each iteration and each advantage, on the same plays, it computes the gradient of
``-mean(A_hat log pi(a|s))`` over the iteration's learner decisions (``A_hat`` standardised over the iteration;
the actor's parameters only):

* ``none``: the play's return (less the iteration's mean, by the standardisation): no baseline;
* ``critic``: the return less the value head's value at the decision (the critic at lambda 1);
* ``group``: the return less the mean return of the deal's other plays (session 30's group baseline);
* ``both``: the critic's, less c times the deal's luck the critic missed (session 30's ``--baseline both``).

The value head is first fitted alone for ``--value-warmup`` iterations (as ``group_baseline.py``'s warm-up: two
epochs of minibatches of 4,096, Adam at 2.5e-4, the loss times 0.5, gradients clipped to 0.5). The statistics are
``grad_noise.py``'s (:func:`lab.probes.grad_noise.jackknife`), with an iteration as the batch; the noise scale
is also given in the learner's decisions, to compare with ``grad_noise.py``'s, and per parameter and group of
parameters (``by_parameter``: the mean cosine, its standard error, the noise scale or None, its lower bound;
:func:`parameter_slices`). One strict JSON line per checkpoint on stdout (an unbounded figure as null).
docs/training.md, "Session 33", has the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np
import torch

import agents.nn as ann
from agents.rule import RulePolicy
from lab.probes.grad_noise import (
    check_checkpoints,
    finite_json,
    jackknife,
    noise_fields,
    rollout_chunks,
    standardised_advantages,
)
from lab.probes.group_baseline import advantages, as_batch, play_deals
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv
from train.ppo import explained_variance, masked_logits

ESTIMATORS = ("none", "critic", "group", "both")


def fit_value(
    net: ann.Net, opt: torch.optim.Optimizer, p: dict, ret: torch.Tensor, rng: np.random.Generator
) -> None:
    """Two epochs of value-only steps on the plays ``p`` (minibatches of 4,096; ``opt`` holds the value head)."""
    m = ret.shape[0]
    head = {id(q) for q in net.value_head.parameters()}
    for q in net.parameters():  # no backward through the trunk: the same steps in less time
        q.requires_grad_(id(q) in head)
    for _ in range(2):
        perm = torch.from_numpy(rng.permutation(m))
        for s in range(0, m, 4096):
            idx = perm[s : s + 4096]
            _, v = masked_logits(net, p["tile"][idx], p["glob"][idx], p["illegal"][idx])
            loss = 0.5 * 0.5 * torch.nn.functional.mse_loss(v, ret[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.value_head.parameters(), 0.5)
            opt.step()
    net.zero_grad(set_to_none=True)
    for q in net.parameters():
        q.requires_grad_(True)


def policy_gradients(net: ann.Net, p: dict, advs: dict[str, torch.Tensor]) -> dict[str, np.ndarray]:
    """For each advantage in ``advs``, the gradient of ``-mean(A_hat log pi(a|s))`` over the plays ``p``
    (advantages standardised over them) as one flat float64 vector over the actor's parameters; one forward
    pass shared by all."""
    batch = as_batch(p)
    n = batch["actions"].shape[0]
    std = {k: standardised_advantages({"advantages": a.numpy()}) for k, a in advs.items()}
    value = {id(q) for q in net.value_head.parameters()}
    actor = [q for q in net.parameters() if id(q) not in value]
    acc = {k: [torch.zeros_like(q, dtype=torch.float64) for q in actor] for k in advs}
    names = list(advs)
    for sl, _, lp, _, _ in rollout_chunks(net, batch, torch.device("cpu")):
        for i, k in enumerate(names):
            grads = torch.autograd.grad(
                -(std[k][sl] * lp).sum() / n, actor, retain_graph=i < len(names) - 1, allow_unused=True
            )
            for a, gr in zip(acc[k], grads, strict=True):
                if gr is not None:
                    a += gr.double()
    return {k: torch.cat([a.reshape(-1) for a in acc[k]]).numpy() for k in names}


HEADS = ("tile_head", "other_head")  # the policy's output layers


def parameter_slices(net: ann.Net) -> dict[str, np.ndarray]:
    """Each actor parameter's coordinates in :func:`policy_gradients`' flat vector, and three groups: the policy
    heads' biases (one logit shift per action class), the heads' weights and biases, and the rest."""
    value = {id(q) for q in net.value_head.parameters()}
    out: dict[str, np.ndarray] = {}
    at = 0
    for name, q in net.named_parameters():
        if id(q) in value:
            continue
        out[name] = np.arange(at, at + q.numel())
        at += q.numel()
    head = [n for n in out if n.split(".")[0] in HEADS]
    out["heads' biases"] = np.concatenate([out[n] for n in head if n.endswith("bias")])
    out["heads"] = np.concatenate([out[n] for n in head])
    out["all but the heads"] = np.concatenate([out[n] for n in list(out)[: len(out) - 2] if n not in head])
    return out


def _brief(r: dict[str, float]) -> list[float | None]:
    """``[mean_cos, its standard error, B_noise or None, its lower bound]`` from :func:`jackknife`."""
    return [
        float(f"{r[k]:.4g}") if r[k] is not None else None
        for k in ("mean_cos", "mean_cos_se", "B_noise", "B_noise_lower")
    ]


def measure(checkpoint: str, args: argparse.Namespace) -> dict[str, Any]:
    """Fit the value head on ``checkpoint``'s own plays, then the noise statistics of each advantage's gradients."""
    t0 = time.perf_counter()
    rng = np.random.default_rng([args.seed, 7])
    gen = torch.Generator().manual_seed(args.seed)
    net = ann.load(checkpoint)
    b, k = args.groups, args.replays
    rules = RuleConfig(min_fan=8, illegal="raise")
    env = VectorEnv(b * k, seed=args.seed, rules=rules, threads=args.threads, obs_dtype=np.uint8,
                    after_schedule="stop")  # fmt: skip
    rule = RulePolicy(b * k, threads=args.threads)
    opt = torch.optim.Adam(net.value_head.parameters(), lr=2.5e-4, eps=1e-5)
    ev_warm = []
    for _ in range(args.value_warmup):
        p = play_deals(net, env, rule, rng, gen, b, k)
        a = advantages(p, b, k, None)
        ev_warm.append(explained_variance(p["values"].numpy(), a["returns"].numpy()))
        fit_value(net, opt, p, a["returns"], rng)
    t1 = time.perf_counter()
    grads: dict[str, list[np.ndarray]] = {e: [] for e in ESTIMATORS}
    sd: dict[str, list[float]] = {e: [] for e in ESTIMATORS}
    ev, ldec, pts, hands = [], 0, 0.0, 0
    for _ in range(args.iterations):
        p = play_deals(net, env, rule, rng, gen, b, k)
        a = advantages(p, b, k, None)
        a["none"] = a["returns"]
        advs = {e: a[e] for e in ESTIMATORS}
        for e, g in policy_gradients(net, p, advs).items():
            grads[e].append(g)
            sd[e].append(float(advs[e].std()))
        ev.append(explained_variance(p["values"].numpy(), a["returns"].numpy()))
        ldec += int(p["actions"].shape[0])
        pts += float(p["points"].sum())
        hands += b * k
    t2 = time.perf_counter()
    per = ldec / args.iterations
    out: dict[str, Any] = {
        "checkpoint": checkpoint, "seed": args.seed, "iterations": args.iterations, "groups": b, "replays": k,
        "learner_decisions_per_iteration": round(per, 1), "learner_points_per_hand": round(pts / hands, 3),
        "value_ev_warmup_last5": round(float(np.mean(ev_warm[-5:])), 3) if ev_warm else None,
        "value_ev_measured": round(float(np.mean(ev)), 3),
        "warmup_s": round(t1 - t0, 1), "measure_s": round(t2 - t1, 1),
    }  # fmt: skip
    slices = parameter_slices(net)
    out["by_parameter"] = {}
    for e in ESTIMATORS:
        g = np.stack(grads[e])
        out["by_parameter"][e] = {name: _brief(jackknife(g[:, sl])) for name, sl in slices.items()}
        out[f"{e}_adv_sd"] = round(float(np.mean(sd[e])), 4)
        out.update(noise_fields(g, per, prefix=f"{e}_"))
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+", help="agents.nn checkpoints (planes or mlp)")
    ap.add_argument(
        "--iterations", type=int, default=64, help="K iterations measured per checkpoint (default 64)"
    )
    ap.add_argument("--groups", type=int, default=128, help="deals per iteration (default 128)")
    ap.add_argument("--replays", type=int, default=8, help="plays of each deal (default 8)")
    ap.add_argument("--value-warmup", type=int, default=20, help="value-only iterations first (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="Numba and torch threads (default 2)")
    args = ap.parse_args(argv)
    if args.iterations < 3:
        ap.error(f"--iterations must be at least 3 (the jackknife of pairs), got {args.iterations}")
    if args.groups < 1 or args.replays < 2:
        ap.error(f"--groups must be >= 1 and --replays >= 2, got {args.groups} and {args.replays}")
    if args.value_warmup < 0:
        ap.error(f"--value-warmup must be >= 0, got {args.value_warmup}")
    check_checkpoints(ap, args.checkpoints)
    ann.set_torch_threads(args.threads)
    for c in args.checkpoints:
        r = measure(c, args)
        print(json.dumps(finite_json(r), allow_nan=False), flush=True)
        line = [f"{c}:"]
        for e in ESTIMATORS:
            bn = r[f"{e}_raw_B_noise"]
            line.append(
                f"{e} B_noise " + (f"{bn:.1f}" if bn is not None else f"> {r[e + '_raw_B_noise_lower']:.1f}")
                + f" (mean cos {r[e + '_raw_mean_cos']:+.4f} +- {r[e + '_raw_mean_cos_se']:.4f});"
            )  # fmt: skip
        print(" ".join(line), file=sys.stderr)
        for e in ESTIMATORS:  # the parameters whose own signal is resolved (B_noise estimated)
            res = {n: v for n, v in r["by_parameter"][e].items() if v[2] is not None}
            print(
                f"  {e}: " + ", ".join(f"{n} {v[2]:.1f} (cos {v[0]:+.3f})" for n, v in res.items()),
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
