"""VectorEnv decisions/s playing 16-hand matches (``RuleConfig(match=True)``) beside single hands.

Not a rules module. A random legal policy (:func:`mjenv.vector.random_legal_actions`, its cost included) steps
``--tables`` tables with ``--threads`` threads, masks only and with observations. The two modes alternate in
short bursts (``--rounds`` of ``--burst`` seconds each) so that a shared machine's load falls on both alike;
the figure is the median over the rounds of each mode's decisions/s, and the ratio the median of the rounds'
ratios. ``python -m benchmarks.bench_match`` (defaults: 1024 tables, 2 threads).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv, random_legal_actions


def burst(env: VectorEnv, rng: np.random.Generator, seconds: float) -> float:
    """Decisions/s of ``env`` stepped for about ``seconds``."""
    steps, t0 = 0, time.perf_counter()
    while (dt := time.perf_counter() - t0) < seconds:
        env.step(random_legal_actions(env.masks, rng, env.n_legal, env.legal_actions))
        steps += 1
    return steps * env.num_envs / dt


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--burst", type=float, default=1.0)
    args = ap.parse_args(argv)
    out = {}
    for observations in (False, True):
        envs, rngs, rates = {}, {}, {"hands": [], "matches": []}
        for name, match in (("hands", False), ("matches", True)):
            rules = RuleConfig(illegal="raise", match=match)
            envs[name] = VectorEnv(
                args.tables, seed=1, rules=rules, observations=observations, threads=args.threads
            )
            envs[name].reset()
            rngs[name] = np.random.default_rng(0)
            burst(envs[name], rngs[name], 0.3)  # warm-up (kernel load, caches)
        for r in range(args.rounds):
            for name in ("hands", "matches") if r % 2 == 0 else ("matches", "hands"):
                rates[name].append(burst(envs[name], rngs[name], args.burst))
        ratio = float(np.median(np.array(rates["matches"]) / np.array(rates["hands"])))
        key = "observations" if observations else "masks_only"
        out[key] = {name: float(np.median(v)) for name, v in rates.items()} | {"ratio": ratio}
        print(
            f"{key:>12}: single hands {out[key]['hands']:>10,.0f} decisions/s, matches "
            f"{out[key]['matches']:>10,.0f} decisions/s, matches/hands {ratio:.3f} "
            f"({args.tables} tables, {args.threads} threads, {args.rounds} x {args.burst:g} s)"
        )
    return out


if __name__ == "__main__":
    main()
