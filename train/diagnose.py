"""What limits PPO from a behaviour-cloned start, in numbers: ``python -m train.diagnose --help``.

Three measurements (``lab/notebook.md``, "Diagnosis"), printed as markdown and written to ``<out>/diagnosis.json``:

1. **Where the return's variance comes from.** ``walls`` deals, each played ``replays`` times by the learner
   (sampling, as PPO collects) in chair 0 against three rule agents: the learner's points per hand split into
   the variance between deals (the deal and the draws: the wall fixes both while the rule agents are
   deterministic) and within a deal (the learner's own sampled choices and what they change).
2. **Value explained variance, KL and clip fraction per update**: a short PPO run from ``init_from`` for each
   critic (``shared``: the actor's value head; ``oracle``: train/critic.py, reading the hidden state), the
   first ``value_warmup`` updates training the value function alone; its ``progress.csv`` rows.
3. **How much a critic can explain, with and without the hidden state** (``critic_fit``): ``fit_rollouts``
   rollouts of the learner (against the rule agents, as PPO collects), the Monte-Carlo return of every learner
   decision whose hand ended in the rollout, and two critics of the same architecture
   (:class:`train.critic.OracleCritic`) fitted to it by regression, one reading the oracle block, one with the
   block zeroed (the observation's features only); explained variance on held-out tables.
4. **Advantage noise by decision type**: one more rollout of each run, its learner decisions split into forced
   ones (a single legal action: ``pass`` alone, or another single action), which carry no policy gradient,
   and free ones by the action taken (discard / claim / kong / win / pass): count, advantage standard
   deviation, and the share of the advantages' sum of squares (what the normalised advantages are made of).
"""

from __future__ import annotations

import csv
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from agents import nn as ann
from agents.rule import RulePolicy
from mjenv import actions as A
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv
from train.ppo import CRITICS, PPOConfig, Trainer

CLASSES = ("forced pass", "forced other", "discard", "claim", "kong", "win", "pass")


@dataclass
class DiagConfig:
    """Settings of ``python -m train.diagnose``."""

    init_from: str = "agents/zoo/mlp-2026-12-01.safetensors"
    """agents.nn checkpoint of the learner"""
    out: str = "runs/diagnose"
    """folder of the short PPO runs and diagnosis.json"""
    walls: int = 500
    """deals of the variance split (each played ``replays`` times)"""
    replays: int = 8
    updates: int = 30
    """PPO updates per critic"""
    value_warmup: int = 15
    """of which the first train the value function alone"""
    num_envs: int = 512
    rollout_steps: int = 64
    critics: tuple[str, ...] = CRITICS
    seed: int = 0
    threads: int = 2
    torch_threads: int = 2
    min_fan: int = 8
    progress: bool = True
    fit_rollouts: int = 8
    """rollouts (of ``num_envs`` x ``fit_steps``) for the critic fit (0: skip it)"""
    fit_steps: int = 192
    fit_epochs: int = 20


def variance_split(cfg: DiagConfig) -> dict[str, Any]:
    """The learner's points per hand over ``walls`` deals x ``replays`` plays: one-way ANOVA by deal."""
    n = cfg.walls * cfg.replays
    wall_seeds = np.random.SeedSequence([cfg.seed, 77]).generate_state(cfg.walls, np.uint64) >> np.uint64(2)
    seeds = np.repeat(wall_seeds.astype(np.int64), cfg.replays)
    env = VectorEnv(
        n, seed=seeds, rules=RuleConfig(min_fan=cfg.min_fan), threads=cfg.threads, obs_dtype=np.uint8,
        after_schedule="stop",
    )  # fmt: skip
    learner = ann.make(n, cfg.seed, checkpoint=cfg.init_from)  # sampling, as PPO collects
    rule = RulePolicy(n, threads=cfg.threads)
    env.reset(dealers=np.zeros(n, np.int32))
    points = np.zeros(n)
    actions = np.zeros(n, np.int64)
    while env.active.any():
        act = env.active
        lr = np.flatnonzero(act & (env.seats == 0))
        ru = np.flatnonzero(act & (env.seats > 0))
        if lr.size:
            actions[lr] = learner(env.obs[lr], env.masks[lr])
        if ru.size:
            actions[ru] = rule(env.obs[ru], env.masks[ru], env.seats[ru])
        env.step(actions)
        t = np.flatnonzero(env.terminated)
        points[t] = env.results.scores[t, 0]
    x = points.reshape(cfg.walls, cfg.replays)
    within = float(x.var(axis=1, ddof=1).mean())
    total = float(x.var(ddof=1))
    between = max(float(x.mean(axis=1).var(ddof=1)) - within / cfg.replays, 0.0)
    return {
        "hands": n, "mean": float(x.mean()), "total_var": total, "between_deals_var": between,
        "within_deal_var": within, "deal_share": between / (between + within) if between + within else float("nan"),
    }  # fmt: skip


