"""How far apart the threads of a Numba parallel region start and finish (why ``_step_batch`` shares its work).

``PYTHONPATH=. python -m lab.probes.region_skew [--work 20000] [--calls 300] [--json PATH]``

A ``prange`` over two iterations, each one thread's fixed work (``--work`` square roots, ~50-100 us), reads the
time-stamp counter (``llvm.readcyclecounter``) as each iteration starts and ends. With a fixed split of a batch
(two halves, numba's default schedule) the region lasts as long as the later thread's start plus its half, so
the start skew is time the early thread idles every step. Printed per gap between calls (the serial Python
part of a step: policy, checks): medians over ``--calls`` calls of when each iteration starts after the call,
the skew, and how long the call took in all. ``OMP_WAIT_POLICY`` is as ``mjenv.vector`` sets it (PASSIVE
unless set).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as mjenv.vector sets it

import numba  # noqa: E402
from llvmlite import ir  # noqa: E402
from numba import prange, types  # noqa: E402
from numba.core import cgutils  # noqa: E402
from numba.extending import intrinsic  # noqa: E402

from mjenv._jit import njit  # noqa: E402


@intrinsic
def _tsc(typingctx):
    """The CPU's time-stamp counter (``llvm.readcyclecounter``)."""

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(64), []), "llvm.readcyclecounter"
        )
        return builder.call(fn, [])

    return types.int64(), codegen


@njit(cache=False)
def _now():
    return _tsc()


@njit(parallel=True, cache=False)
def _region(out, work):
    for w in prange(2):
        out[w, 0] = _tsc()
        x = 0.0
        for k in range(work):
            x += np.sqrt(k + 1.0)
        out[w, 1] = _tsc()
        out[w, 2] = np.int64(x) & 1


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--work", type=int, default=20000, help="square roots per thread per call")
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    if a.work < 1 or a.calls < 1:
        ap.error("--work and --calls must be >= 1")
    if numba.config.NUMBA_NUM_THREADS < 2:
        raise SystemExit("needs two numba threads")
    numba.set_num_threads(2)
    out = np.zeros((2, 3), np.int64)
    _region(out, 10)
    t0, c0 = time.perf_counter(), _now()
    time.sleep(0.2)
    hz = (_now() - c0) / (time.perf_counter() - t0)
    us = 1e6 / hz
    res: dict = {"settings": vars(a), "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY"), "gaps": {}}
    for gap_ms in (0.0, 0.05, 0.5):
        rows = []
        for _ in range(a.calls):
            t = time.perf_counter()
            while time.perf_counter() - t < gap_ms / 1000:  # the serial part of a step
                pass
            s = _now()
            _region(out, a.work)
            e = _now()
            first, last = sorted((out[0, 0], out[1, 0]))
            rows.append(((first - s) * us, (last - s) * us, (last - first) * us, (e - s) * us))
        m = np.median(np.array(rows), axis=0)
        res["gaps"][str(gap_ms)] = dict(
            zip(("first_start_us", "second_start_us", "skew_us", "call_us"), m.tolist())
        )
        print(
            f"gap {gap_ms:4.2f} ms: first thread starts {m[0]:6.1f} us after the call, the second {m[1]:6.1f} us "
            f"(skew {m[2]:6.1f} us); call {m[3]:6.1f} us (medians of {a.calls})"
        )
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
