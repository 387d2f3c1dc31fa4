"""Where a warm start's time goes: ``import mjenv; mjenv.warmup()`` with every kernel in numba's cache.

Usage (the cache warm: run ``python -m mjenv warmup`` once first)::

    PYTHONPATH=. python lab/probes/warm_profile.py [--repeats 7] [--python /tmp/v7/bin/python]

Each repeat starts fresh interpreters (``--python``, default this one; in the current folder, whose ``mjenv``
is imported when ``PYTHONPATH=.``):

* ``python -c pass`` and ``python -c "import mjenv; mjenv.warmup()"``: wall and CPU seconds of the whole
  command, interpreter start and exit included (the figure the 2 s target is about);
* one instrumented run (this file with ``--child``) that times, in order: the interpreter's start (from the
  parent's ``Popen`` to the first line of the child), ``import numpy``, ``import numba``, SciPy (numba's BLAS
  probe imports ``scipy.linalg.cython_blas`` when SciPy is installed), numba's target registries (the typing and
  target contexts' first ``refresh``, which every first compile or cache load runs), ``import tqdm`` and
  ``gymnasium`` and then ``import mjenv`` (what is left of it), ``mjenv._jit``'s stale-cache check (its
  :func:`~mjenv._jit.source_stamp`, timed again after the import), then ``mjenv.warmup(freeze=False)`` per
  module (import and ``warmup``), and inside it numba's cache loads (index files read and unpickled, data files
  read and unpickled, LLVM bitcode parsed, object code added and linked, the entry points' addresses and
  wrappers), mjenv's markers and its garbage collection and freeze, then the interpreter's exit (from the
  child's last line to the parent's ``wait``). Python's compile of source files to bytecode
  (``SourceFileLoader.source_to_code``: every file without a ``.pyc``, all of mjenv's when
  ``PYTHONDONTWRITEBYTECODE=1``) and the garbage collections (``gc.callbacks``) are reported beside the phases
  (they happen inside them). The instrumented child imports numba before ``mjenv.warmup()`` (to time it
  apart), so the collections during numba's import fall outside the warmup, unlike in the plain command: the
  row under the plain command gives the CPU of its own collections (counted with ``gc.callbacks``).

Prints the median over the repeats of each figure (wall seconds; ``cpu`` columns: process CPU seconds). With
``--first-step`` the child also times ``mjenv.env()``, ``reset(seed=0)`` and 20 steps after the warmup (a
change that moves cost from the warmup to the first step is not a win).

``--against DIR`` (an A/B instead): the plain warm command in this checkout and in ``DIR`` (e.g. ``/work/main``),
alternating, ``--repeats`` each, with ``PYTHONPATH`` set to each checkout; ``PYTHONDONTWRITEBYTECODE=1``
unless ``--bytecode`` (then ``.pyc`` files are written by one untimed run per checkout, into a temporary
``PYTHONPYCACHEPREFIX`` folder, and used by the timed runs)::

    python lab/probes/warm_profile.py --against /work/main --repeats 9 [--bytecode] [--first-step]

See docs/performance-log.md, "Cold start".
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import resource
import statistics
import subprocess
import sys
import time

_WARM = "import mjenv; mjenv.warmup()"
#: The plain command with the time of every garbage collection recorded (``gc.callbacks``), printed at the end.
_WARM_GC = """
import gc, json, time
acc, t = [0, 0.0], [0.0]
def on_gc(phase, info):
    if phase == "start":
        t[0] = time.process_time()
    else:
        acc[0] += 1
        acc[1] += time.process_time() - t[0]
gc.callbacks.append(on_gc)
import mjenv; mjenv.warmup()
print(json.dumps(acc))
"""


# ------------------------------------------------------------------------------------------------- the child
class _Clock:
    """Wall and CPU seconds of named phases (in order) and of named inner costs (accumulated)."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, float, float]] = []
        self.inner: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0])
        self._t = (time.perf_counter(), time.process_time())

    def phase(self, name: str) -> None:
        t = (time.perf_counter(), time.process_time())
        self.phases.append((name, t[0] - self._t[0], t[1] - self._t[1]))
        self._t = t

    def wrap(self, owner, attr: str, name: str, nested_ok: bool = False) -> None:
        """Time every call of ``owner.attr`` into ``inner[name]`` (outermost calls only)."""
        fn = getattr(owner, attr)
        acc = self.inner[name]
        depth = [0]

        def timed(*a, **k):
            if depth[0] and not nested_ok:
                return fn(*a, **k)
            depth[0] += 1
            t0, c0 = time.perf_counter(), time.process_time()
            try:
                return fn(*a, **k)
            finally:
                depth[0] -= 1
                acc[0] += time.perf_counter() - t0
                acc[1] += time.process_time() - c0
                acc[2] += 1

        setattr(owner, attr, timed)


