"""Compiling mjenv's kernels ahead of use: :func:`warmup` (``mjenv.warmup``, ``mjenv warmup``) and the
multi-process compile scheduler behind it.

Kernels compile lazily on first use and are cached on disk by numba (:mod:`mjenv._jit`). A cold
:func:`warmup` splits the work into independent compile-only tasks (:data:`_TASKS`: the hand kernels, the
scorer, the engine, the vector kernel), runs them in up to ``jobs`` worker processes that fill the cache at the
same time (a worker calls the kernels other workers compile through stub symbols, ``mjenv._jit.stub_modules``),
and loads each module in this process as soon as the tasks it needs are over. Marker files beside the cache
say which tasks are done, so a warm start starts no process. The fronts (``mjenv.cli``, ``mjenv.selfplay``)
and the test suite's set-up import :func:`warmup` from here, never from the package face.
"""

from __future__ import annotations

WARMUP_MODULES = ("mjenv.hand", "mjenv.fans", "mjenv.game", "mjenv.vector")

#: The compile-only tasks of a parallel warmup: name -> the modules whose shared kernels the task stubs.
#: ``hand``: import ``mjenv.hand`` (its shared kernel: the win test of one row, which the engine's waits call)
#: and its ``warmup`` (the batch kernels; ``{"warmup": False}``: the import only); ``fans``: import
#: ``mjenv.fans`` (the scorer's shared kernels) and its ``warmup`` (the batch scorer), without compiling the
#: hand's shared kernel; ``game``: import ``mjenv.game`` (the engine's shared kernels: waits, step, reset)
#: without compiling the hand's or the scorer's first; ``vector``: the vector kernel with zero tables (and the
#: single-table fronts' kernels that ``mjenv.game.warmup`` and ``mjenv.observation.warmup`` call), without
#: compiling the hand's, the scorer's or the engine's shared kernels first. Every task fills numba's on-disk
#: cache; none needs another's result.
#: In this order, any subset can run one after the other in one process (a task never needs real what an
#: earlier one stubbed).
_TASKS = {
    "hand": (),
    "fans": ("mjenv.hand",),
    "game": ("mjenv.hand", "mjenv.fans"),
    "vector": ("mjenv.hand", "mjenv.fans", "mjenv.game"),
}
#: Cold CPU seconds of each task alone, and of starting a worker process: only their ratios matter, to spread
#: the tasks evenly over the processes. Measured 2026-12-01, one period on the 2-core machine under load (user CPU of
#: ``benchmarks/profile_compile.py --task NAME`` in an empty cache): hand 33.0, fans 29.9, game 21.7, vector 23.8
#: (``vecfast``'s larger ``_step_batch``); hand scaled by its A/B with its big inlined helpers typed once (37.7 ->
#: 28.5 CPU-s, -24%): 25; ``hand`` without its warmup (the win test's shared kernel) ~5.5.
_TASK_COST = {"hand": 25.0, "fans": 29.9, "game": 21.7, "vector": 23.8}
_HAND_IMPORT_COST = 5.5  # the ``hand`` task without its warmup: the shared kernel only
_START_COST = 1.8


def _task_cost(name: str, args: dict) -> float:
    if name == "hand" and not args.get("warmup", True):
        return _HAND_IMPORT_COST
    return _TASK_COST.get(name, 10.0)


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
    if "mjenv.hand" in modules:
        out.append(("hand", {"warmup": True}))
    elif wanted & {"mjenv.fans", "mjenv.game", "mjenv.vector"}:  # they import mjenv.hand: its shared kernel
        out.append(("hand", {"warmup": False}))
    if "mjenv.fans" in wanted:
        out.append(("fans", {"warmup": "mjenv.fans" in modules}))
    if wanted & {"mjenv.game", "mjenv.vector"}:
        out.append(("game", {}))
    if "mjenv.vector" in modules:
        obs = bool(kwargs.get("observations", True))
        out.append(("vector", {"observations": obs, "fronts": "mjenv.game" in modules}))
    elif (
        "mjenv.game" in modules
    ):  # the fronts' kernels (game's and observation's warmup) without the vector kernel
        out.append(("vector", {"observations": False, "fronts": True, "kernel": False}))
    return out


