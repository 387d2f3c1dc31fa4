"""The local Botzone match runner against the judge's call-per-turn protocol, side by side.

The target: a game through the local runner (:func:`mjenv.botzone.runner.play_match`) with four in-process
policies >= 100x faster than the same game through the C++ judge's call-per-turn protocol, in which Botzone
starts the judge afresh every round with the whole log so far and the judge replays it. Our equivalent of that
protocol is :func:`mjenv.botzone.judge.judge` called every round on the growing log, JSON in and JSON out.

For each game (seed ``g``: :func:`~mjenv.botzone.runner.random_initdata`, four ``RandomPolicy`` seats, the
package's own random policy) the script times, in one process and one after the other:

* ``runner``: ``play_match`` as it is by default (one engine state for the match, the in-process seats read
  observation and mask from it: ``in_process="engine"``), policy calls included;
* ``runner (requests)``: the same with ``in_process="protocol"`` (each in-process seat rebuilds the game from
  its Botzone requests, as a wrapped bot does; the runner before the fast path);
* ``judge per call``: the judge's protocol on the finished log: ``judge({"log": log[:2k], "initdata": ...})``
  for every ``k``, JSON both ways. Only the judge calls: no bot answers (so this side is *cheaper* than a real
  match through it, which would also pay the four policies);
* ``judge per call, canHu on every replayed step``: the same, but every replayed step computes its ``canHu``
  (the fan calculator) as the C++ judge's replay does; :func:`mjenv.botzone.judge.judge` skips that for the steps whose
  output it does not return, so the plain figure above is the cheaper, conservative baseline;
* ``match per call`` (``--full``): the same game played through ``play_match(judge_mode="per-call")``, the
  policies answering their requests: the whole call-per-turn match;
* ``process start per call``: what the protocol costs before any replay. Botzone starts the judge as a new
  process every round; our ``judge()`` calls above run in this process, so they leave that cost out. This row
  starts a minimal compiled C program once per round (built with ``cc`` into a temporary folder; skipped when
  there is no C compiler), writes that round's request (the log so far, as JSON) to its stdin and reads its
  one-line answer: a floor that any per-call judge, in any language, pays. ``judge per call + process start``
  adds it to the judge's own time (with and without ``canHu`` on every replayed step).

* ``real judge per call`` (``--real-judge PATH``): the real Botzone judge, a binary built from
  ailab-pku/Chinese-Standard-Mahjong's ``judge/main.cpp`` (see docs/botzone.md for how it was built; its source is
  not part of this repository), started once per round with that round's request on stdin, exactly as Botzone
  calls it. Timed in wall seconds and in the judge processes' CPU seconds (``RUSAGE_CHILDREN``); every output is
  compared with the runner's log entry, so the run is also a parity check of the runner against the real judge.
  The runner's CPU seconds (``time.process_time``, policies included) are measured for the CPU ratio.

Without ``--real-judge`` the rows ``judge per call`` and ``process start`` bound the real judge's cost from
both sides: a C++ replay is probably faster per step than ours (Python over Numba kernels, about 100-200 us per
replayed step), so the real ratio lies between the ``process start`` ratio and the ``judge per call + process
start`` ratio.

Every log is checked identical across the ways it was played. Ratios are taken per game and the medians are
reported (the machine is shared: quote medians). ``policy`` is the time spent inside the policies' calls on the
runner path (measured by a wrapper), so ``runner - policy`` is the runner's own cost.

Usage::

    PYTHONPATH=. python -m benchmarks.botzone_runner [--games 9] [--first-game 0] [--full] [--real-judge PATH]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from mjenv.botzone.judge import judge
from mjenv.botzone.runner import PolicyBot, play_match, random_initdata
from mjenv.policy import RandomPolicy


class _Timed:
    """A policy wrapper that adds the time spent in the policy to a shared counter."""

    def __init__(self, policy, clock: list[float]) -> None:
        self.policy, self.clock = policy, clock
        self.needs_observations = getattr(policy, "needs_observations", True)

    def __call__(self, obs, masks, seats):
        t0 = time.perf_counter()
        a = self.policy(obs, masks, seats)
        self.clock[0] += time.perf_counter() - t0
        return a


def _seats(g: int, clock: list[float] | None = None) -> list[PolicyBot]:
    pols = [RandomPolicy(g * 4 + i) for i in range(4)]
    return [PolicyBot(_Timed(p, clock) if clock is not None else p) for p in pols]


def judge_per_call(log: list, initdata: dict) -> float:
    """Seconds of the judge's call-per-turn protocol over ``log`` (JSON in and out, every prefix)."""
    t0 = time.perf_counter()
    for k in range(0, len(log), 2):
        out = judge(json.loads(json.dumps({"log": log[:k], "initdata": initdata})))
        json.dumps(out, ensure_ascii=False)
    return time.perf_counter() - t0


