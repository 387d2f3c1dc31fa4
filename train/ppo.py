"""Masked PPO self-play for MCR on the VectorEnv, CleanRL style: ``python -m train.ppo --help``.

In the order of the code: the **settings** (:class:`PPOConfig`; PPO's own here, the others beside the code
that reads them), the **env** and **storage** and the **rollout** (:meth:`Collector.collect`: ``num_envs``
uint8 tables step ``rollout_steps`` times, each chair played by the learner or an opponent of
:mod:`train.opponents`; the behaviour log-probability of each sampled action is stored as PPO's "old" one),
**GAE** (:func:`gae_kernel`, per chair over its own decisions), the **update** (:func:`ppo_update`), and the
**network** and **logging** in :class:`Trainer` (:meth:`Trainer.run`). The network is :mod:`agents.nn`'s,
its masked policy :mod:`train.masked`'s. Around it: :mod:`train.run` (settings checks, checkpoints and exact
resume, logs, evaluation) and the research options, each with its settings in its module: the oracle critic
(``--critic oracle``, :mod:`train.critic`), the anchor KL (``--anchor-kl``, :mod:`train.anchor`), OpenSkill
pool ratings (``--pool-ratings``, :mod:`train.opponents`) and Ray workers (``--workers N``,
:mod:`train.distributed`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from agents import nn as ann
from agents import waits as W
from agents.rule import RulePolicy
from mjenv._jit import njit
from mjenv.observation import OBS_SIZE, ORACLE_SIZE
from mjenv.rules import RuleConfig
from mjenv.vector import NUM_ACTIONS, VectorEnv
from train import opponents, run
from train.anchor import AnchorKL, AnchorSettings
from train.critic import CRITICS, CriticSettings, OracleCritic, bootstrap_values, make_critic  # noqa: F401
from train.distributed import DistributedCollector, DistributedSettings
from train.masked import _NEG, _SPAN, masked_logits, masked_probs  # noqa: F401
from train.opponents import OWN_LEARNER, OWN_RULE, OpponentPool, OpponentSettings  # noqa: F401
from train.run import check_config, explained_variance, net_config, read_checkpoint  # noqa: F401


# ------------------------------------------------------------------------------------------------ settings
@dataclass
class PPOConfig(AnchorSettings, CriticSettings, DistributedSettings, OpponentSettings, run.RunSettings):
    """Settings of a PPO run (``python -m train.ppo --help`` lists them with these defaults)."""

    seed: int = 0
    """seed of the tables, the chair assignments, the initial weights and the sampling"""
    updates: int = 1200
    """number of PPO updates (each: one rollout, then ``epochs`` passes)"""
    num_envs: int = 512
    """tables of the VectorEnv"""
    rollout_steps: int = 64
    """env steps per rollout (one decision at every table per step)"""
    min_fan: int = 8
    """RuleConfig.min_fan of the training tables (lower it for denser rewards)"""
    channels: int = 16
    """agents.nn network: per-tile width"""
    hidden: int = 128
    """agents.nn network: hidden width"""
    arch: str = "mlp"
    """agents.nn network: ``mlp`` (engineered features, dense layers) or ``planes`` (the observation's tile
    planes through a residual tower; lab/notebook.md, "Networks")"""
    blocks: int | None = None
    """planes only: residual blocks (default 2)"""
    with_features: bool = False
    """planes only: also read the engineered features (the planes alone imitate the rule agent poorly)"""
    wait_inputs: bool = False
    """planes only: the network also reads the values of the waits each discard leaves (agents.nn
    ``NNConfig.wait_inputs``); a network from ``init_from`` without them gains them with zero weights (the same
    policy at the start)"""
    rollout_check: bool = False
    """the learner's chairs (and the pool snapshots') play their sampled action through the wait check of
    ``agents.nn:baseline`` (agents.waits.BASELINE_CHECK, under the training tables' rules): the table takes the
    checked action, PPO learns from the sampled one and its probability. The check is then part of the
    environment and the policy learns around it, to be played with the check"""
    init_from: str | None = None
    """agents.nn checkpoint (e.g. from train.bc, either architecture) to start from; its config replaces
    arch/channels/hidden/blocks/with_features"""
    lr: float = 1.5e-3
    """Adam learning rate (a BC policy is confident: smaller rates barely move it, see lab/notebook.md)"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over ``updates``"""
    gamma: float = 1.0
    gae_lambda: float = 0.95
    reward_scale: float = 1 / 32
    """rewards are the hand's payments (score deltas) times this"""
    epochs: int = 3
    minibatch_size: int = 4096
    clip_coef: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.002
    max_grad_norm: float = 0.5
    value_warmup: int = 10
    """updates at the start that train the value head alone (the rest of the network frozen): a BC
    checkpoint's value head is untrained, and advantages from it would first push the imitated policy around"""
    lr_warmup: int = 0
    """updates after the value warm-up over which the learning rate rises linearly to ``lr`` (1/N of it first):
    Adam's first steps on parameters frozen until then are full-size in every coordinate, and from a BC
    planes checkpoint the first full update moved the policy by a KL of 0.09 and halved its points"""
    target_kl: float | None = 0.03
    """stop the epochs of an update early when the approximate KL exceeds this (None: never)"""


# ------------------------------------------------------------------------------------------------ rollout
class Collector:
    """The env with its chairs' owners and opponents; :meth:`collect` returns one rollout as numpy (so a Ray
    actor can hold one: :mod:`train.distributed`)."""

    def __init__(self, cfg: PPOConfig) -> None:
        self.cfg = cfg
        n = cfg.num_envs
        self.env = VectorEnv(
            n, seed=cfg.seed, rules=RuleConfig(min_fan=cfg.min_fan, illegal="raise"), threads=cfg.threads,
            obs_dtype=np.uint8, oracle=cfg.critic == "oracle",
        )  # fmt: skip
        self.rng = np.random.default_rng([cfg.seed, 1])
        self.rule = RulePolicy(n, threads=cfg.threads) if "rule" in cfg.opponents else None
        # the check the learner's actions go through (rollout_check), valued under the tables' own rules
        self.check = W.BASELINE_CHECK if cfg.rollout_check else None
        self.owners = np.zeros((n, 4), np.int16)  # who plays each chair (train.opponents' OWN_* codes)
        self.pool_slots = 0  # filled slots of the opponent pool (set by the trainer)
        self.pool_probs: np.ndarray | None = None  # pool_ratings: how often each slot plays (else uniform)
        self.env.reset()
        self.assign(np.arange(n))

    def assign(self, tables: np.ndarray) -> None:
        """Draw the owners of the four chairs of ``tables`` for their next hand."""
        if len(tables):
            slots, probs = self.pool_slots, self.pool_probs
            self.owners[tables] = opponents.draw_owners(self.cfg, self.rng, len(tables), slots, probs)

    def collect(
        self, net: ann.Net, pool: list[ann.Net], gen: torch.Generator,
        device: torch.device, timers: dict[str, float], critic: OracleCritic | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Play ``rollout_steps`` steps; return the learner's decisions with advantages and returns. With an
        oracle ``critic`` the values come from it, reading the env's oracle block beside the features."""
        cfg, env, t = self.cfg, self.env, time.perf_counter
        n, steps = cfg.num_envs, cfg.rollout_steps
        # storage: one row per learner decision, at most one per table and step
        cap, nc = n * steps, net.config  # the inputs of the learner's architecture (pool snapshots share it)
        tile0, glob0 = ann.input_features(nc, env.obs[:1], env.masks[:1])
        obs_b, mask_b = np.empty((cap, OBS_SIZE), np.uint8), np.empty((cap, NUM_ACTIONS), np.bool_)
        tile_b = np.empty((cap, *tile0.shape[1:]), tile0.numpy().dtype)
        glob_b = np.empty((cap, *glob0.shape[1:]), glob0.numpy().dtype)
        orc_b = np.empty((cap if critic is not None else 0, ORACLE_SIZE), np.uint8)
        act_b, tab_b = np.empty(cap, np.int64), np.empty(cap, np.int32)
        logp_b, val_b, rew_b = np.empty(cap, np.float32), np.empty(cap, np.float32), np.zeros(cap, np.float32)
        done_b = np.zeros(cap, np.bool_)  # the hand ended after this decision
        nxt_b = np.full(cap, -1, np.int64)  # the same chair's next decision
        last = np.full((n, 4), -1, np.int64)  # each chair's latest decision
        rows, actions, k = np.arange(n), np.empty(n, np.int64), 0
        hand_owners, hand_scores, hand_winners = [], [], []  # every finished hand's
        for _ in range(steps):
            t0 = t()
            seats = env.seats
            own = self.owners[rows, seats]
            lr_rows = np.flatnonzero(own == OWN_LEARNER)
            m = lr_rows.size
            if m:  # the learner's chairs: sample the policy, store the decision
                ob_l, mk_l = env.obs[lr_rows], env.masks[lr_rows]
                tile, glob = ann.input_features(nc, ob_l, mk_l)
                illegal = ~torch.from_numpy(mk_l).to(device)
                with torch.inference_mode():
                    logits, value = masked_logits(net, tile.to(device), glob.to(device), illegal)
                    logp_all = torch.log_softmax(logits, 1)
                    a = torch.multinomial(masked_probs(logp_all, illegal), 1, generator=gen).squeeze(1)
                    lp = logp_all.gather(1, a[:, None]).squeeze(1)
                    if critic is not None:  # the value from the hidden state too (the actor never saw it)
                        orc_l = orc_b[k : k + m] = env.oracle[lr_rows]
                        value = critic(tile.to(device), glob.to(device), torch.from_numpy(orc_l).to(device))
                sl = slice(k, k + m)
                a_np = actions[lr_rows] = a.cpu().numpy()
                if self.check is not None:  # the table takes the checked action; the sampled one is learned
                    actions[lr_rows] = self.check.apply(ob_l, mk_l, a_np, env.rules)
                obs_b[sl], mask_b[sl], tile_b[sl], glob_b[sl] = ob_l, mk_l, tile.numpy(), glob.numpy()
                act_b[sl], tab_b[sl], logp_b[sl] = a_np, lr_rows, lp.cpu().numpy()
                val_b[sl] = value.cpu().numpy()
                prev = last[lr_rows, seats[lr_rows]]
                nxt_b[prev[prev >= 0]] = np.arange(k, k + m)[prev >= 0]
                last[lr_rows, seats[lr_rows]] = np.arange(k, k + m)
                k += m
            opponents.act(self, own, actions, pool, gen, device)  # the other chairs: rule, random, pool
            t1 = t()
            timers["inference_s"] += t1 - t0
            env.step(actions)
            t2 = t()
            timers["env_s"] += t2 - t1
            has = last >= 0  # every chair's latest decision earns what the chair is paid now
            rew_b[last[has]] += env.rewards[has] * cfg.reward_scale
            term = np.flatnonzero(env.terminated)
            if term.size:  # the hands that ended: terminal decisions, new owners for the next hands
                lt = last[term]
                done_b[lt[lt >= 0]] = True
                hand_owners.append(self.owners[term].copy())
                hand_scores.append(env.results.scores[term].copy())
                hand_winners.append(env.results.winner[term].copy())
                last[term] = -1
                self.assign(term)
            timers["other_s"] += t() - t2
        t3 = t()
        tab, seat = np.nonzero(last >= 0)
        boot = np.zeros(k, np.float32)
        if tab.size:  # the chains the rollout's end cut: the value of the chair's state now
            boot[last[tab, seat]] = bootstrap_values(net, critic, env, tab, seat, device)
        adv = np.zeros(k, np.float32)
        gae_kernel(rew_b[:k], val_b[:k], done_b[:k], nxt_b[:k], boot, cfg.gamma, cfg.gae_lambda, adv)
        timers["gae_s"] += t() - t3
        ho = np.concatenate(hand_owners) if hand_owners else np.zeros((0, 4), np.int16)
        hs = np.concatenate(hand_scores) if hand_scores else np.zeros((0, 4), np.int32)
        won = np.concatenate(hand_winners or [np.zeros(0, np.int32)])[:, None] == np.arange(4)
        is_l = ho == OWN_LEARNER
        return {
            "obs": obs_b[:k], "tile": tile_b[:k], "glob": glob_b[:k], "masks": mask_b[:k], "oracle": orc_b[:k],
            "actions": act_b[:k], "logp": logp_b[:k], "tables": tab_b[:k], "done": done_b[:k], "next": nxt_b[:k],
            "values": val_b[:k], "advantages": adv, "returns": adv + val_b[:k],
            "decisions": n * steps, "hands": len(ho), "learner_hands": int(is_l.sum()),
            "learner_points": float(hs[is_l].sum()), "learner_wins": int((is_l & won).sum()),
            "hand_owners": ho, "hand_scores": hs,
        }  # fmt: skip


# ------------------------------------------------------------------------------------------------ GAE
@njit
def gae_kernel(rew, val, done, nxt, boot, gamma, lam, adv):
    """GAE over chains of decisions: ``nxt[k]`` is the chair's next decision (-1: none in this rollout);
    ``done[k]``: the hand ended before it; a cut chain (``nxt = -1``, not done) bootstraps from ``boot[k]``.
    ``nxt[k] > k`` always, so one backward pass suffices. Writes ``adv``; returns are ``adv + val``."""
    for k in range(rew.shape[0] - 1, -1, -1):
        if done[k]:
            nv = na = 0.0
        elif nxt[k] >= 0:
            nv = val[nxt[k]]
            na = adv[nxt[k]]
        else:
            nv = boot[k]
            na = 0.0
        adv[k] = rew[k] + gamma * nv - val[k] + gamma * lam * na


# ------------------------------------------------------------------------------------------------ update
def ppo_losses(
    logits: torch.Tensor, v: torch.Tensor, illegal: torch.Tensor, act: torch.Tensor, old_lp: torch.Tensor,
    adv: torch.Tensor, ret: torch.Tensor, clip_coef: float, logp_all: torch.Tensor | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """One minibatch's ``(pg_loss, v_loss, entropy, log_ratio, ratio)``: the clipped policy loss on the
    minibatch's normalised advantages, half the squared value error, the mean entropy, and the log-ratio and
    ratio to the behaviour log-probs ``old_lp``. ``logp_all``: the logits' log-softmax, if computed already."""
    if logp_all is None:
        logp_all = torch.log_softmax(logits, 1)
    lp = logp_all.gather(1, act.unsqueeze(1)).squeeze(1)
    entropy = -(masked_probs(logp_all, illegal) * logp_all).sum(1).mean()
    log_ratio = lp - old_lp
    ratio = log_ratio.exp()
    if adv.numel() > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    pg_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - clip_coef, 1 + clip_coef)).mean()
    v_loss = 0.5 * F.mse_loss(v, ret)
    return pg_loss, v_loss, entropy, log_ratio, ratio


def ppo_update(
    net: ann.Net, opt: torch.optim.Optimizer, batch: dict[str, Any], cfg: PPOConfig,
    rng: np.random.Generator, device: torch.device, warmup: bool = False, critic: OracleCritic | None = None,
    anchor: AnchorKL | None = None,
) -> dict[str, float]:  # fmt: skip
    """``epochs`` passes of minibatch PPO over ``batch`` (its behaviour log-probs are the "old" ones);
    ``warmup``: train the value head only. An oracle ``critic`` is trained instead of the actor's value head
    (gradients clipped apart); an ``anchor`` adds ``anchor.weight * KL(anchor || policy)`` to the loss."""
    k = batch["actions"].shape[0]
    keys = ("tile", "glob", "actions", "logp", "advantages", "returns")
    tile_all, glob_all, act, old_lp, adv_all, ret = (torch.from_numpy(batch[key]).to(device) for key in keys)
    illegal_all = ~torch.from_numpy(batch["masks"]).to(device)  # once per rollout, not per minibatch
    orc_all = torch.from_numpy(batch["oracle"]).to(device) if critic is not None else None
    head = {id(p) for p in (critic.parameters() if critic is not None else net.value_head.parameters())}
    frozen = [p for p in net.parameters() if id(p) not in head]
    stats = dict.fromkeys(("pg_loss", "v_loss", "entropy", "approx_kl", "clipfrac"), 0.0)
    n_mb = epochs_done = 0
    # the gathered minibatch inputs go into the same buffers every time (out=): no fresh 25 MiB per minibatch
    mb = min(cfg.minibatch_size, k)
    tile_buf = tile_all.new_empty((mb, *tile_all.shape[1:]))
    glob_buf = glob_all.new_empty((mb, *glob_all.shape[1:]))
    illegal_buf = illegal_all.new_empty((mb, *illegal_all.shape[1:]))
    if anchor is not None:  # the anchor's policy, once per update: the rows are the same every epoch
        stats["anchor_kl"] = 0.0
        anchor.prepare(tile_all, glob_all, illegal_all, mb)
    for _ in range(cfg.epochs):
        perm = torch.from_numpy(rng.permutation(k)).to(device)
        kl_sum, kl_n = 0.0, 0
        for s in range(0, k, cfg.minibatch_size):
            idx = perm[s : s + cfg.minibatch_size]
            # index_select gathers whole rows (memcpy); advanced indexing (``tile_all[idx]``) was 3x slower
            m = idx.shape[0]
            illegal = torch.index_select(illegal_all, 0, idx, out=illegal_buf[:m])
            tile = torch.index_select(tile_all, 0, idx, out=tile_buf[:m])
            glob = torch.index_select(glob_all, 0, idx, out=glob_buf[:m])
            logits, v = masked_logits(net, tile, glob, illegal)
            if critic is not None:
                v = critic(tile, glob, orc_all[idx])
            logp_all = torch.log_softmax(logits, 1)
            pg_loss, v_loss, entropy, log_ratio, ratio = ppo_losses(
                logits, v, illegal, act[idx], old_lp[idx], adv_all[idx], ret[idx], cfg.clip_coef, logp_all
            )
            if warmup:
                loss = cfg.vf_coef * v_loss
            else:
                loss = pg_loss - cfg.ent_coef * entropy + cfg.vf_coef * v_loss
            if anchor is not None:
                anchor_kl = anchor.kl(idx, logp_all)
                stats["anchor_kl"] += anchor_kl.item()
                if not warmup:
                    loss = loss + anchor.weight * anchor_kl
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if warmup:  # Adam skips parameters without a gradient: only the value head moves
                for p in frozen:
                    p.grad = None
            torch.nn.utils.clip_grad_norm_(net.parameters(), cfg.max_grad_norm)
            if critic is not None:
                torch.nn.utils.clip_grad_norm_(critic.parameters(), cfg.max_grad_norm)
            opt.step()
            with torch.no_grad():
                kl = ((ratio - 1) - log_ratio).mean().item()
                stats["clipfrac"] += ((ratio - 1).abs() > cfg.clip_coef).float().mean().item()
            for key, val in (("pg_loss", pg_loss), ("v_loss", v_loss), ("entropy", entropy)):
                stats[key] += val.item()
            stats["approx_kl"] += kl
            kl_sum, kl_n, n_mb = kl_sum + kl, kl_n + 1, n_mb + 1
        epochs_done += 1
        if cfg.target_kl is not None and kl_sum / max(kl_n, 1) > cfg.target_kl:
            break
    out = {key: val / max(n_mb, 1) for key, val in stats.items()}
    out["epochs"] = float(epochs_done)
    return out


# ------------------------------------------------------------------------------------------------ trainer
class Trainer:
    """The state of a run: network, optimizer, opponent pool, collector, RNGs, counters. :meth:`run` trains."""

    def __init__(self, cfg: PPOConfig) -> None:
        self.cfg = check_config(cfg)
        self.device = run.setup_process(cfg)  # torch threads, flushed subnormals, allocator settings
        self.run_dir = Path(cfg.run_dir)
        ckpt = run.read_for_resume(cfg) if cfg.resume else None  # refuses settings the checkpoint fixes
        if cfg.init_from is not None and ckpt is None:
            net = ann.load(cfg.init_from)
            if cfg.wait_inputs and not net.config.wait_inputs:
                net = ann.add_wait_inputs(net)
        else:  # a seeded fresh network (a resumed run's weights come from its checkpoint below)
            nc = ann.NNConfig(**json.loads(ckpt[1]["net_config"])) if ckpt is not None else net_config(cfg)
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(cfg.seed)
                net = ann.build_net(nc)
        self.net = net.to(self.device)
        self.anchor = (
            AnchorKL(cfg.init_from, cfg.anchor_kl, self.device, cfg.wait_inputs)
            if cfg.anchor_kl > 0
            else None
        )
        self.critic = make_critic(cfg, net.config, self.device)  # None: the actor's value head
        params = [*self.net.parameters(), *(self.critic.parameters() if self.critic is not None else [])]
        # foreach: one multi-tensor kernel per Adam operation instead of a loop over the 16 parameters (the
        # default on CUDA; on CPU it was 1.6x faster per step and gives bitwise the same parameters)
        self.opt = torch.optim.Adam(params, lr=cfg.lr, eps=1e-5, foreach=True)
        self.rng = np.random.default_rng([cfg.seed, 2])  # the minibatches' order
        self.gen = torch.Generator(device="cpu" if self.device.type == "cpu" else self.device)  # sampling
        self.gen.manual_seed(cfg.seed)
        self.col = Collector(cfg)
        self.dist = DistributedCollector(self) if cfg.workers > 0 else None  # rollouts from Ray actors
        self.opponents = OpponentPool(cfg)
        self.pool = self.opponents.nets
        self.counters = {"update": 0, "decisions": 0, "learner_decisions": 0, "hands": 0, "seconds": 0.0}
        if ckpt is not None:
            run.restore_checkpoint(self, *ckpt)

    def step(self, timers: dict[str, float]) -> dict[str, float]:
        """One update: the learning rate, a rollout, the PPO epochs, the pool; returns the update's stats."""
        cfg, u, c = self.cfg, self.counters["update"], self.counters
        scale = 1.0 - u / cfg.updates if cfg.anneal_lr else 1.0
        if cfg.lr_warmup and u >= cfg.value_warmup:
            scale *= min(1.0, (u - cfg.value_warmup + 1) / cfg.lr_warmup)
        for g in self.opt.param_groups:
            g["lr"] = cfg.lr * scale
        if self.dist is not None:
            batch = self.dist.collect(timers)
        else:
            batch = self.col.collect(self.net, self.pool, self.gen, self.device, timers, critic=self.critic)
        t0 = time.perf_counter()
        stats = {}
        if batch["actions"].size:
            stats = ppo_update(self.net, self.opt, batch, cfg, self.rng, self.device, warmup=u < cfg.value_warmup,
                               critic=self.critic, anchor=self.anchor)  # fmt: skip
        timers["update_s"] += time.perf_counter() - t0
        c["update"] = u + 1
        c["decisions"] += batch["decisions"]
        c["learner_decisions"] += int(batch["actions"].size)
        c["hands"] += batch["hands"]
        stats.update(self.opponents.rate(batch))  # pool_ratings: the rollout's hands rate everyone
        if (u + 1) % cfg.pool_every == 0 and "pool" in cfg.opponents:
            self.opponents.add(self.net)
        self.opponents.sync(self.col)
        hands = max(batch["learner_hands"], 1)
        stats.update(
            lr=self.opt.param_groups[0]["lr"], learner_points_per_hand=batch["learner_points"] / hands,
            learner_win_rate=batch["learner_wins"] / hands, hands=float(batch["hands"]),
            value_mean=float(batch["values"].mean()) if batch["values"].size else 0.0,
            value_ev=explained_variance(batch["values"], batch["returns"]),
        )  # fmt: skip
        stats.update(batch.get("dist_stats", {}))
        return stats

    def save(self) -> None:
        run.save_checkpoint(self.run_dir / "checkpoint.safetensors", self)
        ann.save(self.net, self.run_dir / "policy.safetensors")

    def run(self, stop_after: int | None = None) -> dict[str, Any]:
        """Train until ``cfg.updates`` (or ``stop_after`` more updates: a simulated kill after saving)."""
        cfg, c = self.cfg, self.counters
        log = run.RunLog(cfg, c["update"])
        timers = dict.fromkeys(run.TIMERS, 0.0)
        end_u = cfg.updates if stop_after is None else min(cfg.updates, c["update"] + stop_after)
        t_start, dec0 = time.perf_counter(), c["decisions"]
        last_eval, row = None, {}
        try:
            while c["update"] < end_u:
                t_u = time.perf_counter()
                stats = self.step(timers)
                u = c["update"]
                c["seconds"] += time.perf_counter() - t_u
                dps = (c["decisions"] - dec0) / max(time.perf_counter() - t_start, 1e-9)
                row = {"update": u, "decisions": c["decisions"], "hands": c["hands"], "seconds": round(c["seconds"], 3),
                       "decisions_per_s": round(dps, 1), **stats}  # fmt: skip
                if cfg.eval_every and u % cfg.eval_every == 0:  # 1v3 duplicate against the rule agent
                    last_eval = run.evaluate(self.net, cfg, self.device, u)
                    row.update(last_eval)
                log.write(row)
                if cfg.snapshot_every and u % cfg.snapshot_every == 0:  # for a weight average (train.average)
                    ann.save(self.net, self.run_dir / "snapshots" / f"policy_u{u:06d}.safetensors")
                over = cfg.time_budget_s is not None and c["seconds"] >= cfg.time_budget_s
                if u % cfg.save_every == 0 or u == end_u or over:
                    self.save()
                if over:
                    break
        finally:
            log.close()
            if self.dist is not None:
                self.dist.close()
        return {"counters": dict(c), "timers": timers, "last": row, "last_eval": last_eval,
                "wall_s": time.perf_counter() - t_start}  # fmt: skip


def train(cfg: PPOConfig, stop_after: int | None = None) -> dict[str, Any]:
    """Build a :class:`Trainer` (resuming when ``cfg.resume``) and run it; returns its summary."""
    return Trainer(cfg).run(stop_after=stop_after)


def saved_config(run_dir: str | Path) -> PPOConfig:
    """The settings a run in ``run_dir`` was started with (from its checkpoint), with ``resume=True``."""
    return run.saved_settings(PPOConfig, run_dir)


def main() -> None:
    run.cli(PPOConfig, Trainer)


if __name__ == "__main__":
    main()
