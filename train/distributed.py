"""Distributed collection for :mod:`train.ppo` on Ray core: ``python -m train.ppo --workers N``.

Not a second trainer: :class:`train.ppo.Trainer` keeps the network, the optimizer, the pool, the update, the
logs and the checkpoints; with ``workers > 0`` its :meth:`~train.ppo.Trainer.step` takes its rollout from
:class:`DistributedCollector` instead of its own :class:`~train.ppo.Collector`.

How it runs
-----------
* **Workers**: ``workers`` Ray actors (:class:`RolloutWorker`, one CPU each), each holding a
  :class:`train.ppo.Collector` (a ``VectorEnv(obs_dtype=uint8)`` of ``num_envs`` tables, the chair assignments,
  the rule agent) and a CPU copy of the learner and of the opponent pool. One remote call per rollout
  (:meth:`RolloutWorker.collect`): ``rollout_steps`` steps of every table, GAE on the worker (the same
  ``Collector.collect`` and ``gae_kernel`` as the single-process loop), returned as compact numpy: uint8
  observations, the network's float32 features (``agents.features``: computed once, where the rollout is played),
  bit-packed masks, uint8 actions, float32 log-probs, values and advantages (returns are
  ``advantages + values``, recomputed by the learner). An update trains on ``workers * num_envs *
  rollout_steps`` decisions.
* **Broadcast**: the learner's weights are put in the object store once per update (``ray.put``) and every
  worker's call takes that one reference (each node fetches it once); the opponent pool is put only when it
  changes (``bytes_out`` counts what was put).
* **Overlap, one update of staleness**: as soon as the rollouts for update ``k`` are in, the rollouts for
  update ``k + 1`` are launched with the current weights, and the learner then runs update ``k`` while the
  workers collect. So the batch of update ``k`` was sampled by the weights from before update ``k - 1``
  (the first one by the initial weights): PPO's ratio uses the stored behaviour log-probs, so this is
  off-policy by one update. Logged per update as ``staleness`` (CSV, TensorBoard), with ``workers`` (alive),
  ``restarts``, ``bytes_in``/``bytes_out`` and the seconds waited, fetched and broadcast.
* **Failures**: a worker whose call raises ``ray.exceptions.RayActorError`` (died, killed, its node lost) is
  restarted (a fresh actor; its tables start new hands) and the update goes on with the other workers' rollouts;
  after ``MAX_RESTARTS`` restarts of one worker it is dropped. With no worker left the run stops with a
  ``RuntimeError``.

Reproducibility
---------------
Worker ``i`` gets the seed ``worker_seed(seed, i, start_update, generation)`` (its tables, chair assignments
and sampling), the driver merges the rollouts in worker order, and every call waits for all of the round's
rollouts, so **a run is exactly reproducible for a given seed and number of workers** (tested), as long as
no worker fails: a restarted worker starts new hands (a different seed generation), and a dropped one changes
the batch. Runs with different ``workers`` differ (different tables). ``--resume`` with workers restores
the learner, optimizer, pool and counters exactly but **restarts collection**: the workers start fresh tables
seeded with the update they resume at, so a resumed run is reproducible but not identical to an
uninterrupted one (the single-process loop's resume is exact). A later :meth:`Trainer.run` call does the same.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from mjenv.vector import NUM_ACTIONS

MAX_RESTARTS = 3  # restarts of one worker before it is dropped
_SEED_TAG = 0xD157


@dataclass
class DistributedSettings:
    """Ray collection for ``python -m train.ppo`` (its options)."""

    workers: int = 0
    """Ray workers collecting rollouts (0: this process, the loop above). N > 0: N actors of ``num_envs`` tables
    each, one update of staleness; see train/distributed.py (needs the distributed extra: ray)"""
    ray_address: str | None = None
    """Ray cluster to join (e.g. auto, host:6379); default a local Ray"""
    ray_num_cpus: int | None = None
    """CPUs of the local Ray (default: workers)"""
    ray_ship_code: bool = False
    """upload the checkout to the workers (runtime_env working_dir) instead of using it at the same path"""


def worker_seed(run_seed: int, index: int, start_update: int = 0, generation: int = 0) -> int:
    """The seed of worker ``index`` (its tables, chairs and sampling), derived from the run's seed."""
    ss = np.random.SeedSequence([int(run_seed), _SEED_TAG, int(index), int(start_update), int(generation)])
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(2))


def _to_numpy(net) -> dict[str, np.ndarray]:
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def pack_batch(batch: dict[str, Any]) -> dict[str, Any]:
    """The wire form of a :meth:`train.ppo.Collector.collect` batch (see the module docstring)."""
    out = {k: v for k, v in batch.items() if not isinstance(v, np.ndarray)}
    out.update(
        obs=batch["obs"], masks=np.packbits(batch["masks"], axis=1), actions=batch["actions"].astype(np.uint8),
        logp=batch["logp"], values=batch["values"], advantages=batch["advantages"],
        tile=batch["tile"], glob=batch["glob"],
    )  # fmt: skip
    return out


