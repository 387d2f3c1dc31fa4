"""Speed of agents.nn's networks by architecture and size: ``PYTHONPATH=. python -m lab.probes.nn_sizes``.

For each network (the mlp of today and ``arch="planes"`` at several ``blocks x channels``, with and without the
engineered features) on real observations of a rule-agent rollout, CPU, ``--threads`` torch and Numba threads:

* ``inputs``: :func:`agents.nn.input_features` of a batch of ``--infer-batch`` rows (the features kernel or the
  planes kernel), microseconds per row;
* ``forward``: the network on those precomputed inputs under ``torch.no_grad`` (inference), us per row;
* ``train``: forward, backward and an Adam step on a minibatch of ``--train-batch`` rows (masked cross-entropy
  plus a value loss, as in PPO), us per row;
* ``PPO nn``: the network's share of one PPO decision, ``share * (inputs + forward + epochs * train)`` (``share``:
  the learner's share of all decisions, ~0.43 with the default opponents; past-self opponents' inference left
  out), and ``proj. dec/s``: the end-to-end PPO rate projected from ``--base`` (the mlp's measured
  ``benchmarks.train`` rate on ``--cores`` cores) by swapping the mlp's per-decision network cost for this
  one's.

Each figure is given in wall-clock time and in the CPU time of the process (``time.process_time``). On a
machine shared with other jobs, the wall clock of a multi-threaded run measures the wait for the cores (and
OpenMP's spin-waits) more than the network; there, measure with ``--threads 1`` and read the CPU-time table,
whose projection assumes the PPO loop keeps all ``--cores`` busy (its 2 + 2 threads do).

The sizes are measured side by side: each of ``--repeats`` rounds times every network once, in turn, and the
table gives medians (the machine is shared; ``--json`` writes every sample).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F

from agents import nn as ann
from mjenv.policy import load_policy
from mjenv.vector import VectorEnv

DEFAULT_SIZES = ("mlp", "planes:1x16", "planes:2x16", "planes:1x32", "planes:2x32", "planes:4x32",
                 "planes:2x32+f", "planes:2x64", "planes:4x64")  # fmt: skip


def parse_size(spec: str) -> ann.NNConfig:
    """``mlp``, ``mlp:CHANNELSxHIDDEN`` or ``planes:BLOCKSxCHANNELS[+f]`` as an :class:`agents.nn.NNConfig`."""
    arch, _, size = spec.partition(":")
    if arch == "mlp":
        if not size:
            return ann.NNConfig()
        c, h = (int(x) for x in size.split("x"))
        return ann.NNConfig(c, h)
    if arch == "planes" and size:
        f = size.endswith("+f")
        b, c = (int(x) for x in size.removesuffix("+f").split("x"))
        return ann.NNConfig(c, arch="planes", blocks=b, with_features=f)
    raise ValueError(f"bad size {spec!r}: want mlp, mlp:CxH or planes:BxC[+f]")


def rollout(rows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``rows`` uint8 observations and masks of non-forced decisions of rule agents playing 512 tables."""
    env = VectorEnv(512, seed=seed, threads=2, obs_dtype=np.uint8)
    rule = load_policy("agents.rule:make", 512, seed)
    obs, masks, seats = env.reset()
    keep_o, keep_m, have = [], [], 0
    while have < rows:
        a = rule(obs, masks, seats)
        r = np.flatnonzero(env.n_legal > 1)
        keep_o.append(obs[r].copy())
        keep_m.append(masks[r].copy())
        have += r.size
        obs, masks, seats, _, _ = env.step(a)
    return np.concatenate(keep_o)[:rows], np.concatenate(keep_m)[:rows]


