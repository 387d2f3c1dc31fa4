"""The run machinery of :mod:`train.ppo`: settings checks, the process set-up, checkpoints, logs, evaluation.

Nothing here changes what PPO computes; it makes a run start, stop, resume and report:

* **Settings**: :class:`RunSettings` (the folder, threads, device, evaluation, checkpoints, budget) and
  :func:`check_config`, which checks every setting of a :class:`train.ppo.PPOConfig` before any work starts.
* **Process**: :func:`setup_process` (torch threads, flushed subnormals, :func:`keep_freed_memory`).
* **Checkpoints**: ``run_dir/checkpoint.safetensors`` (:func:`save_checkpoint`, :func:`read_checkpoint`,
  :func:`restore_checkpoint`) holds the network, the optimizer, the opponent pool, the whole VectorEnv state
  (:meth:`mjenv.vector.VectorEnv.snapshot`), the chair owners, the step counters, the config and every RNG
  state (numpy, torch and the env's), with a SHA-256 of its tensors: ``--resume`` continues **exactly** as if
  the run had not been stopped (:func:`read_for_resume` refuses settings that the checkpoint fixes).
* **Logs**: :class:`RunLog` writes ``run_dir/config.json``, TensorBoard (``run_dir/tb``), the CSV
  (``run_dir/progress.csv``, cut back to the checkpoint on resume) and a tqdm bar.
* **Evaluation**: :func:`evaluate`, 1v3 duplicate against the rule agent (``eval_walls`` walls, fixed seed).
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from dataclasses import MISSING, asdict, dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents import nn as ann
from mjenv.rules import RuleConfig
from train._checks import check_ints
from train.critic import CRITICS
from train.opponents import OPPONENTS

CKPT_FORMAT = "mjenv-train-ppo/1"
TIMERS = ("env_s", "inference_s", "gae_s", "update_s", "other_s")


# ------------------------------------------------------------------------------------------------ settings
@dataclass
class RunSettings:
    """Where and how a run runs (options of ``python -m train.ppo``)."""

    run_dir: str = "runs/ppo"
    """folder of the logs and checkpoints"""
    threads: int = 2
    """Numba threads of the env, the features and the rule agent (2 on a 2-core machine of your own; on a
    loaded or shared machine pass ``--threads 1 --torch-threads 1``: there a second thread of each waits on
    the other processes and was measured 2-4x slower end to end)"""
    torch_threads: int = 2
    """torch intra-op threads (see ``threads``; 1 on a loaded machine)"""
    eval_every: int = 100
    """duplicate evaluation against the rule agent every this many updates (0: never)"""
    eval_walls: int = 200
    eval_seed: int = 12345
    keep_eval_policies: bool = True
    """write the learner of every evaluation to run_dir/evals/policy_uNNNNNN.safetensors (~0.3 MB each)"""
    save_every: int = 25
    """write the checkpoint every this many updates (and at the end)"""
    snapshot_every: int = 0
    """write the learner every this many updates to run_dir/snapshots/policy_uNNNNNN.safetensors, without an
    evaluation (for a weight average: train.average); 0: never"""
    device: str = "auto"
    """auto (CUDA when present), cpu, cuda, cuda:N"""
    resume: bool = False
    """continue from run_dir/checkpoint.safetensors (exactly); on the command line every setting not given
    again is the checkpoint's (``--run-dir D --resume --time-budget-s T`` continues a run with a larger budget)"""
    progress: bool = True
    time_budget_s: float | None = None
    """stop (after saving) once this run's training time (``seconds`` in the logs, summed over resumes) reaches
    this: equal-time comparisons (lab/notebook.md, "Ablations"); None: train for ``updates``"""


# settings a resume may change (the others are the checkpoint's)
RESUME_MAY_CHANGE = frozenset({
    "updates", "resume", "progress", "run_dir", "device", "eval_every", "save_every", "snapshot_every", "keep_eval_policies",
    "workers", "ray_address", "ray_num_cpus", "ray_ship_code", "time_budget_s",
})  # fmt: skip


