"""The luck-adjusted evaluation's figures and checks (docs/arena.md): ``python scripts/luck_checks.py MODE``.

Modes (each prints a markdown table and writes its JSON with ``--json``):

* ``targets``: for three pairs (the strongest shipped agent against the rule agent, the rule agent against the
  random one, and the first pair in the Botzone variant), 1,000 walls with ``adjust``: the 95% CI half-width of
  the pair's difference raw and adjusted, their ratio, the variance ratio and the equivalent walls; and the
  cost: the same walls played raw and adjusted, alternating, the median play time of each (``--repeats``), for the
  network agent, rule agents only, and the rule agent against the random one.
* ``bias``: three pairs (the strongest agent against the rule agent, the rule agent against the random one,
  the strongest agent against its network alone), ``--walls`` walls each (25,000 walls: 100,000 hands): the
  per-wall mean of raw minus adjusted, for the candidate's points and for the difference, with its 95% CI
  (which must cover 0: the corrections have mean zero).
* ``coverage``: ``--evals`` evaluations of ``--eval-walls`` walls each of the first pair (consecutive blocks
  of one run's walls; every wall is an independent draw), each with its adjusted 95% CI of the difference;
  the share of them that cover the pair's long-run mean (the raw difference over the ``bias`` run's walls,
  other seeds, read from ``--long-run``), which should be 93-97%.

Walls use seeds of their own (``--seed``), never the value model's training range (7,000,000-7,999,999).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from mjenv.arena import mean_ci, play_shard, run_arena
from mjenv.arena.luck import resolve_model
from mjenv.arena.play import run_arena_setup
from mjenv.rules import RuleConfig

BASELINE = {"baseline": "agents.nn:baseline", "rule": "agents.rule:make"}
RULE_RANDOM = {"rule": "agents.rule:make", "random": "agents.random:make"}
# the strongest agent against its own network alone (agents.nn:baseline with waits=False)
BASE_ALONE = {"baseline": "agents.nn:baseline", "alone": "agents.nn:baseline"}
BASE_ALONE_KW = {"alone": {"waits": False}}
RULE_CHECKED = {"checked": "agents.waits:checked", "rule": "agents.rule:make"}
RULE_CHECKED_KW = {"checked": {"inner": "agents.rule:make"}}


def _half(st: dict) -> float:
    lo, hi = st["ci95"]
    return (hi - lo) / 2.0


def _per_wall(agents: dict, walls: int, seed: int, rules, model, threads: int, kw: dict | None = None):
    """Per-wall raw and adjusted samples of the candidate (the first agent) and of the difference A - B."""
    setup = run_arena_setup(agents, "1v3", walls, seed, rules=rules, agent_kwargs=kw)
    setup = replace(setup, luck=model)
    out = play_shard(setup, 0, setup.schedule.n_jobs, threads=threads, progress=True, desc=f"seed {seed}")
    ca = setup.schedule.chair_agent  # [orders, chair] agent index
    n_orders = setup.schedule.n_orders
    res = {}
    for key, arr in (("raw", out.scores.astype(np.float64)), ("adjusted", out.adjusted)):
        a = arr.reshape(walls, n_orders, 4)
        pa = (a * (ca == 0)).sum(axis=(1, 2)) / float((ca == 0).sum())
        pb = (a * (ca == 1)).sum(axis=(1, 2)) / float((ca == 1).sum())
        res[key] = {"a": pa, "diff": pa - pb}
    return res


def targets(args, model) -> dict:
    pairs = [
        ("strongest vs rule", BASELINE, RuleConfig()),
        ("rule vs random", RULE_RANDOM, RuleConfig()),
        ("strongest vs rule, Botzone", BASELINE, RuleConfig.botzone()),
    ]
    out = {"walls": args.walls, "seed": args.seed, "pairs": [], "cost": []}
    for k, (label, agents, rules) in enumerate(pairs):
        rep = run_arena(agents, "1v3", args.walls, args.seed + k, rules=rules, threads=args.threads,
                        progress=True, adjust=model, records=0)  # fmt: skip
        d = rep["differences"][0]
        raw_h, adj_h = _half(d), _half(d["adjusted"]["points_per_hand"])
        out["pairs"].append({
            "pair": label, "seed": args.seed + k, "raw": d["mean"], "raw_half_width": raw_h,
            "adjusted": d["adjusted"]["points_per_hand"]["mean"], "adjusted_half_width": adj_h,
            "half_width_ratio": adj_h / raw_h, "variance_ratio": d["adjusted"]["variance_ratio"],
            "equivalent_walls": d["adjusted"]["equivalent_walls"],
        })  # fmt: skip
    cost_pairs = (
        ("network agent (strongest vs rule)", BASELINE, None),
        ("rule agents (the rule agent with the wait check vs rule)", RULE_CHECKED, RULE_CHECKED_KW),
        ("rule vs random", RULE_RANDOM, None),
    )
    for label, agents, kw in cost_pairs:
        times = {"raw": [], "adjusted": []}
        run_arena(agents, "1v3", 20, 1, threads=args.threads, progress=False, adjust=model, agent_kwargs=kw)
        for r in range(args.repeats):
            for key, adj in (("raw", None), ("adjusted", model)):
                rep = run_arena(agents, "1v3", args.cost_walls, args.seed + 100 + r, threads=args.threads,
                                progress=False, adjust=adj, records=0, agent_kwargs=kw)  # fmt: skip
                times[key].append(rep["timing"]["seconds_play"])
        med = {k: float(np.median(v)) for k, v in times.items()}
        out["cost"].append({"agents": label, "walls": args.cost_walls, "seconds": times, "median": med,
                            "ratio": med["adjusted"] / med["raw"]})  # fmt: skip
    lines = ["| pair (1,000 walls) | raw difference | adjusted | CI half-width ratio | variance ratio | "
             "equivalent walls |", "|---|---|---|---:|---:|---:|"]  # fmt: skip
    for p in out["pairs"]:
        lines.append(f"| {p['pair']} | {p['raw']:+.2f} ± {p['raw_half_width']:.2f} | {p['adjusted']:+.2f} ± "
                     f"{p['adjusted_half_width']:.2f} | {p['half_width_ratio']:.2f} | {p['variance_ratio']:.2f} | "
                     f"{p['equivalent_walls']:,.0f} |")  # fmt: skip
    lines += ["", "| agents | raw play (median) | adjusted play (median) | ratio |", "|---|---:|---:|---:|"]
    for c in out["cost"]:
        lines.append(f"| {c['agents']} | {c['median']['raw']:.1f} s | {c['median']['adjusted']:.1f} s | "
                     f"{c['ratio']:.2f}x |")  # fmt: skip
    out["markdown"] = "\n".join(lines)
    return out


def bias(args, model) -> dict:
    pairs = [("strongest vs rule", BASELINE, None), ("rule vs random", RULE_RANDOM, None),
             ("strongest vs its network alone", BASE_ALONE, BASE_ALONE_KW)]  # fmt: skip
    out = {"walls": args.walls, "pairs": []}
    lines = ["| pair | walls (hands) | raw difference | raw - adjusted: candidate | raw - adjusted: difference |"
             " covers 0 |", "|---|---|---|---|---|---|"]  # fmt: skip
    for k, (label, agents, kw) in enumerate(pairs):
        seed = args.seed + k
        s = _per_wall(agents, args.walls, seed, RuleConfig(), model, args.threads, kw)
        da = mean_ci(s["raw"]["a"] - s["adjusted"]["a"])
        dd = mean_ci(s["raw"]["diff"] - s["adjusted"]["diff"])
        raw = mean_ci(s["raw"]["diff"])
        ok = da["ci95"][0] <= 0 <= da["ci95"][1] and dd["ci95"][0] <= 0 <= dd["ci95"][1]
        out["pairs"].append({"pair": label, "seed": seed, "agents": agents, "raw_difference": raw,
                             "raw_minus_adjusted_candidate": da, "raw_minus_adjusted_difference": dd,
                             "covers_zero": ok})  # fmt: skip
        fmt = lambda st: f"{st['mean']:+.3f} [{st['ci95'][0]:+.3f}, {st['ci95'][1]:+.3f}]"  # noqa: E731
        lines.append(f"| {label} | {args.walls:,} ({4 * args.walls:,}) | {fmt(raw)} | {fmt(da)} | {fmt(dd)} | "
                     f"{'yes' if ok else 'NO'} |")  # fmt: skip
    out["markdown"] = "\n".join(lines)
    return out


def coverage(args, model) -> dict:
    long_run = json.loads(Path(args.long_run).read_text())
    mu = long_run["pairs"][0]["raw_difference"]["mean"]
    walls = args.evals * args.eval_walls
    s = _per_wall(BASELINE, walls, args.seed, RuleConfig(), model, args.threads)
    hit_adj = hit_raw = 0
    halves = {"raw": [], "adjusted": []}
    means = {"raw": [], "adjusted": []}
    for e in range(args.evals):
        sl = slice(e * args.eval_walls, (e + 1) * args.eval_walls)
        for key in ("raw", "adjusted"):
            st = mean_ci(s[key]["diff"][sl])
            halves[key].append(_half(st))
            means[key].append(st["mean"])
            inside = st["ci95"][0] <= mu <= st["ci95"][1]
            if key == "raw":
                hit_raw += inside
            else:
                hit_adj += inside
    out = {"evals": args.evals, "eval_walls": args.eval_walls, "seed": args.seed, "long_run_mean": mu,
           "long_run": long_run["pairs"][0]["raw_difference"], "coverage_adjusted": hit_adj / args.evals,
           "coverage_raw": hit_raw / args.evals, "median_half_width": {k: float(np.median(v)) for k, v in
                                                                       halves.items()},
           "evaluations": {"mean": means, "half_width": halves},
           "all_walls": {k: mean_ci(s[k]["diff"]) for k in ("raw", "adjusted")},
           "all_walls_raw_minus_adjusted": mean_ci(s["raw"]["diff"] - s["adjusted"]["diff"])}  # fmt: skip
    out["markdown"] = (
        f"{args.evals} evaluations of {args.eval_walls} walls (strongest vs rule; long-run mean {mu:+.3f} from "
        f"{long_run['walls']:,} other walls): the adjusted 95% CI covers it in {100 * out['coverage_adjusted']:.1f}%"
        f" (raw: {100 * out['coverage_raw']:.1f}%); median half-width {out['median_half_width']['adjusted']:.2f}"
        f" adjusted, {out['median_half_width']['raw']:.2f} raw; over all {walls:,} walls: raw "
        f"{out['all_walls']['raw']['mean']:+.3f}, adjusted {out['all_walls']['adjusted']['mean']:+.3f}, raw - adjusted "
        f"{out['all_walls_raw_minus_adjusted']['mean']:+.3f} {out['all_walls_raw_minus_adjusted']['ci95']}"
    )
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=["targets", "bias", "coverage"])
    p.add_argument("--value", default="shipped", help="value model: shipped, a path or module:factory")
    p.add_argument("--walls", type=int, default=None, help="walls per pair (targets 1,000, bias 25,000)")
    p.add_argument("--seed", type=int, default=None, help="first seed (targets 20261210, bias 20261220, "
                   "coverage 20261230)")  # fmt: skip
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--repeats", type=int, default=5, help="targets: timed repeats of raw and adjusted")
    p.add_argument("--cost-walls", type=int, default=1000, help="targets: walls of each timed run")
    p.add_argument("--evals", type=int, default=200)
    p.add_argument("--eval-walls", type=int, default=200)
    p.add_argument("--long-run", default="benchmarks/results/luck_bias.json", help="coverage: the bias JSON")
    p.add_argument("--json", default=None, help="write the figures here")
    args = p.parse_args()
    defaults = {"targets": (1000, 20261210), "bias": (25000, 20261220), "coverage": (0, 20261230)}
    w, sd = defaults[args.mode]
    args.walls = w if args.walls is None else args.walls
    args.seed = sd if args.seed is None else args.seed
    if 7_000_000 <= args.seed < 8_000_000:
        p.error("seeds 7,000,000-7,999,999 are the value model's training walls")
    model = resolve_model(args.value)
    t0 = time.perf_counter()
    out = {"targets": targets, "bias": bias, "coverage": coverage}[args.mode](args, model)
    out["value_model"] = model.describe()
    out["seconds"] = time.perf_counter() - t0
    from mjenv.arena import provenance

    out["mjenv"] = provenance()
    out["command"] = "python scripts/luck_checks.py " + " ".join(sys.argv[1:])
    print(out["markdown"])
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
