"""Distributed PPO on Ray: ``PYTHONPATH=. python -m benchmarks.distributed [--json out.json]``.

Three measurements in one local Ray session (``--cpus``, default 2), with the default :class:`train.ppo.PPOConfig`
(256 tables x 32 steps per rollout, the default network) unless told otherwise:

1. **Collection alone** (no learner): ``RolloutWorker`` actors collect ``--rounds`` rollouts each, queued back to
   back, with fixed weights; 1 worker against 2 workers, ``--repeats`` times interleaved (1, 2, 1, 2, ...);
   decisions/s per run, the medians and their ratio (target >= 1.6x on 2 cores). The same collection in this
   process (no Ray) is measured alongside as a reference.
2. **The training loop**: ``Trainer.step`` single-process (``workers=0``) against ``workers=1`` for
   ``--seconds`` each, interleaved ``--repeats`` times after two warm-up updates (worker start-up, Numba and
   torch excluded); decisions/s end to end and the ratio (target >= 80%).
3. **Transfers and a model**: per update of the distributed runs, the bytes moved (rollouts in, weights out),
   the seconds spent broadcasting (``ray.put``), fetching (``ray.get``), merging (concatenate, unpack) and
   waiting, the worker's rollout time and the learner's update time; from them the predicted throughput for
   ``N`` workers on one learner (see :func:`model`) and the worker count where it stops scaling.

The machine's load (``os.getloadavg``) is printed before and after: on a shared machine the figures are noisy.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from dataclasses import asdict
from typing import Any


def _cfg(run_dir: str, **kw):
    from train.ppo import PPOConfig

    # the settings of the figures in docs/distributed.md (the PPOConfig defaults before the 2-thread, rule-only ones)
    base = {
        "run_dir": run_dir, "eval_every": 0, "progress": False, "save_every": 10**9, "num_envs": 256,
        "rollout_steps": 32, "threads": 1, "torch_threads": 1, "epochs": 2, "lr": 3e-4, "ent_coef": 0.01,
        "target_kl": 0.05, "opponents": ("rule", "pool"), "opponent_prob": 0.5, "updates": 2000,
        "value_warmup": 0,
    }  # fmt: skip
    base.update(kw)
    return PPOConfig(**base)


def bench_collect(cfg, rounds: int, repeats: int) -> dict[str, Any]:
    """Collection alone: 1 and 2 RolloutWorker actors, interleaved; plus in-process collection."""
    import ray
    import torch

    from agents import nn as ann
    from mjenv._ray import runtime_env
    from train.distributed import RolloutWorker, worker_seed
    from train.ppo import Collector

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        net = ann.PolicyValueNet(ann.NNConfig(cfg.channels, cfg.hidden))
    w = ray.put({k: v.detach().numpy().copy() for k, v in net.state_dict().items()})
    cls = ray.remote(num_cpus=1)(RolloutWorker).options(runtime_env=runtime_env())
    actors = [cls.remote(cfg, asdict(net.config), i, worker_seed(cfg.seed, i), Collector) for i in range(2)]
    ray.get([a.collect.remote(w, None, []) for a in actors])  # warm-up: start-up, Numba, torch
    per = cfg.num_envs * cfg.rollout_steps
    runs: dict[str, list[float]] = {"1": [], "2": [], "local": []}
    ann.set_torch_threads(cfg.torch_threads)
    col = Collector(cfg)
    gen = torch.Generator()
    gen.manual_seed(0)
    timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
    col.collect(net, [], gen, torch.device("cpu"), timers)
    cpu: dict[str, list[float]] = {"1": [], "2": []}
    for _ in range(repeats):
        for n in (1, 2):
            t0 = time.perf_counter()
            res = ray.get([a.collect.remote(w, None, []) for a in actors[:n] for _ in range(rounds)])
            runs[str(n)].append(n * rounds * per / (time.perf_counter() - t0))
            cpu[str(n)].append(n * rounds * per / sum(r["cpu_s"] for r in res))
        t0 = time.perf_counter()
        for _ in range(rounds):
            col.collect(net, [], gen, torch.device("cpu"), timers)
        runs["local"].append(rounds * per / (time.perf_counter() - t0))
    for a in actors:
        ray.kill(a)
    med = {k: statistics.median(v) for k, v in runs.items()}
    return {
        "decisions_per_rollout": per,
        "rounds": rounds,
        "runs": runs,
        "median": med,
        "per_worker_cpu_s": {k: statistics.median(v) for k, v in cpu.items()},
        "ratio_2_over_1": med["2"] / med["1"],
    }


def _timed_steps(tr, seconds: float, log: list[dict] | None) -> tuple[float, int]:
    timers: dict[str, float] = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
    d0 = tr.counters["decisions"]
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        before = dict(timers)
        t_s = time.perf_counter()
        stats = tr.step(timers)
        if log is not None:
            row = {k: v for k, v in stats.items() if isinstance(v, float)}
            row["step_s"] = time.perf_counter() - t_s
            row["update_s"] = timers["update_s"] - before["update_s"]
            row["learner_decisions"] = float(tr.last_learner_decisions)
            log.append(row)
    return (tr.counters["decisions"] - d0) / (time.perf_counter() - t0), tr.counters["decisions"] - d0


def bench_loop(base_kw: dict, seconds: float, repeats: int) -> dict[str, Any]:
    """``Trainer.step`` with workers=0 and workers=1, interleaved, after two warm-up updates each."""
    from train.ppo import Trainer

    out: dict[str, Any] = {"runs": {"single": [], "workers1": []}}
    log: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        trs = {
            "single": Trainer(_cfg(os.path.join(tmp, "a"), updates=10**6, **base_kw)),
            "workers1": Trainer(_cfg(os.path.join(tmp, "b"), updates=10**6, workers=1, **base_kw)),
        }
        for tr in trs.values():
            _patch_learner_count(tr)
            warm = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
            tr.step(warm)
            tr.step(warm)
        for _ in range(repeats):
            for name, tr in trs.items():
                dps, _ = _timed_steps(tr, seconds, log if name == "workers1" else None)
                out["runs"][name].append(dps)
        trs["workers1"].dist.close()
    med = {k: statistics.median(v) for k, v in out["runs"].items()}
    out["median"] = med
    out["ratio_workers1_over_single"] = med["workers1"] / med["single"]
    out["per_update"] = {k: statistics.median([r[k] for r in log if k in r]) for k in log[0]} if log else {}
    return out


def _patch_learner_count(tr) -> None:
    """Record the learner decisions of the last update on the trainer (for the per-decision update cost)."""
    step = tr.step

    def wrapped(timers):
        before = tr.counters["learner_decisions"]
        out = step(timers)
        tr.last_learner_decisions = tr.counters["learner_decisions"] - before
        return out

    tr.step = wrapped
    tr.last_learner_decisions = 0


NET_BYTES_PER_S = 1.25e9  # assumed driver link for the cross-node figures: 10 Gbit/s


def model(per_update: dict[str, float], decisions_per_rollout: int, workers: list[int]) -> dict[str, Any]:
    """Throughput of N workers feeding one learner, from the measured per-update costs of the 1-worker loop.

    * A worker produces ``B`` decisions per rollout in ``t_c`` seconds (its measured rollout time).
    * The learner, per update of ``N`` rollouts, spends ``N * B * c_u`` seconds updating (``c_u``: measured
      update seconds per decision of the batch, learner and opponents), ``N * x`` fetching and merging the
      rollouts (``x`` per rollout, measured; bytes scale with N) and ``b`` broadcasting (one ``ray.put``).
    * Collection overlaps the update, so an update takes ``max(t_c, N * (B * c_u + x) + b)`` and the
      throughput is ``N * B`` over that: linear in N while the workers are the bottleneck, flat at
      ``B / (B * c_u + x)`` once the learner is; it stops scaling at ``N* = (t_c - b) / (B * c_u + x)``.
    * With a learner fast enough to ignore (``c_u -> 0``: a GPU, or a larger rollout per update), the driver's
      fetch-and-merge bounds it: ``B / x`` decisions/s (measured ``x``, one machine, shared memory), or
      ``B / (x + bytes / NET_BYTES_PER_S)`` when the rollouts cross a 10 Gbit/s link (an assumption).
    """
    t_c = per_update["worker_collect_s"]
    learner_dec = per_update["learner_decisions"]
    c_u = per_update["update_s"] / decisions_per_rollout  # per decision of the (1-worker) batch
    x = per_update["fetch_s"] + per_update["merge_s"]
    b = per_update["broadcast_s"]
    net_x = x + per_update["bytes_in"] / NET_BYTES_PER_S  # the same, plus the wire time of the bytes
    pred = {
        n: n * decisions_per_rollout / max(t_c, n * (decisions_per_rollout * c_u + x) + b) for n in workers
    }
    n_star = (t_c - b) / (decisions_per_rollout * c_u + x)
    return {
        "t_c_s": t_c, "c_u_s_per_decision": c_u, "x_s_per_rollout": x, "b_s": b,
        "learner_decisions_per_rollout": learner_dec, "predicted_decisions_per_s": pred,
        "stops_scaling_at_workers": n_star, "learner_bound_decisions_per_s": 1.0 / (c_u + x / decisions_per_rollout),
        "transfer_bound_decisions_per_s": decisions_per_rollout / x,
        "transfer_bound_over_network_decisions_per_s": decisions_per_rollout / net_x,
        "workers_to_saturate_transfers": (t_c - b) / x, "workers_to_saturate_network": (t_c - b) / net_x,
    }  # fmt: skip


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cpus", type=int, default=2, help="CPUs of the local Ray (default 2)")
    ap.add_argument("--rounds", type=int, default=3, help="rollouts per worker per collection run")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved repeats of each measurement")
    ap.add_argument("--seconds", type=float, default=15.0, help="seconds per training-loop run")
    ap.add_argument("--num-envs", type=int, default=None)
    ap.add_argument("--rollout-steps", type=int, default=None)
    ap.add_argument("--skip", choices=("collect", "loop"), action="append", default=[])
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    from mjenv._ray import ensure_ray

    kw: dict[str, Any] = {}
    if args.num_envs is not None:
        kw["num_envs"] = args.num_envs
    if args.rollout_steps is not None:
        kw["rollout_steps"] = args.rollout_steps
    result: dict[str, Any] = {"load_before": os.getloadavg(), "cpus": args.cpus, "settings": kw}
    ensure_ray(None, args.cpus)
    cfg = _cfg("unused", **kw)
    if "collect" not in args.skip:
        c = bench_collect(cfg, args.rounds, args.repeats)
        result["collect"] = c
        print(
            f"collection alone: 1 worker {c['median']['1']:,.0f} decisions/s, 2 workers {c['median']['2']:,.0f} "
            f"(x{c['ratio_2_over_1']:.2f}); in-process {c['median']['local']:,.0f}  (medians of {args.repeats}); "
            f"per CPU-second of a worker: 1 worker {c['per_worker_cpu_s']['1']:,.0f}, "
            f"2 workers {c['per_worker_cpu_s']['2']:,.0f}"
        )
    if "loop" not in args.skip:
        lp = bench_loop(kw, args.seconds, args.repeats)
        result["loop"] = lp
        print(
            f"training loop: single-process {lp['median']['single']:,.0f} decisions/s, 1 worker "
            f"{lp['median']['workers1']:,.0f} ({100 * lp['ratio_workers1_over_single']:.0f}%)"
        )
        pu = lp["per_update"]
        print(
            "per update (1 worker, medians): "
            + ", ".join(
                f"{k} {pu[k]:,.4g}"
                for k in (
                    "bytes_in",
                    "bytes_out",
                    "broadcast_s",
                    "fetch_s",
                    "merge_s",
                    "wait_s",
                    "update_s",
                    "worker_collect_s",
                    "step_s",
                )  # fmt: skip
                if k in pu
            )
        )
        m = model(pu, cfg.num_envs * cfg.rollout_steps, [1, 2, 8, 64])
        result["model"] = m
        print(
            "model: "
            + ", ".join(f"{n} workers {v:,.0f}/s" for n, v in m["predicted_decisions_per_s"].items())
            + f"; the learner saturates at {m['stops_scaling_at_workers']:.2f} workers "
            f"({m['learner_bound_decisions_per_s']:,.0f} decisions/s); without the learner, transfers bound it at "
            f"{m['transfer_bound_decisions_per_s']:,.0f}/s on one machine ({m['workers_to_saturate_transfers']:.0f} "
            f"workers), {m['transfer_bound_over_network_decisions_per_s']:,.0f}/s over 10 Gbit/s "
            f"({m['workers_to_saturate_network']:.0f} workers)"
        )
    result["load_after"] = os.getloadavg()
    print(f"load average before {result['load_before']}, after {result['load_after']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1, default=float)
    return result


if __name__ == "__main__":
    main(sys.argv[1:])
