"""Where a cold start's compile time goes: numba compile time per function and LLVM time per library.

Usage (cold: an empty cache folder)::

    rm -rf /tmp/c && NUMBA_CACHE_DIR=/tmp/c MJENV_QUIET=1 PYTHONPATH=. /usr/bin/time \\
        python lab/probes/profile_compile.py [--top 45]

Runs ``mjenv.warmup(jobs=1)`` (seconds per module; ``--task game`` etc.: only those compile-only tasks of a
parallel warmup, as one worker process runs them, with their stub symbols; ``--prewarm rule``: a part of
``tests/_prewarm.py``, the agents' kernels the CI compiles beside it; ``--agents rule``: the agents' first use,
``agents.warmup``) and prints three tables:

* per function: numba ``numba:compile`` events, inclusive and exclusive seconds (a callee compiled while its
  caller is typed counts in the caller's inclusive time only), and how many specializations were compiled;
* per library: seconds in LLVM's module optimization and machine-code generation
  (``CPUCodeLibrary._optimize_final_module`` / ``_finalize_final_module``), and how many functions the
  linked module holds (a library links in all its callees);
* every function compiled more than once, with the argument types of each specialization.

* per phase (``--phases``): exclusive seconds of each numba pipeline pass, of lowering (the function body and
  the Python / C wrappers), and of LLVM (IR parsing, function passes, module passes, code generation), the
  cache's loads and saves; what the compile costs per kind of work, and how many times it ran.

Shared kernels (``mjenv._jit.shared_kernel``: a ``numba.cfunc`` each) fire no ``numba:compile`` event of
their own; their compile is timed around ``mjenv._jit._compile_cfunc`` and listed as ``name [cfunc]``.
Seconds are the process CPU time (steadier than wall time on a shared machine; ``--wall`` for wall time).

See ``docs/performance-log.md`` ("Cold start").
"""

from __future__ import annotations

import argparse
import collections
import time

from numba.core import codegen, event


class _CompileTimes(event.Listener):
    """Inclusive and exclusive seconds of every ``numba:compile`` event."""

    clock = staticmethod(time.process_time)

    def __init__(self) -> None:
        self.stack: list[list[float]] = []
        self.records: list[tuple[str, str, str, float, float]] = []

    def on_start(self, ev) -> None:
        self.stack.append([self.clock(), 0.0])

    def on_end(self, ev) -> None:
        data = ev.data or {}
        py_func = getattr(data.get("dispatcher"), "py_func", None)
        name = getattr(py_func, "__qualname__", str(data.get("dispatcher")))
        self.end(getattr(py_func, "__module__", "?"), name, str(data.get("args")))

    def end(self, module: str, name: str, args: str) -> None:
        t0, children = self.stack.pop()
        dt = self.clock() - t0
        if self.stack:
            self.stack[-1][1] += dt
        self.records.append((module, name, args, dt, dt - children))

    def timed_cfunc(self, compile_cfunc):
        """``mjenv._jit._compile_cfunc`` timed as an event of its own (a shared kernel's cfunc)."""

        def timed(py_func, signature):
            self.stack.append([self.clock(), 0.0])
            try:
                return compile_cfunc(py_func, signature)
            finally:
                self.end(py_func.__module__, f"{py_func.__qualname__} [cfunc]", str(signature))

        return timed


