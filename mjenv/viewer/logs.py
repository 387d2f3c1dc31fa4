"""Botzone match logs and human logs as viewer input: converted to :mod:`mjenv.record` records.

Rules
-----
Nothing of the rules: :func:`mjenv.botzone.humanlog.replay_round` replays each round through the engine under
``RuleConfig.botzone(quan)`` and checks every action; its hook hands over every engine step (seat, action),
which become the record's ``ops``. A verdict ending (WA / WH / TLE / ...) is the engine's terminate penalty of
the offender, as ``humanlog`` pays it.

Specification in mjenv
----------------------
* :func:`records_from_log` takes a Botzone JSON match log (a dict with a ``"log"`` list, in the format of
  ``docs/botzone.md`` "Match logs", as Botzone's site exports it, or a list of them) or a human log (the
  ``data.txt`` text grammar of :mod:`mjenv.botzone.humanlog`, one or more rounds) and returns one record per round.
* The record's wall is given (``"wall_given": true``): the judge's ``initdata.walltiles`` when the log carries a
  136-tile one holding every tile the log deals and draws where the log took it, else the wall :func:`~mjenv.botzone.humanlog.rebuild_wall`
  rebuilds from the deals and draws (the undrawn tiles' order is arbitrary; only their number matters).
* Each record carries ``"source"``: ``{"kind": "botzone-json" | "human-text", "match", "round", "end",
  "log_scores", "scores", "ok"}`` (``ok``: the engine's payments equal the log's scores) and ``"players"``
  (``player 0`` .. ``player 3``).
* ``ValueError`` names the round and line of anything the engine refuses (see ``humanlog``), and a round that
  ended before the deal (nothing to show).
"""

from __future__ import annotations

import json

import numpy as np

from mjenv.botzone.humanlog import parse_json, parse_text, rebuild_wall, replay_round
from mjenv.record import make_log
from mjenv.rules import PENALTY_TERMINATE, RuleConfig

__all__ = ["is_match_log", "records_from_log"]


def is_match_log(data) -> bool:
    """Whether parsed JSON ``data`` is a Botzone match log (or a list of them) rather than mjenv records."""
    if isinstance(data, dict):
        return isinstance(data.get("log"), list) and "format" not in data
    return bool(isinstance(data, list) and data and all(is_match_log(x) for x in data))


def _walltiles(log) -> np.ndarray | None:
    init = log.get("initdata") if isinstance(log, dict) else None
    if isinstance(init, str):
        try:
            init = json.loads(init)
        except json.JSONDecodeError:
            return None
    wt = init.get("walltiles") if isinstance(init, dict) else None
    if not isinstance(wt, str):
        return None
    from mjenv.botzone.judge import parse_walltiles

    try:
        wall = parse_walltiles(wt)
    except (TypeError, ValueError):
        return None
    return np.asarray(wall, np.int64) if len(wall) == 136 else None


def _drawn_positions(r: dict) -> np.ndarray:
    """The wall slots the round's deals and draws came from (seat p's part is taken from its end)."""
    n = [len(r["deals"][p]) for p in range(4)]
    for _ln, p, verb, _t, _ in r["events"]:
        if verb == "Draw":
            n[p] += 1
    return np.array([34 * p + 33 - i for p in range(4) for i in range(min(n[p], 34))], np.int64)


def _round_record(r: dict, k: int, kind: str, given_wall: np.ndarray | None) -> dict:
    where = f"round {k} (match {r['match']})"
    if r["deals"] is None:
        raise ValueError(f"{where}: the match ended ({r['end']}) before the deal: there is no hand to show")
    ops: list = []
    done = replay_round(r, k, hook=lambda st, seat, action: ops.append(["act", int(seat), int(action)]))
    if r["events"] and r["events"][-1][2] == "Penalty":
        ops.append(["penalty", int(r["events"][-1][1]), PENALTY_TERMINATE])
    rules = RuleConfig.botzone(int(r["quan"]))
    wall = rebuild_wall(r, k)
    if given_wall is not None:  # the judge's wall, if every tile dealt and drawn in the log came from it
        pos = _drawn_positions(r)
        if np.array_equal(given_wall[pos], wall[pos]):
            wall = given_wall
    log = make_log(0, 0, int(r["quan"]), rules, ops, wall=wall)
    log["players"] = {f"player {p}": p for p in range(4)}
    log["source"] = {
        "kind": kind,
        "match": r["match"],
        "round": k,
        "end": r["end"],
        "log_scores": done["log_scores"],
        "scores": done["scores"],
        "ok": bool(done["ok"]),
    }
    return log


def records_from_log(data) -> list[dict]:
    """mjenv records (one per round) of a Botzone JSON match log (dict, list of them, or JSON text) or a human
    log (``data.txt`` text); ``ValueError`` naming the round and line on anything the engine refuses."""
    if isinstance(data, str) and data.lstrip()[:1] not in ("{", "["):
        rounds = parse_text(data)
        return [_round_record(r, k, "human-text", None) for k, r in enumerate(rounds)]
    if isinstance(data, str):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as e:
            raise ValueError(f"malformed JSON: {e}") from None
    logs = data if isinstance(data, list) else [data]
    out = []
    for log in logs:
        for r in parse_json(log):
            out.append(_round_record(r, len(out), "botzone-json", _walltiles(log)))
    return out
