"""One command from a fresh clone to a network with its strength measured: ``python -m train.recipe``.

Seven stages, each writing into ``out_dir`` (``--help`` lists every setting with its default):

1. ``teacher``: rule-agent decisions at four-chair tables (:func:`train.bc.generate_teacher`) -> ``teacher.npz``.
2. ``bc``: behaviour cloning of them into the tile-plane network with features (:func:`train.bc.run`) ->
   ``bc.safetensors``.
3. ``ppo``: PPO self-play from it against rule-agent opponents, the rate annealed to 0 (:mod:`train.ppo`) ->
   ``ppo/policy.safetensors``.
4. ``fine``: PPO from that at a small constant rate and ``gae_lambda`` 0.8, the learner playing through the wait
   check of ``agents.nn:baseline`` (``train.ppo --rollout-check``: it learns around the check), written every
   ``snapshot_every`` updates (``fine/snapshots/``).
5. ``average``: the uniform weight average of the fine stage's snapshots after its first ``average_skip`` share
   (:func:`train.average.average_checkpoints`; stochastic weight averaging) -> ``average.safetensors``.
6. ``distil``: ``distil_rounds`` rounds of expert iteration with the wait check as the improvement operator: the
   latest network with the wait check of ``agents.nn:baseline`` (``agents.waits.BASELINE_CHECK``) plays the
   fourth chair against three rule agents, and its decisions are cloned back into that network, which gains
   the wait inputs (``agents.nn.NNConfig.wait_inputs``, zero weights at the start) and, with
   ``distil_near_inputs``, the check's second step (``agents.nn.NNConfig.near_inputs``) ->
   ``distil/round<k>.safetensors``.
7. ``final``: 1v3 duplicate against the rule agent on ``final_walls`` walls of ``final_seed`` (a range the docs
   reserve for this evaluation: nothing in the recipe picks by it), the last network alone and with the wait
   check of ``agents.nn:baseline``, raw and luck-adjusted -> ``report.json`` and ``agent.safetensors``: the
   network with the zoo's metadata keys (:data:`agents.zoo_meta.REQUIRED_KEYS`: name, the command, commit, date,
   strength) and ``recipe_*`` keys (the settings, every stage's seconds and training seeds).

**Resume**: rerun the same command. ``out_dir/recipe.json`` records the settings and each finished stage; a
finished stage is skipped, the two PPO stages continue exactly from their last checkpoint (``train.ppo``'s
``--resume``), and a stage killed before its end otherwise starts again (teacher data and cloning take minutes).
A kill at any point therefore ends with the same network as an uninterrupted run (tested). A rerun may change
the settings of stages that have not started yet (:data:`SETTING_STAGE`; ``recipe.json`` lists each change under
``changed`` and records the new command); a setting of a stage that has started stops it with an error naming the
setting (``device`` and ``progress`` may always change).

The estimate of the time left printed at each stage comes from the rates measured so far in this run (defaults
measured on a 2-core machine before the first); each stage has its own progress bar.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

from mjenv.arena.report import format_ci
from train._checks import check_ints

#: seeds of the final evaluation: every recipe's ``final_seed`` lies here, and no training seed does
FINAL_SEEDS = range(8_000_000, 9_000_000)
STAGES = ("teacher", "bc", "ppo", "fine", "average", "distil", "final")
STATE_FORMAT = "mjenv-train-recipe/1"
#: settings a rerun may change without changing what the recipe computes
MAY_CHANGE = frozenset({"progress", "device"})
#: the first stage each other setting changes: on a rerun a setting may change until that stage has started
SETTING_STAGE = {
    **dict.fromkeys(("out_dir", "seed", "threads", "torch_threads", "teacher_decisions"), "teacher"),
    **dict.fromkeys(("blocks", "channels", "bc_epochs", "bc_batch_size", "bc_lr"), "bc"),
    **dict.fromkeys(
        ("num_envs", "rollout_steps", "ppo_updates", "ppo_epochs", "ppo_lr", "value_warmup", "eval_every"),
        "ppo",
    ),
    **dict.fromkeys(
        ("fine_updates", "fine_lr", "fine_gae_lambda", "fine_rollout_check", "snapshot_every"), "fine"
    ),
    "average_skip": "average",
    **dict.fromkeys(
        ("distil_rounds", "distil_decisions", "distil_epochs", "distil_lr", "distil_near_inputs"), "distil"
    ),
    **dict.fromkeys(("final_walls", "final_seed", "name"), "final"),
}
#: settings added to RecipeConfig after its first release, with the value that runs started before them used
BEFORE_ADDED = {"ppo_epochs": 3, "distil_near_inputs": False}
# rates before this run has measured its own: its first run (2-core AMD EPYC, one Numba and one torch thread,
# another run on the other core, 2026-12-07, d865457)
DEFAULT_RATES = {
    "teacher_s_per_decision": 2.2e-5,
    "bc_s_per_decision": 4e-5,  # the inputs, once
    "bc_s_per_decision_epoch": 6e-5,  # the fit, per decision and epoch
    "ppo_s_per_decision": 1.25e-4,  # 4.1 s per update of 32,768 decisions, 3 epochs
    "final_s_per_wall": 0.0097,  # per agent, adjusted
    "distil_s_per_decision": 1.5e-4,  # the network with the check against three rule agents
    "distil_fit_s_per_decision": 4.5e-5,  # the inputs with the wait planes, once
    "distil_near_s_per_decision": 6.5e-5,  # and the near planes (agents.waits.near_values), once (2026-12-08)
}


@dataclass
class RecipeConfig:
    """Settings of ``python -m train.recipe`` (its defaults are the recipe)."""

    out_dir: str = "runs/recipe"
    """folder of every stage's output; rerun the same command to resume"""
    seed: int = 0
    """seeds every stage: teacher walls ``seed``, cloning ``seed``, PPO ``seed + 1``, fine ``seed + 2``, distil
    round ``k`` ``seed + 2 + k``"""
    name: str | None = None
    """the ``zoo_name`` written into agent.safetensors (default: recipe-<date>-s<seed>)"""
    threads: int = 1
    """Numba threads (env, features, rule agent); 1 + 1 was measured fastest on a shared 2-core machine"""
    torch_threads: int = 1
    device: str = "auto"
    """auto (CUDA when present), cpu, cuda, cuda:N"""
    progress: bool = True
    teacher_decisions: int = 1_000_000
    """rule-agent decisions to clone (those with more than one legal action)"""
    blocks: int = 2
    """residual blocks of the tile-plane network"""
    channels: int = 32
    """channels of the tile-plane network"""
    bc_epochs: int = 6
    bc_batch_size: int = 1024
    bc_lr: float = 2e-3
    num_envs: int = 512
    """tables of both PPO stages"""
    rollout_steps: int = 64
    ppo_updates: int = 800
    """updates of the PPO stage (its rate annealed linearly to 0 over them)"""
    ppo_epochs: int = 3
    """PPO stage: passes over each rollout (train.ppo --epochs); one pass runs about twice the decisions/s of
    three, but 1,600 updates of one ended the recipe about 0.2 points per hand weaker (docs/training.md)"""
    ppo_lr: float = 1.5e-3
    value_warmup: int = 20
    """PPO stage: updates that train the value head alone first (the cloned network has none)"""
    fine_updates: int = 500
    """updates of the fine stage (constant rate)"""
    fine_lr: float = 2.5e-4
    fine_gae_lambda: float = 0.8
    fine_rollout_check: bool = True
    """fine stage: the learner plays through the wait check of agents.nn:baseline (train.ppo --rollout-check)
    and learns around it"""
    snapshot_every: int = 10
    """fine stage: write the learner every this many updates (the average's members)"""
    average_skip: float = 0.2
    """leave the fine stage's snapshots of its first this share of updates out of the average"""
    distil_rounds: int = 3
    """rounds of the distil stage (0: none; the final network is then the average)"""
    distil_decisions: int = 1_000_000
    """decisions of the network with the check cloned in each round"""
    distil_epochs: int = 3
    distil_lr: float = 5e-4
    distil_near_inputs: bool = True
    """distil stage: the network also gains the check's second step as inputs (agents.nn.NNConfig.near_inputs:
    the waits each discard reaches one draw later); +0.6 and +1.0 points per hand alone at the recipe's end on two
    seeds (docs/training.md)"""
    eval_every: int = 100
    """in-run evaluation of both PPO stages on 200 walls (a learning curve; nothing picks by it); 0: never"""
    final_walls: int = 10_000
    final_seed: int = 8_000_000
    """walls of the final evaluation; in FINAL_SEEDS (8,000,000-8,999,999), which no training seed may use"""


