"""Link-only kernels (``mjenv._jit.njit`` of a kernel that is not an ``entry``): no wrapper and no machine code
of their own, cached as bitcode, linked into their callers; a Python call goes through a thin entry wrapper
compiled on first use. Only on the numba versions whose internals were checked (``link_only_supported``);
elsewhere, and with ``MJENV_LINK_ONLY=0``, stock numba.

The process histories that mix cached and fresh code run in subprocesses on a small module of their own (and,
where a process must not touch this checkout's cache, on a copy of the ``mjenv`` package), so that none of them
compiles mjenv's kernels."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numba
import numpy as np
import pytest

from mjenv import _jit
from mjenv import hand as mjenv_hand  # a global of _users_kernel, as a user's module would hold it

pytestmark = pytest.mark.skipif(
    numba.config.DISABLE_JIT or not _jit.CACHE, reason="needs numba's JIT and its cache"
)

ROOT = Path(__file__).resolve().parents[1]
LINK_ONLY_HERE = _jit.link_only_supported() and os.environ.get("MJENV_LINK_ONLY", "1") not in (
    "0",
    "false",
    "no",
)
needs_link_only = pytest.mark.skipif(
    not LINK_ONLY_HERE, reason="link-only is off here (numba version or setting)"
)


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("0.68.0", True),
        ("0.68.1", True),
        ("0.68.2rc1", True),
        ("0.60.0", False),
        ("0.67.1", False),
        ("0.69.0", False),
        ("0.680.0", False),
        ("1.68.0", False),
        ("0", False),
        ("", False),
    ],
)
def test_version_gate(version, supported):
    assert _jit.link_only_supported(version) is supported


def test_link_only_is_on_exactly_where_supported():
    assert _jit.LINK_ONLY == LINK_ONLY_HERE
    assert _jit.LINK_ONLY == _jit.link_only_supported(numba.__version__) or not _jit._LINK_ONLY_WANTED


@needs_link_only
def test_private_kernels_are_link_only_and_entries_are_not():
    from mjenv import fans, game, hand

    assert isinstance(game._chow_ok, _jit._LinkOnlyDispatcher)
    assert isinstance(fans._add, _jit._LinkOnlyDispatcher)
    assert isinstance(hand.min_shanten_kernel, _jit._LinkOnlyDispatcher)  # public, mainly for kernels
    # entries: public kernels, and private kernels Python calls (njit(entry=True))
    for kernel in (fans.score_kernel, game.legal_mask_kernel, hand._batch_is_win, fans._score_batch_kernel):
        assert not isinstance(kernel, _jit._LinkOnlyDispatcher), kernel
        assert not kernel.targetoptions.get("no_cpython_wrapper", False)


def _public_kernels():
    import importlib

    for name in (
        "hand",
        "shanten",
        "game",
        "fans",
        "melds",
        "observation",
        "policy",
        "tiles",
        "rules",
        "vector",
    ):
        module = importlib.import_module(f"mjenv.{name}")
        for attr in sorted(vars(module)):
            obj = getattr(module, attr)
            if (
                attr.endswith("_kernel")
                and not attr.startswith("_")
                and isinstance(obj, numba.core.registry.CPUDispatcher)
            ):
                if obj.py_func.__module__ == module.__name__:
                    yield f"mjenv.{name}.{attr}", obj


def test_every_public_kernel_has_a_python_entry():
    """Every public ``*_kernel`` dispatcher of mjenv is callable from Python: a plain numba entry, or a
    link-only kernel whose Python entry is one (built here, compiled only when called)."""
    kernels = dict(_public_kernels())
    assert len(kernels) > 30 and "mjenv.shanten.min_shanten_kernel" in kernels
    for name, kernel in kernels.items():
        entry = kernel.python_entry() if isinstance(kernel, _jit._LinkOnlyDispatcher) else kernel
        assert type(entry) is numba.core.registry.CPUDispatcher, name
        assert not entry.targetoptions.get("no_cpython_wrapper", False), name
        assert entry.py_func.__doc__ == kernel.py_func.__doc__, name


def test_python_calls_of_link_only_public_kernels_give_the_kernels_results():
    from mjenv import game, hand

    counts = np.zeros(34, np.int8)
    np.add.at(counts, [0, 0, 1, 2, 9, 10, 11, 18, 19, 20, 27, 27, 27], 1)
    suit, honor, _, _ = hand.load_tables()
    suit_inc, honor_inc = hand.load_shanten_tables()
    assert (
        hand.min_shanten_kernel(counts, 13, suit, honor, suit_inc, honor_inc)
        == hand.shanten(counts).shanten
        == 0
    )
    pairs = np.zeros(34, np.int8)
    pairs[:7] = 2
    assert hand.seven_pairs_shanten_kernel(pairs) == -1
    assert hand.special_shape_kernel(pairs, 0) and not hand.special_shape_kernel(pairs, 1)
    state = game.new_state()
    assert game.wall_empty_kernel(state, 0) == (state[game.FRONT] >= state[game.BACK])


@numba.njit(cache=False)
def _users_kernel(h):
    """A user's own numba kernel calling public mjenv kernels (link-only ones included)."""
    from_pairs = mjenv_hand.seven_pairs_shanten_kernel(h)
    return from_pairs, mjenv_hand.special_shape_kernel(h, 0), mjenv_hand.knitted_perm_kernel(h)