def merge_batches(parts: list[dict[str, Any]]) -> dict[str, Any]:
    """Concatenate packed batches (in the given order) into the learner's batch (``ppo_update``'s input)."""
    out: dict[str, Any] = {}
    for k in ("obs", "logp", "values", "advantages"):
        out[k] = np.concatenate([p[k] for p in parts])
    for k in ("tile", "glob"):
        out[k] = np.concatenate([p[k] for p in parts])
    packed = np.concatenate([p["masks"] for p in parts])
    out["masks"] = np.unpackbits(packed, axis=1, count=NUM_ACTIONS).view(np.bool_)
    out["actions"] = np.concatenate([p["actions"] for p in parts]).astype(np.int64)
    out["returns"] = out["advantages"] + out["values"]
    for k in ("decisions", "hands", "learner_hands", "learner_points", "learner_wins"):
        out[k] = sum(p[k] for p in parts)
    return out


def batch_nbytes(parts: list[dict[str, Any]]) -> int:
    return int(sum(v.nbytes for p in parts for v in p.values() if isinstance(v, np.ndarray)))


class RolloutWorker:
    """One collector on a Ray worker (created by :class:`DistributedCollector` as ``ray.remote`` actor)."""

    def __init__(self, cfg, net_config: dict[str, Any], index: int, seed: int, collector: type) -> None:
        """``cfg``: the run's :class:`train.ppo.PPOConfig` (copied with this worker's seed, no workers);
        ``collector``: :class:`train.ppo.Collector`, passed in as the trainer's (``train.ppo`` imports this
        module, so this module does not import it)."""
        import torch

        from agents import nn as ann

        c = replace(cfg, seed=seed, workers=0, progress=False, resume=False, init_from=None)
        ann.set_torch_threads(c.torch_threads)
        self.index = index
        self.col = collector(c)
        self.net = ann.build_net(ann.NNConfig(**net_config)).eval()
        self.gen = torch.Generator()
        self.gen.manual_seed(seed)
        self.pool: list = []
        self.pool_key: Any = None
        self.net_config = net_config

    def ping(self) -> int:
        return self.index

    def collect(self, weights: dict[str, np.ndarray], pool_key: Any, pool_ref: list) -> dict[str, Any]:
        """One rollout with ``weights`` (and the pool ``pool_ref[0]`` when ``pool_key`` changed): packed."""
        import torch

        from agents import nn as ann

        t0 = time.perf_counter()
        c0 = time.process_time()
        self.net.load_state_dict({k: torch.tensor(v) for k, v in weights.items()})
        if pool_key != self.pool_key:
            import ray

            self.pool = []
            for sd in ray.get(pool_ref[0]) if pool_ref else []:
                p = ann.build_net(ann.NNConfig(**self.net_config)).eval()
                p.load_state_dict({k: torch.tensor(v) for k, v in sd.items()})
                self.pool.append(p)
            self.pool_key = pool_key
            self.col.pool_slots = len(self.pool)
        t1 = time.perf_counter()
        timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
        batch = self.col.collect(self.net, self.pool, self.gen, torch.device("cpu"), timers)
        t2 = time.perf_counter()
        out = pack_batch(batch)
        out.update(worker=self.index, load_s=t1 - t0, collect_s=t2 - t1, pack_s=time.perf_counter() - t2)
        out["cpu_s"] = time.process_time() - c0  # CPU seconds of this call (all its threads)
        out["worker_timers"] = timers
        return out


