"""Behaviour cloning for mjenv: ``python -m train.bc --help``.

Data
----
* **From a teacher** (default ``agents.rule:make``) playing all four chairs of a ``VectorEnv(obs_dtype=np.uint8)``
  (:func:`generate_teacher`), or one chair per table against an opponent at the other three (``--opponent
  agents.rule:make``: the states of a 1v3 evaluation against it; only the teacher's decisions are kept), or
* **from recorded games** (``--records a.json b.json``: files holding one :mod:`mjenv.record` log or a list of
  them): each hand is replayed with :func:`mjenv.record.replay` and the acting chair's observation is built with
  :func:`mjenv.observation.observe_kernel`, its mask with ``mjenv.game.legal_mask_kernel`` (:func:`from_records`), or
* **from Botzone human logs** (``--botzone-logs data.txt games.jsonl.gz``: the course ``data.txt`` format or Botzone
  JSON logs), replayed in the Botzone variant by :func:`mjenv.botzone.dataset.build_dataset`; claims a player made
  and lost to a higher-priority claim are that player's labels too (:func:`from_botzone_logs`).

Decisions with a single legal action are left out (their agreement is trivially 100% and would inflate the
figure). A dataset is compact arrays (:func:`save_dataset`, ``.npz``): ``obs`` uint8 ``[K, OBS_SIZE]`` (the compact
encoding of :mod:`mjenv.observation`), ``masks`` bit-packed uint8 ``[K, 14]``, ``actions`` uint8 ``[K]``,
``types`` uint8 ``[K]`` (the decision type of the taken action, :data:`TYPE_NAMES`). ``--data x.npz`` reads the
file when it exists and otherwise generates it and writes it there.

Training and report
-------------------
An :mod:`agents.nn` network (``--arch mlp``, the default: :class:`agents.nn.PolicyValueNet` over the engineered
features; ``--arch planes --blocks B --channels C``: :class:`agents.nn.PlanesNet` over the observation's tile
planes) is fitted by cross-entropy on the masked logits (Adam, shuffled minibatches);
a held-out share of the decisions (``holdout``, chosen by the seed) measures **top-1 agreement** (the network's
most likely legal action equals the teacher's), overall and per decision type: discard, claim (chow / pung /
exposed kong on a discard), kong (concealed / added), win, pass. The checkpoint is written with
:func:`agents.nn.save` (``agents.nn:make`` loads it; ``train.ppo --init-from`` starts from it) and the report
as JSON beside it.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from agents import nn as ann
from mjenv import actions as A
from mjenv import game as G
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.policy import check_factory, load_policy, option_value
from mjenv.record import replay
from mjenv.rules import RuleConfig
from mjenv.vector import NUM_ACTIONS, VectorEnv
from train._checks import check_ints

TYPE_NAMES = ("discard", "claim", "kong", "win", "pass")
DT_DISCARD, DT_CLAIM, DT_KONG, DT_WIN, DT_PASS = range(5)
DATA_FORMAT = "mjenv-train-bc/1"


@dataclass
class BCConfig:
    """Settings of a behaviour-cloning run (``python -m train.bc --help``)."""

    out: str = "runs/bc/policy.safetensors"
    """where the agents.nn checkpoint goes (the report goes beside it, .json)"""
    teacher: str = "agents.rule:make"
    """import string of the teacher policy (used when no records are given)"""
    teacher_opt: tuple[str, ...] = ()
    """KEY=VALUE keyword arguments for the teacher's factory (VALUE read as JSON when it parses, else as a
    string), as mjenv eval's --agent-opt, e.g. checkpoints=a.safetensors,b.safetensors for agents.nn:ensemble"""
    opponent: str | None = None
    """import string of the policy at three chairs of every table (e.g. agents.rule:make): the teacher then plays
    the fourth (table i: chair i mod 4) and only its decisions are kept, in the states of a 1v3 evaluation
    against that opponent; None: the teacher plays all four chairs"""
    opponent_opt: tuple[str, ...] = ()
    """KEY=VALUE keyword arguments for the opponent's factory (as teacher_opt)"""
    decisions: int = 200_000
    """teacher decisions to generate (those with more than one legal action)"""
    data: str | None = None
    """.npz dataset: read when it exists, else generated and written there"""
    more_data: tuple[str, ...] = ()
    """further .npz datasets (written by train.bc, e.g. --data of earlier runs) appended to the first; the
    held-out share is drawn from them all"""
    records: tuple[str, ...] = ()
    """JSON files of mjenv.record logs to learn from instead of a teacher"""
    botzone_logs: tuple[str, ...] = ()
    """Botzone human logs to learn from (mjenv.botzone.dataset.load_corpus: data.txt-format .txt, Botzone JSON
    .json / .jsonl, optionally .gz); rounds that do not replay are skipped and counted in the report"""
    num_envs: int = 256
    threads: int = 2
    min_fan: int = 8
    seed: int = 0
    arch: str = "mlp"
    """network architecture: mlp (engineered features, dense layers) or planes (tile planes, a convolution tower)"""
    channels: int = 16
    hidden: int = 128
    blocks: int | None = None
    """planes: residual blocks (default 2)"""
    with_features: bool = False
    """planes: also read the engineered features"""
    wait_inputs: bool = False
    """planes: also read the values of the waits each discard leaves (agents.nn.NNConfig.wait_inputs); with
    init_from, a network without them gains them with zero weights (the same policy at the start)"""
    near_inputs: bool = False
    """planes, with wait_inputs: also read the wait check's second step (agents.nn.NNConfig.near_inputs); with
    init_from, gained with zero weights as wait_inputs are"""
    init_from: str | None = None
    """an agents.nn checkpoint to start from (its weights and architecture; the network settings above are then
    not used), e.g. to distil a network with the wait check back into that network"""
    epochs: int = 4
    batch_size: int = 512
    lr: float = 1e-3
    holdout: float = 0.1
    """share of the decisions held out for the agreement figures"""
    torch_threads: int = 2
    device: str = "auto"
    progress: bool = True