def check_config(cfg: RecipeConfig) -> RecipeConfig:
    """``TypeError``/``ValueError`` naming the first bad setting, before any work."""
    ints = {"seed": 0, "threads": 1, "torch_threads": 1, "teacher_decisions": 2, "blocks": 1, "channels": 1,
            "bc_epochs": 1, "bc_batch_size": 1, "num_envs": 1, "rollout_steps": 1, "ppo_updates": 1,
            "ppo_epochs": 1, "value_warmup": 0, "fine_updates": 1, "snapshot_every": 1, "eval_every": 0,
            "final_walls": 1, "final_seed": 0, "distil_rounds": 0, "distil_decisions": 2,
            "distil_epochs": 1}  # fmt: skip
    check_ints(cfg, "RecipeConfig", ints)
    for k in ("bc_lr", "ppo_lr", "fine_lr", "fine_gae_lambda", "average_skip", "distil_lr"):
        v = getattr(cfg, k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise TypeError(f"RecipeConfig.{k} must be a finite number, got {v!r}")
    for k in ("bc_lr", "ppo_lr", "fine_lr", "distil_lr"):
        if not getattr(cfg, k) > 0:
            raise ValueError(f"RecipeConfig.{k} must be > 0, got {getattr(cfg, k)}")
    if not 0 <= cfg.fine_gae_lambda <= 1:
        raise ValueError(f"RecipeConfig.fine_gae_lambda must be in [0, 1], got {cfg.fine_gae_lambda}")
    if not 0 <= cfg.average_skip < 1:
        raise ValueError(f"RecipeConfig.average_skip must be in [0, 1), got {cfg.average_skip}")
    if cfg.value_warmup >= cfg.ppo_updates:
        raise ValueError(
            f"RecipeConfig.value_warmup ({cfg.value_warmup}) must be < ppo_updates ({cfg.ppo_updates})"
        )
    if not snapshot_updates(cfg):
        raise ValueError(f"no fine-stage snapshot to average: fine_updates={cfg.fine_updates}, snapshot_every="
                         f"{cfg.snapshot_every}, average_skip={cfg.average_skip}")  # fmt: skip
    if cfg.final_seed not in FINAL_SEEDS:
        raise ValueError(f"RecipeConfig.final_seed must be in {FINAL_SEEDS.start:,}-{FINAL_SEEDS.stop - 1:,} (the "
                         f"walls reserved for the final evaluation), got {cfg.final_seed}")  # fmt: skip
    if FINAL_SEEDS.start <= last_training_seed(cfg) and cfg.seed < FINAL_SEEDS.stop:
        raise ValueError(f"RecipeConfig.seed {cfg.seed} reaches the final evaluation's seeds {FINAL_SEEDS.start:,}-"
                         f"{FINAL_SEEDS.stop - 1:,}")  # fmt: skip
    if cfg.name is not None and (not isinstance(cfg.name, str) or not cfg.name or "/" in cfg.name):
        raise ValueError(f"RecipeConfig.name must be a non-empty str without '/', got {cfg.name!r}")
    ppo_config(cfg, "ppo", None)  # train.ppo's own checks (device, sizes)
    return cfg


def distil_seed(cfg: RecipeConfig, k: int) -> int:
    """The walls seed of the distil stage's round ``k`` (1-based)."""
    return cfg.seed + 2 + k


def last_training_seed(cfg: RecipeConfig) -> int:
    """The largest walls seed a training stage uses."""
    return distil_seed(cfg, cfg.distil_rounds) if cfg.distil_rounds else cfg.seed + 2


def final_network(cfg: RecipeConfig) -> Path:
    """The network the final stage measures and ships: the distil stage's last round, else the average."""
    out = Path(cfg.out_dir)
    return (
        out / "distil" / f"round{cfg.distil_rounds}.safetensors"
        if cfg.distil_rounds
        else out / "average.safetensors"
    )


def snapshot_updates(cfg: RecipeConfig) -> list[int]:
    """The fine stage's updates whose snapshots the average takes."""
    first = math.floor(cfg.average_skip * cfg.fine_updates)
    return [u for u in range(cfg.snapshot_every, cfg.fine_updates + 1, cfg.snapshot_every) if u > first]


def ppo_config(cfg: RecipeConfig, stage: str, init_from: str | None):
    """The :class:`train.ppo.PPOConfig` of PPO stage ``stage`` (``"ppo"`` or ``"fine"``)."""
    from train.ppo import PPOConfig
    from train.run import check_config as check_ppo

    out = Path(cfg.out_dir)
    common = dict(num_envs=cfg.num_envs, rollout_steps=cfg.rollout_steps, threads=cfg.threads,
                  torch_threads=cfg.torch_threads, device=cfg.device, progress=cfg.progress, init_from=init_from,
                  eval_every=cfg.eval_every, keep_eval_policies=False, save_every=10)  # fmt: skip
    if stage == "ppo":
        pc = PPOConfig(run_dir=str(out / "ppo"), seed=cfg.seed + 1, updates=cfg.ppo_updates, lr=cfg.ppo_lr,
                       epochs=cfg.ppo_epochs, anneal_lr=True, value_warmup=cfg.value_warmup, **common)  # fmt: skip
    else:
        pc = PPOConfig(run_dir=str(out / "fine"), seed=cfg.seed + 2, updates=cfg.fine_updates, lr=cfg.fine_lr,
                       anneal_lr=False, gae_lambda=cfg.fine_gae_lambda, value_warmup=0,
                       snapshot_every=cfg.snapshot_every, rollout_check=cfg.fine_rollout_check, **common)  # fmt: skip
    # train.ppo's own checks; without a start network, on the network the cloning stage makes
    check_ppo(pc if init_from is not None else replace(pc, arch="planes", blocks=cfg.blocks,
                                                         channels=cfg.channels, with_features=True))  # fmt: skip
    return pc


# ------------------------------------------------------------------------------------------------ state
class Stop(Exception):
    """Raised by :func:`run_recipe` at ``stop`` (a simulated kill, for the tests)."""


def _commit() -> str:
    """The checkout's commit (``-dirty`` with uncommitted changes to tracked files); ``unknown`` outside git."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              check=True).stdout.strip()  # fmt: skip
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def code_commits(data: dict[str, Any]) -> list[dict[str, str]]:
    """The commits whose code ran a recipe run (``recipe.json``'s content): ``[{"from": stage, "commit": c}, ...]``,
    the first from the start, then each resume on other code, at the stage it resumed in."""
    out = [{"from": STAGES[0], "commit": data["commit"]}]
    for r in data.get("resumed", []):
        if r["commit"] != out[-1]["commit"]:
            out.append({"from": r["at"], "commit": r["commit"]})
    return out


class State:
    """``out_dir/recipe.json``: the settings, the command, the commit it started on and each resume's
    (``resumed``: the stage, commit and date of each rerun before the end), and each finished stage's record."""

    def __init__(self, cfg: RecipeConfig, command: str) -> None:
        self.path = Path(cfg.out_dir) / "recipe.json"
        if self.path.is_file():
            data = json.loads(self.path.read_text())
            if data.get("format") != STATE_FORMAT:
                raise ValueError(f"{self.path} is not a train.recipe state ({data.get('format')!r})")
            # a run started before a setting existed ran with the value BEFORE_ADDED names
            saved = {**BEFORE_ADDED, **data["config"]}
            now = asdict(cfg)
            diff = {k: [saved.get(k), v] for k, v in now.items() if k not in MAY_CHANGE and saved.get(k) != v}
            begun = [
                STAGES.index(k)
                for k in (*data["stages"], *([data["running"]] if data.get("running") else []))
            ]
            started = STAGES[: max(begun) + 1] if begun else ()
            fixed = {k: d for k, d in diff.items() if SETTING_STAGE[k] in started}
            if fixed:
                raise ValueError(f"{cfg.out_dir} holds a recipe run of other settings (recorded, given): {fixed}, "
                                 f"of stages that have started ({', '.join(started)}); rerun with the recorded "
                                 "settings or choose another --out-dir")  # fmt: skip
            self.data = data
            if diff:  # settings of stages not yet started: the run goes on with them, and says so
                data.setdefault("changed", []).append({"before": STAGES[len(started)], "settings": diff})
                data["command"] = command
            self.data["config"] = now
            left = [k for k in STAGES if k not in data["stages"]]
            if left:  # the code of each resume: a run may outlive commits (a finished run reruns as a no-op)
                data.setdefault("resumed", []).append(
                    {
                        "at": left[0],  # the first stage not finished (the one running at the kill)
                        "commit": _commit(),
                        "date": dt.date.today().isoformat(),
                    }
                )
        else:
            self.data = {"format": STATE_FORMAT, "config": asdict(cfg), "command": command, "commit": _commit(),
                         "started": dt.date.today().isoformat(), "stages": {}}  # fmt: skip
            self.save()

    @property
    def stages(self) -> dict[str, dict[str, Any]]:
        return self.data["stages"]

    def done(self, stage: str, record: dict[str, Any]) -> None:
        self.stages[stage] = record
        self.save()

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.data, indent=1))
        os.replace(tmp, self.path)


