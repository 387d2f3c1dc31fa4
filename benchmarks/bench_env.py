"""Throughput of the single-table fronts: random legal play through ``env()`` with ``env.last()``, through
``raw_env`` directly, and through the engine kernels from Python, beside PettingZoo's own classic envs.

Definitions: an *agent step* is one ``env.step(action)`` of an acting agent (a discard, a claim answer, a
kong, a pass...); steps of already-terminated agents at the end of an episode are not counted. A *hand* is
one episode (reset to termination). The policy is uniform over the legal actions (``np.flatnonzero(mask)``
and one ``rng.random()`` draw scaled by their number), the same for every env, and its cost is included
(``--policy integers`` draws with ``rng.integers`` instead, as earlier versions did: ~4 us more per step).

Usage::

    PYTHONPATH=. python benchmarks/bench_env.py [--quick] [--seconds 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np

_INTEGERS = False  # --policy integers: draw the legal action with rng.integers (slower policy)


def _run_aec(make, seconds: float, seed: int = 0) -> dict:
    e = make()
    rng = np.random.default_rng(seed)
    e.reset(seed=seed)
    steps = hands = 0
    c0 = time.process_time()
    t0 = time.perf_counter()
    deadline = t0 + seconds
    while True:
        for _agent in e.agent_iter():
            obs, rew, term, trunc, info = e.last()
            if term or trunc:
                e.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            e.step(
                int(legal[rng.integers(len(legal))] if _INTEGERS else legal[int(rng.random() * len(legal))])
            )
            steps += 1
        hands += 1
        if time.perf_counter() > deadline:
            break
        e.reset(seed=seed + hands)
    dt = time.perf_counter() - t0
    cpu = time.process_time() - c0
    return {
        "hands_per_s": hands / dt,
        "steps_per_s": steps / dt,
        "steps_per_cpu_s": steps / cpu,
        "steps_per_hand": steps / hands,
        "hands": hands,
    }


def _run_kernels(seconds: float, seed: int = 0) -> dict:
    """The engine from Python without any env: legal_mask_kernel + step_kernel + observe_kernel per step."""
    from mjenv import game as G
    from mjenv import observation as O

    st = G.new_state()
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    obs = np.zeros(O.OBS_SIZE, np.float32)
    rew = np.zeros(4, np.float32)
    rng = np.random.default_rng(seed)
    tab = G.win_tables()
    rules = G.rules_block()
    steps = hands = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        G.reset_kernel(st, seed + hands, 0, 0, rules, *tab)
        while st[G.PHASE] != G.PH_OVER:
            seat = int(st[G.CUR])
            G.legal_mask_kernel(st, seat, mask)
            O.observe_kernel(st, seat, obs)
            legal = np.flatnonzero(mask)
            a = legal[rng.integers(len(legal))] if _INTEGERS else legal[int(rng.random() * len(legal))]
            G.step_kernel(st, int(a), rew, *tab)
            steps += 1
        hands += 1
    dt = time.perf_counter() - t0
    return {
        "hands_per_s": hands / dt,
        "steps_per_s": steps / dt,
        "steps_per_hand": steps / hands,
        "hands": hands,
    }


def _run_compiled(seconds: float, seed: int = 0) -> dict:
    """Whole hands inside one compiled kernel (random legal policy in Numba): the engine's own ceiling."""
    from mjenv import game as G
    from mjenv.testing.table import playout_kernel

    st = G.new_state()
    rs = np.array([seed * 2654435761 + 88172645463325252], np.uint64)
    tab = G.win_tables()
    rules = G.rules_block()
    G.reset_kernel(st, seed, 0, 0, rules, *tab)
    playout_kernel(st, 0, rs, False, *tab)  # compile (or load) outside the timed loop
    steps = hands = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(100):
            G.reset_kernel(st, seed + hands, 0, 0, rules, *tab)
            steps += playout_kernel(st, 0, rs, False, *tab)
            hands += 1
    dt = time.perf_counter() - t0
    return {
        "hands_per_s": hands / dt,
        "steps_per_s": steps / dt,
        "steps_per_hand": steps / hands,
        "hands": hands,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="0.5 s per measurement (smoke test)")
    ap.add_argument("--seconds", type=float, default=5.0, help="seconds per measurement")
    ap.add_argument("--json", help="write the results (with CPU and versions) to this file")
    ap.add_argument(
        "--policy",
        choices=("random", "integers"),
        default="random",
        help="how the uniform legal action is drawn: rng.random() (default) or rng.integers",
    )
    args = ap.parse_args()
    global _INTEGERS
    _INTEGERS = args.policy == "integers"
    secs = 0.5 if args.quick else args.seconds

    import numba
    import pettingzoo

    from mjenv.game import warmup as warmup_engine
    from mjenv.observation import warmup as warmup_observation
    from mjenv.pettingzoo_env import env, raw_env

    t = time.perf_counter()
    warmup_engine()
    warmup_observation()
    compile_s = time.perf_counter() - t
    rows = {
        "mjenv env() + last()": _run_aec(env, secs),
        "mjenv raw_env + last()": _run_aec(raw_env, secs),
        "mjenv kernels from Python (mask+observe+step)": _run_kernels(secs),
        "mjenv compiled playout (no Python)": _run_compiled(secs),
    }
    for name, mod in (
        ("connect_four_v3", "pettingzoo.classic.connect_four_v3"),
        ("tictactoe_v3", "pettingzoo.classic.tictactoe_v3"),
        ("leduc_holdem_v4", "pettingzoo.classic.leduc_holdem_v4"),
    ):
        try:
            m = __import__(mod, fromlist=["env"])
        except Exception as exc:  # optional deps (pygame, rlcard) may be missing
            rows[f"pettingzoo {name} env()"] = {"skipped": f"{type(exc).__name__}: {exc}"}
            continue
        rows[f"pettingzoo {name} env()"] = _run_aec(m.env, secs)
        rows[f"pettingzoo {name} raw_env"] = _run_aec(m.raw_env, secs)
    print(f"warm-up (load or compile kernels): {compile_s:.1f} s")
    print(f"{'env':48s} {'hands/s':>10s} {'agent steps/s':>14s} {'per CPU-s':>10s} {'steps/hand':>11s}")
    for name, r in rows.items():
        if "skipped" in r:
            print(f"{name:48s} skipped ({r['skipped']})")
        else:
            cpu = f"{r['steps_per_cpu_s']:10.0f}" if "steps_per_cpu_s" in r else f"{'-':>10s}"
            print(
                f"{name:48s} {r['hands_per_s']:10.0f} {r['steps_per_s']:14.0f} {cpu} {r['steps_per_hand']:11.1f}"
            )
    if args.json:
        rec = {
            "results": rows,
            "compile_s": compile_s,
            "seconds": secs,
            "cpu": platform.processor() or platform.machine(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "numba": numba.__version__,
            "pettingzoo": pettingzoo.__version__,
            "load_avg": os.getloadavg(),
        }
        with open(args.json, "w") as f:
            json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()
