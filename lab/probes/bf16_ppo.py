"""PPO end to end with the planes network under bfloat16 autocast: ``PYTHONPATH=. python -m lab.probes.bf16_ppo``.

Runs ``benchmarks.train`` (the real loop of :mod:`train.ppo`, 2 + 2 threads, the default settings, 3 epochs)
from ``--init-from`` (default the shipped architecture's ``avg109-2026-12-06``) ``--rounds`` times for each of
``float32`` and ``bfloat16``, alternating, each round a fresh process, and prints the decisions/s of each round,
the medians and the split (inference, update) per update. ``bfloat16`` wraps ``PlanesNet.forward_features`` (the
network's every forward: rollout inference, pool opponents, bootstrap values, the update's minibatches) in
``torch.autocast("cpu", dtype=torch.bfloat16)`` and returns float32 logits and values (the losses, the sampling
and the stored log-probabilities in float32); the weights and Adam stay float32. Not built into ``train.ppo``:
the question was what it buys on a 2-core CPU with AVX512-BF16 (lab/2026-12-07-strength.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import json, sys, torch
import agents.nn as ann
import benchmarks.train as bt
if sys.argv[1] == "bfloat16":
    plain = ann.PlanesNet.forward_features
    def forward_features(self, planes, scal, masks=None):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            logits, value = plain(self, planes, scal, masks)
        return logits.float(), value.float()
    ann.PlanesNet.forward_features = forward_features
out = bt.main(["--seconds", sys.argv[2], "--init-from", sys.argv[3], "--json", sys.argv[4]])
"""


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--init-from", default="agents/zoo/avg109-2026-12-06.safetensors")
    ap.add_argument("--json", default="/dev/null", help="write the rounds and medians here")
    args = ap.parse_args(argv)
    rows: dict[str, list[dict]] = {"float32": [], "bfloat16": []}
    tmp_dir = tempfile.TemporaryDirectory()
    tmp = str(Path(tmp_dir.name) / "round.json")
    for _ in range(args.rounds):
        for mode in rows:
            cmd = [sys.executable, "-c", CHILD, mode, str(args.seconds), args.init_from, tmp]
            subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            r = json.loads(Path(tmp).read_text())
            split = {k: r["split_s"][k] / r["updates"] for k in ("inference_s", "update_s")}
            rows[mode].append({"decisions_per_s": r["decisions_per_s"], **split})
            print(f"{mode:9s} {r['decisions_per_s']:9,.0f} decisions/s; per update: inference "
                  f"{split['inference_s']:.2f} s, update {split['update_s']:.2f} s", flush=True)  # fmt: skip
    tmp_dir.cleanup()
    med = {m: {k: statistics.median(r[k] for r in v) for k in v[0]} for m, v in rows.items()}
    ratio = med["bfloat16"]["decisions_per_s"] / med["float32"]["decisions_per_s"]
    print(f"medians: float32 {med['float32']['decisions_per_s']:,.0f}, bfloat16 "
          f"{med['bfloat16']['decisions_per_s']:,.0f} decisions/s ({ratio:.2f}x)")  # fmt: skip
    with open(args.json, "w") as f:
        json.dump({"rounds": rows, "medians": med, "ratio": ratio}, f, indent=1)
    return med


if __name__ == "__main__":
    main()
