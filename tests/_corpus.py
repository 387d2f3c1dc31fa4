"""The Botzone judge corpus (``judge_games_dev.jsonl.gz``, 600 games), parsed once per test process.

Six test modules read it; parsing its 31 MB of JSON costs a few seconds each time, so they share one parse
(:func:`records`). The records are read-only by contract: nothing in ``mjenv`` mutates a log it is given.
"""

from __future__ import annotations

import functools
import gzip
import json
import os
from pathlib import Path

#: the corpus: ``MJENV_BOTZONE_CORPUS``, else ``shared/botzone/`` beside the repository (where the project's
#: machines and CI lay ``shared/``); the tests that read it skip when it is absent
CORPUS = Path(
    os.environ.get(
        "MJENV_BOTZONE_CORPUS",
        Path(__file__).resolve().parents[2] / "shared" / "botzone" / "judge_games_dev.jsonl.gz",
    )
)


@functools.cache
def _parsed(path: str) -> tuple[dict, ...]:
    with gzip.open(path, "rt") as f:
        return tuple(json.loads(line) for line in f)


def records(path: str | Path) -> list[dict]:
    """The corpus records in file order (a new list each call; the records themselves are shared)."""
    return list(_parsed(str(Path(path).resolve())))
