"""The project's numba decorator, and the guard that keeps its on-disk cache in step with the sources.

Every kernel in mjenv is compiled with :func:`njit`, which is ``numba.njit`` with ``cache=True`` and
``nogil=True``. ``parallel=True`` kernels (the vector env) must pass ``cache`` explicitly if they want it.
Set ``MJENV_NO_CACHE=1`` to turn the on-disk cache off.

numba invalidates a cached kernel when the file that defines it changes, but not when a function it calls from
another file changes: after a ``git pull`` that edits only ``fans.py``, the cached engine kernels of
``game.py`` would go on scoring with the old rules. So on import this module stamps every kernel module of
the package (size and modification time of each file that imports it) and, when the stamp differs from the
one stored beside the cache (``mjenv/__pycache__/kernels.stamp``), deletes the package's cached kernels
(``*.nbi``/``*.nbc`` in its ``__pycache__`` folders) so that they are compiled again from the current sources.
This costs a few stat calls per process. It covers numba's default in-tree cache; with ``NUMBA_CACHE_DIR``
set, clear that folder yourself after changing the sources.

Kernels that only other kernels call are *link-only* (:func:`njit` ``entry``, :func:`_install_link_only`): numba
builds no wrapper for them and leaves their libraries to be optimized and code-generated inside their callers'.
"""

from __future__ import annotations

import hashlib
import inspect
import os
import threading
from pathlib import Path

import numba
import numba.core.caching
from numba.core.runtime import rtsys

CACHE = os.environ.get("MJENV_NO_CACHE", "") not in ("1", "true", "yes")
_ROOT = Path(__file__).resolve().parent
_STAMP = "kernels.stamp"
#: ``MJENV_LINK_ONLY=0`` compiles link-only kernels as numba does (for A/B runs); part of the source stamp, since
#: the cache of one setting is not the other's (use a ``NUMBA_CACHE_DIR`` of its own for each).
_LINK_ONLY_WANTED = os.environ.get("MJENV_LINK_ONLY", "1") not in ("0", "false", "no")


def link_only_supported(version: str | None = None) -> bool:
    """Is ``version`` (default: the installed numba's) one whose internals :func:`_install_link_only` replaces
    were checked (0.68.x)?

    Link-only kernels replace six private methods of numba's CPU pipeline (library finalization, its cache
    serialization and unserialization, ``get_executable``, ``set_env``, the native lowering pass) and call three
    more (``_get_module_for_linking``, ``_finalize_dynamic_globals``, ``_verify_declare_only_symbols``), whose
    presence :func:`_install_link_only` also checks. They were read and tested on
    numba 0.68 only; on any other version mjenv compiles exactly as stock numba does (``entry`` is ignored)."""
    parts = (numba.__version__ if version is None else version).split(".")
    return len(parts) >= 2 and parts[0] == "0" and parts[1] == "68"


