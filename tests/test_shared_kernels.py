"""Shared kernels (mjenv._jit.shared_kernel): called from jitted code they give the plain kernel's results, and a
fresh process loads them (and the callers that reference their symbols) from the on-disk cache."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

from mjenv import fans, game

pytestmark = pytest.mark.skipif(numba.config.DISABLE_JIT, reason="shared kernels need the JIT")


@numba.njit
def _call_shared(c, m, fc):
    return fans.shared_score_kernel(c, m, 0, 33, 0, 0, 0, 2, fc)


def _plain(c, m, fc):
    """The scorer compiled as a plain kernel (not through the shared symbol)."""
    return fans._score(c, m, 0, 33, 0, 0, 0, 2, fc, np.empty(fans._WS_LEN, np.int64))


def test_shared_scorer_matches_plain_scorer():
    c = np.zeros(34, np.int8)
    c[[0, 1, 2, 9, 10, 11, 18, 19, 20, 33]] = 1
    c[27] = 3
    m = np.zeros(4, np.int16)
    fc_a = np.zeros(fans.NUM_FANS, np.int16)
    fc_b = np.zeros(fans.NUM_FANS, np.int16)
    a = _call_shared(c, m, fc_a)
    b = _plain(c, m, fc_b)
    assert a == b and a > 0
    assert fans.score_kernel(c, m, 0, 33, 0, 0, 0, 2, fc_b) == a
    assert np.array_equal(fc_a, fc_b)
    bad = c.copy()
    bad[5] = 5  # an error code comes back through the C call too
    assert _call_shared(bad, m, fc_a) == _plain(bad, m, fc_b) < 0


def test_fresh_process_loads_shared_kernels_from_cache():
    game.warmup()  # compiled (or loaded) here, so the child must load everything from the cache
    code = (
        "from mjenv import game as G\n"
        "import numpy as np\n"
        "hits = [G._step_shared.cfunc.cache_hits, G._reset_shared.cfunc.cache_hits]\n"
        "st = G.new_state(); G.reset(st, 7)\n"
        "a = int(np.flatnonzero(G.legal_mask(st, int(st[G.CUR])))[0])\n"
        "G.step(st, a)\n"
        "print(*hits, sum(G.step_kernel.stats.cache_misses.values()), sum(G.step_kernel.stats.cache_hits.values()))\n"
    )
    env = dict(os.environ, MJENV_QUIET="1")
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr
    step_hits, reset_hits, wrapper_misses, wrapper_hits = map(int, out.stdout.split())
    assert (step_hits, reset_hits) == (1, 1), out.stdout  # the shared kernels came from the cache
    assert (wrapper_misses, wrapper_hits) == (0, 1), out.stdout  # and their caller, which holds the symbol