def _needs(module: str, with_warmup: bool) -> tuple[str, ...]:
    """The tasks whose kernels loading ``module`` (and, with ``with_warmup``, running its ``warmup``) reads from
    the cache: its own and those of the modules it imports; ``mjenv.game``'s warmup (with
    ``mjenv.observation``'s) also runs the single-table fronts, which the ``vector`` task compiles."""
    order = list(_TASKS)
    own = module.removeprefix("mjenv.") if module.startswith("mjenv.") else None  # mjenv.X: task X
    if own not in _TASKS:
        return tuple(order)
    needed = order[: order.index(own) + 1]
    if module == "mjenv.game" and with_warmup:
        needed.append("vector")
    return tuple(needed)


def _plan(tasks, jobs: int) -> list[list[tuple[str, dict]]]:
    """Split ``tasks`` over at most ``jobs`` worker processes so that the busiest one has the least work
    (:func:`_task_cost`, all splits tried: there are at most 4 tasks); each process runs its tasks in the order
    of :data:`_TASKS`."""
    import itertools

    order = list(_TASKS)
    tasks = sorted(tasks, key=lambda t: order.index(t[0]) if t[0] in order else len(order))
    jobs = max(1, min(jobs, len(tasks)))
    best, best_cost = None, None
    for assign in itertools.product(range(jobs), repeat=len(tasks)):
        if assign and assign[0] != 0:  # processes are interchangeable: the first task goes to the first
            continue
        load = [0.0] * jobs
        for t, j in zip(tasks, assign):
            load[j] += _task_cost(*t) + (_START_COST if load[j] == 0 else 0.0)
        cost = (max(load), sum(1 for x in load if x > 0))
        if best_cost is None or cost < best_cost:
            best, best_cost = assign, cost
    chains = [[t for t, j in zip(tasks, best) if j == k] for k in range(jobs)]
    return [c for c in chains if c]


def _task_marker(name: str, args: dict, folder=None):
    """The file that says a task's kernels are in the cache (written after a warmup that ran them in-process);
    ``folder``: :func:`mjenv._jit.cache_dir` (computed when not given)."""
    from mjenv import _jit

    tag = "-".join([name, *(f"{k}{int(v)}" for k, v in sorted(args.items()))])
    return (folder or _jit.cache_dir()) / f"mjenv-warm-{tag}.ok"


def _marker_text() -> str:
    """What a marker holds: the kernel sources' stamp and the numba and Python versions (a cache of other
    sources or another numba is not the one the marker vouches for)."""
    import sys

    import numba

    from mjenv import _jit

    return f"{_jit.source_stamp()} numba {numba.__version__} python {sys.version.split()[0]}\n"


def _task_done(name: str, args: dict, text: str | None = None, folder=None) -> bool:
    """Whether the kernels of a task are known to be in the cache (a marker of the current sources)."""
    text = text or _marker_text()
    covering = [args]  # a task that does more covers this one: fans with its warmup, vector with the fronts
    covering += [{**args, k: True} for k in ("warmup", "fronts") if args.get(k) is False]
    for a in covering:
        try:
            if _task_marker(name, a, folder).read_text() == text:
                return True
        except OSError:
            pass
    return False


def _mark_done(tasks, text: str | None = None, folder=None) -> None:
    text = text or _marker_text()
    for name, args in tasks:
        try:
            _task_marker(name, args, folder).write_text(text)
        except OSError:  # a read-only cache: numba falls back to its own, markers are only a shortcut
            pass


