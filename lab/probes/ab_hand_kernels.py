"""Interleaved A/B probe of the three batch hand kernels alone: thousands of hands per CPU-second (median of 9 calls
of 50,000 random hands each) of ``hand.batch_shanten`` / ``batch_waits`` / ``batch_is_win``, one JSON line.

Run it alternately in two checkouts, each with its own warm cache (docs/performance-log.md, "Cold start", eighth
round; ``ab_checkouts.sh`` does this)::

    S=$PWD/lab/probes/ab_hand_kernels.py
    for r in 1 2 3 4 5 6; do for d in /path/to/A /path/to/B; do (cd $d && PYTHONPATH=$d python $S); done; done
"""

import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

# this checkout's benchmarks/ (the script's parent folder), also when PYTHONPATH points at another checkout's
# mjenv
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_hand import _deal

import mjenv
from mjenv import hand

mjenv.warmup(progress=False)
rng = np.random.default_rng(0)
c13, c14 = _deal(rng, 50000, 13), _deal(rng, 50000, 14)
out = {}
for name, fn in (
    ("batch_shanten", lambda: hand.batch_shanten(c13)),
    ("batch_waits", lambda: hand.batch_waits(c13)),
    ("batch_is_win", lambda: hand.batch_is_win(c14)),
):
    rates = []
    for _ in range(9):
        t = time.process_time()
        fn()
        rates.append(50000 / (time.process_time() - t) / 1e3)
    out[name] = round(statistics.median(rates))
print(json.dumps(out))