def _ppo_seconds_per_decision(run_dir: Path) -> float | None:
    """This run's measured PPO seconds per decision (from a stage's progress.csv), None before any update."""
    import csv

    p = run_dir / "progress.csv"
    if not p.is_file():
        return None
    rows = list(csv.DictReader(p.open(newline="")))
    if len(rows) < 2:
        return None
    secs = float(rows[-1]["seconds"]) - float(rows[0]["seconds"])
    decs = float(rows[-1]["decisions"]) - float(rows[0]["decisions"])
    return secs / decs if decs > 0 and secs > 0 else None


def estimate_seconds(cfg: RecipeConfig, state: State) -> dict[str, float]:
    """Seconds each unfinished stage is expected to take (rates this run measured, else :data:`DEFAULT_RATES`)."""
    r = dict(DEFAULT_RATES)
    st, out = state.stages, Path(cfg.out_dir)
    if "teacher" in st:
        r["teacher_s_per_decision"] = st["teacher"]["seconds"] / cfg.teacher_decisions
    # a PPO stage's own rate once measured; else the other stage's (or the default, measured at 3 epochs) scaled
    # by 1 + epochs: with the planes network one epoch of the update costs about what the rollout costs
    epochs = {k: ppo_config(cfg, k, None).epochs for k in ("ppo", "fine")} | {"default": 3}
    rates = {k: _ppo_seconds_per_decision(out / k) for k in ("ppo", "fine")}

    def ppo_left(stage: str, updates: int) -> float:
        from train.run import read_checkpoint

        other = "fine" if stage == "ppo" else "ppo"
        src = stage if rates[stage] else other if rates[other] else "default"
        rate = r["ppo_s_per_decision"] if src == "default" else rates[src]
        per_update = cfg.num_envs * cfg.rollout_steps * rate * (1 + epochs[stage]) / (1 + epochs[src])
        ck = out / stage / "checkpoint.safetensors"
        done = json.loads(read_checkpoint(ck)[1]["counters"])["update"] if ck.is_file() else 0
        return (updates - done) * per_update

    distil_left = sum(
        not (out / "distil" / f"round{k}.safetensors").is_file() for k in range(1, cfg.distil_rounds + 1)
    )
    per_distil_decision = (r["distil_s_per_decision"] + r["distil_fit_s_per_decision"]
                           + cfg.distil_near_inputs * r["distil_near_s_per_decision"]
                           + cfg.distil_epochs * r["bc_s_per_decision_epoch"])  # fmt: skip
    est = {
        "teacher": cfg.teacher_decisions * r["teacher_s_per_decision"],
        "bc": cfg.teacher_decisions * (r["bc_s_per_decision"] + cfg.bc_epochs * r["bc_s_per_decision_epoch"]),
        "ppo": ppo_left("ppo", cfg.ppo_updates) if "ppo" not in st else 0.0,
        "fine": ppo_left("fine", cfg.fine_updates) if "fine" not in st else 0.0,
        "average": 1.0,
        "distil": distil_left * cfg.distil_decisions * per_distil_decision,
        "final": 2 * cfg.final_walls * r["final_s_per_wall"],
    }
    return {k: v for k, v in est.items() if k not in st}