def check_config(cfg: BCConfig) -> BCConfig:
    check_ints(cfg, "BCConfig", {"decisions": 1, "num_envs": 1, "threads": 1, "min_fan": 0, "seed": 0, "channels": 1,
                                 "hidden": 1, "epochs": 1, "batch_size": 1, "torch_threads": 1})  # fmt: skip
    if cfg.init_from is None:
        net_config(cfg)  # the network settings (TypeError / ValueError naming the field)
    if cfg.near_inputs and not cfg.wait_inputs:
        raise ValueError("BCConfig.near_inputs needs wait_inputs (the near planes follow the wait planes)")
    if not 0 < cfg.holdout < 1:
        raise ValueError(f"BCConfig.holdout must be in (0, 1), got {cfg.holdout}")
    if not cfg.lr > 0:
        raise ValueError(f"BCConfig.lr must be > 0, got {cfg.lr}")
    if cfg.init_from is not None:
        start = ann.load(cfg.init_from)  # FileNotFoundError / ValueError naming the file
        if cfg.wait_inputs and start.config.arch != "planes":
            raise ValueError(
                f"wait_inputs needs a planes network; {cfg.init_from} holds an {start.config.arch}"
            )
    for name in ("records", "botzone_logs", "more_data"):
        for r in getattr(cfg, name):
            if not Path(r).is_file():
                raise FileNotFoundError(f"{name}: no file {r}")
    if cfg.records and cfg.botzone_logs:
        raise ValueError("give records or botzone_logs, not both")
    check_factory(cfg.teacher, 1, 0, **teacher_kwargs(cfg))  # a bad teacher or option fails before any work
    if cfg.opponent is not None:
        check_factory(cfg.opponent, 1, 0, **opponent_kwargs(cfg))
    elif cfg.opponent_opt:
        raise ValueError("opponent_opt is given without an opponent")
    return cfg