def _no_literal_specializations(dispatcher):
    """Make calls from other kernels compile ``dispatcher`` for the plain types of their arguments.

    numba types a call ``f(ws, F_SELF_DRAWN, 1)`` inside a kernel with the argument types as they are,
    ``Literal[int](80)`` and ``Literal[int](1)``, and compiles (types, lowers, optimizes and code-generates) a
    specialization of ``f`` for each distinct constant: a cold start compiled ``fans._add`` 18 times,
    ``game._score`` 9 times, ``game._set_win_option`` 6 times. The callee's code never depends on the
    constant (LLVM still propagates it after linking the callee into the caller), so calls resolve to
    the non-literal signature instead, and signed integers narrower than 64 bits (the engine's ``int32``
    state words) as ``int64``, which numba's integer arithmetic promotes them to anyway: one specialization
    per combination of array and scalar kinds.
    """
    from numba.core import types

    if not hasattr(dispatcher, "get_call_template"):  # NUMBA_DISABLE_JIT=1: numba.njit returns the function
        return dispatcher
    resolve = dispatcher.get_call_template

    def plain(t):
        t = types.unliteral(t)
        # narrower signed integers (int32 state words) as int64: numba computes with int64 anyway
        return types.int64 if isinstance(t, types.Integer) and t.signed and t.bitwidth < 64 else t

    def get_call_template(args, kws):
        return resolve(tuple(plain(a) for a in args), {k: plain(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


def njit(*args, entry: bool | None = None, **kwargs):
    """``numba.njit`` with mjenv's defaults (``cache=True``, ``nogil=True``, ``forceinline=False``); calls from
    other kernels are compiled without Literal specializations (:func:`_no_literal_specializations`).

    A big helper that must be inlined for speed takes ``forceinline=True`` (LLVM's ``alwaysinline``: typed and
    lowered once, inlined into each caller by LLVM) rather than numba's ``inline="always"``, which types and
    lowers its IR again inside every caller. ``forceinline=False`` is set explicitly because numba lets a
    callee compiled while a forceinline kernel is typed inherit the flag.

    ``entry``: whether the kernel is mainly called from Python (default: yes, except private ``_names`` in
    ``mjenv``'s own modules; other packages opt in with ``entry=False``). Where link-only is active
    (:data:`LINK_ONLY`), a kernel that is not an entry is a **link-only** helper (:func:`_install_link_only`):
    numba builds no Python or C wrapper for it and never optimizes or code-generates its library on its own,
    since its callers link its code into theirs and optimize it there. It stays callable from Python: the first
    Python call compiles a thin entry wrapper over it (:meth:`_LinkOnlyDispatcher.python_entry`, cached like any
    kernel), so only kernels that Python calls pay for machine code of their own. A kernel that Python calls on
    a hot path, or during :func:`mjenv.warmup`, takes ``entry=True`` (one dispatch less per call). Elsewhere
    (``MJENV_LINK_ONLY=0``, a numba version whose internals were not checked: :func:`link_only_supported`)
    ``entry`` changes nothing and every kernel is a plain numba dispatcher."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    # set explicitly, so that a callee compiled while a forceinline kernel is typed does not inherit it
    kwargs.setdefault("forceinline", False)

    def make(fn, deco_args):
        if entry is None:  # mjenv's private kernels are link-only; others' (agents) keep numba's default
            is_entry = not (fn.__name__.startswith("_") and fn.__module__.startswith("mjenv."))
        else:
            is_entry = entry
        link_only = (
            LINK_ONLY and not is_entry and kwargs.get("inline", "never") == "never" and _forwardable(fn)
        )
        kw = dict(kwargs)
        cache = kw.pop("cache")  # numba's cache=True, with mjenv's cache class (_KernelCache) instead
        if link_only:
            kw.update(no_cpython_wrapper=True, no_cfunc_wrapper=True)
        disp = numba.njit(*deco_args, **kw)(fn)
        if not isinstance(disp, numba.core.dispatcher.Dispatcher):  # NUMBA_DISABLE_JIT=1: the plain function
            return disp
        if cache:  # what numba's enable_caching does, with mjenv's class
            disp._cache = (_LinkOnlyCache if link_only else _KernelCache)(fn)
        if link_only:
            _LINK_ONLY.add(fn)
            disp.__class__ = _LinkOnlyDispatcher
            disp._mjenv_entry_options = {k: v for k, v in kwargs.items() if k != "forceinline"}
            disp._mjenv_entry = None
        return _no_literal_specializations(disp)

    if len(args) == 1 and callable(args[0]) and not kwargs.get("_signature"):
        return make(args[0], ())
    if numba.config.DISABLE_JIT:
        return numba.njit(*args, **kwargs)
    return lambda fn: make(fn, args)


def source_stamp(root: Path = _ROOT) -> str:
    """Digest of the name, size and modification time of every module under ``root`` that defines kernels
    (imports ``mjenv._jit``), plus this file (and ``MJENV_LINK_ONLY=0`` when set)."""
    h = hashlib.blake2b(digest_size=16)
    for p in sorted(root.rglob("*.py")):
        if p.name != "_jit.py" and "mjenv._jit import" not in p.read_text(encoding="utf-8", errors="replace"):
            continue
        st = p.stat()
        h.update(f"{p.relative_to(root).as_posix()}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    if not (_LINK_ONLY_WANTED and link_only_supported()):
        h.update(b"no link-only\n")
    return h.hexdigest()


def drop_stale_caches(root: Path = _ROOT) -> int:
    """Delete the cached kernels under ``root`` when its kernel sources changed since the stored stamp;
    returns how many cache files were deleted. Never raises on file-system errors (a read-only install keeps
    numba's own behaviour)."""
    try:
        stamp = source_stamp(root)
        marker = root / "__pycache__" / _STAMP
        if marker.is_file() and marker.read_text() == stamp:
            return 0
        n = 0
        for pattern in ("*.nbi", "*.nbc"):
            for f in root.rglob(f"__pycache__/{pattern}"):
                f.unlink(missing_ok=True)
                n += 1
        marker.parent.mkdir(exist_ok=True)
        marker.write_text(stamp)
        return n
    except OSError:
        return 0


if CACHE:
    drop_stale_caches()


# ------------------------------------------------------------------------------------- link-only helpers
#: The Python functions of the link-only kernels (``njit`` of a kernel that is not an ``entry``).
_LINK_ONLY: set = set()
_LINK_ONLY_KIND = (
    "mjenv-link-only"  # how a link-only library is serialized in numba's cache: its bitcode only
)


_ENTRY_LOCK = threading.Lock()
_FunctionCache = numba.core.caching.FunctionCache
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _forwardable(fn) -> bool:
    """Can a thin wrapper forward every call of ``fn`` (positional parameters, no defaults)? Only then is a
    non-entry kernel made link-only (a kernel with defaults or ``*args`` stays a plain numba dispatcher)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # pragma: no cover - a builtin or a C function
        return False
    return all(p.kind in _POSITIONAL and p.default is inspect.Parameter.empty for p in params)


class _KernelCache(_FunctionCache):
    """numba's cache of a kernel (``FunctionCache``), less one step of its load.

    numba's ``load_overload`` first refreshes the target context: it imports numba's lowering modules and
    installs all their registries (~0.4 s of CPU, most of a warm process's start: ``python -m
    mjenv.botzone.judge``, started once per call, paid it every call). Compiling needs that, and numba's
    compiler refreshes the context itself before it compiles; loading compiled code from the cache needs only
    numba's runtime (NRT: the loaded code calls its functions), which this initializes alone. On a numba without
    the internals used here it is numba's own load."""

    def load_overload(self, sig, target_context):
        if not _LOAD_WITHOUT_REFRESH:
            return super().load_overload(sig, target_context)
        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


_LOAD_WITHOUT_REFRESH = all(
    hasattr(_FunctionCache, a) for a in ("_load_overload", "_guard_against_spurious_io_errors")
)


class _LinkOnlyCache(_KernelCache):
    """numba's cache of a link-only kernel, with ``"mjenv-link-only"`` in its index key: a process compiling
    with numba's own pipeline (``MJENV_LINK_ONLY=0`` on a shared ``NUMBA_CACHE_DIR``) never loads one of its
    bitcode-only entries (which it could not unserialize), and a link-only process never loads that process's
    entries of the kernel; both live side by side in one index."""

    def _index_key(self, sig, codegen):
        return (*super()._index_key(sig, codegen), _LINK_ONLY_KIND)


class _LinkOnlyDispatcher(numba.core.registry.CPUDispatcher):
    """A link-only kernel (:func:`njit` of a kernel that is not an ``entry``): no machine code of its own; other
    kernels (mjenv's, or a user's ``numba.njit`` function) link its code into theirs. A Python call goes
    through :meth:`python_entry`."""

    def python_entry(self):
        """The kernel's Python entry point: a thin ``numba.njit`` kernel (same options, cached) that only calls
        this one, compiled on the first Python call. Its library links this kernel's code (from the cache when
        it is there) and is optimized and code-generated once, as an entry kernel's would be."""
        entry = getattr(self, "_mjenv_entry", None)  # (absent on a dispatcher numba rebuilt from a pickle)
        if entry is None:
            with _ENTRY_LOCK:
                entry = getattr(self, "_mjenv_entry", None)
                if entry is None:
                    entry = self._mjenv_entry = _make_entry(self)
        return entry

    def __call__(self, *args, **kwargs):
        return self.python_entry()(*args, **kwargs)


def _make_entry(disp):
    """``numba.njit`` of a generated ``def name(a, b, ...): return target(a, b, ...)`` over ``disp``.

    The wrapper's code object has the kernel's file name and first line, and its qualified name is the
    kernel's with ``__entry`` appended, so numba caches it beside the kernel (its own index file, the same
    source stamp) and error messages point at the kernel's definition."""
    fn = disp.py_func
    names = ", ".join(inspect.signature(fn).parameters)
    src = (
        "\n" * (fn.__code__.co_firstlineno - 1)
        + f"def {fn.__name__}({names}):\n    return _target({names})\n"
    )
    ns = {"__name__": fn.__module__, "_target": disp}
    exec(compile(src, fn.__code__.co_filename, "exec"), ns)  # noqa: S102
    wrapper = ns[fn.__name__]
    wrapper.__qualname__ = f"{fn.__qualname__}__entry"
    wrapper.__doc__ = fn.__doc__
    options = getattr(disp, "_mjenv_entry_options", None)
    if options is None:  # a dispatcher numba rebuilt from a pickle: its own options, less the link-only ones
        drop = ("no_cpython_wrapper", "no_cfunc_wrapper", "forceinline")
        options = {k: v for k, v in disp.targetoptions.items() if k not in drop}
    options = dict(options)
    cache = options.pop("cache", False)
    entry = numba.njit(**options)(wrapper)
    if cache and isinstance(entry, numba.core.dispatcher.Dispatcher):
        entry._cache = _KernelCache(wrapper)
    return entry


def _install_link_only() -> bool:
    """Teach numba (0.68's CPU pipeline) to leave the libraries of link-only kernels unoptimized and
    un-code-generated; returns whether it is on (``MJENV_LINK_ONLY=0`` turns it off).

    Why: numba finalizes every compiled function as a library of its own: it links in the code of all its
    callees, runs LLVM's full module pipeline on the result and generates machine code for it, so that the
    function can be called from Python. A helper that only other kernels call never runs its own machine
    code: each caller links the helper's module into its own and optimizes and code-generates it again. So
    for a link-only kernel (no Python or C wrapper; :func:`njit` with ``entry=False``, the default for private
    names) the library is only linked: its functions have had numba's function-level passes, and the module
    pipeline and code generation run once, in the library of the entry kernel (or shared kernel) that calls
    it. numba's cache stores such a library as bitcode (kind ``"mjenv-link-only"``), which a later compile of
    a caller links in the same way. The generated code of the entry kernels is what LLVM makes of the same IR
    (optimized once instead of once per level of the call tree).
    """
    if not _LINK_ONLY_WANTED or numba.config.DISABLE_JIT or not link_only_supported():
        return False
    try:
        import llvmlite.binding as llb
        from numba import _dynfunc
        from numba.core import codegen, cpu, typed_passes
        from numba.core.compiler_lock import require_global_compiler_lock

        lib_cls = codegen.CPUCodeLibrary
        if getattr(lib_cls.finalize, "_mjenv_link_only", False):
            return True
        run_pass = typed_passes.BaseNativeLowering.run_pass
        finalize = lib_cls.finalize
        serialize = lib_cls.serialize_using_object_code
        unserialize = lib_cls._unserialize.__func__
        get_executable = cpu.CPUContext.get_executable
        set_env = codegen.JITCPUCodegen.set_env
        for name in ("_get_module_for_linking", "_finalize_dynamic_globals", "_verify_declare_only_symbols"):
            getattr(lib_cls, name)  # the internals link_only_finalize uses
    except (ImportError, AttributeError):  # another numba: numba's own pipeline (the helpers keep no wrapper)
        return False

    def lowering_run_pass(self, state):
        flags = state.flags
        if flags.no_cpython_wrapper and flags.no_cfunc_wrapper and state.func_id.func in _LINK_ONLY:
            if state.library is None:  # as numba's run_pass creates it
                state.library = state.targetctx.codegen().create_library(state.func_id.func_qualname)
                state.library.enable_object_caching()
            state.library._mjenv_link_only = True
        return run_pass(self, state)

    def link_only_finalize(self):
        if not getattr(self, "_mjenv_link_only", False):
            return finalize(self)
        require_global_compiler_lock()
        self._raise_if_finalized()
        seen = set()
        for library in self._linking_libraries:  # numba's finalize without the optimization and codegen
            if library not in seen:
                self._reload_init.update(library._reload_init)
                seen.add(library)
                self._final_module.link_in(library._get_module_for_linking(), preserve=True)
        self._final_module.verify()
        self._finalize_dynamic_globals()
        self._verify_declare_only_symbols()
        self._finalized = True

    def link_only_get_executable(self, library, fndesc, env):
        if not getattr(library, "_mjenv_link_only", False):
            return get_executable(self, library, fndesc, env)
        library._ensure_finalized()
        doc = f"link-only kernel {fndesc.qualname!r} (no machine code of its own)"
        # no entry point (address 0): _LinkOnlyDispatcher.__call__ sends Python calls to its python_entry()
        return _dynfunc.make_function(
            fndesc.lookup_module(), fndesc.qualname.split(".")[-1], doc, 0, env, (library,)
        )

    def link_only_serialize(self):
        if not getattr(self, "_mjenv_link_only", False):
            return serialize(self)
        self._ensure_finalized()
        return (self.name, _LINK_ONLY_KIND, self._get_module_for_linking().as_bitcode())

    def link_only_unserialize(cls, codegen_, state):
        name, kind, data = state
        if kind != _LINK_ONLY_KIND:
            return unserialize(cls, codegen_, state)
        self = codegen_.create_library(name)
        self._mjenv_link_only = True
        self._final_module = self._shared_module = llb.parse_bitcode(data)
        self._finalize_dynamic_globals()
        self._finalized = True
        return self

    def link_only_set_env(self, env_name, env):
        # a cached caller lists the environments of the helpers linked into it; those of a link-only library
        # that was only loaded (for linking) are in no loaded code: numba's set_env would write to address 0
        if self._engine.get_global_value_address(env_name):
            set_env(self, env_name, env)

    link_only_finalize._mjenv_link_only = True
    codegen.JITCPUCodegen.set_env = link_only_set_env
    typed_passes.BaseNativeLowering.run_pass = lowering_run_pass
    lib_cls.finalize = link_only_finalize
    lib_cls.serialize_using_object_code = link_only_serialize
    lib_cls._unserialize = classmethod(link_only_unserialize)
    cpu.CPUContext.get_executable = link_only_get_executable
    return True


LINK_ONLY = _install_link_only()


# ------------------------------------------------------------------------------- concurrent cache writes
def _lock_cache_saves() -> bool:
    """Serialize numba's cache writes per cache folder with an advisory file lock, so that processes filling one
    cache at the same time (a parallel :func:`mjenv.warmup`, ``pytest -n 2``) cannot corrupt it.

    numba writes each index (``*.nbi``) and data file (``*.nbc``) atomically (a temporary file, then
    ``os.replace``), but ``IndexDataCacheFile.save`` is a read-modify-write of the index: two processes saving
    two specializations of one function at once both read the old index, both pick the same free data file
    name, and the last index written maps the other process's signature to a data file that holds this one's
    code, which the next process would load and call with the wrong argument types. Under the lock the
    read-modify-write is one step. Loads are not locked (a half-finished save is a cache miss, never wrong
    code). POSIX only (``fcntl``); elsewhere numba's own behaviour applies. Returns whether the lock is on.
    """
    try:
        import fcntl

        from numba.core import caching
    except ImportError:  # pragma: no cover - Windows
        return False
    cls = caching.IndexDataCacheFile
    save = cls.save
    if getattr(save, "_mjenv_locked", False):
        return True

    def locked_save(self, key, data):
        try:
            fd = os.open(os.path.join(self._cache_path, "mjenv-cache.lock"), os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:  # read-only cache folder: numba will fail to save anyway (and says so)
            return save(self, key, data)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return save(self, key, data)
        finally:
            os.close(fd)  # closing releases the lock

    locked_save._mjenv_locked = True
    cls.save = locked_save
    return True


CACHE_LOCKED = _lock_cache_saves() if CACHE else False


def cache_dir() -> Path:
    """The folder numba caches this package's kernels in (``mjenv/__pycache__``, or under ``NUMBA_CACHE_DIR``)."""
    from numba.core.caching import FunctionCache

    return Path(FunctionCache(source_stamp)._cache_path)


#: Modules whose shared kernels are NOT compiled in this process: their symbols point at a function that aborts.
#: Set only by the compile-only worker processes of a parallel :func:`mjenv.warmup` (``mjenv._warm_worker``):
#: a worker compiling the engine's kernels stubs ``mjenv.fans``, so it does not first compile the scorer, which
#: another worker compiles at the same time. The callers' code holds a call to the symbol, not its address
#: (the symbol is resolved when the code is loaded), so what such a worker writes to the cache is the same
#: code a normal process writes; the worker itself never runs a kernel that reaches a stub.
stub_modules: frozenset[str] = frozenset()
_STUB = []


def _stub_address() -> int:
    """Address of a C-callable function that aborts the process (a stub symbol must never be called)."""
    if not _STUB:
        import ctypes

        def called():  # pragma: no cover - only reached by a bug in a compile-only worker
            os.write(2, b"mjenv: a stub shared kernel was called in a compile-only warmup worker\n")
            os.abort()

        _STUB.append(ctypes.CFUNCTYPE(None)(called))
    import ctypes

    return ctypes.cast(_STUB[0], ctypes.c_void_p).value


# ------------------------------------------------------------------------------------------ shared kernels
note_hook = None  # when set (mjenv.warmup's progress bar), compile notes go to note_hook(text) instead


def compile_note(what: str) -> None:
    """Say on stderr that ``what`` is being compiled (first run only): a cold start takes a while, and a silent
    one looks hung. ``MJENV_QUIET=1`` turns the notes off; :data:`note_hook` redirects them."""
    if os.environ.get("MJENV_QUIET", "") in ("1", "true", "yes"):
        return
    if note_hook is not None:
        note_hook(f"compiling {what}")
        return
    import sys

    print(f"mjenv: compiling {what} (first run only, cached afterwards) ...", file=sys.stderr, flush=True)


def _compile_cfunc(py_func, signature):
    """``numba.cfunc(signature, cache=CACHE)(py_func)``, with a :func:`compile_note` when the cache misses."""
    from numba.core.ccallback import CFunc
    from numba.core.compiler_lock import global_compiler_lock

    cf = CFunc(py_func, (tuple(signature.args), signature.return_type), locals={}, options={})
    if CACHE:  # CFunc.enable_caching, with mjenv's cache class
        cf._cache = _KernelCache(py_func)
    with global_compiler_lock:
        try:  # numba's own CFunc.compile, split so that a cache miss is announced before compiling
            cres = cf._cache.load_overload(cf._sig, cf._targetdescr.target_context)
        except AttributeError:  # pragma: no cover - another numba version: compile without the note
            cres = None
        if cres is None:
            compile_note(f"{py_func.__module__}.{py_func.__name__.removesuffix('_c')}")
            cf.compile()
        else:
            cf._cache_hits += 1
            cf._library = cres.library
            cf._wrapper_name = cres.fndesc.llvm_cfunc_wrapper_name
            cf._wrapper_address = cf._library.get_pointer_to_function(cf._wrapper_name)
    return cf


def shared_kernel(symbol: str, signature, py_func):
    """Compile ``py_func`` ONCE as a C-callable function and return a kernel that other kernels call through the
    symbol ``symbol``.

    Why: numba finalizes every jitted function as a library of its own, linking in the code of all its
    transitive callees and optimizing and code-generating the linked module again. A big kernel called from
    many kernels (the scorer, the waits of a hand) is therefore compiled once per caller, and once more per
    caller of a caller. A shared kernel is compiled once (``numba.cfunc`` with mjenv's cache) and its callers
    only hold a call to an external symbol, which the JIT linker resolves at load time (from the cache too) to
    the address registered here with ``llvmlite.binding.add_symbol``, as numba does for its own C helpers. No
    process address is baked into cached code.

    ``signature`` is the C signature (numba types); a ``types.CPointer(dtype)`` parameter accepts an array of
    that dtype (C-contiguous; its data pointer is passed, and ``py_func`` rebuilds the array with
    ``numba.carray`` of the length it knows), a scalar parameter accepts any integer or boolean (cast).
    ``symbol`` must be unique in the process and should change when the signature changes (the stale-cache
    guard above drops cached callers when any kernel source changes). With ``NUMBA_DISABLE_JIT`` set the
    returned callable is ``None``: use the plain kernel instead.
    """
    if numba.config.DISABLE_JIT:
        return None
    import llvmlite.binding as llb
    from llvmlite import ir
    from numba.core import cgutils, types
    from numba.extending import intrinsic

    if py_func.__module__ in stub_modules:  # a compile-only worker of a parallel warmup: see stub_modules
        cf = None
        llb.add_symbol(symbol, _stub_address())
    else:
        cf = _compile_cfunc(py_func, signature)
        llb.add_symbol(symbol, cf.address)
    params = tuple(signature.args)

    def typer(args):
        for a, p in zip(args, params):
            if isinstance(p, types.CPointer):
                if not (isinstance(a, types.Array) and a.dtype == p.dtype and a.layout == "C"):
                    return None
            elif not isinstance(a, (types.Integer, types.Boolean)):
                return None
        sig = signature.return_type(*args)

        def codegen(context, builder, sig_, llargs):
            vals = []
            for a, p, v in zip(sig_.args, params, llargs):
                if isinstance(p, types.CPointer):
                    vals.append(context.make_array(a)(context, builder, v).data)
                else:
                    vals.append(context.cast(builder, v, a, p))
            fnty = ir.FunctionType(
                context.get_value_type(signature.return_type), [context.get_value_type(p) for p in params]
            )
            fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
            return builder.call(fn, vals)

        return sig, codegen

    # an intrinsic needs named parameters (no *args): generate the fixed-arity definition
    names = ", ".join(f"a{i}" for i in range(len(params)))
    ns = {"typer": typer}
    exec(f"def {py_func.__name__}(typingctx, {names}):\n    return typer(({names},))\n", ns)  # noqa: S102
    call = intrinsic(ns[py_func.__name__])
    call.cfunc = cf
    return call