def _hours(s: float) -> str:
    return f"{s / 3600:.1f} h" if s >= 5400 else f"{s / 60:.0f} min"


# ------------------------------------------------------------------------------------------------ stages
def _teacher_data(cfg: RecipeConfig, path: Path, teacher: str, decisions: int, seed: int, meta: dict[str, Any],
                  **kwargs: Any) -> int:  # fmt: skip
    """``decisions`` decisions of ``teacher`` (:func:`train.bc.generate_teacher` on tables of min fan 8, ``kwargs``
    its teacher and opponent options) written to ``path`` whole or not at all; returns how many were kept."""
    from mjenv.rules import RuleConfig
    from train import bc

    rules = RuleConfig(min_fan=8, illegal="raise")
    data = bc.generate_teacher(teacher, decisions, num_envs=256, seed=seed, rules=rules, threads=cfg.threads,
                               progress=cfg.progress, **kwargs)  # fmt: skip
    tmp = path.with_name(f"{path.stem}.tmp.npz")
    bc.save_dataset(tmp, data, {"teacher": teacher, "min_fan": 8, "seed": seed, **meta})
    os.replace(tmp, path)
    return int(data["actions"].shape[0])


def stage_teacher(cfg: RecipeConfig) -> dict[str, Any]:
    out = Path(cfg.out_dir) / "teacher.npz"
    n = _teacher_data(cfg, out, "agents.rule:make", cfg.teacher_decisions, cfg.seed, {}, teacher_kwargs={})
    return {"decisions": n, "walls_seed": cfg.seed}


