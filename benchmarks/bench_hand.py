"""Benchmark: win checks, waits and shanten per second, batch vs per-call vs PyMahjongGB, side by side.

    PYTHONPATH=. python benchmarks/bench_hand.py [--quick] [--json out.json]

Hands are uniform random deals from the 136-tile wall (13 tiles for shanten/waits, 14 for win checks), seeded.
Each rate is the median over ``--repeats`` runs after a warm-up; numba compile time (fresh cache directory, in
a subprocess) and ``import mjenv`` time (cache warm) are measured separately.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _deal(rng: np.random.Generator, n_hands: int, n_tiles: int) -> np.ndarray:
    wall = np.repeat(np.arange(34), 4)
    idx = np.argsort(rng.random((n_hands, 136)), axis=1)[:, :n_tiles]
    c = np.zeros((n_hands, 34), np.int8)
    np.add.at(c, (np.repeat(np.arange(n_hands), n_tiles), wall[idx].ravel()), 1)
    return c


CLOCK = time.perf_counter  # --cpu-time switches to time.thread_time (CPU time of this thread)


def _rate(fn, n_items: int, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = CLOCK()
        fn()
        times.append(CLOCK() - t)
    return n_items / statistics.median(times)


def _subprocess_time(code: str, env: dict) -> float:
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT, check=True
    )
    return float(out.stdout.strip().splitlines()[-1])


def compile_times() -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with tempfile.TemporaryDirectory() as d:
        env["NUMBA_CACHE_DIR"] = d
        code = (
            "import time; t=time.perf_counter(); import mjenv.hand as H; H.load_tables(); H.warmup(); "
            "import mjenv.compat.mahjonggb as C; C.MahjongShanten((), ('W1',)); C.RegularShanten(('W1',)); "
            "print(time.perf_counter()-t)"
        )
        cold = _subprocess_time(code, env)
        warm = _subprocess_time(code, env)
        imp = _subprocess_time(
            "import time; t=time.perf_counter(); import mjenv; print(time.perf_counter()-t)", env
        )
        imp_hand = _subprocess_time(
            "import time; t=time.perf_counter(); import mjenv.hand, mjenv.compat.mahjonggb; print(time.perf_counter()-t)",
            env,
        )
    return {
        "compile_s": cold,
        "warmup_cached_s": warm,
        "import_mjenv_s": imp,
        "import_hand_compat_s": imp_hand,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description="mjenv hand benchmark")
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--hands", type=int, default=200_000, help="hands for batch runs")
    ap.add_argument("--calls", type=int, default=20_000, help="hands for per-call runs")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", type=str, default="", help="also write the results to this JSON file")
    ap.add_argument("--no-reference", action="store_true", help="skip PyMahjongGB (machines without it)")
    ap.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the thread's CPU time instead of wall time (fairer on a machine shared with other jobs)",
    )
    args = ap.parse_args()
    if args.quick:
        args.hands, args.calls, args.repeats = 20_000, 2_000, 3
    if args.cpu_time:
        global CLOCK
        CLOCK = time.thread_time

    import numba

    if args.no_reference:
        MahjongGB = None  # noqa: N806
    else:
        import MahjongGB

    from mjenv import hand as H
    from mjenv.compat import mahjonggb as C
    from mjenv.tiles import BOTZONE_CODES

    ct = compile_times()
    H.warmup()
    rng = np.random.default_rng(0)
    c13 = _deal(rng, args.hands, 13)
    c14 = _deal(rng, args.hands, 14)
    codes = np.array(BOTZONE_CODES[:34])
    t13 = [tuple(str(x) for x in codes[np.repeat(np.arange(34), r)]) for r in c13[: args.calls]]
    t14 = [tuple(str(x) for x in codes[np.repeat(np.arange(34), r)]) for r in c14[: args.calls]]
    k, r = args.calls, args.repeats

    def ref(fn):
        return None if MahjongGB is None else _rate(fn, k, r)

    def mgb_win():
        for h in t14:
            try:
                MahjongGB.MahjongFanCalculator((), h[:-1], h[-1], 0, False, False, False, False, 0, 0)
            except TypeError:
                pass

    def mgb_waits():
        for h in t13:  # the per-shape functions' useful tiles at shanten 0 are the waits
            MahjongGB.RegularShanten(h)
            MahjongGB.SevenPairsShanten(h)
            MahjongGB.ThirteenOrphansShanten(h)
            MahjongGB.HonorsAndKnittedTilesShanten(h)
            MahjongGB.KnittedStraightShanten(h)

    def loop(fn, hands):
        def run():
            for h in hands:
                fn(h)

        return run

    rows = {
        "win checks/s": {
            "batch": _rate(lambda: H.batch_is_win(c14), args.hands, r),
            "per-call": _rate(loop(H.is_win, list(c14[:k])), k, r),
            "compat": None,
            "PyMahjongGB": ref(mgb_win),
            "pmgb_what": "MahjongFanCalculator (raises when not a win)",
        },
        "waits/s": {
            "batch": _rate(lambda: H.batch_waits(c13), args.hands, r),
            "per-call": _rate(loop(H.waits, list(c13[:k])), k, r),
            "compat": None,
            "PyMahjongGB": ref(mgb_waits),
            "pmgb_what": "5 per-shape calls (useful tiles at shanten 0)",
        },
        "shanten/s": {
            "batch": _rate(lambda: H.batch_shanten(c13), args.hands, r),
            "per-call": _rate(loop(lambda h: H.shanten(h), list(c13[:k])), k, r),
            "compat": _rate(loop(lambda h: C.MahjongShanten((), h), t13), k, r),
            "PyMahjongGB": ref(loop(lambda h: MahjongGB.MahjongShanten((), h), t13)),
            "pmgb_what": "MahjongShanten",
        },
        "regular shanten+useful/s": {
            "batch": _rate(lambda: H.batch_useful(c13, H.REGULAR, physical=False), args.hands, r),
            "per-call": None,
            "compat": _rate(loop(C.RegularShanten, t13), k, r),
            "PyMahjongGB": ref(loop(lambda h: MahjongGB.RegularShanten(h), t13)),
            "pmgb_what": "RegularShanten",
        },
    }

    def fmt(x):
        return f"{x / 1e6:10.3f}M" if x is not None else f"{'-':>11s}"

    def ratio(a, b):
        return f"{a / b:9.1f}x" if a is not None and b else f"{'-':>10s}"

    print(
        f"mjenv hand benchmark  (numba {numba.__version__}, numpy {np.__version__}, {platform.processor() or platform.machine()})"
    )
    clock = "thread CPU time" if args.cpu_time else "wall time"
    print(
        f"batch hands {args.hands}, per-call hands {args.calls}, median of {args.repeats} ({clock}), one thread"
    )
    print(
        f"{'':26s}{'batch':>11s} {'per-call':>11s} {'compat':>11s} {'PyMahjongGB':>11s} {'batch/PMGB':>10s} {'compat/PMGB':>11s} {'call/PMGB':>10s}"
    )
    for name, v in rows.items():
        print(
            f"{name:26s}{fmt(v['batch'])} {fmt(v['per-call'])} {fmt(v['compat'])} {fmt(v['PyMahjongGB'])} "
            f"{ratio(v['batch'], v['PyMahjongGB'])} {ratio(v['compat'], v['PyMahjongGB']):>11s} "
            f"{ratio(v['per-call'], v['PyMahjongGB'])}"
        )
    print("PyMahjongGB column: " + "; ".join(f"{n}: {v['pmgb_what']}" for n, v in rows.items()))
    print(
        f"numba compile (fresh NUMBA_CACHE_DIR): {ct['compile_s']:.2f} s; warm-up from cache: "
        f"{ct['warmup_cached_s']:.2f} s; import mjenv: {ct['import_mjenv_s']:.3f} s; "
        f"import mjenv.hand + compat: {ct['import_hand_compat_s']:.3f} s"
    )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"rows": rows, **ct, "numba": numba.__version__, "numpy": np.__version__}, indent=2)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
