"""Masked PPO self-play for MCR on the VectorEnv, in one file (CleanRL style): ``python -m train.ppo --help``.

What it does, in the order of the code
--------------------------------------
1. **Settings** (:class:`PPOConfig`, parsed by ``tyro``): every option checked before any work starts.
2. **Collection** (:class:`Collector`, :func:`Collector.collect`): ``num_envs`` tables of a
   ``VectorEnv(obs_dtype=np.uint8)`` step ``rollout_steps`` times. At each table and hand, every chair is played
   either by the learner or (with probability ``opponent_prob``, never all four) by an opponent drawn from
   ``opponents``: ``rule`` (``agents.rule``), ``random``, or ``pool`` (a frozen past checkpoint of the learner;
   a snapshot is added every ``pool_every`` updates, the oldest dropped beyond ``pool_size``). The learner samples
   from its masked categorical policy and the **behaviour log-probability of the sampled action is stored at
   collection** (PPO's "old" log-prob is never recomputed). Only the learner's decisions are trained on.
3. **Returns** (:func:`gae_kernel`): GAE per (table, chair) over that chair's own decisions: the reward of a
   decision is what the chair was paid (``rewards * reward_scale``) until its next decision; a hand's end is
   terminal. A chain cut by the end of the rollout is bootstrapped with the value of the chair's current
   observation (its own view only). Collection returns plain numpy arrays (uint8 observations), so a Ray worker
   could hold a :class:`Collector` and ship its output.
4. **Update**: ``epochs`` passes of shuffled minibatches: clipped policy loss on normalised advantages, value
   loss, entropy bonus, gradient clipping, early stop when the approximate KL exceeds ``target_kl``, linear LR
   annealing.
5. **Evaluation** every ``eval_every`` updates: 1v3 duplicate against the rule agent with :func:`mjenv.arena.
   run_arena` (``eval_walls`` walls, fixed seed): points per hand with a 95% CI.
6. **Logs and checkpoints**: TensorBoard (``run_dir/tb``), CSV (``run_dir/progress.csv``), a tqdm bar with
   decisions/s; ``run_dir/checkpoint.safetensors`` every ``save_every`` updates holds the network, the optimizer,
   the opponent pool, the whole VectorEnv state, the chair assignments, the step counters, the config and every
   RNG state (numpy, torch and the env's), with a SHA-256 of its tensors: ``--resume`` continues **exactly** as
   if the run had not been stopped. ``run_dir/policy.safetensors`` is the learner in :mod:`agents.nn`'s format
   (``mjenv eval --agent ppo=agents.nn:make ...`` with ``checkpoint=...``).

With ``workers > 0`` the rollouts come from Ray actors each holding a :class:`Collector`
(:mod:`train.distributed`, ``docs/distributed.md``); everything else is this file's code.

Decisions/s counts every decision of every table (learner and opponents) collected and trained, end to end.
"""

from __future__ import annotations

import copy
import csv
import hashlib
import json
import math
import time
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from agents import nn as ann
from agents.rule import RulePolicy
from mjenv._jit import njit
from mjenv.observation import OBS_SIZE, ORACLE_SIZE, observe_kernel, oracle_rows_kernel
from mjenv.policy import random_legal_actions
from mjenv.rules import RuleConfig
from mjenv.vector import NUM_ACTIONS, VectorEnv
from train.critic import CriticConfig, OracleCritic
from train.ratings import Ratings

CKPT_FORMAT = "mjenv-train-ppo/1"
OPPONENTS = ("rule", "random", "pool")
CRITICS = ("shared", "oracle")
OWN_LEARNER, OWN_RULE, OWN_RANDOM, OWN_POOL = 0, 1, 2, 3  # chair owner codes; pool slot j is OWN_POOL + j
_SPAN = 40.0  # legal logits are kept within this of the row's best (probabilities >= e^-40, no subnormals)
_NEG = -1e8  # finite logit of illegal actions in training (keeps entropy and gradients free of NaN)


# ------------------------------------------------------------------------------------------------ settings
@dataclass
class PPOConfig:
    """Settings of a PPO run (``python -m train.ppo --help`` lists them with these defaults)."""

    run_dir: str = "runs/ppo"
    """folder of the logs and checkpoints"""
    seed: int = 0
    """seed of the tables, the chair assignments, the initial weights and the sampling"""
    updates: int = 1200
    """number of PPO updates (each: one rollout, then ``epochs`` passes)"""
    num_envs: int = 512
    """tables of the VectorEnv"""
    rollout_steps: int = 64
    """env steps per rollout (one decision at every table per step)"""
    threads: int = 2
    """Numba threads of the env, the features and the rule agent (2 on a 2-core machine of your own; on a
    loaded or shared machine pass ``--threads 1 --torch-threads 1``: there a second thread of each waits on
    the other processes and was measured 2-4x slower end to end)"""
    torch_threads: int = 2
    """torch intra-op threads (see ``threads``; 1 on a loaded machine)"""
    min_fan: int = 8
    """RuleConfig.min_fan of the training tables (lower it for denser rewards)"""
    channels: int = 16
    """agents.nn network: per-tile width"""
    hidden: int = 128
    """agents.nn network: hidden width"""
    arch: str = "mlp"
    """agents.nn network: ``mlp`` (engineered features, dense layers) or ``planes`` (the observation's tile
    planes through a residual tower; docs/training.md, "Networks")"""
    blocks: int | None = None
    """planes only: residual blocks (default 2)"""
    with_features: bool = False
    """planes only: also read the engineered features (the planes alone imitate the rule agent poorly)"""
    init_from: str | None = None
    """agents.nn checkpoint (e.g. from train.bc, either architecture) to start from; its config replaces
    arch/channels/hidden/blocks/with_features"""
    lr: float = 1.5e-3
    """Adam learning rate (a BC policy is confident: smaller rates barely move it, see docs/training.md)"""
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
    anchor_kl: float = 0.0
    """weight of KL(anchor || policy) per decision in the loss, the anchor being the ``init_from`` network, frozen
    (0: off; logged as ``anchor_kl`` in TensorBoard): keeps PPO from a distilled student near the student, which
    plain PPO pulls back to its members' level (docs/training.md, "Distilled ensembles")"""
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
    opponent_prob: float = 0.75
    """probability that a chair (never all four of a table) is played by an opponent instead of the learner
    (0.75 with ``rule``: most tables look like the 1v3 evaluation against the rule agent)"""
    opponents: tuple[str, ...] = ("rule",)
    """opponent kinds drawn uniformly: rule, random, pool (frozen past checkpoints)"""
    pool_size: int = 8
    pool_every: int = 25
    """add a frozen copy of the learner to the pool every this many updates"""
    pool_ratings: bool = False
    """OpenSkill ratings of the learner, rule, random and every pool snapshot (train/ratings.py): pool chairs
    play the snapshots that still beat the learner more often (PFSP), and the ratings go to the logs"""
    eval_every: int = 100
    """duplicate evaluation against the rule agent every this many updates (0: never)"""
    eval_walls: int = 200
    eval_seed: int = 12345
    keep_eval_policies: bool = True
    """write the learner of every evaluation to run_dir/evals/policy_uNNNNNN.safetensors (~0.3 MB each)"""
    save_every: int = 25
    """write the checkpoint every this many updates (and at the end)"""
    device: str = "auto"
    """auto (CUDA when present), cpu, cuda, cuda:N"""
    resume: bool = False
    """continue from run_dir/checkpoint.safetensors (exactly); on the command line every setting not given
    again is the checkpoint's (``--run-dir D --resume --time-budget-s T`` continues a run with a larger budget)"""
    progress: bool = True
    workers: int = 0
    """Ray workers collecting rollouts (0: this process, the loop above). N > 0: N actors of ``num_envs`` tables
    each, one update of staleness; see train/distributed.py (needs the distributed extra: ray)"""
    ray_address: str | None = None
    """Ray cluster to join (e.g. auto, host:6379); default a local Ray"""
    ray_num_cpus: int | None = None
    """CPUs of the local Ray (default: workers)"""
    ray_ship_code: bool = False
    """upload the checkout to the workers (runtime_env working_dir) instead of using it at the same path"""
    time_budget_s: float | None = None
    """stop (after saving) once this run's training time (``seconds`` in the logs, summed over resumes) reaches
    this: equal-time comparisons (docs/training.md, "Ablations"); None: train for ``updates``"""
    critic: str = "shared"
    """value function: ``shared`` (the actor network's value head, observation only) or ``oracle`` (a separate
    network that also reads the hidden state, ``VectorEnv(oracle=True)``; training only, never in the actor:
    train/critic.py)"""
    critic_channels: int = 32
    """oracle critic: per-tile width"""
    critic_hidden: int = 256
    """oracle critic: MLP width"""