def stage_bc(cfg: RecipeConfig) -> dict[str, Any]:
    from train import bc

    out = Path(cfg.out_dir)
    tmp = out / "bc.tmp.safetensors"
    rep = bc.run(bc.BCConfig(
        out=str(tmp), data=str(out / "teacher.npz"), arch="planes", blocks=cfg.blocks, channels=cfg.channels,
        with_features=True, epochs=cfg.bc_epochs, batch_size=cfg.bc_batch_size, lr=cfg.bc_lr, seed=cfg.seed,
        threads=cfg.threads, torch_threads=cfg.torch_threads, device=cfg.device, progress=cfg.progress,
    ))  # fmt: skip
    os.replace(tmp.with_suffix(".json"), out / "bc.json")
    os.replace(tmp, out / "bc.safetensors")
    return {"held_out_agreement": rep["held_out"]["agreement"], "parameters": rep["parameters"]}


def stage_ppo(cfg: RecipeConfig, stage: str, stop_after: int | None) -> dict[str, Any]:
    from train.ppo import Trainer

    out = Path(cfg.out_dir)
    init = out / ("bc.safetensors" if stage == "ppo" else "ppo/policy.safetensors")
    pc = ppo_config(cfg, stage, str(init))
    if (Path(pc.run_dir) / "checkpoint.safetensors").is_file():
        pc = replace(pc, resume=True)
    tr = Trainer(pc)
    res = tr.run(stop_after=stop_after)
    c = tr.counters
    if c["update"] < pc.updates:
        raise Stop(f"{stage} stopped at update {c['update']}")
    return {"updates": c["update"], "decisions": c["decisions"], "hands": c["hands"],
            "ppo_seconds": c["seconds"], "walls_seed": pc.seed, "last_eval": res["last_eval"]}  # fmt: skip