class DistributedCollector:
    """The Ray side of ``Trainer.step`` when ``cfg.workers > 0`` (see the module docstring)."""

    def __init__(self, trainer) -> None:
        self.tr = trainer
        self.actors: list[Any] = []
        self.generation: list[int] = []
        self.pending: dict[int, tuple[Any, int]] = {}  # worker -> (result ref, weights version)
        self.restarts = 0
        self.dropped = 0
        self.start_update = 0
        self._pool_key: Any = None
        self._pool_ref: list = []
        self._pool_nets: list = []

    # ------------------------------------------------------------------------------------------- actors
    def _ray(self):
        from mjenv._ray import ensure_ray

        cfg = self.tr.cfg
        return ensure_ray(cfg.ray_address, cfg.ray_num_cpus or (None if cfg.ray_address else cfg.workers))

    def _new_actor(self, i: int):
        from mjenv._ray import runtime_env

        ray = self._ray()
        cfg = self.tr.cfg
        cls = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
        seed = worker_seed(cfg.seed, i, self.start_update, self.generation[i])
        return cls.options(runtime_env=runtime_env(cfg.ray_ship_code)).remote(
            cfg, asdict(self.tr.net.config), i, seed, type(self.tr.col)
        )

    def start(self) -> None:
        """Start the workers (their tables seeded with the current update: see Reproducibility)."""
        self._ray()
        self.start_update = int(self.tr.counters["update"])
        n = self.tr.cfg.workers
        self.generation = [0] * n
        self.actors = [self._new_actor(i) for i in range(n)]
        self.pending = {}
        self._pool_key = None

    def close(self) -> None:
        """Kill the workers (a later :meth:`collect` starts new ones)."""
        if not self.actors:
            return
        import ray

        for a in self.actors:
            if a is not None:
                ray.kill(a)
        self.actors, self.pending = [], {}

    def alive(self) -> int:
        return sum(a is not None for a in self.actors)

    def _restart(self, i: int) -> None:
        self.generation[i] += 1
        if self.generation[i] > MAX_RESTARTS:
            self.actors[i] = None
            self.dropped += 1
            return
        self.restarts += 1
        self.actors[i] = self._new_actor(i)

    # ------------------------------------------------------------------------------------------- rounds
    def _submit(self, timers: dict[str, float], stats: dict[str, float]) -> None:
        """Launch one rollout on every idle live worker with the learner's current weights (one ``ray.put``)."""
        import ray

        tr = self.tr
        t0 = time.perf_counter()
        weights = _to_numpy(tr.net)
        ref = ray.put(weights)
        key = tuple(id(p) for p in tr.pool)  # ids are unique: self._pool_nets keeps the nets alive
        if key != self._pool_key:
            self._pool_nets = list(tr.pool)
            pool = [_to_numpy(p) for p in tr.pool]
            self._pool_ref = [ray.put(pool)] if pool else []
            self._pool_key = key
            stats["bytes_out"] = stats.get("bytes_out", 0) + sum(v.nbytes for sd in pool for v in sd.values())
        version = int(tr.counters["update"])
        for i, a in enumerate(self.actors):
            if a is not None and i not in self.pending:
                self.pending[i] = (a.collect.remote(ref, self._pool_key, self._pool_ref), version)
        dt = time.perf_counter() - t0
        timers["broadcast_s"] = timers.get("broadcast_s", 0.0) + dt
        stats["broadcast_s"] = stats.get("broadcast_s", 0.0) + dt
        stats["bytes_out"] = stats.get("bytes_out", 0) + sum(v.nbytes for v in weights.values())

    def collect(self, timers: dict[str, float]) -> dict[str, Any]:
        """The rollouts of this update (launched during the previous one), merged; then launch the next."""
        import ray
        from ray.exceptions import RayActorError

        if not self.actors:
            self.start()
        stats: dict[str, float] = {}
        parts: list[dict[str, Any]] = []
        versions: list[int] = []
        for _attempt in range(MAX_RESTARTS + 2):
            if not self.pending:
                self._submit(timers, stats)
            t0 = time.perf_counter()
            ray.wait([r for r, _ in self.pending.values()], num_returns=len(self.pending))
            t1 = time.perf_counter()
            for i in sorted(self.pending):
                ref, version = self.pending.pop(i)
                try:
                    parts.append(ray.get(ref))
                    versions.append(version)
                except RayActorError:
                    self._restart(i)
            t2 = time.perf_counter()
            for k, v in (("wait_s", t1 - t0), ("fetch_s", t2 - t1)):
                timers[k] = timers.get(k, 0.0) + v
                stats[k] = stats.get(k, 0.0) + v
            if parts:
                break
            if not self.alive():
                raise RuntimeError("train.distributed: every worker failed (and was dropped); stopping")
        else:  # pragma: no cover - every retry failed
            raise RuntimeError("train.distributed: no rollout came back after restarting the workers")
        # launch the next rollouts now, with the weights from before this update (one update of staleness)
        self._submit(timers, stats)
        t3 = time.perf_counter()
        batch = merge_batches(parts)
        dt = time.perf_counter() - t3
        timers["merge_s"] = timers.get("merge_s", 0.0) + dt
        wt = {k: sum(p["worker_timers"][k] for p in parts) for k in ("env_s", "inference_s", "gae_s")}
        stats.update(
            merge_s=dt, bytes_in=float(batch_nbytes(parts)), workers=float(self.alive()),
            rollouts=float(len(parts)), restarts=float(self.restarts),
            staleness=float(self.tr.counters["update"] - min(versions)),
            worker_collect_s=float(max(p["collect_s"] for p in parts)),
            worker_env_s=wt["env_s"], worker_inference_s=wt["inference_s"], worker_gae_s=wt["gae_s"],
        )  # fmt: skip
        stats["bytes_out"] = float(stats.get("bytes_out", 0))
        batch["dist_stats"] = stats
        return batch