def judge_per_call_cpp_like(log: list, initdata: dict) -> float:
    """Like :func:`judge_per_call`, but every replayed step formats its output with ``canHu`` (the fan
    calculator), as the C++ judge's replay does (its ``roundOutput`` runs ``checkHu`` on every step it replays);
    :func:`mjenv.botzone.judge.judge` skips that for the steps whose output it does not return."""
    from mjenv.botzone import Judge

    t0 = time.perf_counter()
    for k in range(0, len(log), 2):
        inp = json.loads(json.dumps({"log": log[:k], "initdata": initdata}))
        j = Judge(inp["initdata"])
        for a in inp["log"][1::2]:
            j.feed(a)
        json.dumps(j.output, ensure_ascii=False)
    return time.perf_counter() - t0


_FLOOR_C = r"""
#include <stdio.h>
int main(void) {
    static char buf[1 << 16];
    size_t n, total = 0;
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0) total += n;
    printf("{\"command\":\"request\",\"bytes\":%zu}\n", total);
    return 0;
}
"""


def build_floor_program(folder: Path) -> Path | None:
    """Compile the minimal per-call program (reads stdin, prints one line) with ``cc``; None without a compiler."""
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None
    src, exe = folder / "floor.c", folder / "floor"
    src.write_text(_FLOOR_C)
    subprocess.run([cc, "-O2", "-o", str(exe), str(src)], check=True, capture_output=True)
    return exe


def process_start_per_call(log: list, initdata: dict, exe: Path) -> float:
    """Seconds to start ``exe`` once per round with that round's request on stdin and read its answer (the
    requests are encoded before the clock starts: their JSON is already counted in :func:`judge_per_call`)."""
    requests = [
        json.dumps({"log": log[:k], "initdata": initdata}, ensure_ascii=False).encode()
        for k in range(0, len(log), 2)
    ]
    t0 = time.perf_counter()
    for request in requests:
        out = subprocess.run([str(exe)], input=request, capture_output=True, check=True).stdout
        if not out.startswith(b"{"):
            raise RuntimeError(f"the floor program answered {out[:80]!r}")
    return time.perf_counter() - t0


