"""Test-session set-up for running the suite in parallel (``pytest -n 2``, pytest-xdist).

* Before the workers start, the controller compiles the kernels once with a parallel :func:`mjenv.warmup`
  (or loads them: a warm cache costs about a second), so the workers load every kernel from the cache instead
  of each compiling the same ones at the same time. Only with xdist (``-n N``): a plain ``pytest`` run compiles
  lazily, as each test needs a kernel.
* On a run of the whole suite, a process of its own compiles the baseline agents' kernels at the same time
  (``tests/_warm_agents.py``; compile-only, ~100 CPU-s cold, ~2 s warm), so that the two workers do not both
  compile the rule agent's decision kernel, the suite's largest compile.
* The Ray tests share one local Ray (a module fixture of 2 CPUs): they run in one worker (``--dist loadgroup``,
  group ``ray``), so that two Rays never compete for the two cores.
"""

from __future__ import annotations

import os
import sys

import pytest

_GROUPS = {"test_distributed.py": "ray"}


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
    agents = _start_agents_warmup(config)
    times = mjenv.warmup(progress=sys.stderr.isatty())
    compiled = [k for k in times if k.startswith("compile (")]
    what = f"compiled in {compiled[0].removeprefix('compile (').rstrip(')')}" if compiled else "loaded"
    print(f"mjenv kernels {what}: {time.perf_counter() - t0:.1f} s (tests/conftest.py)", file=sys.stderr)
    if agents is not None:
        proc, err = agents
        code = proc.wait()
        err.seek(0)
        if code != 0:  # only costs time: the workers compile what is missing
            import warnings

            warnings.warn(
                f"tests/_warm_agents.py failed (exit {code}):\n{err.read()[-2000:]}", RuntimeWarning
            )
        print(f"agents' kernels ready: {time.perf_counter() - t0:.1f} s (tests/conftest.py)", file=sys.stderr)
        err.close()


def _start_agents_warmup(config):
    """On a run of the whole suite (no paths given, or the ``tests`` folder), start ``tests/_warm_agents.py`` in
    a process of its own; returns ``(process, stderr file)`` or ``None``."""
    import subprocess
    import tempfile
    from pathlib import Path

    here = Path(__file__).resolve().parent
    if any(Path(a.split("::")[0]).resolve() != here for a in config.args):
        return None
    env = dict(os.environ, MJENV_QUIET="1")
    env["PYTHONPATH"] = os.pathsep.join([str(here.parent), *filter(None, [env.get("PYTHONPATH")])])
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen([sys.executable, str(here / "_warm_agents.py")], stderr=err, env=env)
    return proc, err


def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = _GROUPS.get(item.path.name)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
