"""mjenv's numba patches (``mjenv._jit``: one switch, ``MJENV_NUMBA_PATCHES``, one version check) touch only
mjenv's own dispatchers and cache entries. On the patched and on the stock path, in fresh processes:

* importing mjenv and warming it replaces no function or method of numba or llvmlite;
* a user's own ``@numba.njit(cache=True)`` kernels compiled in the same process compile (the same
  specializations), cache (the same index keys and files) and reload exactly as in a process without mjenv;
* mjenv's kernels give the same results on both paths, which share one cache.
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

from mjenv import _jit

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(
    numba.config.DISABLE_JIT or not _jit.CACHE, reason="needs numba's JIT and its on-disk cache"
)
PATHS = {"patched": "1", "stock": "0"}

#: a user's module: a kernel calling a helper with a constant (numba's Literal specializations, which mjenv's
#: patches remove for mjenv's kernels only) and a second kernel with two signatures
USER_MODULE = """
import numba


@numba.njit(cache=True)
def scale(x, k):
    return x * k


@numba.njit(cache=True)
def total(a):
    s = 0
    for v in a:
        s += scale(v, 3)
    return s


@numba.njit(cache=True)
def half(x):
    return x / 2
"""

#: run in a fresh process: ``mode`` is ``without`` (no mjenv), or ``with`` (mjenv imported and warmed first)
USER_RUN = """
import json, sys
import numpy as np
import numba

mode = sys.argv[1]


def snapshot():
    # every function of numba's and llvmlite's modules and of their classes, by identity
    out = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not name.startswith(("numba", "llvmlite")):
            continue
        for attr, val in list(vars(mod).items()):
            if callable(val):
                out[f"{name}.{attr}"] = id(val)
            if isinstance(val, type) and val.__module__ == name:
                for k, v in list(vars(val).items()):
                    if callable(v) or isinstance(v, (classmethod, staticmethod, property)):
                        out[f"{name}.{attr}.{k}"] = id(v)
    return out


@numba.njit
def _load_numba(a):  # not cached: only so that numba's compiler modules are loaded before the first snapshot
    return a.sum()


_load_numba(np.arange(3))
before = snapshot()
got = {}
if mode == "with":
    import mjenv
    from mjenv import _jit

    mjenv.warmup(progress=False)
    after = snapshot()
    got["replaced"] = sorted(k for k in before.keys() & after.keys() if before[k] != after[k])
    got["patched"] = _jit.PATCHED

import userkernels as u

got["results"] = [u.total(np.arange(5)), u.half(3), u.half(3.0)]
got["signatures"] = {f.__name__: sorted(map(str, f.signatures)) for f in (u.scale, u.total, u.half)}
got["stats"] = {
    f.__name__: [sum(f.stats.cache_hits.values()), sum(f.stats.cache_misses.values())]
    for f in (u.total, u.half)
}
got["cache"] = {f.__name__: type(f._cache).__name__ for f in (u.scale, u.total, u.half)}
got["index"] = {
    f.__name__: sorted(repr(k[:2]) for k in f._cache._cache_file._load_index())
    for f in (u.scale, u.total, u.half)
}
print(json.dumps(got))
"""


def _user_run(folder: Path, mode: str, patches: str = "1") -> dict:
    """Run :data:`USER_RUN` on the user module in ``folder`` (its own in-tree cache beside it)."""
    env = dict(os.environ, MJENV_QUIET="1", MJENV_NUMBA_PATCHES=patches)
    env.pop("NUMBA_CACHE_DIR", None)  # mjenv loads its kernels from its own cache; the user's stay in folder
    env["PYTHONPATH"] = os.pathsep.join([str(folder), str(ROOT)])
    proc = subprocess.run(
        [sys.executable, "-c", USER_RUN, mode],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def _user_folder(parent: Path, name: str) -> Path:
    folder = parent / name
    folder.mkdir()
    (folder / "userkernels.py").write_text(USER_MODULE)
    return folder


@pytest.fixture(scope="module")
def without_mjenv(tmp_path_factory):
    """The user module compiled, then reloaded, in processes that never import mjenv."""
    folder = _user_folder(tmp_path_factory.mktemp("user"), "without")
    return _user_run(folder, "without"), _user_run(folder, "without"), folder


def _files(folder: Path) -> list[str]:
    return sorted(p.name for p in (folder / "__pycache__").glob("userkernels.*.nb[ic]"))


def test_the_version_check():
    for version, supported in (("0.68.0", True), ("0.68.1", True), ("0.67.1", False), ("0.69.0", False)):
        assert _jit.patches_supported(version) is supported
    assert _jit.patches_supported() == numba.__version__.startswith("0.68.")


@pytest.mark.parametrize("path", sorted(PATHS))
def test_a_users_kernels_compile_cache_and_reload_as_without_mjenv(path, without_mjenv, tmp_path):
    import mjenv

    mjenv.warmup(
        progress=False
    )  # here first, so that the processes below load mjenv's kernels from the cache
    first_plain, again_plain, plain_folder = without_mjenv
    assert first_plain["stats"] == {"total": [0, 1], "half": [0, 2]}  # compiled (the baseline)
    assert again_plain["stats"] == {"total": [1, 0], "half": [2, 0]}  # reloaded from the cache
    folder = _user_folder(tmp_path, path)
    first = _user_run(folder, "with", PATHS[path])
    assert first.pop("patched") is (path == "patched" and _jit.patches_supported())
    assert first.pop("replaced") == []  # numba and llvmlite as they were before mjenv was imported
    assert first == first_plain  # the same specializations, cache misses, cache classes and index keys
    assert _files(folder) == _files(plain_folder)
    again = _user_run(folder, "with", PATHS[path])  # a later process with mjenv: loads what the first saved
    again.pop("patched"), again.pop("replaced")
    assert again == again_plain
    assert _user_run(folder, "without") == again_plain  # and so does one without mjenv


#: a small module of mjenv-style kernels (``mjenv._jit.njit``, a shared kernel) for the stock-path test
KERNEL_MODULE = """
import numpy as np
from numba import types as nt