def real_judge_per_call(log: list, initdata: dict, exe: Path) -> tuple[float, float, int]:
    """The judge binary ``exe`` called the Botzone way over ``log``: started once per round with that round's
    request (the log so far) on stdin. Returns the wall seconds, the CPU seconds of the judge processes
    (``RUSAGE_CHILDREN``: this process runs no other children meanwhile) and how many of its outputs equal the
    log's judge entries (``log[2k]["output"]``, compared as parsed JSON). As in :func:`process_start_per_call`,
    the requests are encoded before the clock starts."""
    rounds = range(0, len(log), 2)
    requests = [
        json.dumps({"log": log[:k], "initdata": initdata}, ensure_ascii=False).encode() for k in rounds
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    outs = [subprocess.run([str(exe)], input=req, capture_output=True, check=True).stdout for req in requests]
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    same = 0
    for k, out in zip(rounds, outs):
        try:
            answer = json.loads(out)
        except json.JSONDecodeError:
            raise RuntimeError(f"the judge {exe} answered {out[:80]!r} in round {k // 2}") from None
        same += answer == log[k]["output"]
    return wall, cpu, same


def bench(games: int, full: bool, real_judge: Path | None = None, first: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        return _bench(games, full, build_floor_program(Path(tmp)), real_judge, first)


def _bench(
    games: int, full: bool, floor_exe: Path | None, real_judge: Path | None = None, first: int = 0
) -> dict:
    play_match(_seats(10_000), random_initdata(10_000))  # compile / load the kernels
    rows = []
    for g in range(first, first + games):
        init = random_initdata(g)
        clock = [0.0]
        c0, t0 = time.process_time(), time.perf_counter()
        rec = play_match(_seats(g, clock), init)
        t_run, c_run = time.perf_counter() - t0, time.process_time() - c0
        t0 = time.perf_counter()
        rec_p = play_match(_seats(g), init, in_process="protocol")
        t_proto = time.perf_counter() - t0
        t_call = judge_per_call(rec["log"], rec["initdata"])
        t_cpp = judge_per_call_cpp_like(rec["log"], rec["initdata"])
        row = {
            "game": g,
            "log_len": len(rec["log"]),
            "runner_s": t_run,
            "runner_cpu_s": c_run,
            "policy_s": clock[0],
            "runner_requests_s": t_proto,
            "judge_per_call_s": t_call,
            "judge_per_call_cpp_like_s": t_cpp,
            "same_log": rec_p["log"] == rec["log"],
        }
        if floor_exe is not None:
            row["process_start_s"] = process_start_per_call(rec["log"], rec["initdata"], floor_exe)
        if real_judge is not None:
            wall, cpu, same = real_judge_per_call(rec["log"], rec["initdata"], real_judge)
            row.update(real_judge_s=wall, real_judge_cpu_s=cpu, real_judge_calls=(len(rec["log"]) + 1) // 2)
            row["real_judge_same"] = same
        if full:
            t0 = time.perf_counter()
            rec_c = play_match(_seats(g), init, judge_mode="per-call")
            row["match_per_call_s"] = time.perf_counter() - t0
            row["same_log"] = row["same_log"] and rec_c["log"] == rec["log"]
        rows.append(row)
        print(
            f"game {g}: {row['log_len']} log entries, runner {t_run * 1e3:.1f} ms (policies {clock[0] * 1e3:.1f}),"
            f" runner (requests) {t_proto * 1e3:.1f} ms, judge per call {t_call * 1e3:.0f} ms"
            f" (canHu on every replayed step: {t_cpp * 1e3:.0f} ms)"
            + (f", process start per call {row['process_start_s'] * 1e3:.0f} ms" if floor_exe else "")
            + (f", match per call {row['match_per_call_s'] * 1e3:.0f} ms" if full else "")
            + (
                f", real judge per call {row['real_judge_s'] * 1e3:.0f} ms (CPU {row['real_judge_cpu_s'] * 1e3:.0f}),"
                f" {row['real_judge_same']} of {row['real_judge_calls']} outputs identical"
                if real_judge is not None
                else ""
            )
            + ("" if row["same_log"] else "  LOGS DIFFER"),
            flush=True,
        )
    med = statistics.median
    summary = {
        "games": games,
        "median_log_len": med(r["log_len"] for r in rows),
        "runner_ms": med(r["runner_s"] for r in rows) * 1e3,
        "policy_ms": med(r["policy_s"] for r in rows) * 1e3,
        "runner_requests_ms": med(r["runner_requests_s"] for r in rows) * 1e3,
        "judge_per_call_ms": med(r["judge_per_call_s"] for r in rows) * 1e3,
        "ratio_judge_per_call": med(r["judge_per_call_s"] / r["runner_s"] for r in rows),
        "ratio_judge_per_call_min": min(r["judge_per_call_s"] / r["runner_s"] for r in rows),
        "judge_per_call_cpp_like_ms": med(r["judge_per_call_cpp_like_s"] for r in rows) * 1e3,
        "ratio_judge_per_call_cpp_like": med(r["judge_per_call_cpp_like_s"] / r["runner_s"] for r in rows),
        "ratio_judge_per_call_requests_runner": med(
            r["judge_per_call_s"] / r["runner_requests_s"] for r in rows
        ),
        "ratio_judge_per_call_runner_own": med(
            r["judge_per_call_s"] / (r["runner_s"] - r["policy_s"]) for r in rows
        ),
        "all_logs_identical": all(r["same_log"] for r in rows),
    }
    if floor_exe is not None:
        summary["process_start_ms"] = med(r["process_start_s"] for r in rows) * 1e3
        summary["ratio_process_start"] = med(r["process_start_s"] / r["runner_s"] for r in rows)
        summary["ratio_judge_per_call_with_process_start"] = med(
            (r["judge_per_call_s"] + r["process_start_s"]) / r["runner_s"] for r in rows
        )
        summary["ratio_cpp_like_with_process_start"] = med(
            (r["judge_per_call_cpp_like_s"] + r["process_start_s"]) / r["runner_s"] for r in rows
        )
    summary["runner_cpu_ms"] = med(r["runner_cpu_s"] for r in rows) * 1e3
    if real_judge is not None:
        summary["real_judge_ms"] = med(r["real_judge_s"] for r in rows) * 1e3
        summary["real_judge_cpu_ms"] = med(r["real_judge_cpu_s"] for r in rows) * 1e3
        summary["ratio_real_judge"] = med(r["real_judge_s"] / r["runner_s"] for r in rows)
        summary["ratio_real_judge_min"] = min(r["real_judge_s"] / r["runner_s"] for r in rows)
        summary["ratio_real_judge_cpu"] = med(r["real_judge_cpu_s"] / r["runner_cpu_s"] for r in rows)
        summary["real_judge_calls"] = sum(r["real_judge_calls"] for r in rows)
        summary["real_judge_same"] = sum(r["real_judge_same"] for r in rows)
    if full:
        summary["match_per_call_ms"] = med(r["match_per_call_s"] for r in rows) * 1e3
        summary["ratio_match_per_call"] = med(r["match_per_call_s"] / r["runner_s"] for r in rows)
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "summary": summary,
        "games": rows,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=9, help="games (seeds FIRST..FIRST+games-1)")
    ap.add_argument("--first-game", type=int, default=0, metavar="FIRST", help="seed of the first game (0)")
    ap.add_argument("--full", action="store_true", help="also play every game through judge_mode='per-call'")
    ap.add_argument(
        "--real-judge",
        type=Path,
        metavar="PATH",
        help="also time this judge binary (the C++ Botzone judge) called per round, and check its outputs",
    )
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    if args.games < 1:
        ap.error(f"--games must be >= 1, got {args.games}")
    if args.real_judge is not None and not args.real_judge.is_file():
        ap.error(f"--real-judge: no such file: {args.real_judge}")
    if args.first_game < 0:
        ap.error(f"--first-game must be >= 0, got {args.first_game}")
    res = bench(args.games, args.full, args.real_judge, args.first_game)
    s = res["summary"]
    print(
        f"\n{s['games']} games, median log length {s['median_log_len']:.0f}, medians per game:\n"
        f"  runner (engine state)      {s['runner_ms']:8.1f} ms  (of which the policies {s['policy_ms']:.1f} ms;"
        f" CPU {s['runner_cpu_ms']:.1f} ms)\n"
        f"  runner (requests)          {s['runner_requests_ms']:8.1f} ms\n"
        f"  judge per call (no bots)   {s['judge_per_call_ms']:8.1f} ms\n"
        f"  ... canHu on every replayed step, as the C++ judge replays {s['judge_per_call_cpp_like_ms']:8.1f} ms\n"
        + (
            f"  match per call (with bots) {s['match_per_call_ms']:8.1f} ms\n"
            if "match_per_call_ms" in s
            else ""
        )
        + f"ratio judge per call / runner: median {s['ratio_judge_per_call']:.0f}x"
        f" (min {s['ratio_judge_per_call_min']:.0f}x; runner's own cost without the policies:"
        f" {s['ratio_judge_per_call_runner_own']:.0f}x; the runner through requests:"
        f" {s['ratio_judge_per_call_requests_runner']:.0f}x)"
        f"\nratio judge per call with canHu on every replayed step / runner: median"
        f" {s['ratio_judge_per_call_cpp_like']:.0f}x"
        + (
            f"\nprocess start per call (a minimal C program, per round): median {s['process_start_ms']:.1f} ms;"
            f" ratio to the runner {s['ratio_process_start']:.1f}x; judge per call + process start / runner:"
            f" {s['ratio_judge_per_call_with_process_start']:.0f}x; with canHu on every replayed step too:"
            f" {s['ratio_cpp_like_with_process_start']:.0f}x"
            if "process_start_ms" in s
            else "\n(no C compiler: process start per call not measured)"
        )
        + (
            f"\nratio match per call / runner: median {s['ratio_match_per_call']:.0f}x"
            if "ratio_match_per_call" in s
            else ""
        )
        + (
            f"\nreal judge per call: median {s['real_judge_ms']:.0f} ms wall, {s['real_judge_cpu_ms']:.0f} ms CPU"
            f" per game; ratio to the runner: median {s['ratio_real_judge']:.0f}x wall (min"
            f" {s['ratio_real_judge_min']:.0f}x), {s['ratio_real_judge_cpu']:.0f}x CPU; outputs identical to the"
            f" runner's log: {s['real_judge_same']} of {s['real_judge_calls']}"
            if "real_judge_ms" in s
            else ""
        )
        + f"\nlogs identical on every path: {s['all_logs_identical']}"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
