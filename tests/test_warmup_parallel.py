"""Parallel cold start (``mjenv.warmup(jobs=N)``, :mod:`mjenv._compile`): locked cache writes, stub symbols, task
plan, markers, workers.

The end-to-end check (a cold parallel warmup, after which this process compiles nothing) compiles every kernel
from scratch and is behind ``-m slow``; the tests here check each mechanism on its own with tiny kernels.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

import mjenv
from mjenv import _compile, _jit

ROOT = Path(mjenv.__file__).resolve().parent.parent
needs_cache = pytest.mark.skipif(
    numba.config.DISABLE_JIT or not _jit.CACHE, reason="needs the JIT and numba's on-disk cache"
)


def _run(code: str, env: dict | None = None, timeout: int = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ, **(env or {}))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )


# ------------------------------------------------------------------------------------------ jobs argument
@pytest.mark.parametrize("bad", ["2", 2.0, True, [2]])
def test_jobs_must_be_an_int(bad):
    with pytest.raises(TypeError, match="jobs must be an int"):
        mjenv.warmup(modules=(), jobs=bad)


@pytest.mark.parametrize("bad", [0, -1])
def test_jobs_must_be_positive(bad):
    with pytest.raises(ValueError, match="jobs must be >= 1"):
        mjenv.warmup(modules=(), jobs=bad)


@pytest.mark.parametrize("bad", [1, None, "yes"])
def test_freeze_must_be_a_bool(bad):
    with pytest.raises(TypeError, match="freeze must be a bool"):
        mjenv.warmup(modules=(), freeze=bad)


def test_warmup_freezes_what_is_alive_unless_told_not_to():
    """``freeze`` (default): the objects alive after the warmup go to the permanent GC generation (a fast exit);
    cyclic garbage made before is collected first, not frozen."""
    import gc
    import weakref

    class Node:
        pass

    gc.unfreeze()
    try:
        mjenv.warmup(modules=(), freeze=False)
        assert gc.get_freeze_count() == 0
        cycle = Node()
        cycle.self = cycle  # garbage that only the cycle collector frees
        gone = weakref.ref(cycle)
        del cycle
        gc.disable()  # no automatic collection in between: warmup's own collect must free it
        try:
            mjenv.warmup(modules=())
        finally:
            gc.enable()
        assert gone() is None
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def _record_gc(monkeypatch, body=None):
    """Make ``mjenv.hand.warmup`` record whether the automatic GC is on while it runs (after ``body``)."""
    import gc

    import mjenv.hand

    seen = []

    def warmup():
        if body is not None:
            body()
        seen.append(gc.isenabled())

    monkeypatch.setattr(mjenv.hand, "warmup", warmup)
    return seen


def _cycle():
    import weakref

    class Node:
        pass

    cycle = Node()
    cycle.self = cycle  # garbage that only the cycle collector frees
    return weakref.ref(cycle)


@pytest.mark.parametrize("caller_gc", [True, False])
def test_warm_start_loads_with_the_gc_off_and_frees_the_callers_garbage(monkeypatch, caller_gc):
    """A warm start (every task marked) loads with the automatic GC off, switches it back on (when it was on),
    freezes, and the caller's cyclic garbage is collected before, not frozen."""
    import gc

    seen = _record_gc(monkeypatch)
    monkeypatch.setattr(_compile, "_task_done", lambda *a, **k: True)
    gc.unfreeze()
    gone = _cycle()
    if not caller_gc:
        gc.disable()
    try:
        mjenv.warmup(modules=("mjenv.hand",), jobs=1)
        assert gc.isenabled() is caller_gc
    finally:
        gc.enable()
        gc.unfreeze()
    assert seen == [False]
    assert gone() is None


