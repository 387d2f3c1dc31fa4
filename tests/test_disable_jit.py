"""``NUMBA_DISABLE_JIT=1`` (numba's switch for debugging kernels as plain Python) runs the engine: the same
observations and masks as the compiled kernels for the first decisions of a seeded hand."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import hashlib, warnings
import numpy as np
import mjenv
warnings.simplefilter("ignore", RuntimeWarning)  # the plain-Python RNG wraps uint64 (as the kernels do)
e = mjenv.env()
e.reset(seed=3)
h = hashlib.blake2b(digest_size=8)
for _ in range(12):
    ob, r, term, trunc, info = e.last()
    if term or trunc:
        break
    h.update(np.ascontiguousarray(ob["observation"]).tobytes())
    h.update(np.ascontiguousarray(ob["action_mask"]).tobytes())
    e.step(int(np.flatnonzero(ob["action_mask"])[-1]))
print(h.hexdigest())
"""


def _digest(disable_jit: bool) -> str:
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0", PYTHONPATH=str(_ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _SCRIPT], env=env, capture_output=True, text=True, timeout=600, cwd=_ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def test_disable_jit_plays_the_same_decisions_as_the_kernels():
    plain = _digest(True)
    assert len(plain) == 16
    assert plain == _digest(False)