def _factory_kwargs(name: str, items: Any) -> dict[str, Any]:
    """``items`` (``KEY=VALUE`` strings of the setting ``name``) as a factory's keyword arguments."""
    if isinstance(items, str) or not isinstance(items, (tuple, list)):
        raise TypeError(f"BCConfig.{name} must be a tuple of KEY=VALUE strings, got {items!r}")
    kwargs: dict[str, Any] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key:
            raise ValueError(f"{name} takes KEY=VALUE, got {item!r}")
        if key in kwargs:
            raise ValueError(f"{name}: {key!r} given twice")
        kwargs[key] = option_value(value)
    return kwargs


def teacher_kwargs(cfg: BCConfig) -> dict[str, Any]:
    """``cfg.teacher_opt`` (``KEY=VALUE`` strings) as the teacher factory's keyword arguments."""
    return _factory_kwargs("teacher_opt", cfg.teacher_opt)


def opponent_kwargs(cfg: BCConfig) -> dict[str, Any]:
    """``cfg.opponent_opt`` as the opponent factory's keyword arguments."""
    return _factory_kwargs("opponent_opt", cfg.opponent_opt)


def net_config(cfg: BCConfig) -> ann.NNConfig:
    """The :class:`agents.nn.NNConfig` of ``cfg``'s network."""
    return ann.NNConfig(cfg.channels, cfg.hidden, arch=cfg.arch, blocks=cfg.blocks, with_features=cfg.with_features,
                        wait_inputs=cfg.wait_inputs, near_inputs=cfg.near_inputs)  # fmt: skip


# ------------------------------------------------------------------------------------------------ data
def decision_types(actions: np.ndarray) -> np.ndarray:
    """``uint8`` decision type of each action id (:data:`TYPE_NAMES` order)."""
    a = np.asarray(actions, np.int64)
    t = np.full(a.shape, DT_KONG, np.uint8)
    t[a < A.CHOW] = DT_DISCARD
    t[(a >= A.CHOW) & (a <= A.KONG)] = DT_CLAIM
    t[a == A.WIN] = DT_WIN
    t[a == A.PASS] = DT_PASS
    return t


def pack_masks(masks: np.ndarray) -> np.ndarray:
    return np.packbits(np.asarray(masks, np.bool_), axis=-1)


def unpack_masks(packed: np.ndarray) -> np.ndarray:
    return np.unpackbits(packed, axis=-1, count=NUM_ACTIONS).astype(np.bool_)


def _dataset(obs: list, masks: list, actions: list) -> dict[str, np.ndarray]:
    o = np.concatenate(obs) if obs else np.zeros((0, OBS_SIZE), np.uint8)
    m = np.concatenate(masks) if masks else np.zeros((0, NUM_ACTIONS), np.bool_)
    a = np.concatenate(actions).astype(np.uint8) if actions else np.zeros(0, np.uint8)
    return {"obs": o, "masks": pack_masks(m), "actions": a, "types": decision_types(a)}