def _warm_worker(tasks) -> None:
    """Body of a compile-only worker process of :func:`warmup` (``python -c``): fill the cache for ``tasks``
    (``[name, args]`` pairs, in the order of :data:`_TASKS`). Compile notes go to stdout as ``note <text>`` lines
    and the end of a task as ``done <name>``, for the parent's progress bar."""
    import importlib

    import numpy as np

    from mjenv import _jit

    _jit.note_hook = lambda text: print("note", text, flush=True)
    for name, args in tasks:
        if name not in _TASKS:
            raise ValueError(f"unknown warmup task {name!r}")
        _jit.stub_modules = frozenset(_TASKS[name])  # only modules not imported yet are affected
        if name == "hand":
            mod = importlib.import_module("mjenv.hand")  # its shared kernel compiles on import
            if args.get("warmup", True):
                mod.warmup()
        elif name == "fans":
            mod = importlib.import_module("mjenv.fans")
            if args.get("warmup", True):
                mod.warmup()
        elif name == "game":
            importlib.import_module("mjenv.game")  # its shared kernels compile on import
        elif name == "vector":
            vector = importlib.import_module("mjenv.vector")
            if args.get("kernel", True):
                n = 5
                env = vector.VectorEnv(
                    n,
                    seed=0,
                    observations=args.get("observations", True),
                    obs_dtype=args.get("obs_dtype", "float32"),  # tests/_prewarm.py: also "uint8"
                    threads=1,
                )
                real = vector._step_batch

                def zero_tables(
                    *a, n=n, real=real
                ):  # the real argument types, zero tables: runs no engine code
                    return real(
                        *(x[:0] if isinstance(x, np.ndarray) and x.ndim and x.shape[0] == n else x for x in a)
                    )

                vector._step_batch = zero_tables
                try:
                    env.reset()
                finally:
                    vector._step_batch = real
                # the random policy's pick over the env's legal-action lists (zero rows: the same types)
                vector.random_legal_actions(env.masks[:0], np.random.default_rng(0), env.n_legal[:0],
                                            env.legal_actions[:0])  # fmt: skip
            if args.get("fronts", False):
                _compile_game_fronts(importlib.import_module("mjenv.game"))
        print("done", name, flush=True)
    try:
        import resource

        ru = resource.getrusage(resource.RUSAGE_SELF)
        print("cpu", f"{ru.ru_utime + ru.ru_stime:.2f}", flush=True)
    except ImportError:  # pragma: no cover - Windows
        pass


def _compile_game_fronts(G) -> None:
    """Compile, without running them (the scorer is a stub in this worker), the kernels ``mjenv.game.warmup``
    and ``mjenv.observation.warmup`` call, for the argument types they call them with (Python ints are
    ``int64``, as numba types them)."""
    import numba
    import numpy as np

    from mjenv.observation import OBS_SIZE, observe_kernel, observe_mask_kernel

    tab = G.win_tables()
    st = G.new_state()
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    obs = np.zeros(OBS_SIZE, np.float32)
    rewards = np.zeros(4, np.float32)
    for kernel, args in (
        (G.reset_kernel, (st, 0, 0, 0, G.rules_block(), *tab)),
        (G.legal_mask_kernel, (st, 0, mask)),
        (observe_kernel, (st, 0, obs)),
        (G.step_kernel, (st, 0, rewards, *tab)),
        (G.front_step_kernel, (st, 0, rewards, *tab)),
        (observe_mask_kernel, (st, 0, True, obs, np.zeros(G.NUM_ACTIONS, np.int8))),
        (G.penalize_kernel, (st, 0, 2, rewards)),
        (G.next_seed_kernel, (st,)),
    ):
        kernel.compile(tuple(numba.typeof(a) for a in args))


