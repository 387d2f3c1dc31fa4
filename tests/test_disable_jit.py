"""``NUMBA_DISABLE_JIT=1`` (numba's switch for debugging kernels as plain Python) runs the engine: the same
observations and masks as the compiled kernels for the first decisions of a seeded hand; and the baseline
agents' kernels (the rule agent's actions, the nn agent's features) give what the compiled ones give."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

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


# the rule agent's actions (uint8 rows, widened, and float32 rows) and the nn agent's features (uint8 rows),
# digested; run in this process (compiled) and under NUMBA_DISABLE_JIT=1 in a subprocess
_AGENTS_SCRIPT = """
import hashlib, sys, warnings
import numpy as np
from agents import features as F, rule as R

def digest(rows):
    h = hashlib.blake2b(digest_size=8)
    for name in ("u8", "f32"):
        obs, masks = rows[name + "_obs"], rows[name + "_masks"]
        h.update(R.RulePolicy(len(obs))(obs, masks).tobytes())
        if name == "u8":
            for a in F.nn_features(obs, masks):
                h.update(a.tobytes())
    return h.hexdigest()

if __name__ == "__main__":
    warnings.simplefilter("ignore", RuntimeWarning)  # a popcount's multiply wraps int64 (as the kernels do)
    print(digest(np.load(sys.argv[1])))
"""


def _rule_rows(tables: int, steps: int, seed: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks of a seeded VectorEnv played by the rule agent (compiled)."""
    from mjenv.policy import load_policy
    from mjenv.vector import VectorEnv

    env = VectorEnv(tables, seed=seed, threads=1, obs_dtype=dtype)
    policy = load_policy("agents.rule:make", tables, 0)
    obs, masks, seats = env.reset()
    rows, mrows = [], []
    for _ in range(steps):
        rows.append(obs.copy())
        mrows.append(masks.copy())
        obs, masks, seats, _, _ = env.step(policy(obs, masks, seats))
    return np.concatenate(rows), np.concatenate(mrows)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compares against the compiled kernels")
def test_disable_jit_agents_decide_and_featurize_as_the_kernels(tmp_path):
    """The agents' kernels as plain Python on 480 rows of rule-agent play (recorded with the compiled engine,
    so that only the agents are compared): their small-integer arithmetic must promote as numba's does (int8
    counts in a base-5 key and in a shifted sort key wrapped as numpy scalars; most rows differed)."""
    u8 = _rule_rows(8, 40, 5, np.uint8)
    f32 = _rule_rows(4, 40, 6, np.float32)
    rows = {"u8_obs": u8[0], "u8_masks": u8[1], "f32_obs": f32[0], "f32_masks": f32[1]}
    path = tmp_path / "rows.npz"
    np.savez(path, **rows)
    ns: dict = {"__name__": "agents_digest"}  # not __main__: defines digest() only
    exec(_AGENTS_SCRIPT, ns)
    compiled = ns["digest"](rows)
    env = dict(os.environ, NUMBA_DISABLE_JIT="1", PYTHONPATH=str(_ROOT))
    out = subprocess.run(
        [sys.executable, "-c", _AGENTS_SCRIPT, str(path)],
        env=env, capture_output=True, text=True, timeout=600, cwd=_ROOT,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().splitlines()[-1] == compiled
