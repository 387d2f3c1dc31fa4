"""Runtime A/B of the kernels link-only compiling touches: per-CPU-second rates and one digest of their outputs.

Run it in each checkout (interleaved, the same minutes), each with its own warm cache::

    NUMBA_CACHE_DIR=/tmp/cw PYTHONPATH=. python lab/probes/ab_link_only.py

Prints one JSON line: hands per CPU-second of ``hand.batch_is_win`` / ``batch_shanten`` / ``batch_waits`` /
``batch_useful``, scoring cases per CPU-second of ``fans.score_batch``, VectorEnv masks-only decisions per
CPU-second (and per second) at 1 and 2 threads (median of 5), and ``digest``, which must be equal for two
versions whose behaviour is the same. See docs/performance-log.md ("Cold start", seventh round).
"""

import hashlib
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# this checkout's benchmarks/ (the script's parent folder), also when PYTHONPATH points at another checkout's
# mjenv
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_fans import score_batch_inputs
from bench_hand import _deal

import mjenv
from mjenv import fans, hand
from mjenv.policy import RandomPolicy
from mjenv.testing.fan_gen import random_case
from mjenv.vector import VectorEnv

mjenv.warmup(progress=False)


rng = np.random.default_rng(0)
c13, c14 = _deal(rng, 50000, 13), _deal(rng, 50000, 14)
h = hashlib.blake2b(digest_size=8)
conc, melds, cols = score_batch_inputs([random_case(rng) for _ in range(8000)])


def cpu_rate(fn, n, reps):
    out = []
    for _ in range(reps):
        t = time.process_time()
        r = fn()
        out.append(n / (time.process_time() - t))
    return statistics.median(out), r


res = {}
for name, fn, n in (
    ("batch_is_win", lambda: hand.batch_is_win(c14), len(c14)),
    ("batch_shanten", lambda: hand.batch_shanten(c13), len(c13)),
    ("batch_waits", lambda: hand.batch_waits(c13), len(c13)),
    ("batch_useful", lambda: hand.batch_useful(c13, hand.REGULAR), len(c13)),
    ("score_batch", lambda: fans.score_batch(conc, melds, *cols), len(conc)),
):
    rate, r = cpu_rate(fn, n, 5)
    res[name] = rate
    for a in r if isinstance(r, tuple) else (r,):
        h.update(np.ascontiguousarray(a).tobytes())

for threads in (1, 2):
    env = VectorEnv(1024, seed=1, observations=False, threads=threads)
    pol = RandomPolicy(seed=2)
    env.reset()
    steps = 150
    rates, walls = [], []
    for _rep in range(5):
        t, w = time.process_time(), time.perf_counter()
        dec = 0
        for _ in range(steps):
            a = pol(None, env.masks, env.seats)
            env.step(a)
            dec += len(a)
        rates.append(dec / (time.process_time() - t))
        walls.append(dec / (time.perf_counter() - w))
    res[f"vector masks t={threads} per CPU-s"] = statistics.median(rates)
    res[f"vector masks t={threads} wall"] = statistics.median(walls)
    h.update(env.states.tobytes())
res["digest"] = h.hexdigest()
print(json.dumps(res))