def test_users_numba_kernel_calls_public_link_only_kernels():
    rng = np.random.default_rng(5)
    for _ in range(20):
        h = np.zeros(34, np.int8)
        np.add.at(h, rng.integers(0, 34, 14), 1)
        h = np.minimum(h, 4).astype(np.int8)
        got = _users_kernel(h)
        want = (
            mjenv_hand.seven_pairs_shanten_kernel(h),
            mjenv_hand.special_shape_kernel(h, 0),
            mjenv_hand.knitted_perm_kernel(h),
        )
        assert tuple(int(x) for x in got) == tuple(int(x) for x in want)
        assert int(got[0]) == 6 - int((h >= 2).sum())


_MODULE = """
import numpy as np
from mjenv._jit import njit


@njit(entry=False)
def _helper(x, out):
    s = 0
    for i in range(x.shape[0]):
        s += x[i] * (i + 1)
    out[0] = s
    return s % 7


@njit
def first(x):
    out = np.zeros(1, np.int64)
    return _helper(x, out) + out[0]


@njit
def second(x):
    out = np.zeros(1, np.int64)
    return 1000 * _helper(x, out) - out[0]


@njit
def third(x):
    out = np.zeros(1, np.int64)
    return _helper(x, out) - 7 * out[0]


def helper(x):
    out = np.zeros(1, np.int64)
    return _helper(x, out) * 10**6 + out[0]  # a Python call of the link-only kernel
"""

_RUN = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
if len(sys.argv) > 3:
    import numba
    numba.__version__ = sys.argv[3]  # a numba whose internals mjenv did not check
from mjenv import _jit
import linkmod
x = np.arange(10, dtype=np.int64)
got = {name: int(getattr(linkmod, name)(x)) for name in sys.argv[2].split(",")}
disp = linkmod._helper
got["link_only"] = _jit.LINK_ONLY
got["helper_type"] = type(disp).__name__
got["wrappers"] = not disp.targetoptions.get("no_cpython_wrapper", False)
if disp.signatures:
    got["helper_hits"] = sum(disp.stats.cache_hits.values())
    got["helper_bitcode"] = bool(getattr(disp.overloads[disp.signatures[0]].library, "_mjenv_link_only", False))
entry = getattr(disp, "_mjenv_entry", None)
if entry is not None:
    got["entry_hits"] = sum(entry.stats.cache_hits.values())
