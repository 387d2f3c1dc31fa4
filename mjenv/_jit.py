"""The project's numba decorator, its shared kernels, and the guard that keeps its on-disk cache in step with the
sources. Everything in mjenv that touches numba's internals is in this module.

Every kernel of the project (mjenv, agents, train, benchmarks, lab) is compiled with :func:`njit`, which is
``numba.njit`` with ``cache=CACHE`` and ``nogil=True``, ``parallel=True`` kernels included. ``CACHE`` is the
switch: set ``MJENV_NO_CACHE=1`` to turn the on-disk cache off. A kernel never passes ``cache=True`` (that would
cache with the switch off); ``cache=False`` (never cache: closures, one-off generators) is the only ``cache=`` a
kernel passes (``tests/test_layering.py`` checks both, and that nothing else imports ``numba.njit``).

**numba's internals: one switch, one version check, mjenv's own kernels only.** On the numba versions whose
internals were read (:func:`patches_supported`: 0.68.x, the range ``pyproject.toml`` allows and CI tests),
:func:`njit` and :func:`shared_kernel` change four things about the dispatchers and cfuncs they create, and
nothing else (no numba class, method or global is replaced; a user's own ``numba.njit`` kernels compile, cache
and load as without mjenv, ``tests/test_numba_patches.py``):

* calls from other kernels compile the kernel for the plain types of their arguments, not one specialization
  per constant (:func:`_no_literal_specializations`: an instance attribute, ``get_call_template``);
* cache saves take a file lock per cache folder (:class:`_KernelCache`, the dispatcher's ``_cache``), so
  that the processes of a parallel :func:`mjenv.warmup` or of ``pytest -n 2`` cannot corrupt the index of one
  kernel;
* cache loads skip numba's rebuild of its typing and lowering registries (:class:`_KernelCache`: ~0.4 s of CPU
  per warm process, most of a ``python -m mjenv.botzone.judge`` call);
* a shared kernel's cfunc announces a cache miss before compiling (:func:`_compile_cfunc`).

``MJENV_NUMBA_PATCHES=0`` (and any other numba version) is the **stock path**: plain ``numba.njit`` and
``numba.cfunc``, slower to compile cold (more specializations), slower to load warm, and without the lock,
with the same results; both paths use the same cache entries. :data:`PATCHED` says which path this process
takes. Shared kernels (:func:`shared_kernel`) use numba's public extension API on both paths (``numba.cfunc``,
``numba.extending.intrinsic``, ``llvmlite.binding.add_symbol``).

numba invalidates a cached kernel when the file that defines it changes, but not when a function it calls from
another file changes: after a ``git pull`` that edits only ``fans.py``, the cached engine kernels of
``game.py`` would go on scoring with the old rules. So on import this module stamps every kernel module of
the package (size and modification time of each file that imports it) and, when the stamp differs from the
one stored beside the cache (``mjenv/__pycache__/kernels.stamp``), deletes the package's cached kernels
(``*.nbi``/``*.nbc`` in its ``__pycache__`` folders) so that they are compiled again from the current sources.
This costs a few stat calls per process. It covers numba's default in-tree cache; with ``NUMBA_CACHE_DIR``
set, clear that folder yourself after changing the sources. A package beside mjenv whose kernels call mjenv's
(``agents``: its rule agent and features inline :mod:`mjenv.view` and :mod:`mjenv.hand`) guards its own cache
the same way on import, stamped with mjenv's sources too (:func:`guard_package_caches`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from pathlib import Path

import numba
from numba.core.caching import FunctionCache

CACHE = os.environ.get("MJENV_NO_CACHE", "") not in ("1", "true", "yes")
_ROOT = Path(__file__).resolve().parent
_STAMP = "kernels.stamp"


def patches_supported(version: str | None = None) -> bool:
    """Is ``version`` (default: the installed numba's) one whose internals this module's patches were read and
    tested against (0.68.x)? Elsewhere mjenv takes the stock path (see the module docstring)."""
    parts = (numba.__version__ if version is None else version).split(".")
    return len(parts) >= 2 and parts[0] == "0" and parts[1] == "68"


#: Whether this process patches mjenv's own dispatchers and cfuncs: ``MJENV_NUMBA_PATCHES`` is not ``0`` (the
#: switch), the numba version is supported (the version check) and the JIT is on.
PATCHED = (
    os.environ.get("MJENV_NUMBA_PATCHES", "1") not in ("0", "false", "no")
    and patches_supported()
    and not numba.config.DISABLE_JIT
)


@contextlib.contextmanager
def _folder_lock(folder):
    """An advisory lock (``fcntl.flock``) on ``folder/mjenv-cache.lock``; no lock where there is no ``fcntl``
    (Windows) or the folder is read-only (numba will then fail to save anyway, and says so)."""
    try:
        import fcntl

        fd = os.open(os.path.join(folder, "mjenv-cache.lock"), os.O_RDWR | os.O_CREAT, 0o666)
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


class _KernelCache(FunctionCache):
    """numba's cache (``FunctionCache``) of one of mjenv's own kernels, where :data:`PATCHED`: saves hold the
    cache folder's lock, and loads skip numba's refresh of the target context.

    Saves: numba writes each index (``*.nbi``) and data file (``*.nbc``) atomically (a temporary file, then
    ``os.replace``), but saving is a read-modify-write of the index: two processes saving two specializations
    of one function at once both read the old index, both pick the same free data file name, and the last
    index written maps the other process's signature to a data file that holds this one's code, which the next
    process would load and call with the wrong argument types. Under the lock the read-modify-write is one
    step. Loads are not locked (a half-finished save is a cache miss, never wrong code).

    Loads: numba's ``load_overload`` first refreshes the target context: it imports numba's lowering modules
    and installs all their registries (~0.4 s of CPU, most of a warm process's start: ``python -m
    mjenv.botzone.judge``, started once per call, paid it every call). Compiling needs that, and numba's
    compiler refreshes the context itself before it compiles; loading compiled code from the cache needs only
    numba's runtime (NRT: the loaded code calls its functions), which this initializes alone. A user's own
    kernels keep numba's ``FunctionCache`` (the first of them to compile or load refreshes the context as
    without mjenv)."""

    def save_overload(self, sig, data):
        with _folder_lock(self.cache_path):
            super().save_overload(sig, data)

    def load_overload(self, sig, target_context):
        from numba.core.runtime import rtsys

        rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)


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


def _patch(dispatcher):
    """The patches (:data:`PATCHED`) on one of mjenv's own dispatchers: its cache saves are locked and calls from
    other kernels compile it without Literal specializations."""
    if type(dispatcher._cache) is FunctionCache:  # cache=True (else numba's NullCache)
        dispatcher._cache = _KernelCache(dispatcher.py_func)
    return _no_literal_specializations(dispatcher)


def njit(*args, **kwargs):
    """``numba.njit`` with mjenv's defaults (``cache=True``, ``nogil=True``, ``forceinline=False``); where
    :data:`PATCHED`, the dispatcher gets :func:`_patch` (locked cache saves, no Literal specializations).

    A big helper that must be inlined for speed takes ``forceinline=True`` (LLVM's ``alwaysinline``: typed and
    lowered once, inlined into each caller by LLVM) rather than numba's ``inline="always"``, which types and
    lowers its IR again inside every caller. ``forceinline=False`` is set explicitly because numba lets a
    callee compiled while a forceinline kernel is typed inherit the flag."""
    kwargs.setdefault("cache", CACHE)
    kwargs.setdefault("nogil", True)
    # set explicitly, so that a callee compiled while a forceinline kernel is typed does not inherit it
    kwargs.setdefault("forceinline", False)

    def make(fn, deco_args):
        disp = numba.njit(*deco_args, **kwargs)(fn)
        if not PATCHED or not isinstance(disp, numba.core.dispatcher.Dispatcher):
            return disp  # the stock path (NUMBA_DISABLE_JIT=1: the plain function)
        return _patch(disp)

    if len(args) == 1 and callable(args[0]) and not kwargs.get("_signature"):
        return make(args[0], ())
    if numba.config.DISABLE_JIT:
        return numba.njit(*args, **kwargs)
    return lambda fn: make(fn, args)


def source_stamp(root: Path = _ROOT) -> str:
    """Digest of the name, size and modification time of every module under ``root`` that defines kernels
    (imports ``mjenv._jit``), plus this file."""
    h = hashlib.blake2b(digest_size=16)
    for p in sorted(root.rglob("*.py")):
        if p.name != "_jit.py" and "mjenv._jit import" not in p.read_text(encoding="utf-8", errors="replace"):
            continue
        st = p.stat()
        h.update(f"{p.relative_to(root).as_posix()}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return h.hexdigest()


def drop_stale_caches(root: Path = _ROOT, depends_on: tuple[Path, ...] = ()) -> int:
    """Delete the cached kernels under ``root`` when its kernel sources, or those of the packages ``depends_on``
    (whose kernels ``root``'s kernels call, compiled into them), changed since the stored stamp; returns how many
    cache files were deleted. Never raises on file-system errors (a read-only install keeps numba's own
    behaviour)."""
    try:
        stamp = " ".join(source_stamp(r) for r in (root, *depends_on))
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


def guard_package_caches(root: Path) -> int:
    """:func:`drop_stale_caches` for a package beside mjenv whose kernels call mjenv's (``agents``): its cached
    kernels go when its own kernel sources or mjenv's change (numba would keep serving them with mjenv's old
    code inlined). Call it when the package is imported, before its kernels load; nothing without the cache."""
    return drop_stale_caches(Path(root), depends_on=(_ROOT,)) if CACHE else 0


if CACHE:
    drop_stale_caches()


def cache_dir() -> Path:
    """The folder numba caches this package's kernels in (``mjenv/__pycache__``, or under ``NUMBA_CACHE_DIR``)."""
    return Path(FunctionCache(source_stamp)._cache_path)


#: Modules whose shared kernels are NOT compiled in this process: their symbols point at a function that aborts.
#: Set only by the compile-only worker processes of a parallel :func:`mjenv.warmup`
#: (``mjenv._compile._warm_worker``): a worker compiling the engine's kernels stubs ``mjenv.fans``, so it does not first compile the scorer, which
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
    """``numba.cfunc(signature, cache=CACHE)(py_func)``; where :data:`PATCHED`, with locked cache saves and a
    :func:`compile_note` when the cache misses (numba's own ``CFunc.compile``, split in two)."""
    if not PATCHED:
        return numba.cfunc(signature, cache=CACHE)(py_func)
    from numba.core.ccallback import CFunc
    from numba.core.compiler_lock import global_compiler_lock

    cf = CFunc(py_func, (tuple(signature.args), signature.return_type), locals={}, options={})
    if CACHE:
        cf._cache = _KernelCache(py_func)  # numba's enable_caching, with mjenv's cache class
    with global_compiler_lock:
        cres = cf._cache.load_overload(cf._sig, cf._targetdescr.target_context)
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
