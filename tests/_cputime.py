"""Per-test CPU time and a timeline of a test run, for measuring the suite on a loaded machine (wall times there
follow the load; CPU-seconds follow the work).

Run ``pytest -p tests._cputime ...`` with ``MJENV_TEST_CPU=<prefix>`` set (with ``bash .ci/run``:
``PYTEST_ADDOPTS="-p tests._cputime"``): each process (the xdist controller and every worker) writes
``<prefix>_<worker>.json`` with

* per test: the CPU-seconds of the process and of its reaped subprocesses (``resource.getrusage``), the wall
  time, and its start and end (epoch seconds);
* the process's milestones (epoch seconds): its start (from ``/proc``), the end of ``pytest_configure`` (for the
  controller: after ``tests/conftest.py`` compiled the kernels), the end of the collection, the end of the run;
* a sample every second of the CPU-seconds of its whole process tree (itself and every descendant seen alive,
  e.g. the compile processes of the controller, Ray's processes and actors of a worker, the subprocesses of a
  test), so that the time where a worker's tree uses less than a core shows.

``python -m tests._cputime <prefix> [top]`` prints the totals, the costliest tests, the milestones of each
process, each worker's timeline (runs of consecutive tests of one module: when, how long, CPU-s, and the CPU of
the process tree over that span) and a table of CPU use per 10 s of the run, with the idle core-seconds of the
2 cores. Without ``MJENV_TEST_CPU`` the plugin does nothing.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
import threading
import time

import pytest

_ROWS: list[tuple[str, float, float, float, float, float]] = []
_EVENTS: dict[str, float] = {}
_SAMPLES: list[tuple[float, float]] = []
_TICK = os.sysconf("SC_CLK_TCK")


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _proc_start() -> float:
    """The epoch time this process started (``/proc/self/stat`` field 22 and the boot time)."""
    with open("/proc/self/stat") as f:
        ticks = int(f.read().rsplit(")", 1)[1].split()[19])
    with open("/proc/stat") as f:
        boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
    return boot + ticks / _TICK


def _tree_sampler(stop: threading.Event, period: float = 1.0) -> None:
    """Every ``period`` s: the CPU-seconds (user + sys) of this process and all its descendants, each process
    counted with the last value seen (a process that exited keeps what it had at the last sample)."""
    me = os.getpid()
    seen: dict[tuple[int, int], float] = {}
    while True:
        parent: dict[int, int] = {}
        cpu: dict[int, tuple[int, float]] = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(name)
            parent[pid] = int(fields[1])
            cpu[pid] = (int(fields[19]), (int(fields[11]) + int(fields[12])) / _TICK)
        for pid, (start, c) in cpu.items():
            p = pid
            while p > 1 and p != me:
                p = parent.get(p, 0)
            if p == me:
                seen[(pid, start)] = c
        _SAMPLES.append((time.time(), sum(seen.values())))
        if stop.wait(period):
            return


_STOP = threading.Event()
if os.environ.get("MJENV_TEST_CPU"):
    _EVENTS["start"] = _proc_start()
    _EVENTS["plugin"] = time.time()
    threading.Thread(target=_tree_sampler, args=(_STOP,), daemon=True, name="cputime-sampler").start()


@pytest.hookimpl(trylast=True)
def pytest_configure(config):
    if os.environ.get("MJENV_TEST_CPU"):
        _EVENTS["configured"] = time.time()


def pytest_collection_finish(session):
    if os.environ.get("MJENV_TEST_CPU"):
        _EVENTS["collected"] = time.time()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not os.environ.get("MJENV_TEST_CPU"):
        yield
        return
    (a, b), w, t = _cpu(), time.perf_counter(), time.time()
    yield
    a2, b2 = _cpu()
    _ROWS.append((item.nodeid, a2 - a, b2 - b, time.perf_counter() - w, t, time.time()))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session):
    prefix = os.environ.get("MJENV_TEST_CPU")
    if not prefix:
        return
    _EVENTS["finish"] = time.time()
    _STOP.set()
    me, kids = _cpu()
    with open(f"{prefix}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.json", "w") as f:
        json.dump(
            {"rows": _ROWS, "self_s": me, "children_s": kids, "events": _EVENTS, "samples": _SAMPLES}, f
        )


def _tree_cpu(samples, t0: float, t1: float) -> float:
    """CPU-seconds of the process tree between ``t0`` and ``t1`` (linear between samples)."""

    def at(t):
        if not samples or t <= samples[0][0]:
            return samples[0][1] if samples else 0.0
        for (ta, ca), (tb, cb) in zip(samples, samples[1:]):
            if t <= tb:
                return ca + (cb - ca) * (t - ta) / max(tb - ta, 1e-9)
        return samples[-1][1]

    return at(t1) - at(t0)


def _module(nodeid: str) -> str:
    return nodeid.split("::", 1)[0].removeprefix("tests/")


def main(prefix: str, top: int = 30) -> None:
    files = sorted(glob.glob(f"{glob.escape(prefix)}_*.json"))
    if not files:
        raise SystemExit(f"no {prefix}_*.json (run pytest -p tests._cputime with MJENV_TEST_CPU={prefix})")
    rows, procs = [], {}
    for path in files:
        d = json.load(open(path))
        worker = path[len(prefix) + 1 : -5]
        procs[worker] = d
        cpu = sum(r[1] + r[2] for r in d["rows"])
        print(
            f"{worker}: {d['self_s'] + d['children_s']:.1f} CPU-s in all, {cpu:.1f} in {len(d['rows'])} tests"
        )
        rows += [(r[1] + r[2], r[3], worker, r[0]) for r in d["rows"]]
    print(f"tests: {sum(r[0] for r in rows):.1f} CPU-s\n{'CPU-s':>7} {'wall-s':>7}  worker  test")
    for cpu, wall, worker, nodeid in sorted(rows, reverse=True)[:top]:
        print(f"{cpu:7.2f} {wall:7.2f}  {worker:6s}  {nodeid}")
    if not all("events" in d for d in procs.values()):
        return  # files of the older format: no timeline
    t0 = min(d["events"]["start"] for d in procs.values())
    end = max(d["events"].get("finish", t0) for d in procs.values())
    print("\nmilestones (s after the first process started; tree CPU-s = the process and its descendants)")
    for worker, d in procs.items():
        ev = d["events"]
        first = min((r[4] for r in d["rows"]), default=None)
        last = max((r[5] for r in d["rows"]), default=None)
        marks = [
            ("start", ev.get("start")),
            ("configured", ev.get("configured")),
            ("collected", ev.get("collected")),
        ]
        marks += [("first test", first), ("last test", last), ("finish", ev.get("finish"))]
        text = ", ".join(f"{k} {v - t0:.1f}" for k, v in marks if v is not None)
        tree = d["samples"][-1][1] if d["samples"] else 0.0
        if worker == "main":  # without the workers' trees (its children)
            tree -= sum(p["samples"][-1][1] for w, p in procs.items() if w != "main" and p["samples"])
        print(f"  {worker}: {text}; tree {tree:.1f} CPU-s")
        if d["rows"]:
            busy = sum(r[3] for r in d["rows"])
            print(
                f"    {busy:.1f} s in tests, {last - first - busy:.1f} s between tests, "
                f"{end - ev.get('finish', end):.1f} s done before the run ended"
            )
    for worker, d in procs.items():
        if not d["rows"]:
            continue
        print(f"\n{worker} timeline: from-to (s), wall, test CPU-s, tree CPU-s, module (tests)")
        runs = []
        for r in sorted(d["rows"], key=lambda r: r[4]):
            m = _module(r[0])
            if runs and runs[-1][0] == m:
                runs[-1][2], runs[-1][3], runs[-1][4] = r[5], runs[-1][3] + r[1] + r[2], runs[-1][4] + 1
            else:
                runs.append([m, r[4], r[5], r[1] + r[2], 1])
        for m, a, b, cpu, n in runs:
            tree = _tree_cpu(d["samples"], a, b)
            print(f"  {a - t0:6.1f}-{b - t0:6.1f} {b - a:6.1f} {cpu:6.1f} {tree:6.1f}  {m} ({n})")
    print("\nCPU per 10 s (process trees, main's without the workers'; idle = 2 cores x 10 s - all of them)")
    names = list(procs)
    print(f"{'from':>6} " + " ".join(f"{n:>6}" for n in names) + "   idle")
    idle_sum = 0.0
    for a in range(0, int(end - t0) + 1, 10):
        used = [_tree_cpu(procs[n]["samples"], t0 + a, t0 + min(a + 10, end - t0)) for n in names]
        if "main" in names:  # the workers are the controller's children: its tree holds theirs
            i = names.index("main")
            used[i] = max(0.0, used[i] - sum(u for j, u in enumerate(used) if j != i))
        idle = max(0.0, 2 * (min(a + 10, end - t0) - a) - sum(used))
        idle_sum += idle
        print(f"{a:6d} " + " ".join(f"{u:6.1f}" for u in used) + f" {idle:6.1f}")
    print(f"idle core-seconds in all: {idle_sum:.1f} of {2 * (end - t0):.1f}")


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
