"""Arena throughput: hands/s of a duplicate evaluation (``mjenv.arena.run_arena``) on the vector env.

Entries: 1v3 random vs random, 1v3 rule vs random (``agents.rule:make`` and ``agents.random:make``, imported by
their import strings; skipped with a message when ``agents.rule`` is not there). The target is a 1v3
duplicate of the rule agent against random over 1,000 walls (4,000 hands) in <= 30 s on 2 cores.

The compile (or cache load) of the kernels and a first short run of each pairing are done before the clock
starts; the figures are the median of ``--repeats`` runs (wall-clock seconds of the whole ``run_arena`` call,
records and report included). On a shared machine they are noisy: quote medians.

Usage::

    PYTHONPATH=. python -m lab.probes.arena_bench [--walls 1000] [--repeats 3] [--threads T] [--tables 1024] [--json out]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import time

RANDOM = "mjenv.policy:make_random"


def _pairings() -> list[tuple[str, dict[str, str]]]:
    out = [("random vs random", {"random_a": RANDOM, "random_b": RANDOM})]
    if importlib.util.find_spec("agents") is not None and importlib.util.find_spec("agents.rule") is not None:
        rnd = "agents.random:make" if importlib.util.find_spec("agents.random") is not None else RANDOM
        out.append(("rule vs random", {"rule": "agents.rule:make", "random": rnd}))
    else:
        print("agents.rule not found (run from a checkout with agents/): rule vs random skipped")
    return out


def bench(walls: int, repeats: int, threads: int | None, tables: int, warm: bool = True) -> list[dict]:
    """Time each pairing (``warm``: compile or load every mjenv kernel first, timed apart)."""
    from mjenv import warmup
    from mjenv.arena import run_arena

    if warm:
        t0 = time.perf_counter()
        warmup()
        print(f"compile / cache load: {time.perf_counter() - t0:.1f} s")
    rows = []
    for label, agents in _pairings():
        run_arena(agents, "1v3", walls=4, seed=0, threads=threads, tables=tables, progress=False)  # warm
        secs, rep = [], None
        for r in range(repeats):
            t = time.perf_counter()
            rep = run_arena(
                agents, "1v3", walls=walls, seed=r, threads=threads, tables=tables, progress=False
            )
            secs.append(time.perf_counter() - t)
        med = statistics.median(secs)
        hands = rep["settings"]["hands"]
        row = {
            "entry": f"arena 1v3 {label}", "walls": walls, "hands": hands, "seconds_median": med,
            "seconds": secs, "hands_per_s": hands / med, "decisions_per_s": rep["table"]["decisions"] / med,
            "threads": threads, "tables": tables,
        }  # fmt: skip
        d = rep["differences"][0]
        print(
            f"{row['entry']:28s} {hands} hands in {med:6.2f} s (median of {repeats}): {row['hands_per_s']:8.0f} "
            f"hands/s, {row['decisions_per_s']:9.0f} decisions/s; {d['a']} - {d['b']} = {d['mean']:+.2f} "
            f"[{d['ci95'][0]:+.2f}, {d['ci95'][1]:+.2f}]"
        )
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--walls", type=int, default=1000, help="walls per run (default 1000 = 4,000 hands)")
    p.add_argument("--repeats", type=int, default=3, help="timed runs per entry (default 3)")
    p.add_argument("--threads", type=int, default=None, help="Numba threads (default: all)")
    p.add_argument("--tables", type=int, default=1024, help="vector env tables (default 1024)")
    p.add_argument("--json", metavar="PATH", help="write the figures as JSON")
    args = p.parse_args(argv)
    rows = bench(args.walls, args.repeats, args.threads, args.tables)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"machine": {"cpus": os.cpu_count(), "python": platform.python_version()}, "rows": rows},
                      f, indent=1)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
