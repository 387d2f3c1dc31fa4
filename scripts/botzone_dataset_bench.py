"""Log corpus -> behaviour-cloning dataset speed (mjenv.botzone.dataset.build_dataset), rounds per second.

``PYTHONPATH=. python scripts/botzone_dataset_bench.py [--rounds 2000]``: (1) the text format (``data.txt``
grammar) of engine games played by a shanten-free eager policy and written with ``humanlog.export_text``, (2) the
Botzone judge corpus when present (not part of the repository: ``shared/botzone/judge_games_dev.jsonl.gz``
on the project's machines; ``docs/botzone.md``). Each is timed warm (kernels compiled by a first small call),
median of 3 runs, wall and process CPU time (the machine may be shared: rounds per CPU-second is the figure to
compare).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

import numpy as np

from mjenv import actions as A
from mjenv.botzone import dataset as D
from mjenv.botzone import humanlog as H

CORPUS = Path(__file__).resolve().parents[2] / "shared/botzone/judge_games_dev.jsonl.gz"


def engine_text(n: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)

    def pol(st, s, m):
        ids = np.flatnonzero(m)
        if m[A.WIN]:
            return A.WIN
        claims = ids[(ids >= A.CHOW) & (ids <= A.KONG)]
        if claims.size and rng.random() < 0.3:
            return int(rng.choice(claims))
        return (
            int(rng.choice(ids[ids != A.PASS]))
            if (ids != A.PASS).any() and ids.size > 1 and not m[A.PASS]
            else (A.PASS if m[A.PASS] else int(rng.choice(ids)))
        )

    rounds = []
    for g in range(n):
        w = np.repeat(np.arange(34), 4)
        rng.shuffle(w)
        rounds.append(H.record_round(w, g % 4, pol, str(g)))
    return H.export_text(rounds)


def bench(name: str, corpus, n_rounds: int) -> None:
    D.build_dataset(corpus[:3] if isinstance(corpus, list) else corpus[:3000], on_error="skip")
    walls, cpus = [], []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        d = D.build_dataset(corpus, on_error="skip")
        walls.append(time.perf_counter() - t)
        cpus.append(time.process_time() - c)
    w, c = statistics.median(walls), statistics.median(cpus)
    r = d["matches"].size
    print(f"{name}: {r} rounds ({n_rounds - r} skipped), {d['actions'].size} decisions "
          f"({int(d['outvoted'].sum())} outvoted claims): median {w:.3f} s wall, {c:.3f} s CPU -> "
          f"{r / w:,.0f} rounds/s, {r / c:,.0f} rounds/CPU-s")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2000, help="engine games in the text corpus")
    a = ap.parse_args()
    text = engine_text(a.rounds)
    bench("text (engine games)", text, a.rounds)
    if CORPUS.exists():
        recs = [json.loads(line) for line in gzip.open(CORPUS, "rt")]
        bench("Botzone JSON corpus", recs, len(recs))


if __name__ == "__main__":
    main()
