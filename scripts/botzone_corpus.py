"""Replay the Botzone judge corpus (``judge_games_dev.jsonl.gz``, outside the repository) through mjenv's judge.

Every judge output of every game is compared with :class:`mjenv.botzone.Judge` fed the same bot answers (one
incremental pass per game, which is what :func:`mjenv.botzone.judge.judge` does on each log prefix). At k = 0 the
wall is taken from the echoed ``initdata`` (the glibc shuffle is not rebuilt), so ``initdata`` and
``display.strlen`` of the INIT output are compared against what the first call was given.

    PYTHONPATH=. python scripts/botzone_corpus.py [--games N] [--every K] [--show 5] [--judge PATH]

``--judge PATH`` checks a judge binary instead (e.g. the real C++ judge built as docs/botzone.md says): it is
started once per judge output with ``{"log": log[:2k], "initdata": ...}`` on stdin, exactly as the corpus was
made (``init_input`` at k = 0, the echoed ``initdata`` after), and its whole output, ``initdata`` echo and
``strlen`` included, is compared with the corpus's.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import time
from pathlib import Path

from tqdm import tqdm

CORPUS = os.path.join(
    os.path.dirname(__file__), "..", "..", "..", "shared", "botzone", "judge_games_dev.jsonl.gz"
)
CORPUS = os.environ.get(
    "MJENV_BOTZONE_CORPUS",
    str(Path(__file__).resolve().parents[2] / "shared/botzone/judge_games_dev.jsonl.gz"),
)


def load(path: str = CORPUS) -> list[dict]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def expected_init(rec: dict) -> dict:
    """log[0]'s output as our judge gives it from the echoed initdata: strlen is the given walltiles' length."""
    out = json.loads(json.dumps(rec["log"][0]["output"]))
    given = rec["init_input"].get("walltiles") if isinstance(rec["init_input"], dict) else None
    out["display"]["strlen"] = len(rec["initdata"]["walltiles"])
    if given:
        assert out["display"]["strlen"] == len(given)
    return out


def replay(rec: dict):
    """Yield ``(k, ours, theirs)`` for every judge output of the game."""
    from mjenv.botzone import Judge

    j = Judge(rec["initdata"])
    yield 0, j.output, expected_init(rec)
    log = rec["log"]
    for k in range(1, len(log) // 2 + 1):
        if 2 * k >= len(log):
            break
        ours = j.feed(log[2 * k - 1])
        yield k, ours, log[2 * k]["output"]


def replay_binary(rec: dict, exe: str):
    """Yield ``(k, output, theirs)`` for every judge output of the game, ``output`` from the binary ``exe``."""
    log = rec["log"]
    for k in range((len(log) + 1) // 2):
        inp = {"log": log[: 2 * k], "initdata": rec["init_input"] if k == 0 else rec["initdata"]}
        out = subprocess.run([exe], input=json.dumps(inp).encode(), capture_output=True, check=True).stdout
        yield k, json.loads(out), log[2 * k]["output"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=0, help="first N games only (0: all)")
    ap.add_argument("--every", type=int, default=1, metavar="K", help="every K-th of those games (1: all)")
    ap.add_argument("--show", type=int, default=5, help="print this many mismatches")
    ap.add_argument("--judge", metavar="PATH", help="check this judge binary instead of mjenv's judge")
    args = ap.parse_args()
    if args.every < 1:
        ap.error(f"--every must be >= 1, got {args.every}")
    if args.judge is not None and not os.path.isfile(args.judge):
        ap.error(f"--judge: no such file: {args.judge}")
    recs = load()
    if args.games:
        recs = recs[: args.games]
    recs = recs[:: args.every]
    n = same = 0
    bad_games = []
    shown = 0
    t0 = time.perf_counter()
    for rec in tqdm(recs, desc="games"):
        ok = True
        try:
            for k, ours, theirs in replay(rec) if args.judge is None else replay_binary(rec, args.judge):
                n += 1
                if ours == theirs:
                    same += 1
                    continue
                ok = False
                if shown < args.show:
                    shown += 1
                    print(
                        f"game {rec['id']} k={k}\n ours   {json.dumps(ours, ensure_ascii=False)}\n"
                        f" judge  {json.dumps(theirs, ensure_ascii=False)}\n answers {rec['log'][2 * k - 1]}"
                    )
                break
        except Exception as e:  # noqa: BLE001 - a report, not a test
            ok = False
            if shown < args.show:
                shown += 1
                print(f"game {rec['id']}: {type(e).__name__}: {e}")
        if not ok:
            bad_games.append(rec["id"])
    dt = time.perf_counter() - t0
    print(
        f"outputs compared {n}, identical {same}; games fully identical {len(recs) - len(bad_games)}/{len(recs)}"
        f" ({dt:.1f} s); first mismatching games {bad_games[:20]}"
    )


if __name__ == "__main__":
    main()