def test_cold_start_keeps_the_gc_on(monkeypatch):
    """A task not marked (its kernels may compile, which makes garbage): the GC stays on, and what the warmup
    left as cyclic garbage is collected before the freeze."""
    import gc

    seen = _record_gc(monkeypatch, body=lambda: _made.append(_cycle()))
    _made: list = []
    monkeypatch.setattr(_compile, "_task_done", lambda *a, **k: False)
    gc.unfreeze()
    try:
        mjenv.warmup(modules=("mjenv.hand",), jobs=1)
    finally:
        gc.unfreeze()
    assert seen == [True]
    assert _made[0]() is None


def test_a_compile_during_a_warm_start_switches_the_gc_back_on(monkeypatch):
    """Markers can be wrong (a cache deleted by hand): the first ``numba:compile`` event switches the GC on, and
    garbage is collected before the freeze."""
    import gc

    import numba

    made: list = []

    def compile_one():
        numba.njit(lambda x: x + 1)(1)  # not cached: compiles
        made.append(_cycle())

    seen = _record_gc(monkeypatch, body=compile_one)
    monkeypatch.setattr(_compile, "_task_done", lambda *a, **k: True)
    gc.unfreeze()
    try:
        mjenv.warmup(modules=("mjenv.hand",), jobs=1)
        assert gc.isenabled()
    finally:
        gc.unfreeze()
    assert seen == [True]
    assert made[0]() is None


def test_default_jobs_is_the_usable_cpus_capped_by_the_tasks():
    n = mjenv.default_jobs()
    assert 1 <= n <= len(_compile._TASKS)
    if hasattr(os, "sched_getaffinity"):
        assert n == min(len(os.sched_getaffinity(0)), len(_compile._TASKS))


def test_task_plan_follows_what_is_warmed():
    full = _compile._tasks_for(_compile.WARMUP_MODULES, (), {})
    assert full == [
        ("hand", {"warmup": True}),
        ("fans", {"warmup": True}),
        ("game", {}),
        ("vector", {"observations": True, "fronts": True}),
    ]
    # mjenv selfplay: no hand kernels, no batch scorer, no single-table fronts
    sp = _compile._tasks_for(("mjenv.vector",), ("mjenv.fans", "mjenv.game"), {"observations": False})
    assert sp == [
        ("hand", {"warmup": False}),  # the hand's shared kernel, which the engine's waits call
        ("fans", {"warmup": False}),
        ("game", {}),
        ("vector", {"observations": False, "fronts": False}),
    ]
    assert _compile._tasks_for(("mjenv.hand",), (), {}) == [("hand", {"warmup": True})]
    assert _compile._tasks_for(("mjenv.fans",), (), {}) == [
        ("hand", {"warmup": False}),
        ("fans", {"warmup": True}),
    ]
    assert _compile._tasks_for((), (), {}) == []
    # every stubbed module is one that another task compiles, and comes before it in the task order
    order = list(_compile._TASKS)
    for name, stubs in _compile._TASKS.items():
        for m in stubs:
            assert m.removeprefix("mjenv.") in order and order.index(m.removeprefix("mjenv.")) < order.index(
                name
            )


def test_plan_balances_the_processes_and_keeps_the_task_order():
    full = _compile._tasks_for(_compile.WARMUP_MODULES, (), {})
    for jobs in (1, 2, 3, 4, 8):
        plan = _compile._plan(full, jobs)
        assert len(plan) == min(jobs, len(full))
        assert sorted(t[0] for c in plan for t in c) == sorted(t[0] for t in full)  # each task once
        order = list(_compile._TASKS)
        for chain in plan:
            assert [order.index(t[0]) for t in chain] == sorted(order.index(t[0]) for t in chain)
    costs = [_compile._task_cost(*t) for t in full]
    loads = [sum(_compile._task_cost(*t) for t in c) for c in _compile._plan(full, 2)]
    assert max(loads) <= sum(costs) / 2 + max(costs) / 2