def advantage_classes(batch: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Advantage statistics of a rollout's learner decisions by class (see the module docstring)."""
    masks, act, adv = batch["masks"], batch["actions"], batch["advantages"].astype(np.float64)
    n_legal = masks.sum(1)
    cls = np.empty(act.size, np.int64)
    forced = n_legal == 1
    cls[forced & (act == A.PASS)] = 0
    cls[forced & (act != A.PASS)] = 1
    free = ~forced
    kinds = np.full(act.shape, 4)
    kinds[act < A.CHOW] = 2
    kinds[(act >= A.CHOW) & (act <= A.KONG)] = 3
    kinds[act == A.WIN] = 5
    kinds[act == A.PASS] = 6
    cls[free] = kinds[free]
    ss = float((adv**2).sum()) or 1.0
    out = {}
    for c, name in enumerate(CLASSES):
        a = adv[cls == c]
        out[name] = {
            "count": int(a.size), "share": a.size / max(adv.size, 1),
            "adv_std": float(a.std()) if a.size > 1 else float("nan"),
            "adv_sumsq_share": float((a**2).sum()) / ss,
        }  # fmt: skip
    return out


def short_run(cfg: DiagConfig, critic: str) -> dict[str, Any]:
    """A short PPO run from ``init_from`` with ``critic``; its progress rows and one more rollout's classes."""
    run_dir = Path(cfg.out) / critic
    pcfg = PPOConfig(
        run_dir=str(run_dir), seed=cfg.seed, updates=cfg.updates, num_envs=cfg.num_envs,
        rollout_steps=cfg.rollout_steps, threads=cfg.threads, torch_threads=cfg.torch_threads,
        min_fan=cfg.min_fan, init_from=cfg.init_from, value_warmup=cfg.value_warmup, eval_every=0,
        save_every=cfg.updates, progress=cfg.progress, critic=critic, keep_eval_policies=False,
    )  # fmt: skip
    if (run_dir / "progress.csv").exists():
        (run_dir / "progress.csv").unlink()
    tr = Trainer(pcfg)
    tr.run()
    with (run_dir / "progress.csv").open(newline="") as f:
        rows = [{k: float(v) for k, v in r.items() if v != ""} for r in csv.DictReader(f)]
    timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
    batch = tr.col.collect(tr.net, tr.pool, tr.gen, tr.device, timers, critic=tr.critic)
    from train.ppo import explained_variance

    return {
        "rows": rows,
        "classes": advantage_classes(batch),
        "final_value_ev": explained_variance(batch["values"], batch["returns"]),
    }


def _complete(done: np.ndarray, nxt: np.ndarray) -> np.ndarray:
    """Which decisions' chains reach the end of their hand within the rollout (``nxt[i] > i``, so one
    backward pass): their lambda-1 return is exact, with no bootstrap."""
    complete = np.zeros(done.size, np.bool_)
    for i in range(done.size - 1, -1, -1):
        complete[i] = done[i] or (nxt[i] >= 0 and complete[nxt[i]])
    return complete


def critic_fit(cfg: DiagConfig) -> dict[str, Any]:
    """Explained variance of the return on held-out tables: the critic with and without the oracle block."""
    from train.critic import CriticConfig, OracleCritic

    pcfg = PPOConfig(
        run_dir=str(Path(cfg.out) / "fit"), seed=cfg.seed + 5, num_envs=cfg.num_envs, rollout_steps=cfg.fit_steps,
        threads=cfg.threads, torch_threads=cfg.torch_threads, min_fan=cfg.min_fan, init_from=cfg.init_from,
        critic="oracle", eval_every=0, progress=False, gae_lambda=1.0,
    )  # fmt: skip
    tr = Trainer(pcfg)
    timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
    parts = []
    for r in tqdm(range(cfg.fit_rollouts), desc="critic-fit rollouts", disable=not cfg.progress):
        b = tr.col.collect(tr.net, tr.pool, tr.gen, tr.device, timers, critic=tr.critic)
        # gamma 1, lambda 1: returns = the rewards to the end of the hand (plus a bootstrap on cut chains only)
        ok = _complete(b["done"], b["next"])
        parts.append({"tile": b["tile"][ok], "glob": b["glob"][ok], "oracle": b["oracle"][ok],
                      "ret": b["returns"][ok], "table": b["tables"][ok] + r * cfg.num_envs})  # fmt: skip
    data = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    held = (data["table"] % 5) == 0  # a fifth of the tables held out
    out: dict[str, Any] = {"decisions": int(data["ret"].size), "held_out": int(held.sum())}
    t = {k: torch.from_numpy(v) for k, v in data.items() if k != "table"}
    tr_idx = np.flatnonzero(~held)
    h = torch.from_numpy(np.flatnonzero(held))
    y = data["ret"][held].astype(np.float64)
    for name, zero in (("observation only", True), ("with the oracle block", False)):
        torch.manual_seed(cfg.seed)
        net = OracleCritic(CriticConfig())
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        orc = torch.zeros_like(t["oracle"]) if zero else t["oracle"]
        rng = np.random.default_rng(cfg.seed)
        curve = []
        for _ in range(cfg.fit_epochs):
            perm = torch.from_numpy(rng.permutation(tr_idx))
            for s0 in range(0, perm.numel(), 1024):
                i = perm[s0 : s0 + 1024]
                loss = torch.nn.functional.mse_loss(net(t["tile"][i], t["glob"][i], orc[i]), t["ret"][i])
                opt.zero_grad()
                loss.backward()
                opt.step()
            with torch.no_grad():
                v = net(t["tile"][h], t["glob"][h], orc[h]).double().numpy()
            curve.append(1.0 - float(np.var(y - v)) / float(np.var(y)))
        out[name] = {"held_out_ev": curve[-1], "best_ev": max(curve), "curve": curve}
    return out


def _markdown(res: dict[str, Any]) -> str:
    lines = []
    v = res.get("variance")
    lines += (
        []
        if v is None
        else [
            f"Learner points per hand over {v['hands']:,} hands ({res['config']['walls']} deals x "
            f"{res['config']['replays']} plays): mean {v['mean']:+.2f}, variance {v['total_var']:.0f}; between "
            f"deals {v['between_deals_var']:.0f}, within a deal {v['within_deal_var']:.0f}: "
            f"**{100 * v['deal_share']:.0f}% of the variance comes from the deal and the draws**.",
        ]
    )
    lines += [
        "",
        "| critic | value EV after warm-up | value EV at the end | mean approx KL | mean clip fraction |",
        "| --- | --- | --- | --- | --- |",
    ]
    w = res["config"]["value_warmup"]
    for c, r in res["runs"].items():
        rows = r["rows"]
        warm = [x for x in rows if x["update"] == w]
        after = [x for x in rows if x["update"] > w]
        kl = np.mean([x.get("approx_kl", np.nan) for x in after]) if after else float("nan")
        cf = np.mean([x.get("clipfrac", np.nan) for x in after]) if after else float("nan")
        ev_w = warm[0].get("value_ev", float("nan")) if warm else float("nan")
        lines.append(f"| {c} | {ev_w:.3f} | {r['final_value_ev']:.3f} | {kl:.2e} | {cf:.4f} |")
    if "critic_fit" in res:
        f = res["critic_fit"]
        lines += [
            "",
            f"Critic fitted by regression to {f['decisions']:,} Monte-Carlo returns ({f['held_out']:,} held out, "
            f"{res['config']['fit_epochs']} epochs): explained variance on held-out tables",
            "",
            "| critic input | held-out EV (last epoch) | best epoch |",
            "| --- | --- | --- |",
        ]
        for name in ("observation only", "with the oracle block"):
            lines.append(f"| {name} | {f[name]['held_out_ev']:.3f} | {f[name]['best_ev']:.3f} |")
    lines += [
        "",
        "| critic | class | decisions | share | advantage std | share of sum of squares |",
        "| --- " * 6 + "|",
    ]
    for c, r in res["runs"].items():
        for name, s in r["classes"].items():
            lines.append(
                f"| {c} | {name} | {s['count']:,} | {100 * s['share']:.1f}% | {s['adv_std']:.3f} | "
                f"{100 * s['adv_sumsq_share']:.1f}% |"
            )
    return "\n".join(lines)


def diagnose(cfg: DiagConfig) -> dict[str, Any]:
    bad = [c for c in cfg.critics if c not in CRITICS]
    if bad:
        raise ValueError(f"unknown critic(s) {bad}; choose from {CRITICS}")
    for name in ("updates", "num_envs", "rollout_steps", "fit_steps", "fit_epochs"):
        if getattr(cfg, name) < 1:
            raise ValueError(f"DiagConfig.{name} must be >= 1")
    for name in ("walls", "fit_rollouts"):
        if getattr(cfg, name) < 0:
            raise ValueError(f"DiagConfig.{name} must be >= 0")
    if not 2 <= cfg.replays:
        raise ValueError("DiagConfig.replays must be >= 2 (the within-deal variance needs two plays)")
    if not Path(cfg.init_from).is_file():
        raise FileNotFoundError(f"init_from: no checkpoint at {cfg.init_from}")
    ann.set_torch_threads(cfg.torch_threads)
    t0 = time.perf_counter()
    res: dict[str, Any] = {"config": asdict(cfg), "runs": {}}
    if cfg.fit_rollouts:
        res["critic_fit"] = critic_fit(cfg)
    if cfg.walls:
        res["variance"] = variance_split(cfg)
    for c in tqdm(cfg.critics, desc="short PPO runs", disable=not cfg.progress):
        res["runs"][c] = short_run(cfg, c)
    res["seconds"] = time.perf_counter() - t0
    out = Path(cfg.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "diagnosis.json").write_text(json.dumps(res, indent=1))
    res["markdown"] = _markdown(res)
    return res


def main() -> None:
    import tyro

    cfg = tyro.cli(DiagConfig)
    try:
        res = diagnose(cfg)
    except (TypeError, ValueError, FileNotFoundError) as e:
        raise SystemExit(f"train.diagnose: error: {e}") from None
    print(res["markdown"])
    print(f"\n({res['seconds']:.0f} s; {Path(cfg.out) / 'diagnosis.json'})")


if __name__ == "__main__":
    main()