def stage_average(cfg: RecipeConfig) -> dict[str, Any]:
    from agents import nn as ann
    from train.average import average_checkpoints

    out = Path(cfg.out_dir)
    paths = [out / "fine" / "snapshots" / f"policy_u{u:06d}.safetensors" for u in snapshot_updates(cfg)]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"fine-stage snapshots missing: {missing[:3]}{' ...' if len(missing) > 3 else ''}"
        )
    tmp = out / "average.tmp.safetensors"
    ann.save(average_checkpoints(paths), tmp)
    os.replace(tmp, out / "average.safetensors")
    return {"members": len(paths), "first_update": snapshot_updates(cfg)[0], "last_update": cfg.fine_updates}


def stage_distil(cfg: RecipeConfig, stop_round: int | None = None) -> dict[str, Any]:
    """Every round not yet finished (``distil/round<k>.safetensors`` and ``.json`` mark a finished one); a
    round killed before its end starts again. ``stop_round``: raise :class:`Stop` before that round."""
    from agents.waits import BASELINE_CHECK
    from train import bc

    out = Path(cfg.out_dir) / "distil"
    out.mkdir(parents=True, exist_ok=True)
    prev = Path(cfg.out_dir) / "average.safetensors"
    for k in range(1, cfg.distil_rounds + 1):
        net_k = out / f"round{k}.safetensors"
        if net_k.is_file() and net_k.with_suffix(".json").is_file():
            prev = net_k
            continue
        if stop_round == k:
            raise Stop(f"stopped before distil round {k}")
        teacher_opt = {"checkpoint": str(prev), "greedy": True, "waits": asdict(BASELINE_CHECK),
                       "threads": cfg.torch_threads}  # fmt: skip
        path = out / f"teacher{k}.npz"
        meta = {"teacher_opt": {**teacher_opt, "checkpoint": prev.name}, "opponent": "agents.rule:make"}
        _teacher_data(cfg, path, "agents.nn:make", cfg.distil_decisions, distil_seed(cfg, k), meta,
                      teacher_kwargs=teacher_opt, opponent="agents.rule:make")  # fmt: skip
        tmp = out / f"round{k}.tmp.safetensors"
        bc.run(bc.BCConfig(
            out=str(tmp), data=str(path), init_from=str(prev), wait_inputs=True,
            near_inputs=cfg.distil_near_inputs, epochs=cfg.distil_epochs,
            batch_size=cfg.bc_batch_size, lr=cfg.distil_lr, seed=distil_seed(cfg, k), threads=cfg.threads,
            torch_threads=cfg.torch_threads, device=cfg.device, progress=cfg.progress,
        ))  # fmt: skip
        os.replace(tmp, net_k)
        os.replace(tmp.with_suffix(".json"), net_k.with_suffix(".json"))
        path.unlink()  # the round's data (110 MB per million decisions) is made again from its seed if needed
        prev = net_k
    rounds = [json.loads((out / f"round{k}.json").read_text()) for k in range(1, cfg.distil_rounds + 1)]
    return {"rounds": cfg.distil_rounds, "walls_seeds": [distil_seed(cfg, k) for k in range(1, cfg.distil_rounds + 1)],
            "decisions": sum(r["decisions"] for r in rounds),
            "held_out_agreement": [r["held_out"]["agreement"] for r in rounds]}  # fmt: skip


