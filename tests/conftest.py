"""Test-session set-up for running the suite in parallel (``pytest -n 2``, pytest-xdist).

* Before the workers start, the controller compiles the kernels once with a parallel :func:`mjenv.warmup`
  (or loads them: a warm cache costs about a second), so the workers load every kernel from the cache instead
  of each compiling the same ones at the same time. Only with xdist (``-n N``): a plain ``pytest`` run compiles
  lazily, as each test needs a kernel.
* The Ray tests share one local Ray (a module fixture of 2 CPUs): they run in one worker (``--dist loadgroup``,
  group ``agents``, with the tests of the baseline agents), so that two Rays never compete for the two cores.
"""

from __future__ import annotations

import os
import sys

import pytest

# one xdist worker runs every test that calls the baseline agents (their kernels are the suite's largest
# compiles: ~73 CPU-s for the rule agent, ~21 for the network, cold) and the Ray tests (which call them too);
# the other worker runs the rest meanwhile, instead of both compiling the agents' kernels
_GROUPS = dict.fromkeys(
    ["test_distributed.py", "test_agents.py", "test_train.py", "test_arena.py", "test_botzone_export.py"],
    "agents",
)


def _is_xdist_controller(config) -> bool:
    return (
        not hasattr(config, "workerinput")
        and getattr(config.option, "numprocesses", None) not in (None, 0)
        and not getattr(config.option, "collectonly", False)
    )


def pytest_configure(config):
    if not _is_xdist_controller(config):
        return
    import numba

    if numba.config.DISABLE_JIT or os.environ.get("MJENV_NO_CACHE", "") in ("1", "true", "yes"):
        return
    import time

    import mjenv

    t0 = time.perf_counter()
    times = mjenv.warmup(progress=sys.stderr.isatty())
    compiled = [k for k in times if k.startswith("compile (")]
    what = f"compiled in {compiled[0].removeprefix('compile (').rstrip(')')}" if compiled else "loaded"
    print(f"mjenv kernels {what}: {time.perf_counter() - t0:.1f} s (tests/conftest.py)", file=sys.stderr)


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = _GROUPS.get(item.path.name)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