def _time(fn) -> tuple[float, float]:
    """``(wall seconds, CPU seconds of this process)`` of ``fn()``."""
    t, c = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t, time.process_time() - c


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=list(DEFAULT_SIZES), help="mlp, mlp:CxH, planes:BxC[+f]")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--infer-batch", type=int, default=512)
    ap.add_argument("--train-batch", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=3, help="PPO epochs for the projection")
    ap.add_argument("--share", type=float, default=0.43, help="the learner's share of all PPO decisions")
    ap.add_argument("--base", type=float, default=43_500.0, help="the mlp's end-to-end PPO decisions/s")
    ap.add_argument("--cores", type=int, default=2, help="the cores of the PPO run the --base rate is from")
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    if args.repeats < 1 or args.threads < 1 or args.infer_batch < 1 or args.train_batch < 1:
        ap.error("--repeats, --threads, --infer-batch and --train-batch must be >= 1")
    configs = [parse_size(s) for s in args.sizes]
    ann.set_torch_threads(args.threads)
    torch.set_flush_denormal(True)
    obs, masks = rollout(args.train_batch)
    m_t = torch.from_numpy(masks)
    acts = torch.from_numpy(np.array([np.flatnonzero(m)[0] for m in masks]))
    ret = torch.randn(args.train_batch)
    nets, opts, train_in, infer_in = [], [], [], []
    for cfg in configs:
        torch.manual_seed(0)
        net = ann.build_net(cfg)
        nets.append(net)
        opts.append(torch.optim.Adam(net.parameters(), lr=1e-4))
        train_in.append(ann.input_features(cfg, obs, masks, threads=args.threads))
        infer_in.append(ann.input_features(cfg, obs[: args.infer_batch], masks[: args.infer_batch]))
    ob_i, m_i = obs[: args.infer_batch], masks[: args.infer_batch]
    m_it = m_t[: args.infer_batch]

    def train_step(k: int) -> None:
        logits, v = nets[k].forward_features(*train_in[k], None)
        loss = F.cross_entropy(logits.masked_fill(~m_t, -1e8), acts) + 0.5 * F.mse_loss(v, ret)
        opts[k].zero_grad(set_to_none=True)
        loss.backward()
        opts[k].step()

    def infer(k: int) -> None:
        with torch.no_grad():
            nets[k].forward_features(*infer_in[k], m_it)

    keys = ("inputs", "forward", "train")
    samples = {s: {f"{k}_{c}": [] for k in keys for c in ("wall", "cpu")} for s in args.sizes}
    for k in range(len(configs)):  # warm-up: compile, allocate
        train_step(k)
        infer(k)
    for _ in range(args.repeats):
        for k, s in enumerate(args.sizes):
            n_i, n_t = args.infer_batch, args.train_batch
            for key, fn, n in (("inputs", partial(ann.input_features, configs[k], ob_i, m_i), n_i),
                               ("forward", partial(infer, k), n_i), ("train", partial(train_step, k), n_t)):  # fmt: skip
                wall, cpu = _time(fn)
                samples[s][f"{key}_wall"].append(1e6 * wall / n)
                samples[s][f"{key}_cpu"].append(1e6 * cpu / n)
    rows = []
    for k, s in enumerate(args.sizes):
        med = {key: statistics.median(v) for key, v in samples[s].items()}
        for c in ("wall", "cpu"):
            med[f"ppo_nn_{c}"] = args.share * (
                med[f"inputs_{c}"] + med[f"forward_{c}"] + args.epochs * med[f"train_{c}"]
            )
        rows.append({"size": s, "config": configs[k].describe(), "parameters": nets[k].num_parameters, **med,
                     "samples": samples[s]})  # fmt: skip
    mlp = next((r for r in rows if r["size"] == "mlp"), None)
    print(f"{args.threads} threads; median of {args.repeats} rounds; inference batch {args.infer_batch}, training "
          f"minibatch {args.train_batch}; projection: {args.epochs} epochs, learner share {args.share}, mlp at "
          f"{args.base:,.0f} decisions/s end to end on {args.cores} cores")  # fmt: skip
    for c, what in (("wall", "wall-clock"), ("cpu", "CPU time of the process")):
        print(f"\n{what}, us per row:")
        print(f"| {'network':58s} | parameters | inputs | forward | train | PPO nn us/dec | proj. dec/s |")
        print("|" + "---|" * 7)
        for r in rows:
            proj = ""
            if mlp is not None:
                # wall: the mlp's wall time per decision; CPU: its CPU time per decision on all cores
                per_dec = (1 if c == "wall" else args.cores) * 1e6 / args.base
                r[f"projected_{c}"] = (
                    (1 if c == "wall" else args.cores)
                    * 1e6
                    / (per_dec - mlp[f"ppo_nn_{c}"] + r[f"ppo_nn_{c}"])
                )
                proj = f"{r[f'projected_{c}']:,.0f}"
            print(f"| {r['config']:58s} | {r['parameters']:10,d} | {r[f'inputs_{c}']:6.1f} | "
                  f"{r[f'forward_{c}']:7.1f} | {r[f'train_{c}']:5.1f} | {r[f'ppo_nn_{c}']:13.1f} | {proj:>11s} |")  # fmt: skip
    out = {"args": vars(args), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
