"""A correct Botzone bot is never faulted by the adapter: a bot program mirroring a deterministic agent
through the Botzone protocol gives that agent's own duplicate report bit for bit.

``PYTHONPATH=. python scripts/botzone_mirror.py --mode keep --walls 2500`` (10,000 hands in 1v3): mjenv's rule
agent wrapped as a keep-running program (``agent:agents.rule:make``, ``python -m mjenv.botzone.bot``, one process
per hand) against agents.rule itself. ``--mode turn --walls 50`` (200 hands): ``tests/bz_bots/mirror_turn.sh``, a
one-process-per-turn JSON program (reads its input to the end, multi-line answers, data checked every turn)
mirroring ``tests._bz_policies:make_drawplayer``. Prints the comparison and the times; exits 1 on a difference.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mjenv.arena import format_markdown, run_arena  # noqa: E402
from mjenv.rules import RuleConfig  # noqa: E402

MODES = {
    "keep": ("agent:agents.rule:make", "agents.rule:make"),
    "turn": (
        f"json:sh {ROOT / 'tests' / 'bz_bots' / 'mirror_turn.sh'}",
        "tests._bz_policies:make_drawplayer",
    ),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mode", choices=sorted(MODES), default="keep")
    ap.add_argument("--walls", type=int, default=2)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--tables", type=int, default=64)
    ap.add_argument("--jobs", type=int, default=None, help="bot turns at once (default: the CPU count)")
    ap.add_argument("--time-limit", type=float, default=20.0)
    args = ap.parse_args(argv)
    spec, agent = MODES[args.mode]
    common = dict(
        walls=args.walls,
        seed=args.seed,
        tables=args.tables,
        rules=RuleConfig.botzone(),
        records=0,
        progress=True,
    )
    kw = {"bot": spec, "time_limit": args.time_limit, "jobs": args.jobs, "max_tables": args.tables}
    if args.mode == "keep":
        kw["first_time_limit"] = 120.0
    t0 = time.perf_counter()
    a = run_arena({"bot": "mjenv.botzone.botpolicy:bot_policy", "rule": "agents.rule:make"}, "1v3",
                  agent_kwargs={"bot": kw}, **common)  # fmt: skip
    t1 = time.perf_counter()
    b = run_arena({"bot": agent, "rule": "agents.rule:make"}, "1v3", **common)
    t2 = time.perf_counter()
    print(format_markdown(a))
    same = {key: a[key] == b[key] for key in ("table", "differences", "convergence", "illegal_actions")}
    for nm in a["agents"]:
        x = {k: v for k, v in a["agents"][nm].items() if k not in ("spec", "bot")}
        y = {k: v for k, v in b["agents"][nm].items() if k not in ("spec", "bot")}
        same[f"agents.{nm}"] = x == y
    hands = a["settings"]["hands"]
    print(f"\n{args.mode}: {hands} hands, bot {spec!r} mirroring {agent!r}: the bot's run {t1 - t0:.0f} s, the "
          f"agent's own {t2 - t1:.1f} s; faults {a['agents']['bot']['bot']['faults_count']}")  # fmt: skip
    print("identical:", same)
    return 0 if all(same.values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