# a setting added after a checkpoint was written resumes at its default
_DEFAULTS = {f.name: f.default for f in fields(PPOConfig) if f.default is not MISSING}


def net_config(cfg: PPOConfig) -> ann.NNConfig:
    """The network of a run that does not start from a checkpoint."""
    if cfg.arch == "mlp":  # blocks / with_features are planes settings: NNConfig refuses them for the mlp
        return ann.NNConfig(cfg.channels, cfg.hidden, blocks=cfg.blocks, with_features=cfg.with_features)
    return ann.NNConfig(
        cfg.channels, cfg.hidden, arch=cfg.arch, blocks=cfg.blocks, with_features=cfg.with_features
    )


def check_config(cfg: PPOConfig) -> PPOConfig:
    """Raise ``TypeError``/``ValueError`` naming the first bad setting (before any work starts)."""
    ints = {
        "seed": 0, "updates": 1, "num_envs": 1, "rollout_steps": 1, "threads": 1, "torch_threads": 1,
        "min_fan": 0, "channels": 1, "hidden": 1, "epochs": 1, "minibatch_size": 1, "pool_size": 1,
        "pool_every": 1, "value_warmup": 0, "lr_warmup": 0, "eval_every": 0, "eval_walls": 1, "eval_seed": 0, "save_every": 1,
        "workers": 0, "critic_channels": 1, "critic_hidden": 1,
    }  # fmt: skip
    for name, lo in ints.items():
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"PPOConfig.{name} must be an int, got {type(v).__name__}")
        if v < lo:
            raise ValueError(f"PPOConfig.{name} must be >= {lo}, got {v}")
    floats = {
        "lr": (0, math.inf), "gamma": (0, 1), "gae_lambda": (0, 1), "reward_scale": (0, math.inf),
        "clip_coef": (0, math.inf), "vf_coef": (0, math.inf), "ent_coef": (0, math.inf), "anchor_kl": (0, math.inf),
        "max_grad_norm": (0, math.inf), "opponent_prob": (0, 1),
    }  # fmt: skip
    for name, (lo, hi) in floats.items():
        v = getattr(cfg, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise TypeError(f"PPOConfig.{name} must be a finite number, got {v!r}")
        if not lo <= v <= hi:
            raise ValueError(f"PPOConfig.{name} must be in [{lo}, {hi}], got {v}")
    if cfg.time_budget_s is not None and (
        isinstance(cfg.time_budget_s, bool) or not isinstance(cfg.time_budget_s, (int, float))
        or not cfg.time_budget_s > 0
    ):  # fmt: skip
        raise ValueError(f"PPOConfig.time_budget_s must be > 0 or None, got {cfg.time_budget_s!r}")
    if cfg.lr == 0:
        raise ValueError("PPOConfig.lr must be > 0")
    if cfg.target_kl is not None and not (isinstance(cfg.target_kl, (int, float)) and cfg.target_kl > 0):
        raise ValueError(f"PPOConfig.target_kl must be > 0 or None, got {cfg.target_kl!r}")
    cfg.opponents = tuple(cfg.opponents)
    bad = [o for o in cfg.opponents if o not in OPPONENTS]
    if bad:
        raise ValueError(f"unknown opponent name(s) {bad}; choose from {OPPONENTS}")
    if cfg.critic not in CRITICS:
        raise ValueError(f"PPOConfig.critic must be one of {CRITICS}, got {cfg.critic!r}")
    if cfg.critic == "oracle" and cfg.workers > 0:
        raise ValueError("PPOConfig.critic='oracle' collects in this process only: use workers=0")
    if cfg.pool_ratings and cfg.workers > 0:
        raise ValueError("PPOConfig.pool_ratings rates the hands of this process only: use workers=0")
    if cfg.opponent_prob > 0 and not cfg.opponents:
        raise ValueError("opponent_prob > 0 needs at least one opponent kind")
    if cfg.anchor_kl > 0 and cfg.init_from is None:
        raise ValueError("PPOConfig.anchor_kl > 0 needs init_from (the network the policy is kept near)")
    if cfg.init_from is not None and not Path(cfg.init_from).is_file():
        raise FileNotFoundError(f"init_from: no checkpoint at {cfg.init_from}")
    if cfg.init_from is None:
        net_config(cfg)  # NNConfig's own checks name a bad arch/blocks/with_features
    if cfg.device != "auto":
        try:
            dev = torch.device(cfg.device)
        except RuntimeError as e:
            raise ValueError(f"bad device {cfg.device!r}: {e}") from e
        if dev.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {cfg.device!r} asked for, but CUDA is not available")
    if cfg.resume and not (Path(cfg.run_dir) / "checkpoint.safetensors").is_file():
        raise FileNotFoundError(f"resume: no checkpoint at {Path(cfg.run_dir) / 'checkpoint.safetensors'}")
    if cfg.ray_num_cpus is not None and (isinstance(cfg.ray_num_cpus, bool) or not isinstance(cfg.ray_num_cpus, int)
                                         or cfg.ray_num_cpus < 1):  # fmt: skip
        raise ValueError(f"PPOConfig.ray_num_cpus must be an int >= 1 or None, got {cfg.ray_num_cpus!r}")
    if cfg.workers > 0:
        from mjenv._ray import require_ray

        require_ray()
    RuleConfig(min_fan=cfg.min_fan)  # its own range check
    return cfg


def keep_freed_memory() -> bool:
    """Ask glibc's malloc to keep freed memory in the process (``mallopt``): blocks up to 32 MiB come from the
    heap instead of fresh ``mmap`` pages, and the heap is trimmed only beyond 1 GiB free at its top.

    Why: PyTorch's CPU allocator does not cache, so every minibatch allocates its gathered inputs (25 MiB) and
    activations (9 MiB each) anew, and with glibc's defaults many of them were fresh pages, each one a page
    fault and a zeroing: measured with the default settings (1 + 1 threads, loaded machine) 27,000-36,000
    minor faults per update, 6,800-7,100 with these settings (system time 0.11-0.20 s against 0.10-0.12 s per
    update). Nothing computed changes (allocation only); the cost is that the process keeps its peak heap.
    Returns whether the settings were applied (``False`` off glibc, e.g. macOS or musl: a no-op there).
    """
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3  # glibc's malloc.h
    ok = mallopt(m_mmap_threshold, 32 << 20) == 1
    ok &= mallopt(m_trim_threshold, 1 << 30) == 1
    ok &= mallopt(m_top_pad, 64 << 20) == 1
    return bool(ok)


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


# ------------------------------------------------------------------------------------------------ kernels
@njit
def observe_rows_kernel(states, tables, seats, out):
    """``out[j]`` = observation of chair ``seats[j]`` at table ``tables[j]`` (``observe_kernel`` per row)."""
    for j in range(tables.shape[0]):
        observe_kernel(states[tables[j]], seats[j], out[j])


@njit
def gae_kernel(rew, val, done, nxt, boot, gamma, lam, adv):
    """GAE over chains of decisions: ``nxt[k]`` is the chair's next decision (-1: none in this rollout);
    ``done[k]``: the hand ended before it; a cut chain (``nxt = -1``, not done) bootstraps from ``boot[k]``.
    ``nxt[k] > k`` always, so one backward pass suffices. Writes ``adv``; returns are ``adv + val``."""
    for k in range(rew.shape[0] - 1, -1, -1):
        if done[k]:
            nv = 0.0
            na = 0.0
        elif nxt[k] >= 0:
            nv = val[nxt[k]]
            na = adv[nxt[k]]
        else:
            nv = boot[k]
            na = 0.0
        adv[k] = rew[k] + gamma * nv - val[k] + gamma * lam * na


def masked_logits(net: ann.Net, tile: torch.Tensor, glob: torch.Tensor, illegal: torch.Tensor):
    """``(logits with illegal actions at -1e8, value)`` from the network's features (:func:`agents.nn.
    obs_features`): finite, so entropies and gradients have no NaN. ``illegal`` is ``~masks`` (the update
    computes it once per rollout)."""
    logits, value = net.forward_features(tile, glob, None)
    # legal logits are floored at the best legal one - _SPAN: a confident (BC) policy otherwise gives legal actions
    # probabilities below float32's normal range, and the exp / softmax backward on subnormals is slow on CPU
    # torch.where instead of masked_fill (the same values and gradients; masked_fill with a bool mask is not
    # vectorised on CPU: 0.93 against 0.53 ms for 4,096 x 109 on one core)
    # one torch.where with a gradient (the legal logits at or above the floor) instead of torch.maximum and a
    # second where: the same values, and the same gradients but at an exact tie with the floor (maximum's backward
    # halves the gradient there); maximum's backward alone cost 3 ms per minibatch of 4,096 on one core
    top = torch.where(illegal, float("-inf"), logits.detach()).amax(1, keepdim=True)
    floor = top - _SPAN
    keep = (logits.detach() >= floor).logical_and_(~illegal)
    return torch.where(keep, logits, torch.where(illegal, _NEG, floor)), value


def masked_probs(logp: torch.Tensor, illegal: torch.Tensor) -> torch.Tensor:
    """``logp.exp()`` of :func:`masked_logits`' log-softmax, computed fast: the illegal entries (about -1e8)
    make ``exp`` take its slow underflow path (measured 10x slower on CPU), so they are clamped first and set
    to their exact value 0 after; legal log-probabilities are >= -_SPAN - log(NUM_ACTIONS) (about -45), far
    above the clamp, so every value (and gradient) is the same as ``logp.exp()``'s."""
    return torch.where(illegal, 0.0, logp.clamp_min(-80.0).exp())


# ------------------------------------------------------------------------------------------------ collection
class Collector:
    """A VectorEnv with its chair assignments and opponents; :meth:`collect` returns one rollout as numpy.

    Everything here is numpy and the learner's weights, so a Ray actor can hold one (issue 13).
    """

    def __init__(self, cfg: PPOConfig) -> None:
        self.cfg = cfg
        n = cfg.num_envs
        self.env = VectorEnv(
            n, seed=cfg.seed, rules=RuleConfig(min_fan=cfg.min_fan, illegal="raise"), threads=cfg.threads,
            obs_dtype=np.uint8, oracle=cfg.critic == "oracle",
        )  # fmt: skip
        self.rng = np.random.default_rng([cfg.seed, 1])
        self.rule = RulePolicy(n, threads=cfg.threads) if "rule" in cfg.opponents else None
        self.owners = np.zeros((n, 4), np.int16)
        self.pool_slots = 0  # filled slots of the opponent pool (set by the trainer)
        self.pool_probs: np.ndarray | None = None  # pool_ratings: how often each slot plays (else uniform)
        self.env.reset()
        self.assign(np.arange(n))

    def assign(self, tables: np.ndarray) -> None:
        """Draw the owners of the four chairs of ``tables`` for their next hand."""
        k = tables.size
        if k == 0:
            return
        cfg, rng = self.cfg, self.rng
        opp = rng.random((k, 4)) < cfg.opponent_prob
        opp[np.arange(k), rng.integers(0, 4, k)] = False  # at least one learner chair per table
        kinds = np.array(
            [{"rule": OWN_RULE, "random": OWN_RANDOM, "pool": OWN_POOL}[o] for o in cfg.opponents]
        )
        own = kinds[rng.integers(0, max(len(kinds), 1), (k, 4))] if len(kinds) else np.zeros((k, 4), np.int64)
        if self.pool_probs is not None and self.pool_slots:
            slot = rng.choice(self.pool_slots, size=(k, 4), p=self.pool_probs)
        else:
            slot = rng.integers(0, max(self.pool_slots, 1), (k, 4))
        own = np.where(own == OWN_POOL, OWN_POOL + slot if self.pool_slots else OWN_LEARNER, own)
        self.owners[tables] = np.where(opp, own, OWN_LEARNER)

    def collect(
        self, net: ann.Net, pool: list[ann.Net], gen: torch.Generator,
        device: torch.device, timers: dict[str, float], critic: OracleCritic | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        """Play ``rollout_steps`` steps; return the learner's decisions with advantages and returns.

        With an oracle ``critic`` the values (and the bootstraps) come from it, reading the env's oracle block
        beside the features; the actor ``net`` reads the observation's features and the mask only."""
        cfg, env = self.cfg, self.env
        n, steps = cfg.num_envs, cfg.rollout_steps
        cap = n * steps
        obs_b = np.empty((cap, OBS_SIZE), np.uint8)
        nc = net.config  # the inputs of the learner's architecture (pool snapshots share it)
        probe = ann.input_features(nc, env.obs[:1], env.masks[:1])
        tile_b = np.empty((cap, *probe[0].shape[1:]), probe[0].numpy().dtype)
        glob_b = np.empty((cap, *probe[1].shape[1:]), probe[1].numpy().dtype)
        mask_b = np.empty((cap, NUM_ACTIONS), np.bool_)
        orc_b = np.empty((cap if critic is not None else 0, ORACLE_SIZE), np.uint8)
        act_b = np.empty(cap, np.int64)
        tab_b = np.empty(cap, np.int32)
        logp_b = np.empty(cap, np.float32)
        val_b = np.empty(cap, np.float32)
        rew_b = np.zeros(cap, np.float32)
        done_b = np.zeros(cap, np.bool_)
        nxt_b = np.full(cap, -1, np.int64)
        last = np.full((n, 4), -1, np.int64)
        rows = np.arange(n)
        actions = np.empty(n, np.int64)
        k = 0
        hands = learner_hands = 0
        learner_points = 0.0
        learner_wins = 0
        hand_owners, hand_scores = [], []  # every finished hand's chair owners and points (ratings)
        t = time.perf_counter
        for _ in range(steps):
            t0 = t()
            seats = env.seats
            own = self.owners[rows, seats]
            lr_rows = np.flatnonzero(own == OWN_LEARNER)
            m = lr_rows.size
            if m:
                ob_l, mk_l = env.obs[lr_rows], env.masks[lr_rows]
                tile, glob = ann.input_features(nc, ob_l, mk_l)
                illegal = ~torch.from_numpy(mk_l).to(device)
                with torch.inference_mode():
                    logits, value = masked_logits(net, tile.to(device), glob.to(device), illegal)
                    logp_all = torch.log_softmax(logits, 1)
                    a = torch.multinomial(masked_probs(logp_all, illegal), 1, generator=gen).squeeze(1)
                    lp = logp_all.gather(1, a[:, None]).squeeze(1)
                    if critic is not None:  # the value from the hidden state too (the actor never saw it)
                        orc_l = env.oracle[lr_rows]
                        orc_b[k : k + m] = orc_l
                        value = critic(tile.to(device), glob.to(device), torch.from_numpy(orc_l).to(device))
                a_np = a.cpu().numpy()
                actions[lr_rows] = a_np
                sl = slice(k, k + m)
                obs_b[sl] = ob_l
                mask_b[sl] = mk_l
                tile_b[sl] = tile.numpy()
                glob_b[sl] = glob.numpy()
                act_b[sl] = a_np
                tab_b[sl] = lr_rows
                logp_b[sl] = lp.cpu().numpy()
                val_b[sl] = value.cpu().numpy()
                prev = last[lr_rows, seats[lr_rows]]
                nxt_b[prev[prev >= 0]] = np.arange(k, k + m)[prev >= 0]
                last[lr_rows, seats[lr_rows]] = np.arange(k, k + m)
                k += m
            for code in np.unique(own[own != OWN_LEARNER]):
                r = np.flatnonzero(own == code)
                if code == OWN_RULE:
                    actions[r] = self.rule(env.obs[r], env.masks[r], seats[r])
                elif code == OWN_RANDOM:
                    actions[r] = random_legal_actions(env.masks[r], self.rng)
                else:
                    tile, glob = ann.input_features(nc, env.obs[r], env.masks[r])
                    illegal = ~torch.from_numpy(env.masks[r]).to(device)
                    with torch.no_grad():
                        logits, _ = masked_logits(
                            pool[code - OWN_POOL], tile.to(device), glob.to(device), illegal
                        )
                        actions[r] = (
                            torch.multinomial(torch.softmax(logits, 1), 1, generator=gen)[:, 0].cpu().numpy()
                        )
            t1 = t()
            timers["inference_s"] += t1 - t0
            env.step(actions)
            t2 = t()
            timers["env_s"] += t2 - t1
            rw = env.rewards
            has = last >= 0
            rew_b[last[has]] += rw[has] * cfg.reward_scale
            term = np.flatnonzero(env.terminated)
            if term.size:
                lt = last[term]
                done_b[lt[lt >= 0]] = True
                is_l = self.owners[term] == OWN_LEARNER
                sc = env.results.scores[term]
                hand_owners.append(self.owners[term].copy())
                hand_scores.append(sc.copy())
                hands += term.size
                learner_hands += int(is_l.sum())
                learner_points += float(sc[is_l].sum())
                learner_wins += int((is_l & (env.results.winner[term, None] == np.arange(4))).sum())
                last[term] = -1
                self.assign(term)
            timers["other_s"] += t() - t2
        # bootstrap the cut chains from the chair's current observation (its own view)
        t3 = time.perf_counter()
        tab, seat = np.nonzero(last >= 0)
        boot = np.zeros(k, np.float32)
        if tab.size:
            ob = np.empty((tab.size, OBS_SIZE), np.uint8)
            observe_rows_kernel(env.states, tab.astype(np.int64), seat.astype(np.int64), ob)
            with torch.no_grad():
                feats = net.features(ob, None)
                if critic is None:
                    _, v = net.forward_features(*feats, None)
                else:
                    orc = np.empty((tab.size, ORACLE_SIZE), np.uint8)
                    oracle_rows_kernel(env.states[tab], seat.astype(np.int32), orc)
                    v = critic(*feats, torch.from_numpy(orc).to(device))
            boot[last[tab, seat]] = v.cpu().numpy()
        adv = np.zeros(k, np.float32)
        gae_kernel(rew_b[:k], val_b[:k], done_b[:k], nxt_b[:k], boot, cfg.gamma, cfg.gae_lambda, adv)
        timers["gae_s"] += time.perf_counter() - t3
        return {
            "obs": obs_b[:k], "tile": tile_b[:k], "glob": glob_b[:k], "masks": mask_b[:k], "oracle": orc_b[:k],
            "actions": act_b[:k], "logp": logp_b[:k], "tables": tab_b[:k], "done": done_b[:k], "next": nxt_b[:k],
            "values": val_b[:k], "advantages": adv, "returns": adv + val_b[:k],
            "decisions": n * steps, "hands": hands, "learner_hands": learner_hands,
            "learner_points": learner_points, "learner_wins": learner_wins,
            "hand_owners": np.concatenate(hand_owners) if hand_owners else np.zeros((0, 4), np.int16),
            "hand_scores": np.concatenate(hand_scores) if hand_scores else np.zeros((0, 4), np.int32),
        }  # fmt: skip


# ------------------------------------------------------------------------------------------------ update
def ppo_losses(
    logits: torch.Tensor, v: torch.Tensor, illegal: torch.Tensor, act: torch.Tensor, old_lp: torch.Tensor,
    adv: torch.Tensor, ret: torch.Tensor, clip_coef: float, logp_all: torch.Tensor | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """One minibatch's ``(pg_loss, v_loss, entropy, log_ratio, ratio)`` from the masked logits and values of
    :func:`masked_logits`: the clipped policy loss on the advantages normalised over the minibatch, half the
    squared value error, the policy's mean entropy, and the log-ratio and ratio to the behaviour
    log-probabilities ``old_lp`` (for the KL and clip statistics). ``logp_all``: the logits' log-softmax when
    the caller has it already (the anchor's KL needs it too), else computed here."""
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
    anchor: ann.Net | None = None,
) -> dict[str, float]:  # fmt: skip
    """``epochs`` passes of minibatch PPO over ``batch`` (the stored behaviour log-probs are the "old" ones);
    ``warmup``: the value loss trains the value head only (every other parameter keeps its value, so the
    policy does not move). With an oracle ``critic`` the value loss trains the critic (on ``batch["oracle"]``)
    instead of the actor's value head, and the gradients of the actor and the critic are clipped apart. With an
    ``anchor`` network (frozen) the loss adds ``cfg.anchor_kl`` times KL(anchor || policy) over the legal
    actions, averaged over the minibatch."""
    k = batch["actions"].shape[0]
    tile_all = torch.from_numpy(batch["tile"]).to(device)
    glob_all = torch.from_numpy(batch["glob"]).to(device)
    illegal_all = ~torch.from_numpy(batch["masks"]).to(device)  # once per rollout, not per minibatch
    act = torch.from_numpy(batch["actions"]).to(device)
    old_lp = torch.from_numpy(batch["logp"]).to(device)
    adv_all = torch.from_numpy(batch["advantages"]).to(device)
    ret = torch.from_numpy(batch["returns"]).to(device)
    orc_all = torch.from_numpy(batch["oracle"]).to(device) if critic is not None else None
    head = {id(p) for p in (critic.parameters() if critic is not None else net.value_head.parameters())}
    frozen = [p for p in net.parameters() if id(p) not in head]
    stats = {"pg_loss": 0.0, "v_loss": 0.0, "entropy": 0.0, "approx_kl": 0.0, "clipfrac": 0.0}
    if anchor is not None:
        stats["anchor_kl"] = 0.0
    n_mb = 0
    epochs_done = 0
    # the gathered minibatch inputs go into the same buffers every time (out=): no fresh 25 MiB per minibatch
    mb = min(cfg.minibatch_size, k)
    tile_buf = tile_all.new_empty((mb, *tile_all.shape[1:]))
    glob_buf = glob_all.new_empty((mb, *glob_all.shape[1:]))
    illegal_buf = illegal_all.new_empty((mb, *illegal_all.shape[1:]))
    # the anchor's log-probabilities, once per update: the rows are the same every epoch
    if anchor is not None:
        with torch.no_grad():
            anchor_lp_all = torch.cat([
                F.log_softmax(masked_logits(anchor, tile_all[j : j + mb], glob_all[j : j + mb],
                                            illegal_all[j : j + mb])[0], dim=1)
                for j in range(0, k, mb)
            ])  # fmt: skip
            anchor_p_all = masked_probs(anchor_lp_all, illegal_all)
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
                # illegal actions: probability exactly 0 under the anchor, finite log-probabilities on both sides
                anchor_lp = torch.index_select(anchor_lp_all, 0, idx)
                anchor_p = torch.index_select(anchor_p_all, 0, idx)
                anchor_kl = (anchor_p * (anchor_lp - logp_all)).sum(1).mean()
                stats["anchor_kl"] += anchor_kl.item()
                if not warmup:
                    loss = loss + cfg.anchor_kl * anchor_kl
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
            kl_sum += kl
            kl_n += 1
            stats["pg_loss"] += pg_loss.item()
            stats["v_loss"] += v_loss.item()
            stats["entropy"] += entropy.item()
            stats["approx_kl"] += kl
            n_mb += 1
        epochs_done += 1
        if cfg.target_kl is not None and kl_sum / max(kl_n, 1) > cfg.target_kl:
            break
    out = {key: val / max(n_mb, 1) for key, val in stats.items()}
    out["epochs"] = float(epochs_done)
    return out


# ------------------------------------------------------------------------------------------------ checkpoints
def _digest(tensors: dict[str, torch.Tensor], meta: dict[str, str]) -> str:
    h = hashlib.sha256()
    for name in sorted(tensors):
        t = tensors[name].contiguous()
        h.update(name.encode())
        h.update(str(tuple(t.shape)).encode() + str(t.dtype).encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    for key in sorted(meta):
        h.update(f"{key}={meta[key]}\n".encode())
    return h.hexdigest()


def _np_to_t(a: np.ndarray) -> torch.Tensor:
    a = np.ascontiguousarray(a)
    if a.dtype == np.uint64:  # torch's uint64 support is partial: store the bits as int64
        a = a.view(np.int64)
    return torch.from_numpy(a.copy())


def _env_arrays(env: VectorEnv) -> dict[str, np.ndarray]:
    """Every numpy array of the env (and its results) except its kernels' scratch (``SCRATCH_ARRAYS``, whose
    contents follow the threads' schedule): restoring them restores the env exactly."""
    out = {
        f"env.{k}": v
        for k, v in vars(env).items()
        if isinstance(v, np.ndarray) and k not in VectorEnv.SCRATCH_ARRAYS
    }
    out.update({f"env.results.{k}": v for k, v in vars(env.results).items() if isinstance(v, np.ndarray)})
    return out


def save_checkpoint(path: Path, tr: Trainer) -> None:
    """Write the whole training state (see the module docstring) atomically."""
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    for k, v in tr.net.state_dict().items():
        tensors[f"model.{k}"] = v.detach().cpu().contiguous().clone()
    if tr.critic is not None:
        for k, v in tr.critic.state_dict().items():
            tensors[f"critic.{k}"] = v.detach().cpu().contiguous().clone()
    osd = tr.opt.state_dict()
    for pid, st in osd["state"].items():
        for key, v in st.items():
            tensors[f"optim.{pid}.{key}"] = torch.as_tensor(v).detach().cpu().contiguous().clone()
    for j, pnet in enumerate(tr.pool):
        for k, v in pnet.state_dict().items():
            tensors[f"pool.{j}.{k}"] = v.detach().cpu().contiguous().clone()
    for k, v in _env_arrays(tr.col.env).items():
        tensors[k] = _np_to_t(v)
    tensors["collector.owners"] = _np_to_t(tr.col.owners)
    tensors["rng.torch_sampling"] = tr.gen.get_state().clone()
    meta = {
        "format": CKPT_FORMAT,
        "config": json.dumps(asdict(tr.cfg), sort_keys=True),
        "net_config": json.dumps(asdict(tr.net.config), sort_keys=True),
        "counters": json.dumps(tr.counters, sort_keys=True),
        "optim_groups": json.dumps(osd["param_groups"]),
        "pool_slots": str(len(tr.pool)),
        "pool_next": str(tr.pool_next),
        "rng_numpy_update": json.dumps(tr.rng.bit_generator.state),
        "rng_numpy_collector": json.dumps(tr.col.rng.bit_generator.state),
    }
    if tr.ratings is not None:
        meta["ratings"] = tr.ratings.to_json()
    meta["sha256"] = _digest(tensors, meta)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    save_file(tensors, str(tmp), metadata=meta)
    tmp.replace(path)


def read_checkpoint(path: str | Path) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """Tensors and metadata of a trainer checkpoint; ``ValueError`` when corrupt, tampered or not one."""
    from safetensors import safe_open

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no checkpoint at {path}")
    try:
        with safe_open(str(path), framework="pt", device="cpu") as f:
            meta = dict(f.metadata() or {})
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
    except Exception as e:
        raise ValueError(
            f"{path} is not a readable safetensors checkpoint (corrupt or truncated?): {e}"
        ) from e
    if meta.get("format") != CKPT_FORMAT:
        raise ValueError(
            f"{path} is not a train.ppo checkpoint (format {meta.get('format')!r}, want {CKPT_FORMAT!r})"
        )
    want = meta.pop("sha256", None)
    if _digest(tensors, meta) != want:
        raise ValueError(f"{path}: the contents do not match their recorded SHA-256 (the file was modified)")
    return tensors, meta


# ------------------------------------------------------------------------------------------------ trainer
class Trainer:
    """The state of a run: network, optimizer, pool, collector, RNGs, counters. :meth:`run` trains."""

    def __init__(self, cfg: PPOConfig) -> None:
        self.cfg = check_config(cfg)
        self.device = resolve_device(cfg.device)
        ann.set_torch_threads(cfg.torch_threads)
        # subnormal floats make CPU matmuls many times slower (seen with BC-initialised weights): flush them
        torch.set_flush_denormal(True)
        keep_freed_memory()  # no page faults on every minibatch's fresh tensors (see there)
        self.run_dir = Path(cfg.run_dir)
        ckpt = None
        if cfg.resume:
            ckpt = read_checkpoint(self.run_dir / "checkpoint.safetensors")
            saved = json.loads(ckpt[1]["config"])
            keep = {"updates", "resume", "progress", "run_dir", "device", "eval_every", "save_every",
                    "keep_eval_policies", "workers", "ray_address", "ray_num_cpus", "ray_ship_code",
                    "time_budget_s"}  # fmt: skip
            diff = {
                k: (saved[k], v)
                for k, v in asdict(cfg).items()
                if k not in keep and saved.get(k, _jsonable(_DEFAULTS.get(k))) != _jsonable(v)
            }
            if diff:
                raise ValueError(f"resume: the settings differ from the checkpoint's (saved, given): {diff}")
        if cfg.init_from is not None and ckpt is None:
            net = ann.load(cfg.init_from)
        else:
            nc = net_config(cfg)
            if ckpt is not None:
                nc = ann.NNConfig(**json.loads(ckpt[1]["net_config"]))
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(cfg.seed)
                net = ann.build_net(nc)
        self.net = net.to(self.device)
        # anchor_kl > 0: the init_from network, frozen, that the loss keeps the policy near (read again on resume)
        self.anchor: ann.Net | None = None
        if cfg.anchor_kl > 0:
            self.anchor = ann.load(cfg.init_from).to(self.device).requires_grad_(False)
        self.critic: OracleCritic | None = None  # critic="oracle": the training-only value function
        params = list(self.net.parameters())
        if cfg.critic == "oracle":
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(cfg.seed + 1)
                self.critic = OracleCritic(
                    CriticConfig(cfg.critic_channels, cfg.critic_hidden), net.config
                ).to(self.device)
            params += list(self.critic.parameters())
        # foreach: one multi-tensor kernel per Adam operation instead of a loop over the 16 parameters (the
        # default on CUDA; on CPU it was 1.6x faster per step and gives bitwise the same parameters)
        self.opt = torch.optim.Adam(params, lr=cfg.lr, eps=1e-5, foreach=True)
        self.rng = np.random.default_rng([cfg.seed, 2])
        self.gen = torch.Generator(device="cpu" if self.device.type == "cpu" else self.device)
        self.gen.manual_seed(cfg.seed)
        self.col = Collector(cfg)
        self.dist = None  # workers > 0: rollouts from Ray actors (train/distributed.py)
        if cfg.workers > 0:
            from train.distributed import DistributedCollector

            self.dist = DistributedCollector(self)
        self.pool: list[ann.Net] = []
        self.pool_next = 0
        self.ratings = Ratings() if cfg.pool_ratings else None
        self.owner_names = ["learner", "rule", "random"] + [f"pool{j}" for j in range(cfg.pool_size)]
        self.counters = {"update": 0, "decisions": 0, "learner_decisions": 0, "hands": 0, "seconds": 0.0}
        if ckpt is not None:
            self._restore(*ckpt)

    def _restore(self, tensors: dict[str, torch.Tensor], meta: dict[str, str]) -> None:
        try:
            self.net.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
            if self.critic is not None:
                self.critic.load_state_dict({k[7:]: v for k, v in tensors.items() if k.startswith("critic.")})
            n_slots = int(meta["pool_slots"])
            for j in range(n_slots):
                p = ann.build_net(self.net.config)
                p.load_state_dict(
                    {k[len(f"pool.{j}.") :]: v for k, v in tensors.items() if k.startswith(f"pool.{j}.")}
                )
                self.pool.append(p.to(self.device).eval())
            self.pool_next = int(meta["pool_next"])
            state: dict[int, dict[str, torch.Tensor]] = {}
            for k, v in tensors.items():
                if k.startswith("optim."):
                    _, pid, key = k.split(".", 2)
                    state.setdefault(int(pid), {})[key] = v.to(self.device) if key != "step" else v
            self.opt.load_state_dict({"state": state, "param_groups": json.loads(meta["optim_groups"])})
            env = self.col.env
            for k, arr in _env_arrays(env).items():
                src = tensors[k].numpy()
                np.copyto(arr, src.view(arr.dtype) if arr.dtype == np.uint64 else src.reshape(arr.shape))
            env._started = True
            self.col.owners[:] = tensors["collector.owners"].numpy()
            self.col.pool_slots = n_slots
            self.gen.set_state(tensors["rng.torch_sampling"])
            self.rng.bit_generator.state = json.loads(meta["rng_numpy_update"])
            self.col.rng.bit_generator.state = json.loads(meta["rng_numpy_collector"])
            self.counters = json.loads(meta["counters"])
            if self.ratings is not None:
                self.ratings.load_json(meta["ratings"])
                if n_slots:
                    self.col.pool_probs = self.ratings.pool_probs(n_slots)
        except (KeyError, RuntimeError, ValueError) as e:
            raise ValueError(
                f"the checkpoint does not fit these settings (missing or mismatched state): {e}"
            ) from e

    # -------------------------------------------------------------------------------------- one update
    def step(self, timers: dict[str, float]) -> dict[str, float]:
        cfg = self.cfg
        u = self.counters["update"]
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
        stats = (
            ppo_update(
                self.net, self.opt, batch, cfg, self.rng, self.device, warmup=u < cfg.value_warmup,
                critic=self.critic, anchor=self.anchor,
            )
            if batch["actions"].size
            else {}
        )  # fmt: skip
        timers["update_s"] += time.perf_counter() - t0
        self.counters["update"] = u + 1
        self.counters["decisions"] += batch["decisions"]
        self.counters["learner_decisions"] += int(batch["actions"].size)
        self.counters["hands"] += batch["hands"]
        if self.ratings is not None:
            self.ratings.update(self.owner_names, batch["hand_owners"], batch["hand_scores"])
            stats.update(rating_learner=self.ratings.mu("learner"), rating_rule=self.ratings.mu("rule"))
        if (u + 1) % cfg.pool_every == 0 and "pool" in cfg.opponents:
            self._add_to_pool()
        if self.ratings is not None and self.pool:
            self.col.pool_probs = self.ratings.pool_probs(len(self.pool))
        stats.update(
            lr=self.opt.param_groups[0]["lr"],
            learner_points_per_hand=batch["learner_points"] / max(batch["learner_hands"], 1),
            learner_win_rate=batch["learner_wins"] / max(batch["learner_hands"], 1),
            hands=float(batch["hands"]),
            value_mean=float(batch["values"].mean()) if batch["values"].size else 0.0,
            value_ev=explained_variance(batch["values"], batch["returns"]),
        )
        stats.update(batch.get("dist_stats", {}))
        return stats

    def _add_to_pool(self) -> None:
        snap = copy.deepcopy(self.net).eval()
        for p in snap.parameters():
            p.requires_grad_(False)
        if len(self.pool) < self.cfg.pool_size:
            slot = len(self.pool)
            self.pool.append(snap)
        else:
            slot = self.pool_next
            self.pool[self.pool_next] = snap
            self.pool_next = (self.pool_next + 1) % self.cfg.pool_size
        if self.ratings is not None:  # a new snapshot starts from the learner's rating
            self.ratings.copy_to("learner", f"pool{slot}")
        self.col.pool_slots = len(self.pool)

    def evaluate(self) -> dict[str, Any]:
        """1v3 duplicate of the learner (greedy) against the rule agent; the arena report."""
        from mjenv.arena import run_arena

        snap = ann.build_net(self.net.config)
        snap.load_state_dict({k: v.cpu() for k, v in self.net.state_dict().items()})
        dev = str(self.device)

        def factory(num_envs: int, seed: int) -> ann.NNPolicy:
            return ann.NNPolicy(snap, seed=seed, device=dev, greedy=True)

        return run_arena(
            {"ppo": factory, "rule": "agents.rule:make"}, "1v3", walls=self.cfg.eval_walls,
            seed=self.cfg.eval_seed, tables=min(1024, 4 * self.cfg.eval_walls), threads=self.cfg.threads,
            rules=RuleConfig(min_fan=self.cfg.min_fan), records=0, illegal_records=0, record_info=False,
            progress=False,
        )  # fmt: skip

    def save(self) -> None:
        save_checkpoint(self.run_dir / "checkpoint.safetensors", self)
        ann.save(self.net, self.run_dir / "policy.safetensors")

    # -------------------------------------------------------------------------------------- the loop
    def run(self, stop_after: int | None = None) -> dict[str, Any]:
        """Train until ``cfg.updates`` (or ``stop_after`` more updates: a simulated kill after saving)."""
        from torch.utils.tensorboard import SummaryWriter

        cfg = self.cfg
        self.run_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=1, sort_keys=True))
        csv_path = self.run_dir / "progress.csv"
        _truncate_csv(csv_path, self.counters["update"])
        writer = SummaryWriter(str(self.run_dir / "tb"), purge_step=self.counters["update"] + 1)
        timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
        start_u = self.counters["update"]
        end_u = cfg.updates if stop_after is None else min(cfg.updates, start_u + stop_after)
        bar = tqdm(
            total=cfg.updates, initial=start_u, disable=not cfg.progress, unit="upd", dynamic_ncols=True
        )
        t_start = time.perf_counter()
        dec0 = self.counters["decisions"]
        last_eval: dict[str, Any] | None = None
        row: dict[str, Any] = {}
        try:
            while self.counters["update"] < end_u:
                t_u = time.perf_counter()
                stats = self.step(timers)
                u = self.counters["update"]
                self.counters["seconds"] += time.perf_counter() - t_u
                elapsed = time.perf_counter() - t_start
                dps = (self.counters["decisions"] - dec0) / max(elapsed, 1e-9)
                row = {
                    "update": u,
                    "decisions": self.counters["decisions"],
                    "hands": self.counters["hands"],
                    "seconds": round(self.counters["seconds"], 3),
                    "decisions_per_s": round(dps, 1),
                    **stats,
                }
                if cfg.eval_every and u % cfg.eval_every == 0:
                    rep = self.evaluate()
                    a = rep["agents"]["ppo"]["points_per_hand"]
                    last_eval = {
                        "eval_mean": a["mean"],
                        "eval_ci_lo": a["ci95"][0],
                        "eval_ci_hi": a["ci95"][1],
                    }
                    row.update(last_eval)
                    if cfg.keep_eval_policies:  # the evaluated learner, to ship the best one later
                        ann.save(self.net, self.run_dir / "evals" / f"policy_u{u:06d}.safetensors")
                for key, val in row.items():
                    if key != "update" and isinstance(val, (int, float)):
                        writer.add_scalar(key, val, u)
                _append_csv(csv_path, row)
                bar.update(1)
                bar.set_postfix(dps=f"{dps:,.0f}", pts=f"{stats.get('learner_points_per_hand', 0):+.2f}")
                over = cfg.time_budget_s is not None and self.counters["seconds"] >= cfg.time_budget_s
                if u % cfg.save_every == 0 or u == end_u or over:
                    self.save()
                if over:
                    break
        finally:
            bar.close()
            writer.close()
            if self.dist is not None:
                self.dist.close()
        return {
            "counters": dict(self.counters),
            "timers": timers,
            "last": row,
            "last_eval": last_eval,
            "wall_s": time.perf_counter() - t_start,
        }


def explained_variance(values: np.ndarray, returns: np.ndarray) -> float:
    """``1 - Var(returns - values) / Var(returns)`` of a rollout (the values the advantages were computed with):
    1 is a perfect value function, 0 no better than a constant; NaN for fewer than two decisions or constant
    returns."""
    if values.size < 2:
        return float("nan")
    var = float(np.var(returns.astype(np.float64)))
    if var == 0.0:
        return float("nan")
    return 1.0 - float(np.var(returns.astype(np.float64) - values)) / var


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v))


