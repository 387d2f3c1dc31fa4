"""The rule agent inside the VectorEnv: decisions per second and strength.

``PYTHONPATH=. python -m benchmarks.rule_agent [--tables 1024] [--threads 2] [--steps 300] [--repeats 5]
[--kernel-steps 160] [--strength-steps 2000] [--baseline SPEC] [--json PATH]`` prints

1. **speed**: the VectorEnv with observations, ``--tables`` tables and ``--threads`` Numba threads, the rule agent
   (``agents.rule:make``) choosing at every seat. Each repeat plays ``--steps`` batched steps; the table gives
   decisions/s (median over the repeats) with the wall time split between the agent and ``env.step`` (and the
   process CPU time, which says what the work costs on a shared machine);
2. **kernel cost**: the CPU time of the agent alone (``time.process_time``, one Numba thread) per decision on
   states from rule-agent play (every 4th of ``--kernel-steps`` steps of ``--tables`` tables), split into turn
   decisions, claim decisions and forced ones (one legal action or a win offered), and the dispatcher cost
   (wall time of a call with a batch of one). On a shared machine this is the stable figure: ``2e6 / (agent
   + env CPU us)`` is what two quiet cores could reach;
   with ``--baseline SPEC``, also an interleaved A/B against another rule agent (repeats alternate between the
   two, each in its own VectorEnv from the same seed: on a shared machine the paired ratio is the fair figure);
3. **strength**: four rule agents at every table (``--strength-steps`` steps): share of hands that end in a win,
   deal-in rate (won on a discard), self-drawn rate, mean winning fan, draws; the same for four random agents;
   and one rule agent at chair 0 against three random ones (its share of the wins and points per hand).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np
from tqdm import tqdm

from mjenv import actions as A
from mjenv import observation as O
from mjenv.policy import load_policy
from mjenv.vector import VectorEnv


def speed(tables: int, threads: int, steps: int, repeats: int) -> dict:
    env = VectorEnv(tables, seed=0, threads=threads)
    pol = load_policy("agents.rule:make", tables, 0, threads=threads)
    obs, masks, seats = env.reset()
    for _ in range(20):  # warm-up (compiles on the first call) and leave the opening turns
        obs, masks, seats, _, _ = env.step(pol(obs, masks, seats))
    rows = []
    for _ in tqdm(range(repeats), desc="speed", leave=False):
        ta = te = 0.0
        c0 = time.process_time()
        for _ in range(steps):
            t0 = time.perf_counter()
            a = pol(obs, masks, seats)
            t1 = time.perf_counter()
            obs, masks, seats, _, _ = env.step(a)
            te += time.perf_counter() - t1
            ta += t1 - t0
        cpu = time.process_time() - c0
        d = tables * steps
        rows.append({"decisions_per_s": d / (ta + te), "agent_s": ta, "env_s": te, "cpu_us_per_decision": cpu / d * 1e6,
                     "agent_us_per_decision": ta / d * 1e6, "env_us_per_decision": te / d * 1e6})  # fmt: skip
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
    return {
        "tables": tables,
        "threads": threads,
        "steps": steps,
        "repeats": repeats,
        "median": med,
        "runs": rows,
    }


def ab_speed(tables: int, threads: int, steps: int, repeats: int, baseline: str) -> dict:
    """Interleaved A/B of ``agents.rule:make`` against ``baseline`` (another rule-agent spec, e.g. a copy of an
    older ``agents/rule.py`` importable as ``rule_old:make``): one VectorEnv per agent from the same seed,
    repeats alternating between them, so that both see the same load. With identical decisions both play
    the same trajectories (``same_actions``). Returns both medians and the median of the paired ratios."""
    import hashlib

    specs = ("agents.rule:make", baseline)
    sides = []
    for spec in specs:
        env = VectorEnv(tables, seed=0, threads=threads)
        pol = load_policy(spec, tables, 0, threads=threads)
        obs, masks, seats = env.reset()
        for _ in range(20):  # warm-up (compiles on the first call)
            obs, masks, seats, _, _ = env.step(pol(obs, masks, seats))
        sides.append({"env": env, "pol": pol, "state": (obs, masks, seats), "runs": [],
                      "digest": hashlib.blake2b(digest_size=16)})  # fmt: skip
    for _ in tqdm(range(repeats), desc="a/b", leave=False):
        for side in sides:
            env, pol = side["env"], side["pol"]
            obs, masks, seats = side["state"]
            elapsed = 0.0
            c0 = time.process_time()
            for _ in range(steps):
                t0 = time.perf_counter()
                a = pol(obs, masks, seats)
                obs, masks, seats, _, _ = env.step(a)
                elapsed += time.perf_counter() - t0
                side["digest"].update(a.tobytes())
            cpu = time.process_time() - c0
            side["state"] = (obs, masks, seats)
            d = tables * steps
            side["runs"].append({"decisions_per_s": d / elapsed, "cpu_us_per_decision": cpu / d * 1e6})
    a, b = (side["runs"] for side in sides)
    return {
        "specs": list(specs),
        "tables": tables,
        "threads": threads,
        "steps": steps,
        "repeats": repeats,
        "median_decisions_per_s": [statistics.median(r["decisions_per_s"] for r in x) for x in (a, b)],
        "median_cpu_us_per_decision": [
            statistics.median(r["cpu_us_per_decision"] for r in x) for x in (a, b)
        ],
        "ratio": statistics.median(x["decisions_per_s"] / y["decisions_per_s"] for x, y in zip(a, b)),
        "ratios": [x["decisions_per_s"] / y["decisions_per_s"] for x, y in zip(a, b)],
        "same_actions": sides[0]["digest"].digest() == sides[1]["digest"].digest(),
    }


def kernel_cost(tables: int, steps: int, repeats: int, seed: int = 0) -> dict:
    """CPU microseconds per decision of the rule agent alone (one thread) on states from its own play."""
    env = VectorEnv(tables, seed=seed, threads=2)
    pol = load_policy("agents.rule:make", tables, 0, threads=2)
    obs, masks, seats = env.reset()
    rows_o, rows_m = [], []
    for s in range(steps):
        a = pol(obs, masks, seats)
        if s >= 20 and s % 4 == 0:
            rows_o.append(obs.copy())
            rows_m.append(masks.copy())
        obs, masks, seats, _, _ = env.step(a)
    obs, masks = np.concatenate(rows_o), np.concatenate(rows_m)
    one = load_policy("agents.rule:make", len(obs), 0, threads=1)
    phase = obs[:, O.O_PHASE : O.O_PHASE + 4].argmax(1)
    forced = (masks.sum(1) <= 1) | masks[:, A.WIN]
    out = {"states": len(obs)}
    for name, sel in (("all", np.ones(len(obs), bool)), ("turn", (phase <= 1) & ~forced),
                      ("claim", (phase >= 2) & ~forced), ("forced", forced)):  # fmt: skip
        o, m = np.ascontiguousarray(obs[sel]), np.ascontiguousarray(masks[sel])
        one(o, m)
        ts = []
        for _ in range(repeats):
            c0 = time.process_time()
            one(o, m)
            ts.append(time.process_time() - c0)
        out[name] = {
            "share": float(sel.mean()),
            "cpu_us_per_decision": statistics.median(ts) / max(len(o), 1) * 1e6,
        }
    o1, m1 = obs[:1].copy(), masks[:1].copy()
    ts = []
    for _ in range(2000):
        t0 = time.perf_counter()
        one(o1, m1)
        ts.append(time.perf_counter() - t0)
    out["call_overhead_us"] = statistics.median(ts) * 1e6
    return out


def strength(tables: int, threads: int, steps: int, specs: tuple[str, str], seed: int = 1) -> dict:
    """Seat 0 plays ``specs[0]``, seats 1-3 ``specs[1]``; statistics of the finished hands."""
    env = VectorEnv(tables, seed=seed, threads=threads)
    hero = load_policy(specs[0], tables, 0)
    rest = hero if specs[1] == specs[0] else load_policy(specs[1], tables, 1)
    obs, masks, seats = env.reset()
    hands = wins = dealin = tsumo = fan = 0
    wins_by = np.zeros(4, np.int64)
    points = np.zeros(4, np.float64)
    for _ in tqdm(range(steps), desc=f"{specs[0]} vs {specs[1]}", leave=False):
        if rest is hero:
            a = hero(obs, masks, seats)
        else:
            a = rest(obs, masks, seats)
            mine = seats == 0
            if mine.any():
                a[mine] = hero(obs[mine], masks[mine], seats[mine])
        obs, masks, seats, _, term = env.step(a)
        if term.any():
            r = env.results
            w = r.winner[term]
            hands += int(term.sum())
            wins += int((w >= 0).sum())
            dealin += int((r.loser[term] >= 0).sum())
            tsumo += int(((w >= 0) & (r.loser[term] < 0)).sum())
            fan += int(r.fan_total[term].sum())
            wins_by += np.bincount(w[w >= 0], minlength=4)
            points += r.scores[term].sum(axis=0)
    return {
        "seat0": specs[0], "others": specs[1], "hands": hands, "win_rate": wins / hands,
        "deal_in_rate": dealin / hands, "self_drawn_rate": tsumo / hands, "draw_rate": 1 - wins / hands,
        "mean_winning_fan": fan / max(wins, 1), "seat0_share_of_wins": float(wins_by[0] / max(wins, 1)),
        "seat0_points_per_hand": float(points[0] / hands), "others_points_per_hand": float(points[1:].mean() / hands),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--kernel-steps", type=int, default=160, help="0 skips the kernel-cost run")
    ap.add_argument("--strength-steps", type=int, default=2000, help="0 skips the strength runs")
    ap.add_argument("--json", default=None)
    ap.add_argument("--baseline", default=None, metavar="SPEC",
                    help="also run an interleaved A/B of agents.rule:make against this spec (e.g. a copy of an "
                         "older agents/rule.py on PYTHONPATH as rule_old:make)")  # fmt: skip
    args = ap.parse_args(argv)
    out = {"speed": speed(args.tables, args.threads, args.steps, args.repeats)}
    m = out["speed"]["median"]
    print(f"rule agent in VectorEnv(observations=True), {args.tables} tables, {args.threads} threads, "
          f"median of {args.repeats} x {args.steps} steps:")  # fmt: skip
    print(f"  {m['decisions_per_s']:,.0f} decisions/s  (agent {m['agent_us_per_decision']:.2f} us + env "
          f"{m['env_us_per_decision']:.2f} us wall per decision; {m['cpu_us_per_decision']:.2f} us CPU)")  # fmt: skip
    if args.baseline:
        out["ab"] = r = ab_speed(args.tables, args.threads, args.steps, args.repeats, args.baseline)
        (da, db), (ca, cb) = r["median_decisions_per_s"], r["median_cpu_us_per_decision"]
        print(f"interleaved A/B, median of {args.repeats} x {args.steps} steps each: agents.rule:make {da:,.0f} "
              f"decisions/s ({ca:.2f} CPU us), {args.baseline} {db:,.0f} ({cb:.2f} CPU us); paired ratio "
              f"{r['ratio']:.3f} (runs {', '.join(f'{x:.2f}' for x in r['ratios'])}); "
              f"same actions: {r['same_actions']}")  # fmt: skip
    if args.kernel_steps > 0:
        out["kernel"] = k = kernel_cost(args.tables, args.kernel_steps, args.repeats)
        print(f"agent alone, 1 thread, CPU us per decision ({k['states']:,} states from play; median of "
              f"{args.repeats}):")  # fmt: skip
        for name in ("all", "turn", "claim", "forced"):
            print(
                f"  {name:6s} {k[name]['cpu_us_per_decision']:6.2f} us  ({k[name]['share']:.1%} of decisions)"
            )
        print(f"  call with a batch of one: {k['call_overhead_us']:.1f} us wall (dispatch and checks)")
    if args.strength_steps > 0:
        runs = [("agents.rule:make", "agents.rule:make"), ("agents.random:make", "agents.random:make"),
                ("agents.rule:make", "agents.random:make")]  # fmt: skip
        out["strength"] = [strength(args.tables, args.threads, args.strength_steps, s) for s in runs]
        print("| seat 0 | seats 1-3 | hands | win rate | deal-in | self-drawn | mean win fan | seat 0 share of wins "
              "| seat 0 pts/hand |")  # fmt: skip
        print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
        for r in out["strength"]:
            print(f"| {r['seat0']} | {r['others']} | {r['hands']} | {r['win_rate']:.3f} | {r['deal_in_rate']:.3f} | "
                  f"{r['self_drawn_rate']:.3f} | {r['mean_winning_fan']:.1f} | {r['seat0_share_of_wins']:.3f} | "
                  f"{r['seat0_points_per_hand']:+.2f} |")  # fmt: skip
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