def net_config(cfg) -> ann.NNConfig:
    """The network of a run that does not start from a checkpoint."""
    c = cfg
    return ann.NNConfig(c.channels, c.hidden, arch=c.arch, blocks=c.blocks, with_features=c.with_features,
                        wait_inputs=c.wait_inputs)  # fmt: skip


def check_config(cfg):
    """Raise ``TypeError``/``ValueError`` naming the first bad setting (before any work starts)."""
    ints = {
        "seed": 0, "updates": 1, "num_envs": 1, "rollout_steps": 1, "threads": 1, "torch_threads": 1,
        "min_fan": 0, "channels": 1, "hidden": 1, "epochs": 1, "minibatch_size": 1, "pool_size": 1,
        "pool_every": 1, "value_warmup": 0, "lr_warmup": 0, "eval_every": 0, "eval_walls": 1, "eval_seed": 0, "save_every": 1, "snapshot_every": 0,
        "workers": 0, "critic_channels": 1, "critic_hidden": 1,
    }  # fmt: skip
    check_ints(cfg, "PPOConfig", ints)
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


# ------------------------------------------------------------------------------------------------ process
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


def setup_process(cfg) -> torch.device:
    """The run's device, after setting torch's threads and the allocation settings of this process."""
    device = resolve_device(cfg.device)
    ann.set_torch_threads(cfg.torch_threads)
    # subnormal floats make CPU matmuls many times slower (seen with BC-initialised weights): flush them
    torch.set_flush_denormal(True)
    keep_freed_memory()  # no page faults on every minibatch's fresh tensors (see there)
    return device


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


def _env_arrays(env) -> dict[str, np.ndarray]:
    """The env's :meth:`~mjenv.vector.VectorEnv.snapshot` under the checkpoint's names (``env.<name>``)."""
    return {f"env.{k}": v for k, v in env.snapshot().items()}


def _cpu(sd: dict[str, torch.Tensor], prefix: str) -> dict[str, torch.Tensor]:
    return {f"{prefix}{k}": v.detach().cpu().contiguous().clone() for k, v in sd.items()}


def save_checkpoint(path: Path, tr) -> None:
    """Write the whole training state of the :class:`train.ppo.Trainer` ``tr`` atomically."""
    from safetensors.torch import save_file

    tensors = _cpu(tr.net.state_dict(), "model.")
    if tr.critic is not None:
        tensors.update(_cpu(tr.critic.state_dict(), "critic."))
    osd = tr.opt.state_dict()
    for pid, st in osd["state"].items():
        for key, v in st.items():
            tensors[f"optim.{pid}.{key}"] = torch.as_tensor(v).detach().cpu().contiguous().clone()
    pool_tensors, pool_meta = tr.opponents.state()
    tensors.update(pool_tensors)
    tensors.update({k: _np_to_t(v) for k, v in _env_arrays(tr.col.env).items()})
    tensors["collector.owners"] = _np_to_t(tr.col.owners)
    tensors["rng.torch_sampling"] = tr.gen.get_state().clone()
    meta = {
        "format": CKPT_FORMAT,
        "config": json.dumps(asdict(tr.cfg), sort_keys=True),
        "net_config": json.dumps(asdict(tr.net.config), sort_keys=True),
        "counters": json.dumps(tr.counters, sort_keys=True),
        "optim_groups": json.dumps(osd["param_groups"]),
        "rng_numpy_update": json.dumps(tr.rng.bit_generator.state),
        "rng_numpy_collector": json.dumps(tr.col.rng.bit_generator.state),
        **pool_meta,
    }
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


def _jsonable(v: Any) -> Any:
    return json.loads(json.dumps(v))