def test_each_module_waits_for_the_tasks_it_loads():
    order = list(_compile._TASKS)
    for k, module in enumerate(_compile.WARMUP_MODULES):
        assert set(_compile._needs(module, False)) == set(order[: k + 1])
    assert "vector" in _compile._needs(
        "mjenv.game", True
    )  # game.warmup runs the fronts the vector task compiles
    assert set(_compile._needs("mjenv.observation", True)) == set(order)  # unknown: waits for everything


def test_modules_load_while_the_other_workers_still_compile(monkeypatch):
    """warmup loads a module as soon as the tasks it needs are over, not after the last worker."""
    import threading

    import mjenv.fans
    import mjenv.hand

    finished, loaded = [], []
    hand_loaded = threading.Event()

    def fake_run(tasks, jobs, bar, cpu=None, done=None, stop=None):
        for name, _ in tasks:
            finished.append(name)
            done[name].set()
            if name == "hand":  # "fans" is still compiling while this process loads mjenv.hand
                assert hand_loaded.wait(30)
        return 2

    def recorder(module):
        def warmup():
            loaded.append((module, list(finished)))
            if module == "mjenv.hand":
                hand_loaded.set()

        return warmup

    monkeypatch.setattr(_compile, "_run_parallel", fake_run)
    monkeypatch.setattr(_compile, "_task_done", lambda *a: False)
    monkeypatch.setattr(_compile, "_mark_done", lambda *a, **k: None)
    monkeypatch.setattr(mjenv.hand, "warmup", recorder("mjenv.hand"))
    monkeypatch.setattr(mjenv.fans, "warmup", recorder("mjenv.fans"))
    times = mjenv.warmup(modules=("mjenv.hand", "mjenv.fans"), jobs=2, freeze=False)
    assert loaded == [("mjenv.hand", ["hand"]), ("mjenv.fans", ["hand", "fans"])]
    assert list(times) == ["compile (2 processes)", "mjenv.hand", "mjenv.fans"]


def test_an_error_of_the_compile_thread_reaches_the_caller(monkeypatch):
    def broken(*a, **k):
        raise OSError("no processes today")

    monkeypatch.setattr(_compile, "_run_parallel", broken)
    monkeypatch.setattr(_compile, "_task_done", lambda *a: False)
    with pytest.raises(OSError, match="no processes today"):
        mjenv.warmup(modules=("mjenv.hand", "mjenv.fans"), jobs=2, freeze=False)


# ------------------------------------------------------------------------------------------------ markers
@needs_cache
def test_markers_name_the_sources_and_a_stale_one_does_not_count(monkeypatch, tmp_path):
    monkeypatch.setattr(_jit, "cache_dir", lambda: tmp_path)
    task = ("vector", {"observations": True})
    assert not _compile._task_done(*task)
    _compile._mark_done([task])
    assert _compile._task_done(*task)
    assert _jit.source_stamp() in _compile._task_marker(*task).read_text()
    # another specialization: another marker
    assert not _compile._task_done("vector", {"observations": False})
    _compile._task_marker(*task).write_text("an older stamp\n")
    assert not _compile._task_done(*task)
    # a full fans task covers an import-only one, not the other way round
    _compile._mark_done([("fans", {"warmup": True})])
    assert _compile._task_done("fans", {"warmup": False})
    (tmp_path / _compile._task_marker("fans", {"warmup": True}).name).unlink()
    _compile._mark_done([("fans", {"warmup": False})])
    assert not _compile._task_done("fans", {"warmup": True})
    _compile._mark_done([("hand", {"warmup": True})])  # and so for the hand task (its shared kernel only)
    assert _compile._task_done("hand", {"warmup": False})


def test_cache_dir_is_numbas_folder_for_the_package():
    d = _jit.cache_dir()
    if "NUMBA_CACHE_DIR" not in os.environ:
        assert d == Path(_jit.__file__).resolve().parent / "__pycache__"
    else:
        assert str(d).startswith(os.path.abspath(os.environ["NUMBA_CACHE_DIR"]))


