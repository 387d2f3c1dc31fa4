"""Interleaved A/B of the PPO training throughput of two checkouts: ``python -m lab.probes.train_ab A B``.

Runs ``python -m benchmarks.train --seconds S --json ...`` alternately in checkout ``A`` and checkout ``B``
(``PYTHONPATH`` set to each; ``A`` first in odd repeats, ``B`` first in even ones), ``--repeats`` times each, and
prints per side the median (and range) of decisions/s (wall), decisions per CPU-second of the process, updates
measured and the split of the wall time, then the ratios B / A of the medians, with the load average around
every run. On a machine shared with other jobs the wall-time rates are low and noisy; interleaving, medians and
the per-CPU-second figures make the comparison fair, the absolute figures are not the quiet-machine ones.
Options after ``--`` go to ``benchmarks.train`` (e.g. ``-- --threads 1 --torch-threads 1``).

Example: ``python -m lab.probes.train_ab /work/main . --seconds 20 --repeats 3 --out runs/ab.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tqdm import tqdm

_SPLIT = ("env_s", "inference_s", "gae_s", "update_s", "other_s")


def _run(repo: Path, seconds: float, extra: list[str], nice: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [
            sys.executable,
            "-m",
            "benchmarks.train",
            "--seconds",
            str(seconds),
            "--json",
            str(out),
            *extra,
        ]
        if nice:
            cmd = ["nice", "-n", str(nice), *cmd]
        env = {**os.environ, "PYTHONPATH": str(repo)}
        load0 = os.getloadavg()[0]
        proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"benchmarks.train failed in {repo}:\n{proc.stdout}\n{proc.stderr}")
        res = json.loads(out.read_text())
    res["load_before"], res["load_after"] = load0, os.getloadavg()[0]
    return res


def _summary(runs: list[dict]) -> dict:
    def med(key: str) -> float:
        return statistics.median(r[key] for r in runs)

    return {
        "decisions_per_s": med("decisions_per_s"),
        "decisions_per_s_range": [
            min(r["decisions_per_s"] for r in runs),
            max(r["decisions_per_s"] for r in runs),
        ],
        "decisions_per_cpu_s": med("decisions_per_cpu_s"),
        "decisions_per_cpu_s_range": [
            min(r["decisions_per_cpu_s"] for r in runs),
            max(r["decisions_per_cpu_s"] for r in runs),
        ],
        "updates": [r["updates"] for r in runs],
        "split_share": {k: statistics.median(r["split_share"][k] for r in runs) for k in _SPLIT},
        "load": [round(r["load_before"], 2) for r in runs] + [round(runs[-1]["load_after"], 2)],
    }


def main(argv: list[str] | None = None) -> dict:
    argv = sys.argv[1:] if argv is None else argv
    extra: list[str] = []
    if "--" in argv:
        i = argv.index("--")
        argv, extra = argv[:i], argv[i + 1 :]
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", help="checkout A (the reference, e.g. /work/main)")
    ap.add_argument("b", help="checkout B (the candidate)")
    ap.add_argument(
        "--seconds", type=float, default=20.0, help="seconds measured per run (after one warm-up update)"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--nice", type=int, default=0, help="run the benchmarks under nice -n NICE (0: not)")
    ap.add_argument("--out", default=None, help="write every run and the summary as JSON")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if not args.seconds > 0:
        ap.error("--seconds must be > 0")
    repos = {"A": Path(args.a).resolve(), "B": Path(args.b).resolve()}
    for name, repo in repos.items():
        if not (repo / "benchmarks" / "train.py").is_file():
            ap.error(f"checkout {name} ({repo}) has no benchmarks/train.py")
    runs: dict[str, list[dict]] = {"A": [], "B": []}
    t0 = time.time()
    with tqdm(total=2 * args.repeats, desc="A/B runs", unit="run") as bar:
        for r in range(args.repeats):
            for side in ("A", "B") if r % 2 == 0 else ("B", "A"):
                res = _run(repos[side], args.seconds, extra, args.nice)
                runs[side].append(res)
                bar.set_postfix(last=f"{side} {res['decisions_per_s']:,.0f}/s")
                bar.update(1)
    summ = {side: _summary(rs) for side, rs in runs.items()}
    ratio = {
        k: summ["B"][k] / summ["A"][k] if summ["A"][k] else float("nan")
        for k in ("decisions_per_s", "decisions_per_cpu_s")
    }
    print(f"A = {repos['A']}\nB = {repos['B']}\nbenchmarks.train --seconds {args.seconds:g} {' '.join(extra)}; "
          f"{args.repeats} interleaved repeats each, {time.time() - t0:.0f} s")  # fmt: skip
    print(
        f"{'':3s} {'decisions/s (median, range)':>34s} {'per CPU-s (median, range)':>32s}  split env/inf/gae/upd/other"
    )
    for side in ("A", "B"):
        s = summ[side]
        sp = "/".join(f"{100 * s['split_share'][k]:.0f}" for k in _SPLIT)
        print(f"{side:3s} {s['decisions_per_s']:10,.0f} ({s['decisions_per_s_range'][0]:,.0f}-"
              f"{s['decisions_per_s_range'][1]:,.0f}) {s['decisions_per_cpu_s']:14,.0f} "
              f"({s['decisions_per_cpu_s_range'][0]:,.0f}-{s['decisions_per_cpu_s_range'][1]:,.0f})  {sp}%  "
              f"updates {s['updates']}, load {s['load']}")  # fmt: skip
    print(
        f"B / A: decisions/s x{ratio['decisions_per_s']:.3f}, per CPU-second x{ratio['decisions_per_cpu_s']:.3f}"
    )
    out = {"a": str(repos["A"]), "b": str(repos["B"]), "extra": extra, "seconds": args.seconds, "runs": runs,
           "summary": summ, "ratio_b_over_a": ratio}  # fmt: skip
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