def read_for_resume(cfg) -> tuple[dict[str, torch.Tensor], dict[str, str]]:
    """The checkpoint of ``cfg.run_dir``, after checking that ``cfg`` differs from its settings only in
    :data:`RESUME_MAY_CHANGE` (a setting added after the checkpoint was written resumes at its default)."""
    ckpt = read_checkpoint(Path(cfg.run_dir) / "checkpoint.safetensors")
    saved = json.loads(ckpt[1]["config"])
    defaults = {f.name: f.default for f in fields(cfg) if f.default is not MISSING}
    diff = {
        k: (saved[k], v)
        for k, v in asdict(cfg).items()
        if k not in RESUME_MAY_CHANGE and saved.get(k, _jsonable(defaults.get(k))) != _jsonable(v)
    }
    if diff:
        raise ValueError(f"resume: the settings differ from the checkpoint's (saved, given): {diff}")
    return ckpt


def restore_checkpoint(tr, tensors: dict[str, torch.Tensor], meta: dict[str, str]) -> None:
    """Put the state of a checkpoint (:func:`save_checkpoint`) into the fresh trainer ``tr``; ``ValueError``
    when it does not fit the trainer's settings."""
    try:
        tr.net.load_state_dict({k[6:]: v for k, v in tensors.items() if k.startswith("model.")})
        if tr.critic is not None:
            tr.critic.load_state_dict({k[7:]: v for k, v in tensors.items() if k.startswith("critic.")})
        tr.opponents.load(tensors, meta, lambda: ann.build_net(tr.net.config), tr.device)
        state: dict[int, dict[str, torch.Tensor]] = {}
        for k, v in tensors.items():
            if k.startswith("optim."):
                _, pid, key = k.split(".", 2)
                state.setdefault(int(pid), {})[key] = v.to(tr.device) if key != "step" else v
        tr.opt.load_state_dict({"state": state, "param_groups": json.loads(meta["optim_groups"])})
        env = tr.col.env  # the checkpoint holds uint64 arrays as int64 bits (_np_to_t)
        arrays = {k: (tensors[f"env.{k}"].numpy(), v.dtype) for k, v in env.snapshot().items()}
        env.restore({k: a.view(dt) if dt == np.uint64 else a for k, (a, dt) in arrays.items()})
        tr.col.owners[:] = tensors["collector.owners"].numpy()
        tr.gen.set_state(tensors["rng.torch_sampling"])
        tr.rng.bit_generator.state = json.loads(meta["rng_numpy_update"])
        tr.col.rng.bit_generator.state = json.loads(meta["rng_numpy_collector"])
        tr.counters = json.loads(meta["counters"])
        tr.opponents.sync(tr.col)
    except (KeyError, RuntimeError, ValueError) as e:
        msg = f"the checkpoint does not fit these settings (missing or mismatched state): {e}"
        raise ValueError(msg) from e


def saved_settings(cls, run_dir: str | Path):
    """The settings (a ``cls``, e.g. :class:`train.ppo.PPOConfig`) a run in ``run_dir`` was started with, from
    its checkpoint, with ``resume=True``: ``--resume`` takes them as its defaults."""
    _, meta = read_checkpoint(Path(run_dir) / "checkpoint.safetensors")
    saved = json.loads(meta["config"])
    kw = {f.name: saved[f.name] for f in fields(cls) if f.name in saved}  # a newer setting: its default
    if "opponents" in kw:  # a JSON list; the field is a tuple
        kw["opponents"] = tuple(kw["opponents"])
    return cls(**{**kw, "run_dir": str(run_dir), "resume": True})


# ------------------------------------------------------------------------------------------------ logs
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


