"""Benchmark the fan scorer: our batch kernel, our PyMahjongGB-compatible per-call API, PyMahjongGB itself.

Usage: ``PYTHONPATH=. python benchmarks/bench_fans.py [--hands 20000] [--quick] [--json out.json]``

All three run on the same mixed corpus from :func:`mjenv.testing.fan_gen.random_case` (wins of every shape,
near misses, malformed inputs; the batch scorer gets the inputs that parse). Compile time is reported apart.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numba
import numpy as np


def score_batch_inputs(cases):
    """The arrays of ``fans.score_batch`` for the PyMahjongGB-style ``cases`` (keyword dicts of
    :func:`mjenv.testing.fan_gen.random_case`) that the compat layer accepts: ``(concealed, melds, cols)``, where
    ``cols`` are the win tile, the meld count, the flags (self-drawn 1, 4th tile 2, about kong 4, wall last 8), the
    seat and prevalent winds and the flower count, one int64 array each."""
    from mjenv.compat.mahjonggb import _arrays

    rows = []
    for kw in cases:
        try:
            rows.append((*_arrays(kw["pack"], kw["hand"], kw["winTile"]), kw))
        except TypeError:
            pass
    conc = np.stack([r[0] for r in rows])
    melds = np.stack([r[1] for r in rows])
    cols = [
        np.array(x, dtype=np.int64)
        for x in zip(
            *[
                (
                    win_tile,
                    n_melds,
                    kw["isSelfDrawn"] | 2 * kw["is4thTile"] | 4 * kw["isAboutKong"] | 8 * kw["isWallLast"],
                    kw["seatWind"],
                    kw["prevalentWind"],
                    kw["flowerCount"],
                )
                for _c, _m, win_tile, n_melds, kw in rows
            ]
        )
    ]
    return conc, melds, cols


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--quick", action="store_true", help="2000 hands, one repeat (smoke test)")
    ap.add_argument("--json", default="", help="write the figures to this JSON file")
    args = ap.parse_args(argv)
    n = 2000 if args.quick else args.hands
    repeats = 1 if args.quick else 5

    from mjenv import fans
    from mjenv.compat import mahjonggb as ours
    from mjenv.testing.fan_gen import random_case

    t0 = time.perf_counter()
    fans.warmup()
    ours.MahjongFanCalculator(
        pack=(),
        hand=("W1", "W1", "W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W9", "W9", "W9"),
        winTile="W5",
        flowerCount=0,
        isSelfDrawn=False,
        is4thTile=False,
        isAboutKong=False,
        isWallLast=False,
        seatWind=0,
        prevalentWind=0,
    )
    compile_s = time.perf_counter() - t0

    rng = np.random.default_rng(args.seed)
    cases = [random_case(rng) for _ in range(n)]
    conc, melds, cols = score_batch_inputs(cases)
    totals = np.zeros(len(conc), dtype=np.int32)
    counts = np.zeros((len(conc), fans.NUM_FANS), dtype=np.int16)
    fans._score_batch_kernel(conc[:10], melds[:10], *[c[:10] for c in cols], totals[:10], counts[:10])

    def best_of(fn):
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        return best

    batch_s = best_of(lambda: fans._score_batch_kernel(conc, melds, *cols, totals, counts))
    c0 = time.process_time()  # CPU seconds: the one-core figure even when the machine is shared
    for _ in range(repeats):
        fans._score_batch_kernel(conc, melds, *cols, totals, counts)
    batch_cpu_s = (time.process_time() - c0) / repeats

    def per_call(fn):
        def run():
            for kw in cases:
                try:
                    fn(**kw)
                except TypeError:
                    pass

        return run

    ours_s = best_of(per_call(ours.MahjongFanCalculator))
    res = {
        "hands_batch": len(conc),
        "calls": n,
        "compile_or_cache_load_s": round(compile_s, 2),
        "batch_hands_per_s": round(len(conc) / batch_s),
        "batch_hands_per_cpu_s": round(len(conc) / batch_cpu_s),
        "compat_calls_per_s": round(n / ours_s),
        "python": platform.python_version(),
        "numba": numba.__version__,
        "numpy": np.__version__,
        "cpu": platform.processor() or platform.machine(),
    }
    try:
        import MahjongGB

        ref_s = best_of(per_call(MahjongGB.MahjongFanCalculator))
        res["pymahjonggb_calls_per_s"] = round(n / ref_s)
        res["compat_vs_pymahjonggb_time_ratio"] = round(ours_s / ref_s, 2)
        # the same ratio measured call by call, interleaved (robust when the machine is shared)
        t_ours = t_ref = 0
        clock = time.perf_counter_ns
        for kw in cases:
            for fn, is_ref in ((MahjongGB.MahjongFanCalculator, True), (ours.MahjongFanCalculator, False)):
                t = clock()
                try:
                    fn(**kw)
                except TypeError:
                    pass
                if is_ref:
                    t_ref += clock() - t
                else:
                    t_ours += clock() - t
        res["compat_vs_pymahjonggb_interleaved_ratio"] = round(t_ours / t_ref, 2)
        res["batch_vs_pymahjonggb_speedup"] = round((len(conc) / batch_s) / (n / ref_s), 1)
    except ImportError:
        res["pymahjonggb_calls_per_s"] = None
    for k, v in res.items():
        print(f"{k:36s} {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
