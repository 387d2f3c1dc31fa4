"""Per-test CPU time of a test run, for measuring the suite on a loaded machine (wall times there follow the
load; CPU-seconds follow the work).

Run ``pytest -p tests._cputime ...`` with ``MJENV_TEST_CPU=<prefix>`` set: each process (every xdist worker)
writes ``<prefix>_<worker>.json`` with, per test, the CPU-seconds of the process and of its reaped subprocesses
(``resource.getrusage``) and the wall time, plus the process's totals. ``python -m tests._cputime <prefix>``
prints the totals and the costliest tests. Without ``MJENV_TEST_CPU`` the plugin does nothing.
"""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
import time

import pytest

_ROWS: list[tuple[str, float, float, float]] = []


def _cpu() -> tuple[float, float]:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    if not os.environ.get("MJENV_TEST_CPU"):
        yield
        return
    (a, b), w = _cpu(), time.perf_counter()
    yield
    a2, b2 = _cpu()
    _ROWS.append((item.nodeid, a2 - a, b2 - b, time.perf_counter() - w))


def pytest_sessionfinish(session):
    prefix = os.environ.get("MJENV_TEST_CPU")
    if not prefix or not _ROWS:
        return
    me, kids = _cpu()
    with open(f"{prefix}_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.json", "w") as f:
        json.dump({"rows": _ROWS, "self_s": me, "children_s": kids}, f)


def main(prefix: str, top: int = 30) -> None:
    files = sorted(glob.glob(f"{glob.escape(prefix)}_*.json"))
    if not files:
        raise SystemExit(f"no {prefix}_*.json (run pytest -p tests._cputime with MJENV_TEST_CPU={prefix})")
    rows = []
    for path in files:
        d = json.load(open(path))
        worker = path[len(prefix) + 1 : -5]
        cpu = sum(r[1] + r[2] for r in d["rows"])
        print(
            f"{worker}: {d['self_s'] + d['children_s']:.1f} CPU-s in all, {cpu:.1f} in {len(d['rows'])} tests"
        )
        rows += [(r[1] + r[2], r[3], worker, r[0]) for r in d["rows"]]
    print(f"tests: {sum(r[0] for r in rows):.1f} CPU-s\n{'CPU-s':>7} {'wall-s':>7}  worker  test")
    for cpu, wall, worker, nodeid in sorted(rows, reverse=True)[:top]:
        print(f"{cpu:7.2f} {wall:7.2f}  {worker:6s}  {nodeid}")


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:3]))
