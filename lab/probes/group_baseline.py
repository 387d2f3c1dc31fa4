"""Prototype of a same-deal group baseline for PPO (issue 25, session 23):
``PYTHONPATH=. python -m lab.probes.group_baseline --out DIR [--iterations 580 --lr 5e-4 --seed 53]``.

Each iteration deals ``--groups`` hands and plays each of them ``--replays`` (K) times, one hand per table of a
``VectorEnv`` (``after_schedule="stop"``): the learner (sampling) in one chair, drawn per deal, against three rule
agents. Every learner decision of a play gets the play's points minus the mean of the other K - 1 plays of the
same deal (scaled by 1/32; the deal's luck cancels), and the learner takes two epochs of PPO-clip steps on
them (no critic, no value loss). It starts from ``--init-from`` (default ``agents/zoo/ens5-2026-12-05.safetensors``,
the network shipped in sessions 21-27) and writes ``log.csv`` (iteration, seconds, learner decisions, learner
points per hand, advantage std, share of non-zero advantages, approximate KL, clip fraction), a
``policy_iNNNN.safetensors`` every 25 iterations and ``policy.safetensors`` at the end; evaluate
them with ``python -m mjenv eval``. A lab probe of the idea, not a training command: no resume, no oracle, no
opponent pool (``train.ppo`` has them).

``--baseline both`` (session 30) puts the group beside the critic: decision t of play i gets
``G_i - V_t - c (mean_{j != i} G_j - mean_{j != i} V0_j)`` (returns scaled by 1/32, Monte Carlo, gamma 1), where
``V_t`` is the network's value head at the decision and ``V0_j`` its value at play j's first learner decision:
the critic credits each decision from what the learner has seen, and the other plays of the deal remove the
part of the deal's luck the critic could not see at the start (a valid baseline: the other plays do not depend
on this play's actions). At the first decision (``V_t = V0``) and c = 1 it is the group advantage itself.
``--baseline critic`` drops the group term (``G_i - V_t``). With either, the value head learns the returns
(``--vf-coef``; ``--value-warmup`` iterations train it alone first). The log also gives, every iteration, the
standard deviation of all three advantages on the same plays and the critic's explained variance.

``--accumulate M`` (session 33, ``--baseline group`` only) replaces PPO's epochs by big-batch steps: the gradient
of the group loss at ratio 1 (on-policy) is summed over M iterations, then one Adam step is taken and the network
written to ``policy_sNNN.safetensors``; the step's approximate KL and clip fraction on the last iteration's plays
are logged on the iteration that takes it (0 on the others). ``lab/probes/group_noise.py`` measures the
gradient noise scale that sets M. ``--train-only`` trains the named parameters alone (e.g. the policy heads'
biases, one logit shift per action class), the rest frozen.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch

from agents import nn as ann
from agents.rule import RulePolicy
from lab.probes.grad_noise import rollout_chunks
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv
from train.ppo import explained_variance, masked_logits, masked_probs

STAGES = np.array([0, 1, 3, 6, 12])  # first learner decision index of each stage of a play (--deal-coef auto)
SCALE = 1 / 32  # points to returns


def play_deals(
    net: ann.Net,
    env: VectorEnv,
    rule: RulePolicy,
    rng: np.random.Generator,
    gen: torch.Generator,
    b: int,
    k: int,
) -> dict:
    """One iteration's plays: ``b`` deals drawn from ``rng``, each played ``k`` times (one hand per table of
    ``env``, ``b * k`` tables, ``after_schedule="stop"``), the learner ``net`` (sampling with ``gen``) in one chair
    per deal against ``rule`` in the other three. Returns the learner's decisions in order of play (``tile``,
    ``glob``, ``illegal``, ``actions``, ``old_logp``, ``values``; ``table``: each decision's table; ``depth``:
    the learner's decisions before it in its play), each play's ``points`` and ``v0`` (the value at its first
    learner decision; NaN where the learner never decided), ``others`` (the mean points of the deal's other
    plays, ``[b, k]``) and ``adv_table`` (each play's points less ``others``, times 1/32)."""
    n = b * k
    nc = net.config
    seeds, dealers = rng.integers(0, 2**62, b), rng.integers(0, 4, b)
    # the learner's chair, the same in every play of a deal
    chair = np.repeat(rng.integers(0, 4, b), k)
    env.reset(seed=np.repeat(seeds, k), dealers=np.repeat(dealers, k), prevalents=0)
    tiles, globs, masks, acts, lps, tabs, vals = [], [], [], [], [], [], []
    points = np.zeros(n)
    v0 = np.full(n, np.nan)  # the value at each play's first learner decision
    nd = np.zeros(n, np.int64)  # learner decisions so far in each play
    depth = []
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
                logits, value = masked_logits(net, tile, glob, illegal)
                new = np.isnan(v0[mine])
                v0[mine[new]] = value.numpy()[new]
                vals.append(value)
                lp_all = torch.log_softmax(logits, 1)
                act = torch.multinomial(masked_probs(lp_all, illegal), 1, generator=gen).squeeze(1)
                lps.append(lp_all.gather(1, act[:, None]).squeeze(1))
            actions[mine] = act.numpy()
            tiles.append(tile)
            globs.append(glob)
            masks.append(illegal)
            acts.append(act)
            tabs.append(mine)
            depth.append(nd[mine].copy())
            nd[mine] += 1
        if other.size:
            actions[other] = rule(env.obs[other], env.masks[other], seats[other])
        env.step(actions)
        done = np.flatnonzero(env.terminated)
        points[done] = env.results.scores[done, chair[done]]
    g = points.reshape(b, k)
    others = (g.sum(1, keepdims=True) - g) / (k - 1)
    return {
        "tile": torch.cat(tiles), "glob": torch.cat(globs), "illegal": torch.cat(masks),
        "actions": torch.cat(acts), "old_logp": torch.cat(lps), "values": torch.cat(vals),
        "table": np.concatenate(tabs), "depth": np.concatenate(depth), "points": points, "v0": v0,
        "others": others, "adv_table": ((g - others).reshape(-1) * SCALE).astype(np.float32),
    }  # fmt: skip


def advantages(p: dict, b: int, k: int, fixed_c: float | None) -> dict:
    """Per learner decision of the plays ``p`` (:func:`play_deals`): the ``returns`` (its play's points times
    1/32) and the advantages ``group`` (its play's ``adv_table``), ``critic`` (return less the value) and
    ``both`` (the critic's less ``c`` times the deal's luck the critic missed, estimated from the other plays;
    ``coef``: c per stage of a play, ``fixed_c`` or fitted where None)."""
    others, tab_all = p["others"], p["table"]
    ret = torch.from_numpy((p["points"] * SCALE).astype(np.float32)[tab_all])
    # the deal's luck the critic missed at the start, estimated from the other plays of the deal
    vk = p["v0"].reshape(b, k)
    seen = np.isfinite(vk)
    vz = np.where(seen, vk, 0.0)
    cnt = seen.sum(1, keepdims=True) - seen  # other plays with a learner decision
    v0_others = np.where(cnt > 0, (vz.sum(1, keepdims=True) - vz) / np.maximum(cnt, 1), 0.0)
    resid = np.where(cnt > 0, others * SCALE - v0_others, 0.0).reshape(-1).astype(np.float32)
    adv_group = torch.from_numpy(p["adv_table"][tab_all])
    adv_critic = ret - p["values"]
    r_all = torch.from_numpy(resid[tab_all])
    # c per stage of the play (learner decisions so far: 0, 1-2, 3-5, 6-11, 12+): the part of the deal's
    # luck the critic has already seen by then is in V_t, so later decisions want less of the group term
    stage = torch.from_numpy(np.searchsorted(STAGES, p["depth"], side="right") - 1)
    coef = torch.zeros(len(STAGES))
    for j in range(len(STAGES)):
        sel = stage == j
        if fixed_c is not None:
            coef[j] = fixed_c
        elif sel.sum() > 1 and r_all[sel].var() > 0:
            x, y = r_all[sel], adv_critic[sel]
            cov = ((x - x.mean()) * (y - y.mean())).mean() / x.var(unbiased=False)
            coef[j] = float(cov.clamp(0.0, 1.0))
    adv_both = adv_critic - coef[stage] * r_all
    return {"returns": ret, "group": adv_group, "critic": adv_critic, "both": adv_both, "coef": coef}


def as_batch(p: dict) -> dict:
    """The learner's decisions of the plays ``p`` as the numpy batch :func:`lab.probes.grad_noise.rollout_chunks`
    reads (``tile``, ``glob``, ``masks``: the legal mask, ``actions``)."""
    return {"tile": p["tile"].numpy(), "glob": p["glob"].numpy(), "masks": (~p["illegal"]).numpy(),
            "actions": p["actions"].numpy()}  # fmt: skip


def accumulate_step(
    net: ann.Net, opt: torch.optim.Optimizer, p: dict, adv: torch.Tensor, step: bool, m: int
) -> tuple[float, float, int]:
    """``--accumulate``: add ``1/m`` times the gradient of ``-mean(A_hat log pi(a|s))`` over the plays ``p`` (at
    ratio 1: on-policy; ``A_hat`` the advantages over their standard deviation, as the PPO steps scale them) to
    ``.grad``; where ``step``, clip the summed gradient to norm 0.5, take one Adam step and return the step's
    approximate KL on these plays' decisions (and its clip fraction at 0.2) with 1 step, else ``(0, 0, 0)``."""
    ad = adv / (adv.std() + 1e-8)
    batch = as_batch(p)
    n = ad.shape[0]
    for sl, _, lp, _, _ in rollout_chunks(net, batch, torch.device("cpu")):
        (-(ad[sl] * lp).sum() / (n * m)).backward()
    if not step:
        return 0.0, 0.0, 0
    torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
    opt.step()
    opt.zero_grad(set_to_none=True)
    kl = clipped = 0.0
    with torch.no_grad():
        for sl, _, lp, _, _ in rollout_chunks(net, batch, torch.device("cpu")):
            log_ratio = lp - p["old_logp"][sl]
            kl += float(((log_ratio.exp() - 1) - log_ratio).sum())
            clipped += float(((log_ratio.exp() - 1).abs() > 0.2).sum())
    return kl / n, clipped / n, 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder of log.csv and the policies (created)")
    ap.add_argument("--init-from", default="agents/zoo/ens5-2026-12-05.safetensors")
    ap.add_argument("--seed", type=int, default=53)
    ap.add_argument("--iterations", type=int, default=580)
    ap.add_argument("--groups", type=int, default=128, help="deals per iteration")
    ap.add_argument("--replays", type=int, default=8, help="plays of each deal (K >= 2)")
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--minibatch-size", type=int, default=4096)
    ap.add_argument("--threads", type=int, default=2, help="Numba and torch threads")
    ap.add_argument("--baseline", choices=("group", "critic", "both"), default="group")
    ap.add_argument(
        "--deal-coef",
        default="auto",
        help="c of --baseline both: a number in [0, 1], or auto (fitted per stage)",
    )
    ap.add_argument("--vf-coef", type=float, default=0.5, help="value loss weight (critic, both)")
    ap.add_argument("--value-warmup", type=int, default=0, help="first iterations train the value head alone")
    ap.add_argument("--time-budget-s", type=float, default=None, help="stop after this many seconds")
    ap.add_argument(
        "--train-only",
        default="",
        help="comma-separated parameter names to train, the rest frozen (e.g. tile_head.bias,other_head.bias)",
    )
    ap.add_argument(
        "--accumulate",
        type=int,
        default=0,
        help="M > 0: instead of PPO's epochs, one Adam step per M iterations on their summed gradient (group only)",
    )
    a = ap.parse_args()
    if a.replays < 2 or a.groups < 1 or a.iterations < 1:
        raise SystemExit("--replays must be >= 2, --groups and --iterations >= 1")
    try:
        fixed_c = None if a.deal_coef == "auto" else float(a.deal_coef)
    except ValueError:
        raise SystemExit(f"--deal-coef must be auto or a number in [0, 1], not {a.deal_coef!r}") from None
    if (fixed_c is not None and not 0.0 <= fixed_c <= 1.0) or a.vf_coef < 0 or a.value_warmup < 0:
        raise SystemExit("--deal-coef must be auto or in [0, 1], --vf-coef and --value-warmup >= 0")
    if a.accumulate < 0 or (a.accumulate and a.baseline != "group"):
        raise SystemExit(
            f"--accumulate must be >= 0 and needs --baseline group, got {a.accumulate}, {a.baseline}"
        )
    use_critic = a.baseline != "group"
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    ann.set_torch_threads(a.threads)  # after numba's threading layer starts, so it lasts
    rng = np.random.default_rng([a.seed, 7])
    gen = torch.Generator().manual_seed(a.seed)
    net = ann.load(a.init_from)
    if a.train_only:  # the other parameters stay as loaded (no gradient is computed for them)
        wanted = a.train_only.split(",")
        names = dict(net.named_parameters())
        if unknown := [w for w in wanted if w not in names]:
            raise SystemExit(f"--train-only: no parameter {unknown} in {a.init_from} (it has {list(names)})")
        for name, q in names.items():
            q.requires_grad_(name in wanted)
    opt = torch.optim.Adam([q for q in net.parameters() if q.requires_grad], lr=a.lr, eps=1e-5)
    head = {id(q) for q in net.value_head.parameters()}
    trunk = [q for q in net.parameters() if id(q) not in head]
    b, k = a.groups, a.replays
    n = b * k
    rules = RuleConfig(min_fan=8, illegal="raise")
    env = VectorEnv(n, seed=a.seed, rules=rules, threads=a.threads, obs_dtype=np.uint8, after_schedule="stop")
    rule = RulePolicy(n, threads=a.threads)
    clip = 0.2
    t0 = time.time()
    with open(out / "log.csv", "w") as log:
        log.write(
            "iteration,seconds,decisions,points_per_hand,adv_std,adv_nonzero,approx_kl,clipfrac,"
            "std_group,std_critic,std_both,explained_var,c_stages\n"
        )
        for it in range(1, a.iterations + 1):
            p = play_deals(net, env, rule, rng, gen, b, k)
            points, adv_table = p["points"], p["adv_table"]
            adv_s = advantages(p, b, k, fixed_c)
            ret, v_all, coef = adv_s["returns"], p["values"], adv_s["coef"]
            adv_group, adv_critic, adv_both = adv_s["group"], adv_s["critic"], adv_s["both"]
            adv = adv_s[a.baseline]
            ev = explained_variance(v_all.numpy(), ret.numpy())
            warm = use_critic and it <= a.value_warmup
            tile, glob, illegal_all = p["tile"], p["glob"], p["illegal"]
            act_all, old = p["actions"], p["old_logp"]
            m = adv.shape[0]
            kl_sum = clip_sum = steps = 0.0
            if a.accumulate:  # one step per --accumulate iterations, on the sum of their gradients at ratio 1
                step = it % a.accumulate == 0
                kl_sum, clip_sum, steps = accumulate_step(net, opt, p, adv, step, a.accumulate)
                if step:
                    ann.save(net, out / f"policy_s{it // a.accumulate:03d}.safetensors")
            else:  # PPO-clip epochs over minibatches
                for _ in range(a.epochs):
                    perm = torch.from_numpy(rng.permutation(m))
                    for s in range(0, m, a.minibatch_size):
                        idx = perm[s : s + a.minibatch_size]
                        logits, v = masked_logits(net, tile[idx], glob[idx], illegal_all[idx])
                        lp = torch.log_softmax(logits, 1).gather(1, act_all[idx, None]).squeeze(1)
                        log_ratio = lp - old[idx]
                        ratio = log_ratio.exp()
                        ad = adv[idx] / (adv[idx].std() + 1e-8)
                        loss = torch.max(-ad * ratio, -ad * ratio.clamp(1 - clip, 1 + clip)).mean()
                        if use_critic:
                            v_loss = 0.5 * torch.nn.functional.mse_loss(v, ret[idx])
                            loss = a.vf_coef * v_loss if warm else loss + a.vf_coef * v_loss
                        opt.zero_grad(set_to_none=True)
                        loss.backward()
                        if warm:  # the value head alone: Adam skips parameters without a gradient
                            for q in trunk:
                                q.grad = None
                        torch.nn.utils.clip_grad_norm_(net.parameters(), 0.5)
                        opt.step()
                        with torch.no_grad():
                            kl_sum += ((ratio - 1) - log_ratio).mean().item()
                            clip_sum += ((ratio - 1).abs() > clip).float().mean().item()
                        steps += 1
            log.write(
                f"{it},{time.time() - t0:.1f},{m},{points.mean():.3f},{adv_table.std():.4f},"
                f"{(adv_table != 0).mean():.3f},{kl_sum / max(steps, 1):.3e},{clip_sum / max(steps, 1):.4f},"
                f"{adv_group.std():.4f},{adv_critic.std():.4f},{adv_both.std():.4f},{ev:.4f},"
                f"{' '.join(f'{c:.2f}' for c in coef.tolist())}\n"
            )
            log.flush()
            if a.time_budget_s is not None and time.time() - t0 >= a.time_budget_s:
                print(f"time budget reached at iteration {it}")
                break
            if it % 25 == 0:
                ann.save(net, out / f"policy_i{it:04d}.safetensors")
    ann.save(net, out / "policy.safetensors")
    print(f"{it} iterations in {time.time() - t0:.0f} s; {out / 'policy.safetensors'}")


if __name__ == "__main__":
    main()