class _Phases:
    """Exclusive seconds per compile phase: every timed method pushes its phase on a stack, and the time of a
    nested phase counts for it, not for the one around it."""

    def __init__(self, clock) -> None:
        self.clock = clock
        self.stack: list[list] = []
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.calls: collections.Counter = collections.Counter()

    def wrap(self, cls, name: str, phase) -> None:
        orig = getattr(cls, name)

        def timed(*args, **kwargs):
            what = phase(*args) if callable(phase) else phase
            t0 = self.clock()
            self.stack.append([what, 0.0])
            try:
                return orig(*args, **kwargs)
            finally:
                what, inner = self.stack.pop()
                dt = self.clock() - t0
                self.seconds[what] += dt - inner
                self.calls[what] += 1
                if self.stack:
                    self.stack[-1][1] += dt

        setattr(cls, name, timed)

    def install(self) -> None:
        from numba.core import caching, compiler_machinery, lowering

        self.wrap(
            compiler_machinery.PassManager, "_runPass", lambda _pm, _i, p, _st: f"numba pass {p.name()}"
        )
        self.wrap(lowering.BaseLower, "lower", "lowering: function body")
        self.wrap(lowering.BaseLower, "create_cpython_wrapper", "lowering: Python wrapper")
        self.wrap(lowering.BaseLower, "create_cfunc_wrapper", "lowering: C wrapper")
        lib = codegen.CPUCodeLibrary
        self.wrap(lib, "add_ir_module", "LLVM: IR to text, parse, verify")
        self.wrap(lib, "_optimize_functions", "LLVM: function passes")
        self.wrap(lib, "_optimize_final_module", "LLVM: module passes")
        self.wrap(lib, "_finalize_final_module", "LLVM: code generation")
        self.wrap(lib, "finalize", "LLVM: linking libraries")
        self.wrap(caching.Cache, "save_overload", "cache save")
        self.wrap(caching.Cache, "load_overload", "cache load")

    def report(self, total: float) -> None:
        print(f"== per phase (exclusive; total {total:.1f} s)")
        for what, sec in sorted(self.seconds.items(), key=lambda x: -x[1]):
            if sec >= 0.01:
                print(f"{sec:7.2f} n={self.calls[what]:5d} {what}")
        print(f"{total - sum(self.seconds.values()):7.2f}         outside these phases (imports, Python)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--top", type=int, default=45, help="rows of the per-function and per-library tables")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="warmup processes (1: everything compiles in this, profiled, process)",
    )
    ap.add_argument(
        "--task",
        action="append",
        choices=["hand", "fans", "game", "vector"],
        help="profile these compile-only tasks of a parallel warmup (_compile._TASKS, with their stubs) in this "
        "process instead of mjenv.warmup(); repeat for a chain (e.g. --task fans --task game)",
    )
    ap.add_argument(
        "--prewarm",
        choices=["rule", "rest"],
        help="profile this part of tests/_prewarm.py (the agents' kernels the CI compiles beside mjenv.warmup, "
        "mjenv's shared kernels stubbed) instead of mjenv.warmup()",
    )
    ap.add_argument(
        "--agents",
        action="append",
        choices=["rule", "features"],
        help="profile agents.warmup.warmup(parts=...) (the first use of the baseline agents; mjenv's kernels "
        "compile or load as usual) instead of mjenv.warmup(); repeat for both",
    )
    ap.add_argument("--wall", action="store_true", help="wall-clock seconds instead of process CPU seconds")
    ap.add_argument("--phases", action="store_true", help="also the exclusive seconds per compile phase")
    args = ap.parse_args(argv)

    clock = time.perf_counter if args.wall else time.process_time
    _CompileTimes.clock = staticmethod(clock)
    times = _CompileTimes()
    event.register("numba:compile", times)
    libs = collections.defaultdict(lambda: [0.0, 0.0, 0])  # optimize s, codegen s, functions
    optimize, finalize = (
        codegen.CPUCodeLibrary._optimize_final_module,
        codegen.CPUCodeLibrary._finalize_final_module,
    )

    def timed_optimize(self):
        t = clock()
        optimize(self)
        rec = libs[self.name]
        rec[0] += clock() - t
        rec[2] = sum(1 for fn in self._final_module.functions if not fn.is_declaration)

    def timed_finalize(self):
        t = clock()
        finalize(self)
        libs[self.name][1] += clock() - t

    codegen.CPUCodeLibrary._optimize_final_module = timed_optimize
    codegen.CPUCodeLibrary._finalize_final_module = timed_finalize

    phases = _Phases(clock) if args.phases else None
    if phases is not None:
        phases.install()
    from mjenv import _jit

    _jit._compile_cfunc = times.timed_cfunc(_jit._compile_cfunc)
    import mjenv
    from mjenv import _compile

    t0, c0 = time.perf_counter(), clock()
    if args.prewarm:
        from tests import _prewarm

        _prewarm.main(args.prewarm)
        print(f"tests/_prewarm.py {args.prewarm}: {time.perf_counter() - t0:.1f} s")
    elif args.agents:
        from agents.warmup import warmup

        warmup(parts=tuple(args.agents))
        print(f"agents.warmup {', '.join(args.agents)}: {time.perf_counter() - t0:.1f} s")
    elif args.task:
        full = dict(_compile._tasks_for(_compile.WARMUP_MODULES, (), {}))
        _compile._warm_worker([(name, full[name]) for name in _compile._TASKS if name in args.task])
        print(f"tasks {', '.join(args.task)}: {time.perf_counter() - t0:.1f} s")
    else:
        per_module = mjenv.warmup(verbose=True, jobs=args.jobs)
        print({k: round(v, 1) for k, v in per_module.items()}, f"total {time.perf_counter() - t0:.1f} s")

    if phases is not None:
        phases.report(clock() - c0)
    agg = collections.defaultdict(lambda: [0, 0.0, 0.0])
    sigs = collections.defaultdict(list)
    for module, name, sig, dt, excl in times.records:
        a = agg[(module, name)]
        a[0] += 1
        a[1] += dt
        a[2] += excl
        sigs[(module, name)].append((excl, sig))
    print("== numba compile per function, by exclusive time")
    for (module, name), (n, incl, excl) in sorted(agg.items(), key=lambda x: -x[1][2])[: args.top]:
        print(f"excl {excl:7.2f}s incl {incl:7.2f}s n={n:3d} {module}.{name}")
    total_o = sum(v[0] for v in libs.values())
    total_c = sum(v[1] for v in libs.values())
    print(f"== LLVM per library: {len(libs)} libraries, optimize {total_o:.1f} s, codegen {total_c:.1f} s")
    for name, (o, c, nf) in sorted(libs.items(), key=lambda x: -(x[1][0] + x[1][1]))[: args.top]:
        print(f"{o:6.2f} {c:6.2f} funcs={nf:4d} {name[:90]}")
    print("== functions compiled more than once")
    for key, v in sorted(sigs.items()):
        if len(v) > 1 and key[0] != "?":
            print(key, len(v))
            for excl, sig in v:
                print(f"   {excl:6.2f} {sig[:300]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
