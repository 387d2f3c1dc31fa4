"""TorchRL batched rollouts against the raw VectorEnv: ``python -m benchmarks.torchrl_rollout [--tables 1024]``.

Side by side in one process, alternating rounds of ``--seconds`` each, a uniformly random legal policy:

* raw: ``mjenv.VectorEnv(N, observations=True)``, every chair played by ``random_legal_actions``;
* torchrl: ``mjenv.integrations.torchrl.make_env(N, opponents="random")``, TorchRL's ``env.rollout`` of 64
  steps at a time with no policy (its ``ActionMask`` transform draws a random legal action), each rollout
  continuing where the last ended; the three other chairs of each table are played inside by the batched
  random opponent.

Both count engine decisions (every chair's, claim-window passes included: one per active table per call of
``VectorEnv.step``), so the ratio compares like with like; the TorchRL side also prints its learner steps.
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
        env.step(random_legal_actions(env.masks, rng))
        n += env.num_envs
    return n / (time.perf_counter() - t0)


def torchrl_round(env, counter: list[int], seconds: float, td, steps: int = 64):
    """Rollouts of ``steps`` steps, each from where the last ended (TorchRL's masked random actions)."""
    counter[0], learner, t0 = 0, 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        out = env.rollout(steps, break_when_any_done=False, auto_reset=False, tensordict=td)
        td = env.step_mdp(out[..., -1])
        learner += out.numel()
    wall = time.perf_counter() - t0
    return counter[0] / wall, learner / wall, td


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.torchrl_rollout", description=__doc__.split("\n")[0]
    )
    p.add_argument("--tables", type=int, default=1024)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    raw = VectorEnv(args.tables, seed=0, observations=True)
    raw.reset()
    rng = np.random.default_rng(0)
    env = make_env(args.tables, opponents="random", seed=0)
    venv = env.base_env._env.vector_env  # the VectorEnv under the Gymnasium vector env TorchRL wraps
    counter = [0]
    step = venv.step

    def counted(actions):  # this instance only: one decision per active table per call
        counter[0] += int(venv.active.sum())
        return step(actions)

    venv.step = counted
    torch.manual_seed(0)
    td = env.reset()
    raw_round(raw, rng, 0.5)  # warm-up (compilation)
    *_, td = torchrl_round(env, counter, 0.5, td)
    rows = {"raw": [], "torchrl": [], "learner": []}
    for _ in range(args.rounds):
        rows["raw"].append(raw_round(raw, rng, args.seconds))
        dec, learner, td = torchrl_round(env, counter, args.seconds, td)
        rows["torchrl"].append(dec)
        rows["learner"].append(learner)
    med = {k: statistics.median(v) for k, v in rows.items()}
    print(f"{args.tables} tables, medians of {args.rounds} alternating rounds of {args.seconds} s")
    print(f"raw VectorEnv, float32 observations: {med['raw']:,.0f} decisions/s")
    print(f"TorchRL make_env: {med['torchrl']:,.0f} decisions/s ({med['learner']:,.0f} learner steps/s)")
    print(f"ratio: {med['torchrl'] / med['raw']:.2f}")
    return med


if __name__ == "__main__":
    main()
