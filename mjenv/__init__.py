"""mjenv: a Chinese Official Mahjong (MCR, 国标麻将) reinforcement-learning environment.

The rules core (tiles, hands, scoring, game engine) is Numba kernels over numpy arrays; the PettingZoo,
Gymnasium and vector envs are thin fronts over those kernels.
"""

__version__ = "0.1.0"

from mjenv.tiles import format_tiles, parse_tiles  # noqa: E402

__all__ = [
    "__version__",
    "format_tiles",
    "parse_tiles",
    "env",
    "raw_env",
    "MahjongGymEnv",
    "RuleConfig",
    "VectorEnv",
    "RandomPolicy",
    "score",
    "warmup",
    "default_jobs",
]

_LAZY = {
    "env": "mjenv.pettingzoo_env",
    "raw_env": "mjenv.pettingzoo_env",
    "MahjongGymEnv": "mjenv.gym_env",
    "RuleConfig": "mjenv.rules",
    "VectorEnv": "mjenv.vector",
    "RandomPolicy": "mjenv.policy",
    "score": "mjenv.fans",
}


def __getattr__(name):  # lazy fronts: importing mjenv imports neither pettingzoo nor the kernels
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'mjenv' has no attribute {name!r}")


WARMUP_MODULES = ("mjenv.hand", "mjenv.fans", "mjenv.game", "mjenv.vector")

#: The compile-only tasks of a parallel warmup: (name, the modules whose shared kernels the task stubs).
#: ``hand``: ``mjenv.hand.warmup()``; ``fans``: import ``mjenv.fans`` (the scorer's shared kernels) and its
#: ``warmup`` (the batch scorer); ``game``: import ``mjenv.game`` (the engine's shared kernels: waits, step,
#: reset) without compiling the scorer first; ``vector``: the vector kernel with zero tables, without compiling
#: the scorer or the engine first. Every task fills numba's on-disk cache; none depends on another's result.
_TASKS = {
    "hand": (),
    "fans": (),
    "game": ("mjenv.fans",),
    "vector": ("mjenv.fans", "mjenv.game"),
}
#: Longest first (cold CPU seconds on a 2-core machine, measured: see docs/performance.md "Cold start")
_TASK_ORDER = ("game", "hand", "fans", "vector")


def default_jobs() -> int:
    """Worker processes of a cold :func:`warmup` by default: the CPUs this process may use, at most 4 (there
    are 4 independent compile tasks)."""
    import os

    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        n = os.cpu_count() or 1
    return max(1, min(n, len(_TASKS)))


def _check_jobs(jobs) -> int:
    if jobs is None:
        return default_jobs()
    if isinstance(jobs, bool) or not isinstance(jobs, int):
        raise TypeError(f"jobs must be an int >= 1 or None, got {type(jobs).__name__}")
    if jobs < 1:
        raise ValueError(f"jobs must be >= 1 (1: compile in this process), got {jobs}")
    return jobs


def _tasks_for(modules, imports, kwargs) -> list[tuple[str, dict]]:
    """The parallel tasks (name, arguments) that compile what ``warmup(modules, imports, **kwargs)`` needs."""
    wanted = set(modules) | set(imports)
    out = []
    for name in _TASK_ORDER:
        mod = f"mjenv.{name}"
        if name == "vector":
            if mod in modules:
                out.append((name, {"observations": bool(kwargs.get("observations", True))}))
        elif name == "hand":
            if mod in modules:
                out.append((name, {}))
        elif name == "fans":
            if mod in wanted:
                out.append((name, {"warmup": mod in modules}))
        elif mod in wanted or "mjenv.vector" in wanted:
            out.append((name, {}))
    return out


def _task_marker(name: str, args: dict):
    """The file that says a task's kernels are in the cache (written after a warmup that ran them in-process)."""
    from mjenv import _jit

    tag = "-".join([name, *(f"{k}{int(v)}" for k, v in sorted(args.items()))])
    return _jit.cache_dir() / f"mjenv-warm-{tag}.ok"


def _marker_text() -> str:
    import sys

    import numba

    from mjenv import _jit

    return f"{_jit.source_stamp()} numba {numba.__version__} python {sys.version.split()[0]}\n"


