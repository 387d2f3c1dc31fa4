"""Prototype of a same-deal group baseline for PPO (issue 25, session 23):
``PYTHONPATH=. python -m benchmarks.lab.group_baseline --out DIR [--iterations 580 --lr 5e-4 --seed 53]``.

Each iteration deals ``--groups`` hands and plays each of them ``--replays`` (K) times, one hand per table of a
``VectorEnv`` (``after_schedule="stop"``): the learner (sampling) in one chair, drawn per deal, against three rule
agents. Every learner decision of a play gets the play's points minus the mean of the other K - 1 plays of the
same deal (scaled by 1/32; the deal's luck cancels), and the learner takes two epochs of PPO-clip steps on
them (no critic, no value loss). It starts from ``--init-from`` (default ``agents/ens5_baseline.safetensors``,
the network shipped in sessions 21-27) and writes ``log.csv`` (iteration, seconds, learner decisions, learner
points per hand, advantage std, share of non-zero advantages, approximate KL, clip fraction), a
``policy_iNNNN.safetensors`` every 25 iterations and ``policy.safetensors`` at the end; evaluate
them with ``python -m mjenv eval``. A lab probe of the idea, not a training command: no resume, no oracle, no
opponent pool (``train.ppo`` has them).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents import nn as ann
from agents.rule import RulePolicy
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv
from train.ppo import masked_logits, masked_probs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder of log.csv and the policies (created)")
    ap.add_argument("--init-from", default="agents/ens5_baseline.safetensors")
    ap.add_argument("--seed", type=int, default=53)
    ap.add_argument("--iterations", type=int, default=580)
    ap.add_argument("--groups", type=int, default=128, help="deals per iteration")
    ap.add_argument("--replays", type=int, default=8, help="plays of each deal (K >= 2)")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--minibatch-size", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=2, help="Numba and torch threads")
    a = ap.parse_args()
    if a.replays < 2 or a.groups < 1 or a.iterations < 1:
        raise SystemExit("--replays must be >= 2, --groups and --iterations >= 1")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng([a.seed, 7])
    gen = torch.Generator().manual_seed(a.seed)
    net = ann.load(a.init_from)
    nc = net.config
    opt = torch.optim.Adam(net.parameters(), lr=a.lr, eps=1e-5)
    b, k = a.groups, a.replays
    n = b * k
    rules = RuleConfig(min_fan=8, illegal="raise")
    env = VectorEnv(n, seed=a.seed, rules=rules, threads=a.threads, obs_dtype=np.uint8, after_schedule="stop")
    rule = RulePolicy(n, threads=a.threads)
    clip, scale = 0.2, 1 / 32
    t0 = time.time()
    with open(out / "log.csv", "w") as log:
        log.write("iteration,seconds,decisions,points_per_hand,adv_std,adv_nonzero,approx_kl,clipfrac\n")
        for it in range(1, a.iterations + 1):
            seeds, dealers = rng.integers(0, 2**62, b), rng.integers(0, 4, b)
            # the learner's chair, the same in every play of a deal
            chair = np.repeat(rng.integers(0, 4, b), k)
            env.reset(seed=np.repeat(seeds, k), dealers=np.repeat(dealers, k), prevalents=0)
            tiles, globs, masks, acts, lps, tabs = [], [], [], [], [], []
            points = np.zeros(n)
            actions = np.zeros(n, np.int64)
            while env.active.any():
                seats, live = env.seats, env.active
                mine = np.flatnonzero(live & (seats == chair))
                other = np.flatnonzero(live & (seats != chair))
                actions[:] = 0  # stopped tables ignore theirs
                if mine.size:
                    tile, glob = ann.input_features(nc, env.obs[mine], env.masks[mine])
                    illegal = ~torch.from_numpy(env.masks[mine])
                    with torch.inference_mode():
                        logits, _ = masked_logits(net, tile, glob, illegal)
                        lp_all = torch.log_softmax(logits, 1)
                        act = torch.multinomial(masked_probs(lp_all, illegal), 1, generator=gen).squeeze(1)
                        lps.append(lp_all.gather(1, act[:, None]).squeeze(1))
                    actions[mine] = act.numpy()
                    tiles.append(tile)
                    globs.append(glob)
                    masks.append(illegal)
                    acts.append(act)
                    tabs.append(mine)
                if other.size:
                    actions[other] = rule(env.obs[other], env.masks[other], seats[other])
                env.step(actions)
                done = np.flatnonzero(env.terminated)
                points[done] = env.results.scores[done, chair[done]]
            g = points.reshape(b, k)
            others = (g.sum(1, keepdims=True) - g) / (k - 1)
            adv_table = ((g - others).reshape(-1) * scale).astype(np.float32)
            adv = torch.from_numpy(adv_table[np.concatenate(tabs)])
            tile, glob, illegal_all = torch.cat(tiles), torch.cat(globs), torch.cat(masks)
            act_all, old = torch.cat(acts), torch.cat(lps)
            m = adv.shape[0]
            kl_sum = clip_sum = steps = 0.0
            for _ in range(a.epochs):
                perm = torch.from_numpy(rng.permutation(m))
                for s in range(0, m, a.minibatch_size):
                    idx = perm[s : s + a.minibatch_size]
                    logits, _ = masked_logits(net, tile[idx], glob[idx], illegal_all[idx])
                    lp = torch.log_softmax(logits, 1).gather(1, act_all[idx, None]).squeeze(1)
                    log_ratio = lp - old[idx]
                    ratio = log_ratio.exp()
                    ad = adv[idx] / (adv[idx].std() + 1e-8)
                    loss = torch.max(-ad * ratio, -ad * ratio.clamp(1 - clip, 1 + clip)).mean()
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                    opt.step()
                    with torch.no_grad():
                        kl_sum += ((ratio - 1) - log_ratio).mean().item()
                        clip_sum += ((ratio - 1).abs() > clip).float().mean().item()
                    steps += 1
            log.write(
                f"{it},{time.time() - t0:.1f},{m},{points.mean():.3f},{adv_table.std():.4f},"
                f"{(adv_table != 0).mean():.3f},{kl_sum / steps:.3e},{clip_sum / steps:.4f}\n"
            )
            log.flush()
            if it % 25 == 0:
                ann.save(net, out / f"policy_i{it:04d}.safetensors")
    ann.save(net, out / "policy.safetensors")
    print(f"{a.iterations} iterations in {time.time() - t0:.0f} s; {out / 'policy.safetensors'}")


if __name__ == "__main__":
    main()