@needs_cache
def test_warm_start_runs_no_worker(monkeypatch):
    """With the cache warm (and marked), warmup(jobs=4) loads in this process and starts no process."""
    mjenv.warmup(modules=("mjenv.hand",), jobs=1)  # compiled or loaded: marks the hand task

    def no_process(*a, **k):
        raise AssertionError("a warm start must not start worker processes")

    monkeypatch.setattr(_compile, "_run_parallel", no_process)
    times = mjenv.warmup(modules=("mjenv.hand",), jobs=4)
    assert list(times) == ["mjenv.hand"]


# ------------------------------------------------------------------------------------------------ workers
def test_a_failing_worker_is_a_warning_not_an_error():
    from tqdm import tqdm

    with pytest.warns(
        RuntimeWarning, match="worker compiling 'no-such-task' failed(.|\n)*unknown warmup task"
    ):
        with tqdm(total=1, disable=True) as bar:
            _compile._run_parallel([("no-such-task", {})], 2, bar)


# ---------------------------------------------------------------------------------------- locked saves
@needs_cache
@pytest.mark.skipif(not _jit.PATCHED, reason="the lock is one of mjenv's numba patches (stock path here)")
def test_concurrent_cache_saves_keep_every_entry(tmp_path):
    """Two processes saving different specializations of one mjenv kernel into one cache folder at the same
    time: with numba's unlocked read-modify-write of the index, entries are lost and two keys can share one data
    file; under the lock of mjenv's dispatchers every key maps to its own data file."""
    (tmp_path / "lockmod.py").write_text(
        "from mjenv._jit import njit\n\n\n@njit\ndef f(x):\n    return x + 1\n"
    )
    code = """
        import sys
        import numba
        import lockmod
        assert type(lockmod.f._cache).__name__ == "_KernelCache"
        plain = numba.njit(lockmod.f.py_func)  # compiled here, never loaded from the cache (a loaded one
        plain(1)  # has no object code to save)
        cres = next(iter(plain.overloads.values()))
        for i in range(100):  # a key per save (the signature is only a key of the index here)
            lockmod.f._cache.save_overload((sys.argv[1], i), cres)
    """
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", textwrap.dedent(code), who], env=env, stderr=subprocess.PIPE, text=True
        )
        for who in ("a", "b")
    ]
    for p in procs:
        assert p.wait(timeout=120) == 0, p.stderr.read()
    import pickle

    (index,) = (tmp_path / "cache").rglob("lockmod.f-*.nbi")
    with open(index, "rb") as fh:  # numba's index: a version, then the pickled (stamp, {key: data file})
        pickle.load(fh)
        _stamp, overloads = pickle.loads(fh.read())
    keys = [k[0] for k in overloads]
    assert sorted(keys) == sorted((who, i) for who in ("a", "b") for i in range(100))
    assert len(set(overloads.values())) == len(overloads)  # no two keys share a data file


# ------------------------------------------------------------------------------------------- stub symbols
_CALLEE = """
from numba import types as nt
from mjenv._jit import shared_kernel

def _twice_c(x):
    return 2 * x

twice = shared_kernel("mjenv_test_twice_{uid}", nt.int64(nt.int64), _twice_c)
"""
_CALLER = """
from mjenv._jit import njit
from stubcallee import twice

@njit
def use(x):
    return twice(x) + 1
"""