def _task_done(name: str, args: dict) -> bool:
    try:
        m = _task_marker(name, args)
        if m.read_text() == _marker_text():
            return True
        if name == "fans" and not args.get("warmup"):  # a full fans task covers an import-only one
            return _task_marker(name, {"warmup": True}).read_text() == _marker_text()
    except OSError:
        pass
    return False


def _mark_done(tasks) -> None:
    for name, args in tasks:
        try:
            _task_marker(name, args).write_text(_marker_text())
        except OSError:  # a read-only cache: numba falls back to its own, markers are only a shortcut
            pass


def _warm_worker(name: str, args: dict) -> None:
    """Body of a compile-only worker process of :func:`warmup` (``python -c``): fill the cache for one task.
    Compile notes go to stdout as ``note <text>`` lines for the parent's progress bar."""
    import numpy as np

    from mjenv import _jit

    _jit.stub_modules = frozenset(_TASKS[name])
    _jit.note_hook = lambda text: print("note", text, flush=True)
    import importlib

    if name == "hand":
        importlib.import_module("mjenv.hand").warmup()
    elif name == "fans":
        mod = importlib.import_module("mjenv.fans")
        if args.get("warmup", True):
            mod.warmup()
    elif name == "game":
        importlib.import_module("mjenv.game")  # its shared kernels compile on import (the scorer is stubbed)
    elif name == "vector":
        vector = importlib.import_module("mjenv.vector")
        n = 5
        env = vector.VectorEnv(n, seed=0, observations=args.get("observations", True), threads=1)
        real = vector._step_batch

        def zero_tables(*a):  # the real argument types, zero tables: compiles the kernel, runs no engine code
            return real(
                *(x[:0] if isinstance(x, np.ndarray) and x.ndim and x.shape[0] == n else x for x in a)
            )

        vector._step_batch = zero_tables
        try:
            env.reset()
        finally:
            vector._step_batch = real
    else:  # pragma: no cover
        raise ValueError(f"unknown warmup task {name!r}")