from mjenv._jit import njit, shared_kernel


@njit
def add_kernel(a, i, k):
    a[i] += k


def _twice_c(x):
    return 2 * x


twice = shared_kernel("mjenv_test_patches_twice_{uid}", nt.int64(nt.int64), _twice_c)


@njit
def run_kernel(a):
    add_kernel(a, 0, 1)
    add_kernel(a, 1, 2)
    add_kernel(a, 2, 3)
    return twice(a.sum())
"""

KERNEL_RUN = """
import json
import numpy as np
import kmod
from mjenv import _jit

a = np.zeros(3, np.int64)
r = kmod.run_kernel(a)
print(json.dumps({
    "patched": _jit.PATCHED,
    "result": [int(r), a.tolist()],
    "add_specializations": len(kmod.add_kernel.signatures),
    "run": [sum(kmod.run_kernel.stats.cache_hits.values()), sum(kmod.run_kernel.stats.cache_misses.values())],
    "cache": type(kmod.run_kernel._cache).__name__,
}))
"""


def test_mjenv_kernels_on_both_paths_share_one_cache(tmp_path):
    """mjenv-style kernels compile, cache and reload on the stock path as on the patched path, with the same
    results, in one cache folder (either path loads what the other saved); the patched path compiles one
    specialization of a helper called with three constants, the stock path numba's one per constant."""
    (tmp_path / "kmod.py").write_text(KERNEL_MODULE.format(uid=os.getpid()))

    def run(patches: str) -> dict:
        env = dict(os.environ, MJENV_QUIET="1", MJENV_NUMBA_PATCHES=patches)
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(ROOT)])
        proc = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(KERNEL_RUN)],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert proc.returncode == 0, proc.stderr[-3000:]
        return json.loads(proc.stdout.splitlines()[-1])

    stock = run("0")
    assert stock == {
        "patched": False,
        "result": [12, [1, 2, 3]],
        "add_specializations": 3,  # numba's Literal[int](1), (2), (3)
        "run": [0, 1],
        "cache": "FunctionCache",
    }
    supported = _jit.patches_supported()
    patched = run("1")  # the same cache folder: run_kernel is loaded from the stock process's entry
    assert patched["patched"] is supported and patched["result"] == stock["result"]
    assert patched["run"] == [1, 0]
    assert patched["cache"] == ("_KernelCache" if supported else "FunctionCache")
    (tmp_path / "cache").rename(tmp_path / "stock-cache")
    patched = run("1")  # an empty cache: compiled on the patched path
    assert patched["run"] == [0, 1] and patched["result"] == stock["result"]
    assert patched["add_specializations"] == (1 if supported else 3)
    assert run("0")["run"] == [1, 0]  # and the stock path loads the patched path's entry


def test_mjenv_plays_the_same_on_the_stock_path():
    """The stock path (``MJENV_NUMBA_PATCHES=0``) loads mjenv's kernels from the cache the patched path filled
    and plays the same hands (engine and vector env) as this process."""
    import mjenv
    from tests.test_warmup_parallel import play

    mjenv.warmup(progress=False)
    code = "import json, mjenv\nfrom tests.test_warmup_parallel import play\nmjenv.warmup(progress=False)\n"
    code += "from mjenv import _jit\nprint(json.dumps([_jit.PATCHED, play()]))\n"
    env = dict(os.environ, MJENV_QUIET="1", MJENV_NUMBA_PATCHES="0")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    patched, played = json.loads(proc.stdout.splitlines()[-1])
    assert patched is False
    assert played == play()
