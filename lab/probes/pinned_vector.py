"""The vector env entries alone, for a run pinned to a few idle cores (``taskset``), written as JSON.

Rules
-----
Not a rules module. Same harness, units and entries as :mod:`benchmarks.ours` (batch sizes 64, 1024, 4096;
1 and 2 threads; masks-only and with observations; 3 repeats of 2 s).

Specification in mjenv
----------------------
``taskset -c 0,1 env PYTHONPATH=. python lab/probes/pinned_vector.py [OUT_DIR]`` prints one line per entry and
writes ``OUT_DIR/devbench.json`` (default ``$OUT`` or ``/tmp``). Used for the idle 2-core figures in the README
(``benchmarks/results/2026-11-30-device-2cores.json``), since the development machine was shared.
"""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from benchmarks import ours


def main() -> int:
    out = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("OUT", "/tmp")
    rows = []
    for obs in (False, True):
        for r in ours.measure_vector(2.0, 3, observations=obs, batches=(64, 1024, 4096), threads=(1, 2)):
            rows.append(r)
            print(
                f"{r['name']}: {r['decisions_per_s']:,.0f}/s wall, {r['decisions_per_cpu_s']:,.0f}/CPU-s, "
                f"cpu/wall {r['cpu_per_wall']:.2f}",
                flush=True,
            )
    with open(os.path.join(out, "devbench.json"), "w", encoding="utf-8") as f:
        json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