def _run_parallel(tasks, jobs: int, bar) -> None:
    """Run ``tasks`` in up to ``jobs`` worker processes at a time (each a fresh ``python``), updating ``bar``. A
    worker that fails only costs time (the caller compiles what is missing): it is reported as a warning."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    import threading
    import time
    import warnings
    from pathlib import Path

    root = str(Path(__file__).resolve().parent.parent)  # the children import this very copy of mjenv
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    env.pop("MJENV_QUIET", None)  # notes go to the parent's bar, which MJENV_QUIET silences there
    quiet = os.environ.get("MJENV_QUIET", "") in ("1", "true", "yes")
    pending = list(tasks)
    running: dict[str, tuple] = {}
    notes: dict[str, str] = {}
    lock = threading.Lock()

    def show():
        with lock:
            text = ", ".join(
                f"{n}: {notes.get(n, 'starting').removeprefix('compiling mjenv.')}" for n in running
            )
        bar.set_postfix_str(f"{len(running)} processes: {text}"[:120], refresh=True)

    def read(name, stream):
        for line in stream:
            if line.startswith("note ") and not quiet:
                with lock:
                    notes[name] = line[5:].strip()
                show()

    try:
        while pending or running:
            while pending and len(running) < jobs:
                name, args = pending.pop(0)
                err = tempfile.TemporaryFile(mode="w+")
                code = f"import json, mjenv; mjenv._warm_worker({name!r}, json.loads({json.dumps(json.dumps(args))}))"
                proc = subprocess.Popen(
                    [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=err, text=True, env=env
                )
                t = threading.Thread(target=read, args=(name, proc.stdout), daemon=True)
                t.start()
                running[name] = (proc, err, t)
                show()
            time.sleep(0.05)
            for name, (proc, err, t) in list(running.items()):
                if proc.poll() is None:
                    continue
                t.join()
                del running[name]
                if proc.returncode != 0:
                    err.seek(0)
                    tail = err.read()[-2000:]
                    warnings.warn(
                        f"mjenv.warmup: the worker compiling {name!r} failed (exit {proc.returncode}); "
                        f"its kernels are compiled in this process instead:\n{tail}",
                        RuntimeWarning,
                    )
                err.close()
                bar.update(1)
                show()
    finally:
        for proc, err, _t in running.values():
            proc.kill()
            proc.wait()
            err.close()


def warmup(
    verbose: bool = False,
    modules=WARMUP_MODULES,
    progress: bool | None = None,
    imports=(),
    jobs: int | None = None,
    **kwargs,
) -> dict[str, float]:
    """Compile (or load from numba's on-disk cache) the kernels of ``modules``; returns seconds per module.

    Kernels compile lazily on first use, so calling this is optional; benchmarks and long runs call it first
    so that compile time is reported apart from run time. The first run on a machine compiles (about half a
    minute of wall time on 2 cores); later runs load the cache (about a second). ``progress`` shows a tqdm bar
    on stderr (which module, how far, which kernel is compiling; default: when stderr is a terminal);
    ``verbose`` prints the seconds per module. ``kwargs`` go to every module's ``warmup`` that takes them (the
    vector env's ``observations``).

    ``jobs`` (default :func:`default_jobs`: the usable CPUs, at most 4): when kernels are not in the cache yet,
    up to ``jobs`` worker processes compile them at the same time, each filling the cache with an independent
    part (the hand kernels, the scorer, the engine, the vector kernel: see ``_TASKS``; a worker compiling the
    engine does not first compile the scorer, it calls it through a symbol that stays unresolved until a
    process that runs the engine loads both), and then this process loads everything from the cache. Their
    time is the ``"compile (N processes)"`` entry of the result. A task already known to be cached (a marker
    file beside the cache, written after a warmup) starts no process, so a warm start costs no more than with
    ``jobs=1``, which compiles in this process only (as before). Without numba's cache (``MJENV_NO_CACHE=1``,
    ``NUMBA_DISABLE_JIT=1``) there is nothing to share and ``jobs`` is ignored.

    ``imports`` are modules only imported first, each a step of the bar (their shared kernels compile or load
    on import), without their own ``warmup``: ``mjenv selfplay`` passes ``("mjenv.fans", "mjenv.game")`` and
    ``modules=("mjenv.vector",)``, so that its first result does not wait for kernels the vector env never
    calls (the batch scorer, the single-table fronts' masks and observations).
    """
    import importlib
    import inspect
    import time

    import numba
    from tqdm import tqdm

    from mjenv import _jit

    jobs = _check_jobs(jobs)
    imports = tuple(m for m in imports if m not in modules)
    tasks = _tasks_for(modules, imports, kwargs) if _jit.CACHE and not numba.config.DISABLE_JIT else []
    todo = [t for t in tasks if not _task_done(*t)] if jobs > 1 else []
    out: dict[str, float] = {}
    disable = None if progress is None else not progress  # None: tqdm shows the bar only on a terminal
    bar = tqdm(
        total=len(todo) + len(imports) + len(modules), desc="mjenv kernels", unit="step", disable=disable
    )
    old_hook = _jit.note_hook
    _jit.note_hook = lambda text: bar.set_postfix_str(text.removeprefix("compiling mjenv."), refresh=True)
    try:
        if todo:
            t0 = time.perf_counter()
            _run_parallel(todo, min(jobs, len(todo)), bar)
            out[f"compile ({min(jobs, len(todo))} processes)"] = time.perf_counter() - t0
            if verbose:
                bar.write(f"compile in {min(jobs, len(todo))} processes ({', '.join(n for n, _ in todo)}): "
                          f"{out[next(reversed(out))]:.1f} s")  # fmt: skip
        for name in (*imports, *modules):
            bar.set_postfix_str(name.removeprefix("mjenv."), refresh=True)
            t0 = time.perf_counter()
            mod = importlib.import_module(name)  # shared kernels compile (or load) on import
            if name in modules:
                fn = mod.warmup
                params = inspect.signature(fn).parameters
                fn(**{k: v for k, v in kwargs.items() if k in params})
            out[name] = time.perf_counter() - t0
            bar.update(1)
            if verbose:
                bar.write(f"{name}: {out[name]:.1f} s")
    finally:
        _jit.note_hook = old_hook
        bar.close()
    _mark_done(tasks)
    return out


def _register_gymnasium() -> None:
    """Make ``gymnasium.make("mjenv/Mahjong-v0")`` work after ``import mjenv``."""
    try:
        import gymnasium
    except ImportError:  # pragma: no cover - gymnasium is a dependency
        return
    if "mjenv/Mahjong-v0" not in gymnasium.registry:
        gymnasium.register(id="mjenv/Mahjong-v0", entry_point="mjenv.gym_env:MahjongGymEnv")


_register_gymnasium()
