"""Time one game through the local runner (four in-process policies, incremental judge) against the same game
through the judge's call-per-turn protocol (``judge()`` on the whole log every round, JSON in and out).

    PYTHONPATH=. python scripts/botzone_runner_bench.py [--games 20]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from mjenv.botzone import judge
from mjenv.botzone.runner import PolicyBot, play_match, random_initdata
from mjenv.policy import RandomPolicy


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--games", type=int, default=20)
    args = ap.parse_args()
    play_match([PolicyBot(RandomPolicy(i)) for i in range(4)], random_initdata(0))  # warm-up (compilation)
    ratios, t_run, t_call = [], [], []
    for g in range(args.games):
        init = random_initdata(g)
        t0 = time.perf_counter()
        rec = play_match([PolicyBot(RandomPolicy(g * 4 + i)) for i in range(4)], init)
        t1 = time.perf_counter()
        log = rec["log"]
        t2 = time.perf_counter()
        for k in range(0, len(log), 2):  # the judge's protocol: the whole log each call, JSON both ways
            out = judge(json.loads(json.dumps({"log": log[:k], "initdata": rec["initdata"]})))
            json.dumps(out, ensure_ascii=False)
        t3 = time.perf_counter()
        t_run.append(t1 - t0)
        t_call.append(t3 - t2)
        ratios.append((t3 - t2) / (t1 - t0))
    print(
        f"{args.games} games, median log length {statistics.median(len(r) for r in [log])}: runner "
        f"{statistics.median(t_run) * 1e3:.1f} ms/game, judge call-per-turn {statistics.median(t_call) * 1e3:.1f} "
        f"ms/game (judge calls only, no bots), ratio median {statistics.median(ratios):.1f}x "
        f"(min {min(ratios):.1f}x, max {max(ratios):.1f}x)"
    )


if __name__ == "__main__":
    main()
