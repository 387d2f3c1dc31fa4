"""The rule agent alone against a baseline copy of it, per kind of decision: an interleaved CPU-time A/B.

``PYTHONPATH=.:DIR python -m lab.probes.rule_agent_ab --baseline MODULE [--tables 512] [--steps 160]
[--calls 15]`` where ``DIR/MODULE.py`` is an older ``agents/rule.py`` (e.g. ``git show REV:agents/rule.py >
/tmp/ab/rule_main.py`` and ``--baseline rule_main``). It plays ``--steps`` steps of ``--tables`` tables with the
rule agent, keeps every 4th step's observations and masks, splits them by kind (turns, claim windows, forced
decisions; turns also by the target the agent chooses), checks that both agents give the same action on every
state, and times both on each group with one Numba thread, alternating ``--calls`` calls each
(``time.process_time``): CPU us per decision and the median of the paired ratios (baseline / this one), the
fair figure on a shared machine.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import sys
import time

import numpy as np

from agents import rule as R
from mjenv import actions as A
from mjenv import hand as H
from mjenv import observation as O
from mjenv.vector import VectorEnv

_GROUPS = ("mixed_straight", "mixed_triple", "pure_straight", "seven_pairs", "knitted_straight",
           "honors_knitted", "full_flush", "half_flush_", "upper", "lower", "reversible", "thirteen")  # fmt: skip


def states(tables: int, steps: int) -> tuple[np.ndarray, np.ndarray]:
    env = VectorEnv(tables, seed=0, threads=2)
    pol = R.RulePolicy(tables, threads=2)
    obs, masks, seats = env.reset()
    ro, rm = [], []
    for s in range(steps):
        a = pol(obs, masks, seats)
        if s >= 20 and s % 4 == 0:
            ro.append(obs.copy())
            rm.append(masks.copy())
        obs, masks, seats, _, _ = env.step(a)
    return np.concatenate(ro), np.concatenate(rm)


def chosen_targets(obs: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The target :func:`agents.rule._best_target` picks for each turn row (decoded as the kernel does)."""
    pol = R.RulePolicy(1)
    v = O.views(obs)
    lb = np.zeros(34, np.int64)
    out = np.full(len(obs), -1)
    for i in rows:
        conc = v["hand"][i].sum(0).astype(np.int8)
        mk = np.zeros(5, np.int64)
        mt = np.zeros(5, np.int64)
        nm = 0
        for kind, tile, _ in v["meld_seq"][i, 0].astype(int):
            if kind <= 0 or kind > 5:
                break
            mk[nm], mt[nm] = (1, tile - 2) if kind == 1 else (2, tile - 1)
            nm += 1
        out[i], _ = R._best_target(conc, H.keys_kernel(conc), int(conc.sum()), nm, mk, mt, 10 * R.NO,
                                   pol._tabs, pol._shapes, lb)  # fmt: skip
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--baseline", required=True, help="module name of the older agents/rule.py copy")
    ap.add_argument("--tables", type=int, default=512)
    ap.add_argument("--steps", type=int, default=160)
    ap.add_argument("--calls", type=int, default=15)
    args = ap.parse_args(argv)
    base = importlib.import_module(args.baseline)
    obs, masks = states(args.tables, args.steps)
    phase = obs[:, O.O_PHASE : O.O_PHASE + 4].argmax(1)
    forced = (masks.sum(1) <= 1) | masks[:, A.WIN]
    turn = (phase <= 1) & ~forced
    tg = chosen_targets(obs, np.flatnonzero(turn))
    names = np.array(R.TARGET_NAMES + ["-"])
    groups = {"all": np.ones(len(obs), bool), "turn": turn, "claim": (phase >= 2) & ~forced, "forced": forced}
    for g in _GROUPS:
        groups["turn: " + g] = turn & np.char.startswith(names[tg], g)
    pa, pb = R.RulePolicy(len(obs), threads=1), base.RulePolicy(len(obs), threads=1)
    print(f"{len(obs):,} states; CPU us per decision, one thread, {args.calls} alternating calls each")
    print("| decisions | share | baseline | this | speedup (median of paired ratios) |")
    print("|---|---:|---:|---:|---:|")
    for name, sel in groups.items():
        if not sel.any():
            continue
        o, m = np.ascontiguousarray(obs[sel]), np.ascontiguousarray(masks[sel])
        if not (pa(o, m) == pb(o, m)).all():
            raise SystemExit(f"the two agents disagree on {name} states")
        ta, tb = [], []
        for _ in range(args.calls):
            c0 = time.process_time()
            pa(o, m)
            ta.append(time.process_time() - c0)
            c0 = time.process_time()
            pb(o, m)
            tb.append(time.process_time() - c0)
        a, b = statistics.median(ta) / len(o) * 1e6, statistics.median(tb) / len(o) * 1e6
        r = statistics.median(y / x for x, y in zip(ta, tb))
        print(f"| {name} | {sel.mean():.1%} | {b:.2f} | {a:.2f} | {r:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
