"""mjenv's own benchmark entries: the vector env (batch sizes x threads, masks-only and with observations) and
the PettingZoo AEC env.

Rules
-----
Not a rules module. Units as in :mod:`benchmarks.harness`: for the vector env one batched ``step`` of ``N``
tables is ``N`` decisions and ``N`` steps (one action chosen at each table; claim-window passes included); a
hand is one deal played to its end (counted when a table's ``terminated`` is set; the auto-reset is included).

Specification in mjenv
----------------------
Every vector entry runs a random legal policy applied in numpy over the whole batch
(:func:`mjenv.vector.random_legal_actions`, its cost included), after a warm-up; the Numba compile (or cache
load) is timed apart (``compile_s``). ``python -m benchmarks.suite --only VectorEnv``
runs some of them.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.harness import Counts, measure, result, until

#: batch sizes of the vector entries
BATCHES = (1, 64, 256, 1024, 4096)
#: thread counts of the vector entries (the machine has 2 cores)
THREADS = (1, 2)

VECTOR_NOTES = (
    "mjenv.VectorEnv: N tables in one int32[N, STATE_SIZE] array stepped by one @njit(parallel=True) kernel "
    "(prange over tables) calling the engine's per-table step/legal-mask/observe kernels, auto-reset inside the "
    "kernel; random legal policy in numpy over the batch (one uniform per table scaled by the env's n_legal, picked from the env's legal-action lists), its "
    "cost included. decisions = steps = tables x batched steps."
)
AEC_NOTES = (
    "mjenv.pettingzoo_env.env() (PettingZoo AEC, OrderEnforcingWrapper) played with PettingZoo's documented "
    "agent_iter/last/step loop and a random legal action (benchmarks.harness.aec_random_play); only seats with a "
    "legal claim are asked after a discard."
)


def _mjenv_version() -> str:
    import mjenv

    return mjenv.__version__


def vector_work(batch: int, threads: int, observations: bool, seed: int = 0):
    """A ``work(budget_s) -> Counts`` that steps a :class:`mjenv.vector.VectorEnv` with a random legal policy."""
    from mjenv.vector import VectorEnv, random_legal_actions

    env = VectorEnv(batch, seed=seed, observations=observations, threads=threads)
    rng = np.random.default_rng(seed)
    state = {"masks": env.reset()[1]}

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        masks = state["masks"]
        steps = hands = forced = 0
        n_legal = env.n_legal
        while not done():
            forced += int(np.count_nonzero(n_legal == 1))
            acts = random_legal_actions(masks, rng, n_legal, env.legal_actions)
            _, masks, _, _, terminated = env.step(acts)
            hands += int(np.count_nonzero(terminated))
            steps += 1
        state["masks"] = masks
        return Counts(
            decisions=steps * batch, steps=steps * batch, hands=hands, extra={"forced_decisions": forced}
        )

    return work


def measure_vector(
    seconds: float = 2.0,
    repeats: int = 5,
    *,
    observations: bool = False,
    batches: tuple[int, ...] = BATCHES,
    threads: tuple[int, ...] = THREADS,
) -> list[dict]:
    """One result per (threads, batch) of the vector env in one mode."""
    from mjenv.vector import bytes_per_table, warmup

    compile_s = warmup(observations)
    mode = "obs" if observations else "masks-only"
    rows = []
    for th in threads:
        for b in batches:
            timing = measure(vector_work(b, th, observations), seconds=seconds, repeats=repeats)
            rows.append(
                result(
                    f"VectorEnv {mode} b={b} t={th}",
                    _mjenv_version(),
                    timing,
                    VECTOR_NOTES,
                    batch_size=b,
                    threads=th,
                    series=f"VectorEnv {mode}, {th} thread{'s' if th > 1 else ''}",
                    compile_s=compile_s,
                    bytes_per_table=bytes_per_table(observations),
                )
            )
    return rows


def measure_vector_masks(seconds: float = 2.0, repeats: int = 5) -> list[dict]:
    return measure_vector(seconds, repeats, observations=False)


def measure_vector_obs(seconds: float = 2.0, repeats: int = 5) -> list[dict]:
    return measure_vector(seconds, repeats, observations=True)


def measure_aec(seconds: float = 2.0, repeats: int = 5, seed: int = 0) -> dict:
    from benchmarks.harness import aec_random_play
    from mjenv.pettingzoo_env import env as make_env

    t0 = time.perf_counter()
    e = make_env()
    e.reset(seed=seed)
    compile_s = time.perf_counter() - t0
    timing = measure(aec_random_play(e, seed), seconds=seconds, repeats=repeats)
    return result("mjenv AEC env (PettingZoo)", _mjenv_version(), timing, AEC_NOTES, compile_s=compile_s)


ALL = (
    ("VectorEnv masks-only", measure_vector_masks),
    ("VectorEnv obs", measure_vector_obs),
    ("mjenv AEC env", measure_aec),
)