def generate_teacher(
    teacher: str = "agents.rule:make", decisions: int = 100_000, *, num_envs: int = 256, seed: int = 0,
    rules: RuleConfig | None = None, threads: int | None = None, progress: bool = True,
    teacher_kwargs: dict[str, Any] | None = None, opponent: str | Any | None = None,
    opponent_kwargs: dict[str, Any] | None = None,
) -> dict[str, np.ndarray]:  # fmt: skip
    """Let ``teacher`` (built with ``teacher_kwargs``) play every chair of a VectorEnv and keep its first
    ``decisions`` non-forced decisions; with ``opponent``, the teacher plays chair ``i % 4`` of table ``i`` only,
    ``opponent`` (built with ``opponent_kwargs``) the other three, and only the teacher's decisions are kept."""
    rules = RuleConfig(illegal="raise") if rules is None else rules
    policy = load_policy(teacher, num_envs, seed, **(teacher_kwargs or {}))
    opp = None if opponent is None else load_policy(opponent, num_envs, seed + 1, **(opponent_kwargs or {}))
    chair = (np.arange(num_envs) % 4).astype(np.int32)
    env = VectorEnv(num_envs, seed=seed, rules=rules, threads=threads, obs_dtype=np.uint8)
    obs, masks, seats = env.reset()
    keep_o, keep_m, keep_a = [], [], []
    have = 0
    with tqdm(total=decisions, disable=not progress, unit="dec", desc="teacher") as bar:
        while have < decisions:
            if opp is None:
                a = np.asarray(policy(obs, masks, seats), np.int64)
                mine = env.n_legal > 1
            else:
                mine = seats == chair
                t, o = np.flatnonzero(mine), np.flatnonzero(~mine)
                a = np.empty(num_envs, np.int64)
                if t.size:
                    a[t] = policy(obs[t], masks[t], seats[t])
                if o.size:
                    a[o] = opp(obs[o], masks[o], seats[o])
                mine &= env.n_legal > 1
            rows = np.flatnonzero(mine)[: decisions - have]
            keep_o.append(obs[rows].copy())
            keep_m.append(masks[rows].copy())
            keep_a.append(a[rows])
            have += rows.size
            bar.update(rows.size)
            obs, masks, seats, _, _ = env.step(a)
    return _dataset(keep_o, keep_m, keep_a)


def from_records(logs: list[dict]) -> dict[str, np.ndarray]:
    """The acting chairs' decisions of recorded hands (``mjenv.record`` logs), replayed by the engine."""
    keep_o, keep_m, keep_a = [], [], []
    for log in logs:
        states = replay(log)
        for op, st in zip(log["ops"], states[:-1]):
            if op[0] != "act":
                continue
            seat, action = int(op[1]), int(op[2])
            mask = np.zeros(NUM_ACTIONS, np.bool_)
            if G.legal_mask_kernel(st, seat, mask) <= 1 or not mask[action]:
                continue
            ob = np.zeros(OBS_SIZE, np.uint8)
            observe_kernel(st, seat, ob)
            keep_o.append(ob[None])
            keep_m.append(mask[None])
            keep_a.append(np.array([action]))
    return _dataset(keep_o, keep_m, keep_a)


def from_botzone_logs(paths, *, progress: bool = False) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """The decisions of Botzone human logs (:func:`mjenv.botzone.dataset.build_dataset`, outvoted claims included,
    rounds that do not replay skipped) and a summary for the report."""
    from mjenv.botzone.dataset import build_dataset, load_corpus

    d = build_dataset(load_corpus(paths), on_error="skip", progress=progress)
    data = {k: d[k] for k in ("obs", "masks", "actions", "types")}
    source = {"botzone_logs": [str(p) for p in paths], "rounds": int(d["matches"].size),
              "skipped_rounds": len(d["skipped"]), "outvoted_claims": int(d["outvoted"].sum())}  # fmt: skip
    return data, source


def load_records(paths: list[str] | tuple[str, ...]) -> list[dict]:
    logs: list[dict] = []
    for p in paths:
        d = json.loads(Path(p).read_text())
        logs.extend(d if isinstance(d, list) else [d])
    return logs


def save_dataset(path: str | Path, data: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **data, meta=np.array(json.dumps({"format": DATA_FORMAT, **meta})))


def _meta(z) -> dict[str, Any]:
    """The ``meta`` entry :func:`save_dataset` wrote into the open ``.npz`` ``z`` (``{}`` if none)."""
    return json.loads(str(z["meta"])) if "meta" in z else {}


def dataset_meta(path: str | Path) -> dict[str, Any]:
    """What a dataset written by :func:`save_dataset` was made from (its teacher, options and seed, or its
    records), without its ``format`` tag."""
    with np.load(path, allow_pickle=False) as z:
        meta = _meta(z)
    meta.pop("format", None)
    return meta


