"""Test-session set-up for running the suite in parallel (``pytest -n 2``, pytest-xdist).

* Before the workers start, the controller compiles the kernels once with a parallel :func:`mjenv.warmup`
  (or loads them: a warm cache costs about a second), so the workers load every kernel from the cache instead
  of each compiling the same ones at the same time. Beside it, one more compile-only process
  (``tests/_prewarm.py``) compiles what else the tests call: the baseline agents' kernels and the vector kernel
  for uint8 observations. Only with xdist (``-n N``): a plain ``pytest`` run compiles lazily, as each test needs
  a kernel.
* The Ray tests share one local Ray (a module fixture of 2 CPUs): they run in one worker (``--dist loadgroup``,
  group ``ray``), so that two Rays never compete for the two cores.
* The tests of a module that use one of its module-scoped fixtures (a browser, a corpus, an 800-wall match) run
  in one worker one after the other (group ``<module>:shared``), so the fixture is set up once: spread one by
  one over the workers, a module fixture is set up again in each worker and again whenever a worker comes back
  to the module after a test of another one (pytest tears it down when the next test is from another module).
  Every other test is spread over the workers one by one (nothing left to compile, so no reason to group them).
* An xdist worker ends without running the native libraries' exit handlers: torch's static destructors
  deregister its thousands of operators one by one, 2-12 s of CPU at the exit of a worker that ran the torch
  tests, and the controller waits for both workers to exit (up to 10 s, then it kills them). Every Python-level
  exit handler registered after the worker's configuration (torch's, Ray's, the tests' own) still runs first;
  only a worker whose session finished is ended this way. Before that, :func:`pytest_unconfigure` spares
  pytest's clean-up four of its five garbage collections (see there).
"""

from __future__ import annotations

import os
import sys

import pytest

# the Ray tests (one local Ray per module) run in one xdist worker; the agents' kernels, which were the reason
# to group the tests that call them as well, are compiled by the controller now (tests/_prewarm.py)
_GROUPS = {"test_distributed.py": "ray"}
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _is_xdist_controller(config) -> bool:
    return (
        not hasattr(config, "workerinput")
        and getattr(config.option, "numprocesses", None) not in (None, 0)
        and not getattr(config.option, "collectonly", False)
    )


def pytest_configure(config):
    if hasattr(config, "workerinput"):
        import atexit

        # registered now, so it runs after every atexit handler registered later (they run last in, first out)
        atexit.register(_end_finished_worker)
    if not _is_xdist_controller(config):
        return
    import numba

    if numba.config.DISABLE_JIT or os.environ.get("MJENV_NO_CACHE", "") in ("1", "true", "yes"):
        return
    import time

    import mjenv

    t0 = time.perf_counter()
    from tests._prewarm import PARTS

    extra = [_start_prewarm(part) for part in PARTS]
    try:
        times = mjenv.warmup(progress=sys.stderr.isatty())
    except BaseException:
        for proc, _err in extra:
            proc.kill()
            proc.wait()
        raise
    compiled = [k for k in times if k.startswith("compile (")]
    what = f"compiled in {compiled[0].removeprefix('compile (').rstrip(')')}" if compiled else "loaded"
    print(f"mjenv kernels {what}: {time.perf_counter() - t0:.1f} s (tests/conftest.py)", file=sys.stderr)
    for one in extra:
        _finish_prewarm(one)
    print(f"agents' kernels and uint8 vector kernel ready: {time.perf_counter() - t0:.1f} s", file=sys.stderr)


_SESSION_DONE = []


def pytest_unconfigure(config):
    # pytest's clean-up after this hook collects garbage 5 times (to report exceptions raised in finalizers of
    # late garbage), each a full pass over the heap (torch, numba, the test reports: ~1 s apiece in a loaded
    # worker). Collect here until a pass finds nothing, at most 5 times (a pass that finds nothing runs no
    # finalizer, so it leaves no new garbage: pytest's later passes would find nothing either, and what the
    # passes before found is reported as usual), then freeze what is left so that pytest's passes skip it.
    import gc

    for _ in range(5):  # at most pytest's 5
        if not gc.collect():
            break
    gc.freeze()
    if hasattr(config, "workerinput"):
        _SESSION_DONE.append(True)


def _end_finished_worker() -> None:
    """atexit handler of an xdist worker: once its session is over (the controller has its results: xdist sent
    them at ``pytest_sessionfinish``), flush what is left and end the process at once, skipping the native
    libraries' exit handlers (see the module docstring); a worker that did not get that far exits as usual."""
    if not _SESSION_DONE:
        return
    import logging

    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


def _start_prewarm(part: str):
    """Start part ``part`` of ``tests/_prewarm.py`` in a process of its own (it runs while :func:`mjenv.warmup`
    compiles)."""
    import subprocess
    import tempfile

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([_ROOT, *filter(None, [env.get("PYTHONPATH")])])
    env["MJENV_QUIET"] = "1"
    err = tempfile.TemporaryFile(mode="w+")
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests._prewarm", part],
        cwd=_ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=err,
    )
    return proc, err


def _finish_prewarm(extra) -> None:
    """Wait for the process of :func:`_start_prewarm`; if it failed, warn (the workers then compile what it did
    not cache, as they would without it)."""
    import warnings

    proc, err = extra
    try:
        if proc.wait() != 0:
            err.seek(0)
            warnings.warn(
                f"tests/_prewarm.py failed (exit {proc.returncode}); the tests compile what it did not:\n"
                f"{err.read()[-2000:]}",
                RuntimeWarning,
            )
    finally:
        err.close()


# tryfirst: before xdist's own hook, which reads the marker into the group (a suffix of the nodeid)
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        group = _GROUPS.get(item.path.name)
        if group is None and _uses_a_shared_fixture(item):
            group = f"{item.path.name}:shared"
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))


def _uses_a_shared_fixture(item) -> bool:
    """Whether ``item`` uses a fixture of the test files (not of pytest or a plugin) scoped wider than a test."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return False
    for name in item.fixturenames:
        defs = info.name2fixturedefs.get(name)
        if (
            defs
            and defs[-1].scope in ("module", "package", "session")
            and defs[-1].baseid.startswith("tests")
        ):
            return True
    return False
