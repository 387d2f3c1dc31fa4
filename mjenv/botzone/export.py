"""Export games of the Botzone variant in both log formats: Botzone JSON match logs and the course text format.

Specification in mjenv
----------------------
* A game is a round in the form of :mod:`mjenv.botzone.humanlog` (``match``, ``quan``, ``deals``, ``events``,
  ``end``, ``log_scores``; what :func:`~mjenv.botzone.humanlog.record_round` gives for an engine game and
  :func:`~mjenv.botzone.humanlog.parse_text` / :func:`~mjenv.botzone.humanlog.parse_json` give for a log), or
  a Botzone match record (a dict with ``log``, e.g. from :func:`mjenv.botzone.runner.play_match`).
* :func:`export_match_log` plays the round's events through the drop-in judge (:class:`mjenv.botzone.Judge`):
  each judge request is answered with the event that follows (the drawer's action, the claim and the claims it
  outvoted, a robbing win; ``PASS`` elsewhere), so every judge output in the log is the judge's own and the
  record is in the corpus format (``id``, ``init_input``, ``initdata``, ``log``, ``scores``, ``bots``,
  ``meta``). The wall is the round's (``rebuild_wall``: the deals and draws, the undrawn tiles in a fixed order).
  A verdict ending (WA, WH, TLE, RE, MLE) is written as the offender's illegal answer (a malformed answer, a
  false ``HU``, the verdict) at the point of the penalty.
* :func:`export_human_log` writes rounds in the text grammar (:func:`~mjenv.botzone.humanlog.export_text`);
  fan names missing from a round (a JSON log) are taken from its replay in the engine. The text format has no
  verdict endings: such a round is a ``ValueError``.
* Round trips are exact: ``replay_human_log(export_human_log(g))`` and ``replay_human_log(export_match_log(g))``
  replay every hand, meld, discard and payment of ``g`` (tested on engine games with kongs, robbed kongs and
  exhaustive draws, on rule-agent play, and on the judge corpus, where the exported judge outputs equal the
  real judge's).

``python -m mjenv.botzone.export --to text|json LOG...`` converts logs (``.txt``, ``.json``, ``.jsonl``,
optionally ``.gz``) from one format to the other (on stdout, or ``-o PATH``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Iterable

from mjenv import game as G
from mjenv.botzone.humanlog import export_text, parse_json, rebuild_wall, replay_round
from mjenv.botzone.judge import Judge
from mjenv.fans import FAN_NAME_ZH, NUM_FANS
from mjenv.tiles import BOTZONE_CODES

__all__ = ["export_human_log", "export_match_log", "main", "to_rounds"]

_VERDICTS = ("WA", "WH", "TLE", "RE", "MLE", "OLE")


def to_rounds(games: object) -> list[dict]:
    """Rounds (the humanlog form) of ``games``: one round dict or Botzone match record, or a list of them."""
    if isinstance(games, dict):
        games = [games]
    if not isinstance(games, (list, tuple)):
        raise TypeError(
            f"games must be a round, a match record or a list of them, got {type(games).__name__}"
        )
    out: list[dict] = []
    for k, g in enumerate(games):
        if not isinstance(g, dict):
            raise TypeError(f"game {k}: expected a dict, got {type(g).__name__}")
        if "log" in g:
            out.extend(parse_json(g))
        elif "events" in g and "deals" in g:
            out.append(g)
        else:
            raise ValueError(f"game {k}: neither a round (events, deals) nor a match record (log)")
    return out


def export_human_log(games: object) -> str:
    """``games`` (see :func:`to_rounds`) in the course ``data.txt`` text format."""
    rounds = []
    for k, r in enumerate(to_rounds(games)):
        if r["end"] not in ("Hu", "Huang"):
            raise ValueError(
                f"round {k} (match {r['match']}): ends in {r['end']}; the text format has only Hu and Huang"
            )
        if r["end"] == "Hu" and not r.get("fan_names"):
            st = replay_round(r, k)["state"]
            fans = st[G.FANS : G.FANS + NUM_FANS]
            names = [FAN_NAME_ZH[f] for f in range(NUM_FANS) for _ in range(int(fans[f]))]
            r = dict(r, fan_names=names, fan=int(st[G.WIN_TOTAL]))
        rounds.append(r)
    return export_text(rounds)


def _fail(r: dict, k: int, msg: str) -> None:
    raise ValueError(f"round {k} (match {r['match']}): {msg}")


def _answer(verb: str, tile: int, discard: int = -1) -> str:
    c = BOTZONE_CODES
    if verb == "Play":
        return f"PLAY {c[tile]}"
    if verb == "AnGang":
        return f"GANG {c[tile]}"
    if verb == "BuGang":
        return f"BUGANG {c[tile]}"
    if verb == "Hu":
        return "HU"
    if verb == "Gang":
        return "GANG"
    if verb == "Peng":
        return f"PENG {c[discard if discard >= 0 else tile]}"
    return f"CHI {c[tile]} {c[discard if discard >= 0 else tile]}"  # Chi: tile is the middle tile


def export_match_log(game: dict, *, match_id: object = None, srand: int = 0, k: int = 0) -> dict:
    """One round (or a one-round match record) as a Botzone match record, every judge output the drop-in
    judge's (see the module docstring). ``ValueError`` naming the round when its events do not fit the judge's
    game (the message says where)."""
    rounds = to_rounds(game)
    if len(rounds) != 1:
        raise ValueError(f"export_match_log takes one round, got {len(rounds)}")
    r = rounds[0]
    early = r["deals"] is None  # a verdict on the answers to INIT: only the penalty (any wall will do)
    wall = [t for t in range(34) for _ in range(4)] if early else rebuild_wall(r, k)
    init = {
        "srand": int(srand),
        "quan": int(r["quan"]),
        "walltiles": " ".join(BOTZONE_CODES[t] for t in wall),
    }
    j = Judge(init)
    ev = list(r["events"])
    i = 0
    log: list[dict] = []
    out = j.output
    while True:
        log.append({"output": out, "verdict": "OK"})
        if out["command"] == "finish":
            break
        ans: dict[int, object] = {s: "PASS" for s in range(4)}
        d = out["display"]
        stage = j.stage
        bad = {"WA": "WA", "WH": "HU"}.get(r["end"], r["end"])  # the answer of an offender
        if (
            i < len(ev) and ev[i][2] == "Penalty" and (stage != "init" or early)
        ):  # the bad answer, where the log has it
            ans[ev[i][1]] = bad
            i += 1
            if stage == "draw" and ev[i - 1][1] != d["player"]:  # the drawer's own answer was fine
                ans[d["player"]] = f"PLAY {d['tile']}"
        elif stage == "draw":
            p = d["player"]
            if i >= len(ev) or ev[i][1:4] != (p, "Draw", BOTZONE_CODES.index(d["tile"])):
                got = ev[i][1:4] if i < len(ev) else "nothing"
                _fail(r, k, f"the judge has player {p} draw {d['tile']}, the log has {got}")
            i += 1
            if i < len(ev) and ev[i][2] == "Penalty":
                q = ev[i][1]
                ans[q] = bad
                i += 1
                if q != p:
                    ans[p] = f"PLAY {d['tile']}"
            else:
                if i >= len(ev) or ev[i][1] != p or ev[i][2] not in ("Play", "AnGang", "BuGang", "Hu"):
                    _fail(r, k, f"after player {p}'s draw the log has no action of player {p}")
                ans[p] = _answer(ev[i][2], ev[i][3])
                i += 1
        elif stage in ("discard", "rob") and i < len(ev) and ev[i][2] in ("Chi", "Peng", "Gang", "Hu"):
            _, q, verb, t, ign = ev[i]
            i += 1
            discard = -1
            if verb in ("Chi", "Peng"):
                if i >= len(ev) or ev[i][1] != q or ev[i][2] != "Play":
                    _fail(r, k, f"player {q}'s {verb} is not followed by its Play")
                discard = ev[i][3]
                i += 1
            ans[q] = _answer(verb, t, discard)
            for s, v, tt in ign:
                ans[s] = _answer(v, tt)
        answers = {}
        for s in range(4):
            a = ans[s]
            if a in ("TLE", "RE", "MLE", "OLE"):
                answers[str(s)] = {"verdict": a}
            else:
                answers[str(s)] = {"verdict": "OK", "response": a}
        log.append(answers)
        out = j.feed(answers)
    fin = log[-1]["output"]
    if i != len(ev):
        _fail(
            r, k, f"the judge finished ({fin['display']['action']}) with {len(ev) - i} events of the log left"
        )
    end = fin["display"]["action"]
    want = {"Hu": "HU", "Huang": "HUANG"}.get(r["end"], r["end"])
    if end != want:
        _fail(r, k, f"the log ends in {r['end']}, the judge's game in {end}")
    scores = fin["content"]
    if r.get("log_scores") is not None and [int(scores[str(s)]) for s in range(4)] != list(r["log_scores"]):
        _fail(r, k, f"the judge pays {scores}, the log {r['log_scores']}")
    return {
        "id": match_id if match_id is not None else r["match"],
        "init_input": init,
        "initdata": dict(log[0]["output"]["initdata"]),
        "log": log,
        "scores": scores,
        "bots": ["export"] * 4,
        "meta": {"exported_from": "mjenv.botzone.export"},
    }


# ---------------------------------------------------------------------------------------------- command line
def _read(path: str) -> list[object]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        text = f.read()
    base = path[:-3] if path.endswith(".gz") else path
    if base.endswith(".jsonl"):
        return [json.loads(x) for x in text.splitlines() if x.strip()]
    if base.endswith(".json"):
        obj = json.loads(text)
        return obj if isinstance(obj, list) else [obj]
    from mjenv.botzone.humanlog import parse_text

    return list(parse_text(text))


def _games(paths: Iterable[str]) -> list[object]:
    return [g for p in paths for g in _read(p)]


def main(argv: list[str] | None = None) -> int:
    """``python -m mjenv.botzone.export --to text|json LOG...``."""
    ap = argparse.ArgumentParser(prog="python -m mjenv.botzone.export", description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", help="logs: .txt (course format), .json / .jsonl (match records), .gz")
    ap.add_argument(
        "--to", choices=["text", "json"], required=True, help="text: data.txt format; json: JSON lines"
    )
    ap.add_argument("-o", "--output", help="write here (default: stdout)")
    args = ap.parse_args(argv)
    try:
        rounds = to_rounds(_games(args.logs))
        if args.to == "text":
            text = export_human_log(rounds)
        else:
            text = "".join(
                json.dumps(export_match_log(r, k=k), ensure_ascii=False) + "\n" for k, r in enumerate(rounds)
            )
    except (OSError, ValueError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