def stage_final(cfg: RecipeConfig, state: State, t0: float) -> dict[str, Any]:
    from agents.waits import BASELINE_CHECK
    from mjenv.arena import run_arena

    out = Path(cfg.out_dir)
    net = str(final_network(cfg))
    report: dict[str, Any] = {"against": "agents.rule:make", "seating": "1v3", "walls": cfg.final_walls,
                              "seed": cfg.final_seed}  # fmt: skip
    # the network alone, and with the check of the strongest shipped agent (agents.nn:baseline's)
    for key, waits in (("alone", False), ("checked", asdict(BASELINE_CHECK))):
        rep = run_arena(
            {"nn": "agents.nn:make", "rule": "agents.rule:make"}, "1v3", walls=cfg.final_walls, seed=cfg.final_seed,
            threads=cfg.threads, agent_kwargs={"nn": {"checkpoint": net, "greedy": True, "waits": waits}},
            records=0, illegal_records=0, record_info=False, progress=cfg.progress, adjust=True,
        )  # fmt: skip
        a = rep["agents"]["nn"]
        report[key] = {"points_per_hand": a["points_per_hand"], "adjusted": a["adjusted"]["points_per_hand"],
                       "deal_in_rate": a.get("deal_in_rate"), "win_rate": a.get("win_rate")}  # fmt: skip
    (out / "report.json").write_text(json.dumps(report, indent=1))
    write_agent(cfg, state, report, time.perf_counter() - t0)
    return {k: report[k]["points_per_hand"] for k in ("alone", "checked")}


def write_agent(cfg: RecipeConfig, state: State, report: dict[str, Any], final_seconds: float) -> Path:
    """``out_dir/agent.safetensors``: the final network with the zoo's metadata keys and the recipe's."""
    import shutil

    from agents.zoo_meta import write_metadata

    out = Path(cfg.out_dir)
    st = state.stages
    secs = {k: round(float(r["seconds"]), 1) for k, r in st.items()} | {"final": round(final_seconds, 1)}
    name = cfg.name or f"recipe-{dt.date.today().isoformat()}-s{cfg.seed}"
    strength = {"against": "agents.rule:make", "seating": "1v3", "walls": cfg.final_walls, "seed": cfg.final_seed,
                "alone": format_ci(report["alone"]["points_per_hand"]),
                "checked": format_ci(report["checked"]["points_per_hand"])}  # fmt: skip
    training = {"teacher_walls_seed": cfg.seed, "ppo_walls_seed": cfg.seed + 1, "fine_walls_seed": cfg.seed + 2,
                "teacher_decisions": st["teacher"]["decisions"], "ppo_decisions": st["ppo"]["decisions"],
                "fine_decisions": st["fine"]["decisions"], "distil_walls_seeds": st["distil"]["walls_seeds"],
                "distil_decisions": st["distil"]["decisions"]}  # fmt: skip
    tmp = out / "agent.tmp.safetensors"
    shutil.copyfile(final_network(cfg), tmp)
    write_metadata(tmp, {
        "zoo_name": name, "zoo_recipe": state.data["command"], "zoo_commit": state.data["commit"],
        "zoo_date": dt.date.today().isoformat(), "zoo_strength": json.dumps(strength, sort_keys=True),
        "recipe_config": json.dumps({k: v for k, v in asdict(cfg).items() if k not in (*MAY_CHANGE, "out_dir")},
                                    sort_keys=True),
        "recipe_training": json.dumps(training),
        "recipe_seconds": json.dumps(secs | {"total": round(sum(secs.values()), 1)}),
        "recipe_commits": json.dumps(code_commits(state.data)),
    })  # fmt: skip
    os.replace(tmp, out / "agent.safetensors")
    return out / "agent.safetensors"