_CSV_FIELDS = ("update", "decisions", "hands", "seconds", "decisions_per_s", "lr", "pg_loss", "v_loss", "entropy",
               "approx_kl", "clipfrac", "epochs", "learner_points_per_hand", "learner_win_rate", "value_mean",
               "value_ev", "rating_learner", "rating_rule",
               "workers", "rollouts", "staleness", "restarts", "bytes_in", "bytes_out", "wait_s", "fetch_s", "broadcast_s",
               "merge_s", "eval_mean", "eval_ci_lo", "eval_ci_hi")  # fmt: skip


def _append_csv(path: Path, row: dict[str, Any]) -> None:
    new = not path.is_file()
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=_CSV_FIELDS, extrasaction="ignore")
        if new:
            w.writeheader()
        w.writerow(row)


def _truncate_csv(path: Path, update: int) -> None:
    """Drop CSV rows written after the checkpoint being resumed (a kill between a save and the next rows)."""
    if not path.is_file():
        return
    with path.open(newline="") as f:
        rows = [r for r in csv.DictReader(f) if int(r["update"]) <= update]
    path.unlink()
    for r in rows:
        _append_csv(path, r)


def train(cfg: PPOConfig, stop_after: int | None = None) -> dict[str, Any]:
    """Build a :class:`Trainer` (resuming when ``cfg.resume``) and run it; returns its summary."""
    return Trainer(cfg).run(stop_after=stop_after)