got["first_hits"] = sum(linkmod.first.stats.cache_hits.values())
got["stamp"] = _jit.source_stamp()
print(json.dumps(got))
"""


def _want():
    x = np.arange(10, dtype=np.int64)
    s = int((x * (x + 1)).sum())
    return {
        "first": s % 7 + s,
        "second": 1000 * (s % 7) - s,
        "third": s % 7 - 7 * s,
        "helper": (s % 7) * 10**6 + s,
    }


def _run(tmp_path, names: str, *, version: str | None = None, package: Path = ROOT, **env_extra) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "MJENV_QUIET": "1", **env_extra}
    env["PYTHONPATH"] = os.pathsep.join([str(package), *filter(None, [os.environ.get("PYTHONPATH")])])
    out = subprocess.run(
        [sys.executable, "-c", _RUN, str(tmp_path), names, *([version] if version else [])],
        env=env,
        cwd=tmp_path,  # not the checkout: `python -c` puts the working directory first on sys.path
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    for name in names.split(","):
        assert got[name] == _want()[name], (name, got)
    return got


@pytest.fixture
def linkmod(tmp_path):
    (tmp_path / "linkmod.py").write_text(textwrap.dedent(_MODULE))
    return tmp_path


@pytest.fixture
def package_copy(tmp_path):
    """A copy of the ``mjenv`` package (no caches): a process that flips the link-only setting or fakes
    numba's version runs on it, so that its stale-cache guard never touches this checkout's cache."""
    dst = tmp_path / "pkg"
    shutil.copytree(ROOT / "mjenv", dst / "mjenv", ignore=shutil.ignore_patterns("__pycache__", "*.nb*"))
    return dst


@needs_link_only
def test_cached_link_only_helper_links_into_a_new_caller(linkmod):
    """The helper's library is cached as bitcode; a later process compiling a caller the cache does not hold
    yet loads the helper from the cache and links it (the path on which numba would otherwise set the
    helper's environment in code that was never loaded)."""
    one = _run(linkmod, "first")  # compiles _helper (link-only) and first
    assert (one["helper_hits"], one["helper_bitcode"], one["helper_type"]) == (0, True, "_LinkOnlyDispatcher")
    two = _run(linkmod, "second,first")  # second is new: _helper comes from the cache and is linked in
    assert (two["helper_hits"], two["first_hits"], two["helper_bitcode"]) == (1, 1, True)


@needs_link_only
def test_cached_caller_runs_when_the_helpers_cache_entry_is_gone(linkmod):
    """A caller loaded from the cache holds its helpers' code: it runs with the helper's entry deleted, and a
    new caller then compiles the helper afresh."""
    _run(linkmod, "first")
    gone = [f for f in (linkmod / "cache").rglob("linkmod._helper-*") if f.is_file()]
    assert gone
    for f in gone:
        f.unlink()
    two = _run(linkmod, "first,second,helper")
    assert (two["first_hits"], two["helper_hits"], two["entry_hits"]) == (1, 0, 0)
    three = _run(linkmod, "helper,first,second")  # the Python entry of the helper from the cache too
    assert (three["first_hits"], three["entry_hits"]) == (1, 1)


@needs_link_only
def test_python_entry_of_a_link_only_kernel_is_cached(linkmod):
    one = _run(linkmod, "helper")  # a Python call first: the helper and its entry wrapper are compiled
    assert (one["helper_hits"], one["entry_hits"], one["helper_bitcode"]) == (0, 0, True)
    two = _run(
        linkmod, "helper,first"
    )  # the entry is loaded (the helper itself is not needed), first compiled
    assert (two["entry_hits"], two["first_hits"]) == (1, 0)


@needs_link_only
def test_stock_and_link_only_processes_share_a_cache_folder(linkmod, package_copy):
    """``MJENV_LINK_ONLY=0`` on the same ``NUMBA_CACHE_DIR``: it never loads a link-only (bitcode) entry, and
    the link-only process after it never loads the stock entries of its link-only kernels."""
    one = _run(linkmod, "first,second,helper", package=package_copy)
    stock = _run(linkmod, "helper,first,second", package=package_copy, MJENV_LINK_ONLY="0")
    assert (stock["link_only"], stock["helper_type"], stock["wrappers"]) == (False, "CPUDispatcher", True)
    assert stock["helper_hits"] == 0 and stock["stamp"] != one["stamp"]
    again = _run(linkmod, "second,helper,third", package=package_copy)  # third is new: it needs _helper
    assert (again["link_only"], again["entry_hits"], again["helper_hits"], again["helper_bitcode"]) == (
        True,
        1,
        1,
        True,
    )


def test_other_numba_versions_compile_as_stock_numba(linkmod, package_copy):
    """On a numba version whose internals were not checked, ``entry=False`` changes nothing: the helper is a
    plain dispatcher with numba's wrappers, compiled and cached by numba's own pipeline, with the same results
    (and a source stamp of its own, as with ``MJENV_LINK_ONLY=0``)."""
    one = _run(linkmod, "first,second,helper", version="0.69.0", package=package_copy)
    assert (one["link_only"], one["helper_type"], one["wrappers"], one["helper_bitcode"]) == (
        False,
        "CPUDispatcher",
        True,
        False,
    )
    two = _run(linkmod, "helper,first", version="0.69.0", package=package_copy)
    assert two["helper_hits"] == 1 and two["first_hits"] == 1
    if LINK_ONLY_HERE:
        assert two["stamp"] != _run(linkmod, "first", package=package_copy)["stamp"]


@needs_link_only
def test_python_entry_is_built_once_under_threads(tmp_path, monkeypatch):
    (tmp_path / "linkmod_threads.py").write_text(textwrap.dedent(_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    import linkmod_threads as mod

    x = np.arange(10, dtype=np.int64)
    barrier = threading.Barrier(4)
    results, entries = [], []

    def call():
        barrier.wait()
        results.append(mod.helper(x))
        entries.append(mod._helper.python_entry())

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [_want()["helper"]] * 4
    assert len({id(e) for e in entries}) == 1
