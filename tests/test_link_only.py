"""Link-only kernel helpers (``mjenv._jit.njit`` without ``entry``): no wrapper, no machine code of their own,
cached as bitcode, linked into their callers; Python calls raise ``TypeError``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

from mjenv import _jit

pytestmark = pytest.mark.skipif(
    numba.config.DISABLE_JIT or not _jit.CACHE, reason="needs numba's JIT and its cache"
)

ROOT = Path(__file__).resolve().parents[1]


def test_link_only_is_on_and_private_kernels_use_it():
    from mjenv import fans, game, hand

    assert _jit.LINK_ONLY
    assert isinstance(game._chow_ok, _jit._LinkOnlyDispatcher)
    assert isinstance(fans._add, _jit._LinkOnlyDispatcher)
    assert isinstance(hand.min_shanten_kernel, _jit._LinkOnlyDispatcher)  # public, for kernels: entry=False
    # entries: public kernels, and private kernels Python calls (njit(entry=True))
    for kernel in (fans.score_kernel, game.legal_mask_kernel, hand._batch_is_win, fans._score_batch_kernel):
        assert not isinstance(kernel, _jit._LinkOnlyDispatcher), kernel
        assert not kernel.targetoptions.get("no_cpython_wrapper", False)


def test_python_call_of_a_link_only_kernel_raises_type_error():
    from mjenv import game

    with pytest.raises(TypeError, match=r"mjenv\.game\._chow_ok is a link-only kernel helper.*entry=True"):
        game._chow_ok(game.new_state(), 0, 0, 0)


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
"""

_RUN = """
import json, sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import linkmod
x = np.arange(10, dtype=np.int64)
got = {name: int(getattr(linkmod, name)(x)) for name in sys.argv[2].split(",")}
lib = linkmod._helper.overloads[linkmod._helper.signatures[0]].library
got["helper_hits"] = sum(linkmod._helper.stats.cache_hits.values())
got["helper_link_only"] = bool(getattr(lib, "_mjenv_link_only", False))
print(json.dumps(got))
"""


def _run(tmp_path, names: str) -> dict:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "MJENV_QUIET": "1"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    out = subprocess.run(
        [sys.executable, "-c", _RUN, str(tmp_path), names],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_cached_link_only_helper_links_into_a_new_caller(tmp_path):
    """The helper's library is cached as bitcode; a later process compiling a caller the cache does not hold
    yet loads the helper from the cache and links it (the path on which numba would otherwise set the
    helper's environment in code that was never loaded)."""
    (tmp_path / "linkmod.py").write_text(textwrap.dedent(_MODULE))
    x = np.arange(10, dtype=np.int64)
    s = int((x * (x + 1)).sum())
    want_first, want_second = s % 7 + s, 1000 * (s % 7) - s

    one = _run(tmp_path, "first")  # compiles _helper (link-only) and first
    assert one == {"first": want_first, "helper_hits": 0, "helper_link_only": True}
    two = _run(tmp_path, "second,first")  # second is new: _helper comes from the cache and is linked in
    assert two == {"first": want_first, "second": want_second, "helper_hits": 1, "helper_link_only": True}