def saved_config(run_dir: str | Path) -> PPOConfig:
    """The settings a run in ``run_dir`` was started with (from its checkpoint), as a :class:`PPOConfig` with
    ``resume=True``: ``--resume`` takes them as its defaults, so only what may change need be given again."""
    _, meta = read_checkpoint(Path(run_dir) / "checkpoint.safetensors")
    saved = json.loads(meta["config"])
    kw = {f.name: saved[f.name] for f in fields(PPOConfig) if f.name in saved}  # a newer setting: its default
    if "opponents" in kw:  # a JSON list; the field is a tuple
        kw["opponents"] = tuple(kw["opponents"])
    return PPOConfig(**{**kw, "run_dir": str(run_dir), "resume": True})


def main() -> None:
    import tyro

    cfg = tyro.cli(PPOConfig)
    try:
        if cfg.resume and (Path(cfg.run_dir) / "checkpoint.safetensors").is_file():
            # parse again over the checkpoint's settings: a flag given differs from them only where the
            # checkpoint allows (time budget, updates, logging) or the Trainer names the difference
            cfg = tyro.cli(PPOConfig, default=saved_config(cfg.run_dir))
        check_config(cfg)
        # a resume whose settings differ, or a checkpoint that does not fit, is the caller's error too
        tr = Trainer(cfg)
    except (TypeError, ValueError, FileNotFoundError) as e:
        raise SystemExit(f"train.ppo: error: {e}") from None
    print(tr.col.env.num_envs, "tables;", ann.NNPolicy(tr.net, device=str(tr.device)).describe())
    out = tr.run()
    print(json.dumps({"counters": out["counters"], "last_eval": out["last_eval"]}, indent=1))


if __name__ == "__main__":
    main()
