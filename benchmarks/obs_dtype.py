"""VectorEnv decisions/s with uint8 against float32 observations (random policy).

``PYTHONPATH=. python -m benchmarks.obs_dtype [--tables 1024] [--threads 2] [--steps 300] [--repeats 7]
[--json PATH]``: the two envs run interleaved, repeat by repeat (a shared machine's load hits both alike);
prints the median decisions/s of each (wall time, and per CPU-second of the process: with ``--threads 2`` the
ideal is 2 CPU-seconds per second) and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

from mjenv.policy import RandomPolicy
from mjenv.vector import VectorEnv


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=1024)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--json", default=None)
    a = ap.parse_args(argv)
    envs = {dt: VectorEnv(a.tables, seed=0, threads=a.threads, obs_dtype=dt) for dt in ("float32", "uint8")}
    pols = {dt: RandomPolicy(0, env=e) for dt, e in envs.items()}
    for dt, e in envs.items():
        obs, masks, seats = e.reset()
        for _ in range(20):
            e.step(pols[dt](obs, masks, seats))
    rates: dict[str, list[float]] = {dt: [] for dt in envs}
    cpu_rates: dict[str, list[float]] = {dt: [] for dt in envs}
    for _ in range(a.repeats):
        for dt, e in envs.items():
            p = pols[dt]
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(a.steps):
                e.step(p(e.obs, e.masks, e.seats))
            rates[dt].append(a.tables * a.steps / (time.perf_counter() - t0))
            cpu_rates[dt].append(a.tables * a.steps / (time.process_time() - c0))
    out = {
        dt: {"median": statistics.median(r), "all": r, "per_cpu_s_median": statistics.median(cpu_rates[dt])}
        for dt, r in rates.items()
    }
    out["ratio_uint8_over_float32"] = out["uint8"]["median"] / out["float32"]["median"]
    out["settings"] = vars(a)
    out["bytes_per_obs"] = {dt: int(e.obs.itemsize * e.obs.shape[1]) for dt, e in envs.items()}
    for dt in envs:
        print(f"{dt:8s} {out[dt]['median'] / 1e6:6.2f} M decisions/s (median of {a.repeats}; "
              f"{out[dt]['per_cpu_s_median'] / 1e6:.2f} M per CPU-second; "
              f"{out['bytes_per_obs'][dt]} bytes per observation)")  # fmt: skip
    print(f"ratio uint8/float32: {out['ratio_uint8_over_float32']:.2f}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