def _run_parallel(tasks, jobs: int, bar, cpu: list | None = None, done: dict | None = None, stop=None) -> int:
    """Run ``tasks`` in up to ``jobs`` worker processes (fresh ``python`` processes, :func:`_plan`), updating
    ``bar`` per task. A worker that fails only costs time (the caller then compiles what is missing in its own
    process): it is reported as a ``RuntimeWarning`` with the end of its error output. Returns the number of
    processes; ``cpu`` (a list) receives ``(task names, CPU seconds)`` per process.

    ``done`` (task name -> :class:`threading.Event`): each event is set as soon as its task is over (its kernels
    are in the cache, or its worker failed), so that a caller in another thread can load what is ready while
    the other workers compile. ``stop`` (an event): when set, the workers are killed and this returns."""
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
    quiet = os.environ.get("MJENV_QUIET", "") in ("1", "true", "yes")
    env.pop("MJENV_QUIET", None)  # the workers' notes go to this process's bar (which MJENV_QUIET silences)
    lock = threading.Lock()
    now: dict[int, str] = {}  # process -> what it compiles now

    def show():
        with lock:
            text = "; ".join(now.values())
        bar.set_postfix_str(f"{len(now)} processes: {text}"[:150], refresh=True)

    def read(k, chain, stream):
        for line in stream:
            word, _, rest = line.strip().partition(" ")
            with lock:
                if word == "note" and not quiet:
                    now[k] = f"{chain[0][0]}: {rest.removeprefix('compiling mjenv.')}"
                elif word == "cpu" and cpu is not None:
                    cpu.append((names[k], float(rest)))
                    continue
                elif word == "done":
                    finished = chain.pop(0)
                    if done is not None and finished[0] in done:
                        done[finished[0]].set()
                    now[k] = chain[0][0] if chain else "done"
                    bar.update(1)
                else:
                    continue
            show()

    procs = []
    plan = _plan(tasks, jobs)
    names = [", ".join(n for n, _ in chain) for chain in plan]
    try:
        for k, chain in enumerate(plan):
            err = tempfile.TemporaryFile(mode="w+")
            arg = json.dumps(json.dumps([[n, a] for n, a in chain]))
            code = f"import json; from mjenv import _compile; _compile._warm_worker(json.loads({arg}))"
            proc = subprocess.Popen(
                [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=err, text=True, env=env
            )
            chain = list(chain)
            now[k] = chain[0][0]
            t = threading.Thread(target=read, args=(k, chain, proc.stdout), daemon=True)
            t.start()
            procs.append((proc, err, t, chain))
        show()
        for proc, err, t, chain in procs:
            while proc.poll() is None:
                if stop is not None and stop.is_set():
                    return len(plan)  # the processes are killed below
                time.sleep(0.05)
            t.join()
            if proc.returncode != 0:
                err.seek(0)
                tail = err.read()[-2000:]
                names = ", ".join(repr(n) for n, _ in chain)
                warnings.warn(
                    f"mjenv.warmup: the worker compiling {names} failed (exit {proc.returncode}); "
                    f"what it did not cache is compiled in this process instead:\n{tail}",
                    RuntimeWarning,
                )
                bar.update(len(chain))
            for name, _ in chain:  # failed: what it did not do is compiled by the caller
                if done is not None and name in done:
                    done[name].set()
        return len(plan)
    finally:
        for proc, err, _t, _chain in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            err.close()


def warmup(
    verbose: bool = False,
    modules=WARMUP_MODULES,
    progress: bool | None = None,
    imports=(),
    jobs: int | None = None,
    freeze: bool = True,
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

    ``freeze`` (default on): at the end, move every object still alive (the kernels, numba's type registries
    and their caches: ~130k objects, nearly all of them alive until the process ends) to Python's permanent GC
    generation (:func:`gc.freeze`). Later full collections no longer walk them (~0.1 s each), and the
    interpreter's exit, which walks them in several collections, takes ~0.1 s instead of ~0.6 s
    (docs/performance.md, "Cold start"). Objects frozen are still freed when their reference count drops to
    zero; only cyclic garbage among them is never collected. When every kernel is known to be cached (a warm
    start), the objects alive at the call are collected once, and the automatic GC is off while the kernels
    load: loading creates those ~100k long-lived objects and almost no garbage (~800 objects, ~0.25 MB, which
    are frozen with the rest), yet the automatic collections walked them some 280 times (~0.25 s), and a full
    collection before the freeze cost another ~0.15 s. Should anything compile after all, the GC is switched
    back on at the first compile and garbage is collected before the freeze. ``freeze=False`` leaves the GC
    alone.
    """
    jobs = _check_jobs(jobs)
    if not isinstance(freeze, bool):
        raise TypeError(f"freeze must be a bool, got {type(freeze).__name__}")
    gc_pause = _GcPause(freeze)
    try:
        out = _warmup(verbose, modules, progress, imports, jobs, kwargs, gc_pause)
    finally:
        gc_pause.resume(compiled=False)
    if freeze:
        import gc

        if not gc_pause.warm:  # a warm start leaves almost no garbage (see ``freeze``)
            gc.collect()  # what the warmup left as cyclic garbage is freed, not frozen
        gc.freeze()
    return out


class _GcPause:
    """The automatic GC of a warm :func:`warmup` (see its ``freeze``): with ``freeze``, what is alive is
    collected once (the caller's cyclic garbage is freed, not frozen) and the automatic GC, if on, is off from
    the start until :meth:`resume` (called as soon as anything is to compile, and at the end). ``warm``:
    nothing compiled (as far as the markers and numba's ``numba:compile`` events tell)."""

    def __init__(self, freeze: bool) -> None:
        import gc

        self.paused = freeze and gc.isenabled()
        self.warm = freeze
        if freeze:
            gc.collect()  # what the caller left as cyclic garbage is freed, not frozen
        if self.paused:
            gc.disable()

    def resume(self, compiled: bool = True) -> None:
        """Switch the automatic GC back on (if this paused it); ``compiled``: something compiles."""
        self.warm = self.warm and not compiled
        if self.paused:
            import gc

            self.paused = False
            gc.enable()

    def listener(self):
        """A numba event listener for ``numba:compile`` (a cache hit fires none) that resumes at the first."""
        from numba.core import event

        pause = self

        class CompileListener(event.Listener):
            def on_start(self, ev) -> None:
                if pause.warm:
                    pause.resume()

            def on_end(self, ev) -> None:
                pass

        return CompileListener()


def _warmup(verbose, modules, progress, imports, jobs, kwargs, gc_pause) -> dict[str, float]:
    """The body of :func:`warmup` (arguments checked); ``gc_pause``: a :class:`_GcPause`."""
    import importlib
    import inspect
    import threading
    import time

    import numba
    from numba.core import event
    from tqdm import tqdm

    from mjenv import _jit

    imports = tuple(m for m in imports if m not in modules)
    tasks = _tasks_for(modules, imports, kwargs) if _jit.CACHE and not numba.config.DISABLE_JIT else []
    text = folder = None
    if tasks:
        text, folder = _marker_text(), _jit.cache_dir()
    todo = [t for t in tasks if not _task_done(*t, text, folder)]
    unmarked = list(todo)
    if jobs == 1:
        todo = []
    if len(todo) < 2:  # one task: nothing runs beside it, so compiling it here is as fast
        todo = []
    if not tasks or unmarked:  # something may compile, which makes garbage (no tasks: no cache, all compiles)
        gc_pause.resume()
    compiling = gc_pause.listener() if gc_pause.paused else None
    out: dict[str, float] = {}
    disable = None if progress is None else not progress  # None: tqdm shows the bar only on a terminal
    bar = tqdm(
        total=len(todo) + len(imports) + len(modules), desc="mjenv kernels", unit="step", disable=disable
    )
    old_hook = _jit.note_hook
    _jit.note_hook = lambda text: bar.set_postfix_str(text.removeprefix("compiling mjenv."), refresh=True)
    # The workers run in a thread of this process, which meanwhile loads each module as soon as the tasks it
    # needs are over (the hand kernels while the engine still compiles): only what the last worker compiled is
    # loaded after it.
    done = {name: threading.Event() for name, _ in todo}
    stop = threading.Event()
    compiled: dict = {}

    def compile_all():
        t0 = time.perf_counter()
        try:
            compiled["processes"] = _run_parallel(todo, jobs, bar, compiled.setdefault("cpu", []), done, stop)
        except BaseException as e:  # re-raised in the caller's thread
            compiled["error"] = e
        finally:
            compiled["seconds"] = time.perf_counter() - t0
            for ev in done.values():
                ev.set()

    worker = threading.Thread(target=compile_all, name="mjenv-warmup", daemon=True) if todo else None
    try:
        if compiling is not None:
            event.register("numba:compile", compiling)
        if worker is not None:
            worker.start()
        for name in (*imports, *modules):
            for task in _needs(name, name in modules):  # wait for the workers that compile what it loads
                if task in done:
                    done[task].wait()
            if "error" in compiled:
                raise compiled["error"]
            bar.set_postfix_str(name.removeprefix("mjenv."), refresh=True)
            t0 = time.perf_counter()
            mod = importlib.import_module(name)  # shared kernels compile (or load) on import
            if name in modules:
                fn = mod.warmup
                params = inspect.signature(fn).parameters
                fn(**{k: v for k, v in kwargs.items() if k in params})
                if name == "mjenv.game":  # and the single-table fronts' observation kernels
                    importlib.import_module("mjenv.observation").warmup()
            out[name] = time.perf_counter() - t0
            bar.update(1)
            if verbose:
                bar.write(f"{name}: {out[name]:.1f} s")
        if worker is not None:
            worker.join()
            if "error" in compiled:
                raise compiled["error"]
            key = f"compile ({compiled['processes']} processes)"
            out = {key: compiled["seconds"], **out}
            if verbose:
                per = "; ".join(f"{names}: {s:.1f} CPU-s" for names, s in compiled["cpu"])
                bar.write(f"{key}: {out[key]:.1f} s ({per})")
    finally:
        if worker is not None and worker.is_alive():  # an error or an interrupt here: end the workers
            stop.set()
            worker.join()
        _jit.note_hook = old_hook
        bar.close()
        if compiling is not None:
            event.unregister("numba:compile", compiling)
    _mark_done(unmarked, text, folder)
    return out