def _child(first_step: bool) -> None:
    start = time.time()
    clock = _Clock()
    import gc
    import importlib.machinery

    collections_ = clock.inner["gc: collections, automatic and explicit (generation 2)"]
    young = clock.inner["gc: collections, automatic and explicit (generations 0, 1)"]
    t_gc = [0.0, 0.0]

    def on_gc(phase, info):
        if phase == "start":
            t_gc[:] = time.perf_counter(), time.process_time()
            return
        acc = collections_ if info["generation"] == 2 else young
        acc[0] += time.perf_counter() - t_gc[0]
        acc[1] += time.process_time() - t_gc[1]
        acc[2] += 1

    gc.callbacks.append(on_gc)

    clock.wrap(
        importlib.machinery.SourceFileLoader, "source_to_code", "python: source -> bytecode (all files)"
    )
    import numpy  # noqa: F401

    clock.phase("import numpy")
    import numba  # noqa: F401

    clock.phase("import numba")
    try:
        import scipy.linalg.cython_blas  # noqa: F401  (what numba's BLAS probe imports)

        scipy = True
    except ImportError:
        scipy = False
    clock.phase("scipy.linalg.cython_blas (numba's BLAS probe)" if scipy else "scipy: not installed")
    from numba.core.registry import cpu_target

    cpu_target.typing_context.refresh()
    cpu_target.target_context.refresh()
    clock.phase("numba: typing + target registries (first refresh)")
    import tqdm  # noqa: F401

    clock.phase("import tqdm")
    import gymnasium  # noqa: F401

    clock.phase("import gymnasium")
    from numba.core import caching, codegen, compiler

    clock.wrap(caching.IndexDataCacheFile, "_load_index", "cache: index files read + unpickled")
    clock.wrap(caching.IndexDataCacheFile, "_load_data", "cache: data files read + unpickled")
    clock.wrap(caching.Cache, "load_overload", "cache: load_overload (all of a kernel's load)")
    clock.wrap(compiler.CompileResult, "_rebuild", "cache: rebuild (library + entry point)")
    clock.wrap(codegen.ll, "parse_bitcode", "  llvm: parse bitcode", nested_ok=True)
    clock.wrap(codegen.CPUCodeLibrary, "_finalize_final_module", "  llvm: finalize a library (module added)")
    clock.wrap(codegen.JitEngine, "finalize_object", "    llvm: finalize_object (object code linked)")
    clock.wrap(codegen.JitEngine, "_load_defined_symbols", "  llvm: defined symbols scanned")
    clock.wrap(codegen.JITCodeLibrary, "get_pointer_to_function", "  llvm: function addresses")
    from numba.core import base

    clock.wrap(base.BaseContext, "get_executable", "  entry points (wrappers)")
    import mjenv

    clock.phase("import mjenv (what is left: tiles, _register_gymnasium)")
    from mjenv import _jit

    clock.phase("import mjenv._jit (incl. its stale-cache check)")
    t0 = time.perf_counter()
    _jit.source_stamp()
    stamp = time.perf_counter() - t0
    clock.wrap(mjenv, "_marker_text", "mjenv: markers (text)")
    clock.wrap(mjenv, "_task_done", "mjenv: markers (read)")
    clock.wrap(mjenv, "_mark_done", "mjenv: markers (write)")
    clock.wrap(_jit, "cache_dir", "mjenv: cache_dir")
    clock.phase("(timing source_stamp once more)")
    out = mjenv.warmup()
    clock.phase("mjenv.warmup()")
    if first_step:
        env = mjenv.env()
        env.reset(seed=0)
        for _ in range(20):
            agent = env.agent_selection
            if env.terminations[agent] or env.truncations[agent]:
                break
            mask = env.observe(agent)["action_mask"]
            env.step(int(numpy.flatnonzero(mask)[-1]))
        clock.phase("first use: mjenv.env(), reset(seed=0), 20 steps")
    kernels = collections.Counter()
    for m in [k for k in sys.modules if k.startswith("mjenv")]:
        for v in vars(sys.modules[m]).values():
            if isinstance(v, numba.core.registry.CPUDispatcher) and v.signatures:
                kernels[m] += len(v.signatures)
    print(
        json.dumps(
            {
                "start": start,
                "phases": clock.phases,
                "inner": dict(clock.inner),
                "modules": out,
                "stamp": stamp,
                "kernels": dict(kernels),
                "gc_frozen": gc.get_freeze_count(),
                "end": time.time(),
            }
        ),
        flush=True,
    )


