"""sb3-contrib MaskablePPO end to end on mjenv: ``PYTHONPATH=. python -m benchmarks.sb3 [--tables 256]``.

Trains MaskablePPO with the same settings (MlpPolicy, ``--n-steps`` per env, ``--batch-size``, one epoch, random
opponents) on (a) the SB3 adapter (:func:`mjenv.integrations.sb3.make_vec_env`) over ``--tables`` tables and
(b) the one-table Gymnasium wrapper (``gymnasium.make("mjenv/Mahjong-v0")`` in SB3's ``DummyVecEnv`` of 1) in
this process, and prints the learner steps per second of each (collection and training,
after one warm-up rollout and update each that are not timed; the timed rollouts of (a) and (b) alternate, so
that a change of the machine's load falls on both) and their ratio. One torch thread and one Numba
thread by default (``--torch-threads``, ``--threads``): on a shared 2-core machine more threads that wait
passively cost more than they give. ``--batch-size`` 1024 (default) is a minibatch of 1024 for (a) and the whole
rollout of ``--n-steps`` for (b) (MaskablePPO takes what the buffer holds); SB3's
own per-sample cost (inference, the update) is most of (a)'s time, and larger minibatches cut it.
"""

from __future__ import annotations

import argparse
import json
import time

import gymnasium
import torch
from sb3_contrib import MaskablePPO
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

import mjenv
from mjenv.integrations.sb3 import make_vec_env


def model(env, args) -> MaskablePPO:
    """MaskablePPO with the benchmark's settings on ``env``, after one untimed rollout and update (warm-up:
    compilation, torch start-up)."""
    m = MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=args.n_steps,
        batch_size=args.batch_size,
        n_epochs=1,
        seed=0,
        verbose=0,
        device="cpu",
        policy_kwargs={"net_arch": [args.hidden, args.hidden]},
    )
    m.learn(total_timesteps=args.n_steps * env.num_envs)
    return m


def timed(m: MaskablePPO, steps: int) -> tuple[int, float]:
    """``(learner steps, seconds)`` of ``m.learn`` over at least ``steps`` more steps (whole rollouts)."""
    before = m.num_timesteps
    t0 = time.perf_counter()
    m.learn(total_timesteps=steps, reset_num_timesteps=False)
    return m.num_timesteps - before, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=256, help="tables of the SB3 adapter (a)")
    ap.add_argument("--rounds", type=int, default=3, help="rounds of one rollout of (a), then of (b)")
    ap.add_argument("--single-steps", type=int, default=1024, help="timed learner steps of (b) per round")
    ap.add_argument("--n-steps", type=int, default=128, help="MaskablePPO n_steps (per env)")
    ap.add_argument("--batch-size", type=int, default=1024, help="minibatch (b: one of its whole rollout)")
    ap.add_argument("--hidden", type=int, default=64, help="width of the two hidden layers")
    ap.add_argument("--torch-threads", type=int, default=1)
    ap.add_argument(
        "--threads", type=int, default=1, help="Numba threads of (a)'s VectorEnv (1: a shared machine)"
    )
    ap.add_argument("--json", default=None, help="also write the figures to this file")
    args = ap.parse_args(argv)
    torch.set_num_threads(args.torch_threads)

    a = model(make_vec_env(args.tables, seed=0, threads=args.threads), args)
    b = model(DummyVecEnv([lambda: Monitor(gymnasium.make(mjenv.GYM_ID, opponents="random"))]), args)
    totals = {"a": [0, 0.0], "b": [0, 0.0]}
    for _ in range(args.rounds):  # interleaved: a change of the machine's load falls on both
        for key, m, steps in (("a", a, args.n_steps * args.tables), ("b", b, args.single_steps)):
            n, dt = timed(m, steps)
            totals[key][0] += n
            totals[key][1] += dt
    vec, single = (totals[k][0] / totals[k][1] for k in "ab")
    out = {
        "sb3_adapter_tables": args.tables,
        "sb3_adapter_steps_per_s": round(vec, 1),
        "gym_wrapper_steps_per_s": round(single, 1),
        "ratio": round(vec / single, 2),
        "rounds": args.rounds,
        "n_steps": args.n_steps,
        "batch_size": args.batch_size,
        "hidden": args.hidden,
        "torch_threads": args.torch_threads,
        "numba_threads": args.threads,
    }
    print(f"(a) SB3 adapter, {args.tables} tables:   {vec:10.0f} learner steps/s")
    print(f"(b) Gymnasium wrapper, DummyVecEnv(1): {single:10.0f} learner steps/s")
    print(f"ratio (a)/(b): {vec / single:.1f}x")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main()