@needs_cache
def test_code_compiled_against_a_stub_symbol_runs_with_the_real_kernel(tmp_path):
    """A compile-only worker compiles a caller with the callee's shared kernel stubbed; a later process loads
    that caller from the cache (no compile) and, with the real kernel, computes the right result."""
    (tmp_path / "stubcallee.py").write_text(_CALLEE.format(uid=os.getpid()))
    (tmp_path / "stubcaller.py").write_text(_CALLER)
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path), "MJENV_QUIET": "1"}
    worker = _run(
        """
        import numba
        from mjenv import _jit
        _jit.stub_modules = frozenset({"stubcallee"})
        import stubcallee, stubcaller
        assert stubcallee.twice.cfunc is None  # not compiled here
        stubcaller.use.compile((numba.int64,))  # argument types only, as a call types them
        print(sum(stubcaller.use.stats.cache_misses.values()))
        """,
        env,
    )
    assert worker.returncode == 0, worker.stderr
    assert worker.stdout.split() == ["1"]  # the worker compiled the caller
    user = _run(
        """
        import json, stubcallee, stubcaller
        r = stubcaller.use(20)
        print(json.dumps([r, sum(stubcaller.use.stats.cache_hits.values()),
                          sum(stubcaller.use.stats.cache_misses.values()), stubcallee.twice.cfunc.cache_hits]))
        """,
        env,
    )
    assert user.returncode == 0, user.stderr
    result, hits, misses, callee_hits = json.loads(user.stdout)
    assert result == 41
    assert (hits, misses) == (1, 0)  # the caller came from the worker's cache entry
    assert callee_hits == 0  # the real callee was compiled here (the worker never compiled it)


# --------------------------------------------------------------------------------------- end to end (slow)
@pytest.mark.slow
@needs_cache
def test_cold_parallel_warmup_leaves_nothing_to_compile(tmp_path):
    """A cold warmup(jobs=2) in an empty cache: afterwards this process compiled no kernel (everything loaded
    from what the workers wrote), and the engine plays the golden-checked hands the same."""
    r = _run(
        """
        import json
        from numba.core import event
        compiled = []
        class L(event.Listener):
            def on_start(self, ev):
                d = ev.data or {}
                compiled.append(getattr(getattr(d.get("dispatcher"), "py_func", None), "__qualname__", "?"))
            def on_end(self, ev):
                pass
        event.register("numba:compile", L())
        import mjenv
        from mjenv import _jit
        notes = []
        _jit.compile_note = notes.append
        times = mjenv.warmup(jobs=2)
        from tests.test_warmup_parallel import play
        print(json.dumps([sorted(times), compiled, notes, play()]))
        """,
        {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), "MJENV_QUIET": "1"},
        timeout=1200,
    )
    assert r.returncode == 0, r.stderr
    keys, compiled, notes, played = json.loads(r.stdout.splitlines()[-1])
    assert "compile (2 processes)" in keys
    assert compiled == [] and notes == [], (compiled, notes)
    assert played == play()  # the same hands as with the kernels compiled here


def play() -> list:
    """A few seeded hands through the engine and the vector env: the state digest and results."""
    import hashlib

    import numpy as np

    from mjenv import game as G
    from mjenv.policy import random_legal_actions
    from mjenv.vector import VectorEnv

    out = []
    rng = np.random.default_rng(0)
    for seed in (1, 2, 3):
        st = G.new_state()
        G.reset(st, seed)
        while st[G.PHASE] != G.PH_OVER:
            G.step(st, int(rng.choice(np.flatnonzero(G.legal_mask(st, int(st[G.CUR]))))))
        out.append(hashlib.sha256(st.tobytes()).hexdigest())
    env = VectorEnv(8, seed=5, threads=1)
    _, masks, _ = env.reset()
    for _ in range(300):
        _, masks, _, _, _ = env.step(random_legal_actions(masks, rng))
    out.append(hashlib.sha256(env.states.tobytes() + env.results.fan_counts.tobytes()).hexdigest())
    return out


# ------------------------------------------------------------------------------------------------ the CLI
def test_cli_warmup_rejects_a_bad_job_count(capsys):
    from mjenv.cli import main

    assert main(["warmup", "--jobs", "0", "--no-progress"]) == 2
    assert "jobs must be >= 1" in capsys.readouterr().err


@needs_cache
def test_cli_warmup_reports_seconds_per_module(capsys):
    from mjenv.cli import main

    assert main(["warmup", "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    for name in (*_compile.WARMUP_MODULES, "total"):
        assert name in out
