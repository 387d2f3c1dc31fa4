"""End-to-end PPO training throughput: ``PYTHONPATH=. python -m benchmarks.train --seconds S [--json out.json]``.

Runs the real loop of :mod:`train.ppo` (``Trainer.step``: collection on the uint8 VectorEnv with the default
opponent mix, GAE, the PPO epochs) with the default :class:`train.ppo.PPOConfig` for ``S`` seconds after one
warm-up update (Numba compilation and torch start-up are excluded), every timed update a full PPO update
(``--value-warmup 0``: a run's first value-only updates freeze the actor and cost less), and prints decisions/s end to end (every
decision of every table, learner and opponents, collected and trained; JSON key ``decisions_per_s``) with the
split of the wall time: env stepping, policy inference (learner and opponents), GAE (with the bootstrap
observations), updates, and the rest (bookkeeping between steps, "waiting"). The periodic evaluation and the
checkpoints are switched off (they are not per-decision work); ``--device cuda`` and larger ``--num-envs`` /
``--rollout-steps`` fill a GPU.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time

import torch

from train.ppo import PPOConfig, Trainer


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--json", default=None)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--num-envs", type=int, default=None)
    ap.add_argument("--rollout-steps", type=int, default=None)
    ap.add_argument("--threads", type=int, default=None, help="Numba threads (default: the PPOConfig's)")
    ap.add_argument("--channels", type=int, default=None)
    ap.add_argument("--hidden", type=int, default=None)
    ap.add_argument("--epochs", type=int, default=None)
    ap.add_argument(
        "--value-warmup",
        type=int,
        default=0,
        help="value-only updates at the start (default 0: every timed update is a full PPO update, as in the "
        "steady state of a run; the PPOConfig default of 10 would time cheaper updates that freeze the actor)",
    )
    ap.add_argument(
        "--init-from",
        default=None,
        help="start from this agents.nn checkpoint, as a run from BC does (e.g. agents/zoo/mlp-2026-12-01.safetensors; "
        "default: a fresh network of the PPOConfig's size)",
    )
    ap.add_argument("--minibatch-size", type=int, default=None)
    ap.add_argument(
        "--torch-threads", type=int, default=None, help="torch threads (default: the PPOConfig's)"
    )
    args = ap.parse_args(argv)
    if not args.seconds > 0:
        ap.error("--seconds must be > 0")
    with tempfile.TemporaryDirectory() as tmp:
        kw = {"run_dir": tmp, "eval_every": 0, "progress": False, "device": args.device}
        kw["value_warmup"] = args.value_warmup
        if args.init_from is not None:
            kw["init_from"] = args.init_from
        if args.num_envs is not None:
            kw["num_envs"] = args.num_envs
        for name in (
            "rollout_steps",
            "threads",
            "channels",
            "hidden",
            "epochs",
            "minibatch_size",
            "torch_threads",
        ):
            if getattr(args, name) is not None:
                kw[name] = getattr(args, name)
        cfg = PPOConfig(**kw)
        tr = Trainer(cfg)
        warm = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
        t0 = time.perf_counter()
        tr.step(warm)
        warm_s = time.perf_counter() - t0
        timers = dict.fromkeys(warm, 0.0)
        d0, l0, u0 = tr.counters["decisions"], tr.counters["learner_decisions"], tr.counters["update"]
        t0 = time.perf_counter()
        c0 = time.process_time()
        while time.perf_counter() - t0 < args.seconds:
            tr.step(timers)
        wall = time.perf_counter() - t0
        cpu = time.process_time() - c0
    dec = tr.counters["decisions"] - d0
    out = {
        "decisions_per_s": dec / wall,
        "learner_decisions_per_s": (tr.counters["learner_decisions"] - l0) / wall,
        "updates": tr.counters["update"] - u0,
        "decisions": dec,
        "wall_s": wall,
        "cpu_s": cpu,
        "decisions_per_cpu_s": dec / max(cpu, 1e-9),
        "split_s": {k: round(v, 3) for k, v in timers.items()},
        "split_share": {k: round(v / wall, 3) for k, v in timers.items()},
        "warmup_s": warm_s,
        "parameters": tr.net.num_parameters,
        "network": {"channels": tr.net.config.channels, "hidden": tr.net.config.hidden},
        "device": str(tr.device),
        "torch": torch.__version__,
        "config": {k: getattr(cfg, k) for k in ("num_envs", "rollout_steps", "epochs", "minibatch_size",
                                                 "opponent_prob", "opponents", "threads", "torch_threads")},
    }  # fmt: skip
    print(f"PPO end to end: {out['decisions_per_s']:,.0f} decisions/s ({out['learner_decisions_per_s']:,.0f} "
          f"learner decisions/s), {out['updates']} updates in {wall:.1f} s, network {out['parameters']:,} "
          f"parameters on {out['device']}; {out['decisions_per_cpu_s']:,.0f} decisions per CPU-second of this "
          f"process ({cpu:.1f} CPU-s in {wall:.1f} s: on a shared machine the wall-time rate is lower)")  # fmt: skip
    for k, v in timers.items():
        print(f"  {k[:-2]:10s} {v:7.2f} s  {100 * v / wall:5.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