# ------------------------------------------------------------------------------------------------ the parent
def _run(python: str, args: list[str], cwd=None, env=None) -> tuple[float, float, str, float, float]:
    """Wall and CPU seconds of one command, its stdout, and the parent's clock before and after."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.time()
    p0 = time.perf_counter()
    proc = subprocess.run([python, *args], capture_output=True, text=True, cwd=cwd, env=env)
    wall = time.perf_counter() - p0
    t1 = time.time()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode:
        raise SystemExit(f"{python} {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, proc.stdout, t0, t1


def _ab(python: str, against: str, repeats: int, bytecode: bool, first_step: bool) -> None:
    """``python -c "import mjenv; mjenv.warmup()"`` in this folder and in ``against`` (another checkout: its
    mjenv first on ``PYTHONPATH``), alternating, ``repeats`` each: median wall and CPU seconds and their ratio."""
    code = _WARM + ("; e = mjenv.env(); e.reset(seed=0); [e.step(int(e.observe(e.agent_selection)"
                    "['action_mask'].nonzero()[0][-1])) for _ in range(20)]" if first_step else "")  # fmt: skip
    import tempfile

    runs: dict[str, list[tuple[float, float]]] = {"this": [], "against": []}
    roots = (("against", os.path.abspath(against)), ("this", os.getcwd()))
    envs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, root in roots:
            env = dict(os.environ, PYTHONPATH=root)
            if bytecode:  # .pyc files under a folder of their own (nothing written into the checkouts)
                env.pop("PYTHONDONTWRITEBYTECODE", None)
                env["PYTHONPYCACHEPREFIX"] = os.path.join(tmp, name)
                _run(python, ["-c", code], cwd=root, env=env)  # writes them (not timed)
            else:
                env["PYTHONDONTWRITEBYTECODE"] = "1"
            envs[name] = env
        for _ in range(repeats):
            for name, root in roots:
                wall, cpu, *_ = _run(python, ["-c", code], cwd=root, env=envs[name])
                runs[name].append((wall, cpu))
    what = "with .pyc files" if bytecode else "PYTHONDONTWRITEBYTECODE=1"
    print(f"{python} -c {code!r}, {what}, {repeats} alternating runs each (seconds)")
    med = {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()
    }
    for name, root in (("this", os.getcwd()), ("against", against)):
        walls = " ".join(f"{w:.2f}" for w, _ in runs[name])
        print(f"  {root}: median wall {med[name][0]:.3f}, CPU {med[name][1]:.3f}  (walls: {walls})")
    print(f"  this / against: wall {med['this'][0] / med['against'][0]:.3f}, CPU {med['this'][1] / med['against'][1]:.3f}")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=5, help="fresh processes per figure (default 5)")
    ap.add_argument("--python", default=sys.executable, help="the interpreter to measure (default: this one)")
    ap.add_argument("--first-step", action="store_true", help="also time mjenv.env(), reset and 20 steps")
    ap.add_argument("--against", metavar="DIR", help="A/B instead: the warm load here and in checkout DIR")
    ap.add_argument("--bytecode", action="store_true", help="--against: let Python write and use .pyc files")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        _child(a.first_step)
        return
    if a.repeats < 1:
        raise SystemExit("--repeats must be >= 1")
    if a.against:
        _ab(a.python, a.against, a.repeats, a.bytecode, a.first_step)
        return
    rows: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    inner: dict[str, list[tuple[float, float, int]]] = collections.defaultdict(list)
    last = None
    child = [os.path.abspath(__file__), "--child"] + (["--first-step"] if a.first_step else [])
    for _ in range(a.repeats):
        wall, cpu, *_ = _run(a.python, ["-c", "pass"])
        rows["python -c pass"].append((wall, cpu))
        wall, cpu, *_ = _run(a.python, ["-c", _WARM])
        rows[f'python -c "{_WARM}"'].append((wall, cpu))
        *_, text, _t0, _t1 = _run(a.python, ["-c", _WARM_GC])
        n, cpu = json.loads(text.strip().splitlines()[-1])
        rows["  the same: CPU of its garbage collections"].append((float("nan"), cpu))
        inner["the plain command's garbage collections"].append((float("nan"), cpu, n))
        wall, cpu, text, t0, t1 = _run(a.python, child)
        last = json.loads(text.strip().splitlines()[-1])
        rows["instrumented: whole process"].append((wall, cpu))
        rows["  interpreter start (to the child's first line)"].append((last["start"] - t0, float("nan")))
        for name, w, c in last["phases"]:
            rows[f"  {name}"].append((w, c))
        rows["  interpreter exit (after the child's last line)"].append((t1 - last["end"], float("nan")))
        for name, (w, c, n) in last["inner"].items():
            inner[name].append((w, c, n))
        for name, s in last["modules"].items():
            rows[f"    warmup: {name} (import + warmup)"].append((s, float("nan")))
        rows["    mjenv._jit.source_stamp() (the stale-cache check)"].append((last["stamp"], float("nan")))

    def med(xs):
        xs = [x for x in xs if x == x]
        return statistics.median(xs) if xs else float("nan")

    print(f"{a.python} (median of {a.repeats}; wall s, cpu s)")
    print(f"{'phase':<72} {'wall':>7} {'cpu':>7}")
    for name, xs in rows.items():
        print(f"{name:<72} {med([x[0] for x in xs]):7.3f} {med([x[1] for x in xs]):7.3f}")
    print(f"\n{'inside the phases (accumulated)':<64} {'calls':>7} {'wall':>7} {'cpu':>7}")
    for name, xs in inner.items():
        print(f"{name:<64} {med([x[2] for x in xs]):7.0f} {med([x[0] for x in xs]):7.3f} {med([x[1] for x in xs]):7.3f}")  # fmt: skip
    print(f"\nkernel signatures loaded per module: {last['kernels']}; objects frozen: {last['gc_frozen']}")


if __name__ == "__main__":
    main()
