"""TorchRL batched rollouts against the raw VectorEnv: ``python -m benchmarks.torchrl_rollout [--tables 1024]``.

Side by side in one process, alternating rounds of ``--seconds`` each, a uniformly random legal policy:

* raw: ``mjenv.VectorEnv(N, observations=True, obs_dtype=)``, every chair played by ``random_legal_actions`` over the
  env's legal-action lists (its fast path);
* torchrl: ``mjenv.integrations.torchrl.make_env(N, opponents="random")``, TorchRL's ``env.rollout`` of 64
  steps at a time with no policy (the env's ``rand_action``: the same random pick, from torch's generator),
  each rollout continuing where the last ended; the three other chairs of each table are played inside by the
  batched random opponent. ``--obs-dtype uint8`` gives both sides the compact observations.

Both count engine decisions (every chair's, claim-window passes included: one per table moved by a kernel
call; ``MahjongVectorEnv.decisions`` on the TorchRL side), so the ratio compares like with like; the TorchRL
side also prints its learner steps.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from mjenv.integrations.torchrl import make_env
from mjenv.policy import random_legal_actions
from mjenv.vector import VectorEnv


def raw_round(env: VectorEnv, rng: np.random.Generator, seconds: float) -> float:
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        env.step(random_legal_actions(env.masks, rng, env.n_legal, env.legal_actions))
        n += env.num_envs
    return n / (time.perf_counter() - t0)


def torchrl_round(env, seconds: float, td, out=None, steps: int = 64):
    """Rollouts of ``steps`` steps, each from where the last ended (the env's masked random actions), stacked
    into ``out`` (TorchRL's ``rollout(out=)``: the previous rollout's TensorDict, reused)."""
    first, learner, t0 = env.venv.decisions, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        out = env.rollout(steps, break_when_any_done=False, auto_reset=False, tensordict=td, out=out)
        td = env.step_mdp(out[..., -1]).clone()  # the next rollout is stacked into out
        learner += out.numel()
    wall = time.perf_counter() - t0
    return (env.venv.decisions - first) / wall, learner / wall, td, out


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.torchrl_rollout", description=__doc__.split("\n")[0]
    )
    p.add_argument("--tables", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--steps", type=int, default=64, help="steps per TorchRL rollout")
    p.add_argument(
        "--obs-dtype",
        choices=("float32", "uint8"),
        default="float32",
        help="observations of both sides (uint8: mjenv.observation's compact encoding)",
    )
    p.add_argument(
        "--threads",
        type=int,
        default=1,
        help="Numba threads of both envs (the raw env's default is every one)",
    )
    p.add_argument(
        "--torch-threads",
        type=int,
        default=1,
        help="torch's intra-op threads (1: on a shared 2-core machine, 2 made TorchRL's copies 10x slower)",
    )
    args = p.parse_args(argv)
    dtype = np.dtype(args.obs_dtype)
    raw = VectorEnv(args.tables, seed=0, observations=True, threads=args.threads, obs_dtype=dtype)
    raw.reset()
    rng = np.random.default_rng(0)
    env = make_env(args.tables, opponents="random", seed=0, threads=args.threads, obs_dtype=dtype)
    # after numba's threading layer started (the first kernel call: it sets OpenMP's count, which torch shares)
    torch.set_num_threads(args.torch_threads)
    torch.manual_seed(0)
    td = env.reset()
    raw_round(raw, rng, 0.5)  # warm-up (compilation)
    *_, td, out = torchrl_round(env, 0.5, td, steps=args.steps)
    rows = {"raw": [], "torchrl": [], "learner": []}
    for _ in range(args.rounds):
        rows["raw"].append(raw_round(raw, rng, args.seconds))
        dec, learner, td, out = torchrl_round(env, args.seconds, td, out, args.steps)
        rows["torchrl"].append(dec)
        rows["learner"].append(learner)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(
        f"{args.tables} tables, {args.steps}-step rollouts, {args.threads} Numba / {args.torch_threads} torch "
        f"thread(s), medians of {args.rounds} alternating rounds of {args.seconds} s"
    )
    print(f"raw VectorEnv, {args.obs_dtype} observations: {med['raw']:,.0f} decisions/s")
    print(f"TorchRL make_env: {med['torchrl']:,.0f} decisions/s ({med['learner']:,.0f} learner steps/s)")
    print(f"ratio: {med['torchrl'] / med['raw']:.2f}")
    return med


if __name__ == "__main__":
    main()
