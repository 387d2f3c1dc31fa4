"""Lab probe (issue 25): policy-gradient steps on batches near the gradient noise scale.

    PYTHONPATH=. python lab/probes/big_batch.py --init-from agents/zoo/avg109-2026-12-06.safetensors \\
        --rollouts-per-step 96 --steps 16 --lr 5e-4 --seed 32201 --out runs/s32/big

``lab/probes/grad_noise.py`` measures that at the shipped network a PPO rollout's policy gradient is almost
all noise (the noise scale is 80 rollouts or more). This probe takes the steps that measurement asks for: each
step collects ``--rollouts-per-step`` rollouts of the PPO loop (:mod:`train.ppo`, its defaults and
``--gae-lambda``; the learner beside three rule agents at most tables), accumulates over all of them the gradient
of PPO's loss at ratio 1 (the policy term on advantages standardised per rollout, ``vf_coef`` times the value
loss, less ``ent_coef`` times the entropy), and then takes one Adam step (``eps`` 1e-5, as the PPO loop's) with
the gradient clipped to ``max_grad_norm`` (the value head at 2.5e-4, the rate of the runs of sessions 25-28 and of
the warm-up, the rest at ``--lr``). On-policy at every step, so there is no ratio to clip. The value head alone
is fitted first for ``--value-warmup`` updates of the PPO loop, as at the start of a PPO run. The
network after every step is written to ``OUT/policy_sNNN.safetensors``, one JSON line per step to
``OUT/progress.jsonl`` (the gradient norm, the entropy, the learner's sampled points per hand). docs/training.md,
"Session 32", has the figures.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

import agents.nn as ann
from lab.probes.grad_noise import (
    check_checkpoints,
    rollout_chunks,
    standardised_advantages,
    warmed_trainer,
)
from train.ppo import Trainer, explained_variance, masked_probs


def accumulate(tr: Trainer, batch: dict, weight: float) -> dict[str, float]:
    """Add ``weight`` times the gradient of PPO's loss at ratio 1 over one rollout to ``.grad``."""
    cfg, dev = tr.cfg, tr.device
    k = batch["actions"].shape[0]
    adv = standardised_advantages(batch)
    ret = torch.from_numpy(batch["returns"])
    ent_sum = 0.0
    for sl, logp_all, lp, v, illegal in rollout_chunks(tr.net, batch, dev):
        ent = -(masked_probs(logp_all, illegal) * logp_all).sum(1)
        pg = -(adv[sl].to(dev) * lp).sum()
        vl = 0.5 * ((v - ret[sl].to(dev)) ** 2).sum()
        (weight * (pg + cfg.vf_coef * vl - cfg.ent_coef * ent.sum()) / k).backward()
        ent_sum += float(ent.detach().sum())
    return {"entropy": ent_sum / max(k, 1)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--init-from", required=True, help="agents.nn checkpoint to start from")
    ap.add_argument("--out", required=True, help="folder of the snapshots and progress.jsonl")
    ap.add_argument("--rollouts-per-step", type=int, default=96)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--gae-lambda", type=float, default=0.8)
    ap.add_argument("--value-warmup", type=int, default=20, help="value-only PPO updates first (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2, help="Numba and torch threads (default 2)")
    args = ap.parse_args(argv)
    for name in ("rollouts_per_step", "steps"):
        if getattr(args, name) < 1:
            ap.error(f"--{name.replace('_', '-')} must be >= 1, got {getattr(args, name)}")
    if not args.lr > 0:
        ap.error(f"--lr must be > 0, got {args.lr}")
    check_checkpoints(ap, [args.init_from])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tr, timers, _ = warmed_trainer(
        args.init_from, seed=args.seed, gae_lambda=args.gae_lambda, value_warmup=args.value_warmup,
        threads=args.threads,
    )  # fmt: skip
    cfg = tr.cfg
    # the value head keeps the warm-up's rate (2.5e-4, the rate of the runs of sessions 25-28); the rest takes --lr
    head = list(tr.net.value_head.parameters())
    rest = [p for p in tr.net.parameters() if all(p is not q for q in head)]
    opt = torch.optim.Adam([{"params": rest, "lr": args.lr}, {"params": head, "lr": cfg.lr}], eps=1e-5)
    log = (out / "progress.jsonl").open("a")
    m = args.rollouts_per_step
    for step in range(1, args.steps + 1):
        t0 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        ent, pts, hands, ldec, evs = 0.0, 0.0, 0, 0, []
        for _ in range(m):
            batch = tr.col.collect(tr.net, tr.pool, tr.gen, tr.device, timers)
            ent += accumulate(tr, batch, 1.0 / m)["entropy"] / m
            pts += batch["learner_points"]
            hands += batch["learner_hands"]
            ldec += int(batch["actions"].size)
            evs.append(explained_variance(batch["values"], batch["returns"]))
        norm = float(torch.nn.utils.clip_grad_norm_(tr.net.parameters(), cfg.max_grad_norm))
        opt.step()
        ann.save(tr.net, out / f"policy_s{step:03d}.safetensors")
        row = {"step": step, "grad_norm": round(norm, 6), "entropy": round(ent, 5),
               "learner_points_per_hand": round(pts / max(hands, 1), 3), "learner_hands": hands,
               "learner_decisions": ldec, "value_ev": round(float(np.mean(evs)), 3),
               "seconds": round(time.perf_counter() - t0, 1)}  # fmt: skip
        log.write(json.dumps(row) + "\n")
        log.flush()
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