class RunLog:
    """The logs of a run from update ``start``: ``config.json``, TensorBoard, the CSV and the progress bar."""

    def __init__(self, cfg, start: int) -> None:
        from torch.utils.tensorboard import SummaryWriter
        from tqdm import tqdm

        run_dir = Path(cfg.run_dir)
        run_dir.mkdir(parents=True, exist_ok=True)
        (run_dir / "config.json").write_text(json.dumps(asdict(cfg), indent=1, sort_keys=True))
        self.csv_path = run_dir / "progress.csv"
        _truncate_csv(self.csv_path, start)
        self.writer = SummaryWriter(str(run_dir / "tb"), purge_step=start + 1)
        bar = {"unit": "upd", "dynamic_ncols": True, "disable": not cfg.progress}
        self.bar = tqdm(total=cfg.updates, initial=start, **bar)

    def write(self, row: dict[str, Any]) -> None:
        """One update's row: every number to TensorBoard, the CSV's columns to the CSV, a tick of the bar."""
        for key, val in row.items():
            if key != "update" and isinstance(val, (int, float)):
                self.writer.add_scalar(key, val, row["update"])
        _append_csv(self.csv_path, row)
        self.bar.update(1)
        pts = row.get("learner_points_per_hand", 0)
        self.bar.set_postfix(dps=f"{row['decisions_per_s']:,.0f}", pts=f"{pts:+.2f}")

    def close(self) -> None:
        self.bar.close()
        self.writer.close()


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


# ------------------------------------------------------------------------------------------------ command line
def cli(cls, make_trainer) -> None:
    """``python -m train.ppo``: parse the settings (a ``cls``), train a ``make_trainer(cfg)``, print a summary.
    With ``--resume`` every setting not given again is the checkpoint's; an error is one line, no traceback."""
    import tyro

    cfg = tyro.cli(cls)
    try:
        if cfg.resume and (Path(cfg.run_dir) / "checkpoint.safetensors").is_file():
            # parse again over the checkpoint's settings: a flag given differs from them only where the
            # checkpoint allows (time budget, updates, logging) or the Trainer names the difference
            cfg = tyro.cli(cls, default=saved_settings(cls, cfg.run_dir))
        check_config(cfg)
        tr = make_trainer(cfg)  # a resume's other settings, or a checkpoint that does not fit: an error too
    except (TypeError, ValueError, FileNotFoundError) as e:
        raise SystemExit(f"train.ppo: error: {e}") from None
    print(tr.col.env.num_envs, "tables;", ann.NNPolicy(tr.net, device=str(tr.device)).describe())
    out = tr.run()
    print(json.dumps({"counters": out["counters"], "last_eval": out["last_eval"]}, indent=1))


# ------------------------------------------------------------------------------------------------ evaluation
def evaluate(net, cfg, device: torch.device, update: int) -> dict[str, float]:
    """1v3 duplicate of the learner ``net`` (greedy) against the rule agent: its points per hand with a 95% CI
    (``eval_mean``, ``eval_ci_lo``, ``eval_ci_hi``). With ``keep_eval_policies`` the evaluated learner is
    written to ``run_dir/evals/policy_u<update>.safetensors`` (to ship the best one later)."""
    from mjenv.arena import run_arena

    snap = ann.build_net(net.config)
    snap.load_state_dict({k: v.cpu() for k, v in net.state_dict().items()})
    dev = str(device)

    def factory(num_envs: int, seed: int) -> ann.NNPolicy:
        return ann.NNPolicy(snap, seed=seed, device=dev, greedy=True)

    rep = run_arena(
        {"ppo": factory, "rule": "agents.rule:make"}, "1v3", walls=cfg.eval_walls, seed=cfg.eval_seed,
        tables=min(1024, 4 * cfg.eval_walls), threads=cfg.threads, rules=RuleConfig(min_fan=cfg.min_fan),
        records=0, illegal_records=0, record_info=False, progress=False,
    )  # fmt: skip
    a = rep["agents"]["ppo"]["points_per_hand"]
    if cfg.keep_eval_policies:
        ann.save(net, Path(cfg.run_dir) / "evals" / f"policy_u{update:06d}.safetensors")
    return {"eval_mean": a["mean"], "eval_ci_lo": a["ci95"][0], "eval_ci_hi": a["ci95"][1]}
