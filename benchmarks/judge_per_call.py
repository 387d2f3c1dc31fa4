"""CPU per call of the drop-in judge started as Botzone starts it: a new process per round.

Botzone (and botzone-local) start the judge program once per round with the whole log so far on stdin. This
times ``python -m mjenv.botzone.judge`` that way: the CPU time (user + system, from
``resource.getrusage(RUSAGE_CHILDREN)``) of each call's process, start to exit, median of ``--calls`` calls,
beside ``python -c "import numba"`` measured in the same run (one of each in turn, so that a change of the
machine's load hits both): the floor of any Python process that uses numba.

Also measured, the same way:

* ``runner``: one process that plays a whole game with the runner (:func:`mjenv.botzone.runner.play_match`,
  four ``RandomPolicy`` seats in process), start to exit: what a caller that plays whole games pays instead of
  one judge process per round;
* the judge's kernel cache: numba's cache files of the package (``*.nbi``/``*.nbc`` under ``mjenv``: name,
  size and modification time) before the first timed call and after the last must be the same, and no call may
  print a compile note (a judge that recompiled or rewrote its kernels would pay seconds per call).

Warm state: one untimed call of each kind first (it fills numba's cache if it is empty, and Python's bytecode
cache). The subprocesses run without ``PYTHONDONTWRITEBYTECODE`` (Python's default, and what an installed package
has: byte-compiled modules); with it set and no ``.pyc`` files, every call would compile the package's sources
again (~0.3 s of CPU per call on the 2-core machine).

Input: the last judge call of a game (the longest log, a whole replay, answered by the ``finish``), the game
played by the runner from ``random_initdata(--seed)`` with four ``RandomPolicy`` seats; the judge's answer is
checked against the runner's log.

Usage::

    PYTHONPATH=. python -m benchmarks.judge_per_call [--calls 10] [--seed 0] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import mjenv

TARGET_S = 0.7  # the target: CPU per judge call, median, warm kernel cache
_NUMBA = [sys.executable, "-c", "import numba"]
_JUDGE = [sys.executable, "-m", "mjenv.botzone.judge"]
_RUNNER_SRC = (
    "import sys\n"
    "from mjenv.botzone.runner import PolicyBot, play_match, random_initdata\n"
    "from mjenv.policy import RandomPolicy\n"
    "seed = int(sys.argv[1])\n"
    "rec = play_match([PolicyBot(RandomPolicy(seed * 4 + i)) for i in range(4)], random_initdata(seed))\n"
    "print(len(rec['log']))\n"
)


def child_env() -> dict:
    """This process's environment less ``PYTHONDONTWRITEBYTECODE``, with this checkout first on the path."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    root = str(Path(mjenv.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def run_cpu(cmd: list[str], stdin: bytes, env: dict) -> tuple[float, float, subprocess.CompletedProcess]:
    """(CPU seconds, wall seconds, the finished process) of one run of ``cmd``: user + system time of the
    child, from ``getrusage(RUSAGE_CHILDREN)`` around it (one child at a time)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, input=stdin, capture_output=True, env=env, check=False)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    if p.returncode != 0:
        raise RuntimeError(f"{cmd[-1]!r} exited with {p.returncode}: {p.stderr.decode()[-400:]}")
    return cpu, wall, p


def cache_snapshot() -> dict[str, tuple[int, int]]:
    """numba's cache files of the package: relative path -> (size, mtime in ns)."""
    root = Path(mjenv.__file__).resolve().parent
    out = {}
    for pattern in ("*.nbi", "*.nbc"):
        for f in root.rglob(pattern):
            st = f.stat()
            out[f.relative_to(root).as_posix()] = (st.st_size, st.st_mtime_ns)
    return out


def judge_input(seed: int) -> tuple[bytes, dict, int]:
    """(stdin of the last judge call of game ``seed``, the judge's output there in the runner's log, log length)."""
    from mjenv.botzone.runner import PolicyBot, play_match, random_initdata
    from mjenv.policy import RandomPolicy

    rec = play_match([PolicyBot(RandomPolicy(seed * 4 + i)) for i in range(4)], random_initdata(seed))
    log = rec["log"]
    inp = {"log": log[:-1], "initdata": rec["initdata"]}
    return json.dumps(inp, ensure_ascii=False).encode(), log[-1]["output"], len(log)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=10, help="timed calls of each kind (default 10)")
    ap.add_argument("--seed", type=int, default=0, help="the game whose last judge call is timed")
    ap.add_argument("--json", default=None, help="write the figures to this file")
    args = ap.parse_args(argv)
    if args.calls < 1:
        ap.error("--calls must be >= 1")
    env = child_env()
    stdin, expected, n_log = judge_input(args.seed)
    runner = [sys.executable, "-c", _RUNNER_SRC, str(args.seed)]

    for cmd, inp in ((_NUMBA, b""), (_JUDGE, stdin), (runner, b"")):  # warm: numba's and Python's caches
        run_cpu(cmd, inp, env)
    before = cache_snapshot()
    times: dict[str, list[tuple[float, float]]] = {"numba": [], "judge": [], "runner": []}
    notes = []
    for _ in range(args.calls):
        for name, cmd, inp in (("numba", _NUMBA, b""), ("judge", _JUDGE, stdin), ("runner", runner, b"")):
            cpu, wall, p = run_cpu(cmd, inp, env)
            times[name].append((cpu, wall))
            if b"compiling" in p.stderr:
                notes.append(f"{name}: {p.stderr.decode().strip()[:200]}")
            if name == "judge" and json.loads(p.stdout) != expected:
                raise RuntimeError("the judge's output differs from the runner's log")
    after = cache_snapshot()

    def med(name, k):
        return statistics.median(t[k] for t in times[name])

    res = {
        "calls": args.calls,
        "seed": args.seed,
        "log_entries": n_log,
        "input_bytes": len(stdin),
        "cpu_s": {k: med(k, 0) for k in times},
        "wall_s": {k: med(k, 1) for k in times},
        "cpu_s_all": {k: [round(t[0], 4) for t in v] for k, v in times.items()},
        "cache_unchanged": before == after and bool(before),
        "cache_files": len(before),
        "compile_notes": notes,
        "target_s": TARGET_S,
        "machine": platform.machine(),
        "python": platform.python_version(),
        "load_avg": os.getloadavg(),
    }
    cpu = res["cpu_s"]
    res["judge_target_met"] = cpu["judge"] <= TARGET_S
    res["runner_below_two_judge_calls"] = cpu["runner"] < 2 * cpu["judge"]
    print(
        f"median of {args.calls} calls, CPU (user + system) per process, load average {res['load_avg'][0]:.1f}"
    )
    print(f"  python -c 'import numba'                 {cpu['numba']:.3f} s")
    print(
        f"  python -m mjenv.botzone.judge            {cpu['judge']:.3f} s  (last call of a game, {n_log - 1}"
        f" log entries; target <= {TARGET_S} s: {'met' if res['judge_target_met'] else 'NOT met'})"
    )
    print(
        f"  runner, a whole game in one process      {cpu['runner']:.3f} s  "
        f"({cpu['runner'] / cpu['judge']:.2f} judge calls)"
    )
    print(
        f"  numba kernel cache unchanged by the calls: {res['cache_unchanged']} ({len(before)} files), "
        f"compile notes: {len(notes)}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
