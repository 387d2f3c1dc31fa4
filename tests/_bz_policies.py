"""Tiny policies for the Botzone bot and runner tests (importable as ``tests._bz_policies:make_hash``)."""

from __future__ import annotations

import sys
import zlib
from pathlib import Path

import numpy as np

from mjenv import actions as A


class HashPolicy:
    """Deterministic and stateless: the action is a function of (observation, mask) only, so two paths that
    show a seat the same observations play the same game. Wins when it can (3 times in 4)."""

    def __call__(self, obs, masks, seats):
        out = np.zeros(len(masks), np.int64)
        for i in range(len(masks)):
            legal = np.flatnonzero(masks[i])
            h = zlib.crc32(np.ascontiguousarray(obs[i]).tobytes())
            if masks[i, A.WIN] and h % 4:
                out[i] = A.WIN
            else:
                out[i] = legal[h % len(legal)]
        return out


def make_hash(num_envs: int, seed: int, **kwargs) -> HashPolicy:
    return HashPolicy()


class DrawPlayer:
    """The light deterministic policy of the per-turn test bots (``tests/bz_bots/mirror_turn.sh`` and friends):
    on its own turn it discards the tile it drew; anywhere else it passes."""

    def __call__(self, obs, masks, seats):
        from mjenv.observation import views

        out = np.zeros(len(masks), np.int64)
        for i in range(len(masks)):
            drawn = views(obs[i])["drawn"]
            if drawn.any() and masks[i, A.DISCARD + int(np.argmax(drawn))]:
                out[i] = A.DISCARD + int(np.argmax(drawn))
            elif masks[i, A.PASS]:
                out[i] = A.PASS
            else:
                out[i] = int(np.flatnonzero(masks[i])[0])
        return out


def make_drawplayer(num_envs: int, seed: int, **kwargs) -> DrawPlayer:
    return DrawPlayer()


BZ_BOTS = Path(__file__).resolve().parent / "bz_bots"


def bot_command(name: str) -> str:
    """The command line of a test bot of ``tests/bz_bots`` (``.py``: this Python; ``.sh``: ``sh``)."""
    path = BZ_BOTS / name
    return f"sh {path}" if name.endswith(".sh") else f"{sys.executable} {path}"


#: the faulting behaviours a Botzone bot can show: (id, seat spec, verdict of every hand or None when it never faults)
BEHAVIOURS = [
    ("reads-to-end+multiline+data", "json:" + bot_command("mirror_turn.sh"), None),
    ("multiline-keep-running", "json-keep:" + bot_command("multiline.py"), None),
    ("data+globaldata", "simple:" + bot_command("memory.sh"), None),
    ("keep-running", "simple-keep:" + bot_command("drawplayer.py"), None),
    ("crash", "simple:" + bot_command("crash.py"), "RE"),
    ("hang", "simple:" + bot_command("hang.py"), "TLE"),
    ("garbage", "simple-keep:" + bot_command("garbage.py"), "WA"),
    ("garbage-json", "json-keep:" + bot_command("garbage.py"), "NJ"),
    ("memory-hog", "simple:" + bot_command("mle.py"), "MLE"),
]


def limits(verdict: str | None) -> dict:
    """Time limits for a behaviour: generous (a loaded machine starts Python slowly), short for the hanging bot."""
    return {"time_limit": 1.0} if verdict == "TLE" else {"time_limit": 20.0}