def load_dataset(path: str | Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:
        meta = _meta(z)
        if meta.get("format") != DATA_FORMAT:
            raise ValueError(f"{path} is not a {DATA_FORMAT} dataset")
        data = {k: z[k] for k in ("obs", "masks", "actions", "types")}
    if data["obs"].shape[1:] != (OBS_SIZE,):
        raise ValueError(f"{path}: observations of size {data['obs'].shape[1:]}, this mjenv has {OBS_SIZE}")
    return data


# ------------------------------------------------------------------------------------------------ training
def available_memory() -> int | None:
    """Bytes of memory available to new allocations (Linux ``MemAvailable``), or None where unknown."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def check_memory(need: int, what: str) -> None:
    """``MemoryError`` naming ``what`` when ``need`` bytes exceed the memory available now (no check where that
    is unknown): a dataset too big for the machine fails at once with the figures, not deep inside torch."""
    have = available_memory()
    if have is not None and need > have:
        raise MemoryError(
            f"{what} take {need / 1e6:,.0f} MB, more than the {have / 1e6:,.0f} MB of memory available: "
            "use fewer decisions (--decisions, fewer --more-data files) or a machine with more memory"
        )


def stored_inputs(
    data: dict[str, np.ndarray], config: ann.NNConfig, sel: slice | np.ndarray
) -> tuple[torch.Tensor, ...]:
    """The network inputs (:func:`agents.nn.input_features` of ``config``) of the rows ``sel`` (a slice or
    indices) of ``data``, in the dtypes a fit keeps them: integer inputs (the planes) uint8, the others float16."""
    feats = ann.input_features(config, data["obs"][sel], unpack_masks(data["masks"][sel]))
    return tuple(f if f.dtype == torch.uint8 else f.to(torch.float16) for f in feats)


def dataset_features(
    data: dict[str, np.ndarray], chunk: int = 8192, progress: bool = False, config: ann.NNConfig | None = None
) -> tuple[torch.Tensor, ...]:
    """The network inputs of every decision (:func:`agents.nn.input_features` of ``config``, default the mlp's
    :func:`agents.nn.obs_features`), computed once: integer inputs (the planes) kept as uint8, the others
    stored as float16 (every engineered feature is a small multiple of 1/32, exact in float16; the wait planes'
    log-values are rounded to float16's 11 bits). CPU tensors."""
    config = ann.NNConfig() if config is None else config
    k = data["actions"].shape[0]
    out: list[torch.Tensor] = []
    for s in tqdm(range(0, k, chunk), disable=not progress, unit="chunk", desc="features"):
        feats = stored_inputs(data, config, slice(s, s + chunk))
        if not out:
            need = sum(k * int(np.prod(f.shape[1:])) * f.dtype.itemsize for f in feats)
            check_memory(need, f"the network inputs of {k:,} decisions")
            out = [torch.empty((k, *f.shape[1:]), dtype=f.dtype) for f in feats]
        for o, f in zip(out, feats):
            o[s : s + chunk] = f
    if not out:
        out = [f.to(torch.float16) for f in ann.input_features(config, data["obs"][:0])]
    return tuple(out)


class RowInputs:
    """The network inputs of a dataset's rows computed when a batch asks for them (:func:`stored_inputs`, the
    tensors :func:`dataset_features` holds): :func:`fit` uses it for a dataset whose inputs do not fit in
    memory at once (slower: every epoch computes them again)."""

    def __init__(self, data: dict[str, np.ndarray], config: ann.NNConfig) -> None:
        self.data, self.config = data, config

    def rows(self, r: np.ndarray) -> tuple[torch.Tensor, ...]:
        return stored_inputs(self.data, self.config, np.asarray(r))


def _rows(feats: tuple[torch.Tensor, ...] | RowInputs, r: np.ndarray) -> tuple[torch.Tensor, ...]:
    """Rows ``r`` of precomputed inputs or of a :class:`RowInputs`."""
    if isinstance(feats, RowInputs):
        return feats.rows(r)
    rt = torch.from_numpy(np.asarray(r))
    return tuple(f[rt] for f in feats)


def agreement(
    net: ann.Net,
    data: dict[str, np.ndarray],
    idx: np.ndarray,
    device: torch.device,
    batch: int = 4096,
    feats: tuple[torch.Tensor, ...] | RowInputs | None = None,
) -> dict[str, Any]:
    """Top-1 agreement of ``net``'s greedy legal action with the labels at rows ``idx``, overall and per type
    (``feats``: the precomputed :func:`dataset_features`, else computed here)."""
    hits = np.zeros(idx.size, np.bool_)
    net.eval()
    with torch.no_grad():
        for s in range(0, idx.size, batch):
            r = idx[s : s + batch]
            m = torch.from_numpy(unpack_masks(data["masks"][r]))
            if feats is None:
                x = ann.input_features(net.config, data["obs"][r], m.numpy())
            else:
                x = _rows(feats, r)
            logits, _ = net.forward_features(*(f.to(device) for f in x), m.to(device))
            hits[s : s + batch] = logits.argmax(1).cpu().numpy() == data["actions"][r]
    net.train()
    types = data["types"][idx]
    per = {}
    for t, name in enumerate(TYPE_NAMES):
        sel = types == t
        per[name] = {"n": int(sel.sum()), "agreement": float(hits[sel].mean()) if sel.any() else None}
    return {"n": int(idx.size), "agreement": float(hits.mean()) if idx.size else None, "per_type": per}


def fit(cfg: BCConfig, data: dict[str, np.ndarray]) -> tuple[ann.Net, dict[str, Any]]:
    """Train a network on ``data``; returns it and the report (held-out agreement, timing)."""
    device = torch.device("cuda" if cfg.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if cfg.device == "auto" else cfg.device))  # fmt: skip
    ann.set_torch_threads(cfg.torch_threads)
    torch.set_flush_denormal(True)
    k = data["actions"].shape[0]
    if k < 2:
        raise ValueError(f"the dataset has {k} decisions; behaviour cloning needs at least 2")
    rng = np.random.default_rng(cfg.seed)
    perm = rng.permutation(k)
    n_hold = max(1, round(cfg.holdout * k))
    hold, tr = np.sort(perm[:n_hold]), perm[n_hold:]
    if cfg.init_from is not None:
        net = ann.load(cfg.init_from)
        if (cfg.wait_inputs and not net.config.wait_inputs) or (
            cfg.near_inputs and not net.config.near_inputs
        ):
            net = ann.add_wait_inputs(net, near=cfg.near_inputs)
        net = net.to(device)
    else:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(cfg.seed)
            net = ann.build_net(net_config(cfg)).to(device)
    opt = torch.optim.Adam(net.parameters(), lr=cfg.lr)
    t0 = time.perf_counter()
    try:
        feats = dataset_features(data, progress=cfg.progress, config=net.config)
    except MemoryError as e:  # too big for the memory at once: each batch's inputs when it needs them
        print(f"train.bc: {e}; computing each batch's inputs instead (the same fit, slower)", flush=True)
        feats = RowInputs(data, net.config)
    t_feat = time.perf_counter() - t0
    masks_t = torch.from_numpy(unpack_masks(data["masks"]))
    act_t = torch.from_numpy(data["actions"].astype(np.int64))
    steps = cfg.epochs * ((tr.size + cfg.batch_size - 1) // cfg.batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg.lr, total_steps=max(steps, 1))
    t0 = time.perf_counter()
    losses = []
    with tqdm(total=steps, disable=not cfg.progress, unit="batch", desc="bc") as bar:
        for _ in range(cfg.epochs):
            order = rng.permutation(tr)
            for s in range(0, order.size, cfg.batch_size):
                r = torch.from_numpy(order[s : s + cfg.batch_size])
                x = tuple(f.to(device) for f in _rows(feats, r.numpy()))
                m, a = masks_t[r].to(device), act_t[r].to(device)
                logits, _ = net.forward_features(*x, None)
                loss = F.cross_entropy(logits.masked_fill(~m, -1e8), a)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                losses.append(loss.item())
                bar.update(1)
                bar.set_postfix(loss=f"{np.mean(losses[-50:]):.3f}")
    report = {
        "held_out": agreement(net, data, hold, device, feats=feats),
        "train": agreement(net, data, np.sort(tr[: min(tr.size, n_hold)]), device, feats=feats),
        "decisions": int(k), "train_decisions": int(tr.size), "final_loss": float(np.mean(losses[-50:])),
        "feature_seconds": t_feat, "inputs": "per batch" if isinstance(feats, RowInputs) else "precomputed",
        "fit_seconds": time.perf_counter() - t0, "parameters": net.num_parameters,
        "network": asdict(net.config), "features_version": ann.features_version(net.config),
    }  # fmt: skip
    return net.cpu(), report


def run(cfg: BCConfig) -> dict[str, Any]:
    """Build or read the dataset, fit, save the checkpoint and the report; returns the report."""
    check_config(cfg)
    t0 = time.perf_counter()
    rules = RuleConfig(min_fan=cfg.min_fan, illegal="raise")
    source: dict[str, Any]
    if cfg.data is not None and Path(cfg.data).is_file():
        data = load_dataset(cfg.data)
        # the data's own source, not this run's teacher settings (which did not apply)
        source = {"data": cfg.data, **dataset_meta(cfg.data)}
    elif cfg.records:
        data = from_records(load_records(cfg.records))
        source = {"records": list(cfg.records)}
    elif cfg.botzone_logs:
        data, source = from_botzone_logs(cfg.botzone_logs, progress=cfg.progress)
    else:
        data = generate_teacher(cfg.teacher, cfg.decisions, num_envs=cfg.num_envs, seed=cfg.seed, rules=rules,
                                threads=cfg.threads, progress=cfg.progress, teacher_kwargs=teacher_kwargs(cfg),
                                opponent=cfg.opponent, opponent_kwargs=opponent_kwargs(cfg))  # fmt: skip
        source = {"teacher": cfg.teacher, "teacher_opt": list(cfg.teacher_opt), "min_fan": cfg.min_fan,
                  "seed": cfg.seed}  # fmt: skip
        if cfg.opponent is not None:
            source.update(opponent=cfg.opponent, opponent_opt=list(cfg.opponent_opt))
    if cfg.data is not None and not Path(cfg.data).is_file():
        save_dataset(cfg.data, data, source)
    if cfg.more_data:
        parts = [data] + [load_dataset(p) for p in cfg.more_data]
        data = {k: np.concatenate([d[k] for d in parts]) for k in data}
        source = {**source, "more_data": [{"data": p, **dataset_meta(p)} for p in cfg.more_data]}
    t_data = time.perf_counter() - t0
    net, report = fit(cfg, data)
    out = Path(cfg.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    ann.save(net, out)
    report.update(source=source, data_seconds=t_data, config=asdict(cfg), checkpoint=str(out))
    out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    return report


def main() -> None:
    import tyro

    cfg = tyro.cli(BCConfig)
    try:
        check_config(cfg)
    except (TypeError, ValueError, FileNotFoundError) as e:
        raise SystemExit(f"train.bc: error: {e}") from None
    try:
        rep = run(cfg)
    except MemoryError as e:  # check_memory's figures, without a traceback
        raise SystemExit(f"train.bc: error: {e}") from None
    h = rep["held_out"]
    print(f"held-out top-1 agreement {100 * h['agreement']:.2f}% over {h['n']} decisions "
          f"({rep['parameters']:,} parameters, {ann.NNConfig(**rep['network']).describe()})")  # fmt: skip
    for name, v in h["per_type"].items():
        if v["n"]:
            print(f"  {name:8s} {100 * v['agreement']:6.2f}%  n={v['n']}")
    print("checkpoint:", rep["checkpoint"])


if __name__ == "__main__":
    main()