# ------------------------------------------------------------------------------------------------ driver
def run_recipe(
    cfg: RecipeConfig, command: str | None = None, stop: tuple[str, int] | None = None
) -> dict[str, Any]:
    """Run (or resume) every stage not yet finished; returns ``recipe.json``'s content. ``stop=(stage, n)``
    raises :class:`Stop` after ``n`` updates of a PPO stage, before round ``n`` of the distil stage, or before
    ``stage`` for another (a simulated kill)."""
    check_config(cfg)
    cmd = command or "python -m train.recipe " + " ".join(shlex.quote(a) for a in _cli_args(cfg))
    state = State(cfg, cmd)
    for stage in STAGES:
        if stage in state.stages:
            continue
        if stop is not None and stop[0] == stage and stage not in ("ppo", "fine", "distil"):
            raise Stop(f"stopped before {stage}")
        state.data["running"] = stage  # its settings are fixed from now on
        state.save()
        est = estimate_seconds(cfg, state)
        print(f"train.recipe: stage {STAGES.index(stage) + 1}/{len(STAGES)} {stage}, about {_hours(est[stage])}; "
              f"about {_hours(sum(est.values()))} left in all", file=sys.stderr, flush=True)  # fmt: skip
        t0 = time.perf_counter()
        if stage == "teacher":
            rec = stage_teacher(cfg)
        elif stage == "bc":
            rec = stage_bc(cfg)
        elif stage in ("ppo", "fine"):
            n = stop[1] if stop is not None and stop[0] == stage else None
            rec = stage_ppo(cfg, stage, n)
        elif stage == "average":
            rec = stage_average(cfg)
        elif stage == "distil":
            rec = stage_distil(cfg, stop[1] if stop is not None and stop[0] == stage else None)
        else:
            rec = stage_final(cfg, state, t0)
        # PPO stages: their training time over resumes; the others: this (last) attempt
        rec["seconds"] = rec.pop("ppo_seconds", None) or (time.perf_counter() - t0)
        state.done(stage, rec)
    return state.data


def _cli_args(cfg: RecipeConfig) -> list[str]:
    """The command-line flags that give ``cfg`` (those off their defaults)."""
    default = RecipeConfig()
    args = []
    for f in fields(cfg):
        v, d = getattr(cfg, f.name), getattr(default, f.name)
        if v == d or f.name in MAY_CHANGE or (f.name == "out_dir" and Path(v).is_absolute()):
            continue  # an absolute folder names a machine's path: left out of the recorded command
        flag = f.name.replace("_", "-")
        args += [f"--{flag}" if v else f"--no-{flag}"] if isinstance(v, bool) else [f"--{flag}", str(v)]
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import tyro

    cfg = tyro.cli(RecipeConfig, args=argv)
    try:
        check_config(cfg)
        data = run_recipe(cfg)
    except (TypeError, ValueError, FileNotFoundError) as e:
        raise SystemExit(f"train.recipe: error: {e}") from None
    st = data["stages"]
    total = sum(float(r["seconds"]) for r in st.values())
    parts = ", ".join(f"{k} {_hours(float(r['seconds']))}" for k, r in st.items())
    print(f"{cfg.out_dir}/agent.safetensors: against the rule agent, 1v3, {cfg.final_walls:,} walls of seed "
          f"{cfg.final_seed}: alone {format_ci(st['final']['alone'])}, "
          f"with the wait check {format_ci(st['final']['checked'])}; "
          f"{_hours(total)} in all ({parts})")  # fmt: skip
    return data


if __name__ == "__main__":
    main(sys.argv[1:])
