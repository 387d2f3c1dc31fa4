"""Human match logs of the Botzone variant: the course ``data.txt`` text format and Botzone JSON match logs.

Rules
-----
The text grammar (one round; rounds separated by blank lines; verbs case-insensitive; tiles Botzone codes)::

    Match <id>
    Wind <0-3>
    Player <i> Deal <13 tiles>                      (four lines)
    Player <i> Draw <t> | Play <t> | Chi <middle tile> | Peng <t> | Gang <t> | AnGang <t> | BuGang <t> | Hu <t>
        a claim line may end with clauses ``Ignore Player <j> <Chi|Peng|Gang|Hu> <t>`` (claims it outvoted;
        ``Chi`` names the middle tile)
    Fan <total> <names...>   then   Score <s0> <s1> <s2> <s3>          (a win)
    Huang                    then   Score 0 0 0 0                      (an exhaustive draw)

After a claim the next line is the claimer's ``Play``; after a kong the kong-maker's replacement ``Draw``.

Specification in mjenv
----------------------
* :func:`parse_text` / :func:`parse_json` turn a log into rounds (plain dicts: ``match``, ``quan``, ``deals``,
  ``events`` = ``(line, player, verb, tile, ignores)``, ``end``, ``log_scores``); :func:`replay_round` plays one
  through the engine (:func:`mjenv.game.reset_wall` under ``RuleConfig.botzone(quan)``), checking every action
  with the engine's legality; :func:`replay_human_log` does both and returns one record per round.
* The wall is rebuilt from the draws: seat ``i``'s deal (in the order written) then its draws fill its 34-tile
  part from the end (Botzone order), and the tiles nobody drew fill the remaining slots in increasing tile id,
  part 0 first. They are never drawn, so their order cannot change the game; only their number matters (the
  exhaustive draw comes when the drawer's own part is empty, and claims are illegal when the next seat's part is
  empty). A round whose draws do not fit (more than 34 tiles for a seat, a tile more than 4 times) is a
  ``ValueError`` naming the round.
* A Botzone JSON log (``{"log": [...]}``, ``docs/botzone.md`` "Match logs") is converted to the same events from
  the judge outputs (DRAW, PLAY, PENG, CHI, GANG, BUGANG, HU, HUANG) and the bots' answers (claims not taken become
  ignores); a WA / WH / TLE / RE / MLE ending becomes a ``Penalty`` event of the offender, which the engine pays
  as its terminate mode (-30 / +10). Logs with flowers (BUHUA) are refused (``ValueError``).
* :func:`export_text` writes rounds played in the engine (:func:`record_round`) in the text grammar, so
  ``replay_human_log(export_text(...))`` replays them identically.
"""

from __future__ import annotations

import json

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.fans import FAN_NAME_ZH, NUM_FANS
from mjenv.rules import PENALTY_TERMINATE, RuleConfig
from mjenv.tiles import BOTZONE_CODES

__all__ = [
    "parse_text",
    "parse_json",
    "replay_round",
    "replay_human_log",
    "rebuild_wall",
    "record_round",
    "export_text",
]

_TILE = {c: i for i, c in enumerate(BOTZONE_CODES[:34])}
_VERBS = {v.lower(): v for v in ("Draw", "Play", "Chi", "Peng", "Gang", "AnGang", "BuGang", "Hu")}
_CLAIMS = ("Chi", "Peng", "Gang", "Hu")


class _Err(ValueError):
    pass


def _tile(tok: str, where: str) -> int:
    t = _TILE.get(tok.upper())
    if t is None:
        raise ValueError(f"{where}: {tok!r} is not a tile code (W1..W9 T1..T9 B1..B9 F1..F4 J1..J3)")
    return t


# ---------------------------------------------------------------------------------------------- parsing
def parse_text(text: str) -> list[dict]:
    """The rounds of a ``data.txt``-format log (see the module docstring); ``ValueError`` naming the round and
    line of a malformed line."""
    if not isinstance(text, str):
        raise TypeError(f"log text must be a str, got {type(text).__name__}")
    rounds: list[dict] = []
    cur: dict | None = None
    for ln, raw in enumerate(text.splitlines(), 1):
        t = raw.split()
        if not t:
            continue
        head = t[0].lower()
        where = f"round {len(rounds) + (cur is None)} line {ln}"
        if head == "match":
            if cur is not None:
                raise ValueError(f"{where}: 'Match' before the end (Score) of round {len(rounds)}")
            if len(t) != 2:
                raise ValueError(f"{where}: expected 'Match <id>', got {raw.strip()!r}")
            cur = {
                "match": t[1],
                "quan": None,
                "deals": [None] * 4,
                "events": [],
                "end": None,
                "fan": None,
                "log_scores": None,
                "line": ln,
            }
            continue
        if cur is None:
            raise ValueError(f"{where}: expected 'Match <id>', got {raw.strip()!r}")
        if cur["end"] is not None and head != "score":
            raise ValueError(f"{where}: expected 'Score' after {cur['end']!r}, got {raw.strip()!r}")
        if head == "wind":
            if len(t) != 2 or t[1] not in ("0", "1", "2", "3"):
                raise ValueError(f"{where}: expected 'Wind <0-3>', got {raw.strip()!r}")
            cur["quan"] = int(t[1])
        elif head == "player":
            if len(t) < 3 or t[1] not in ("0", "1", "2", "3"):
                raise ValueError(f"{where}: expected 'Player <0-3> <verb> ...', got {raw.strip()!r}")
            p = int(t[1])
            verb = t[2].lower()
            if verb == "deal":
                if len(t) != 16:
                    raise ValueError(f"{where}: a deal holds 13 tiles, got {len(t) - 3}")
                if cur["deals"][p] is not None:
                    raise ValueError(f"{where}: a second deal of player {p}")
                cur["deals"][p] = [_tile(x, where) for x in t[3:]]
                continue
            if verb not in _VERBS:
                raise ValueError(f"{where}: unknown verb {t[2]!r}")
            verb = _VERBS[verb]
            if len(t) < 4:
                raise ValueError(f"{where}: {verb} needs a tile")
            tile = _tile(t[3], where)
            ignores = []
            rest = t[4:]
            while rest:
                if (
                    len(rest) < 5
                    or rest[0].lower() != "ignore"
                    or rest[1].lower() != "player"
                    or rest[2] not in ("0", "1", "2", "3")
                    or rest[3].lower() not in ("chi", "peng", "gang", "hu")
                ):
                    raise ValueError(
                        f"{where}: malformed 'Ignore Player <j> <Chi|Peng|Gang|Hu> <t>' clause "
                        f"{' '.join(rest[:5])!r}"
                    )
                if verb not in _CLAIMS:
                    raise ValueError(f"{where}: Ignore clauses only follow a claim, not {verb}")
                ignores.append((int(rest[2]), _VERBS[rest[3].lower()], _tile(rest[4], where)))
                rest = rest[5:]
            cur["events"].append((ln, p, verb, tile, ignores))
        elif head == "fan":
            if len(t) < 2 or not t[1].lstrip("-").isdigit():
                raise ValueError(f"{where}: expected 'Fan <total> <names>', got {raw.strip()!r}")
            cur["end"], cur["fan"] = "Hu", int(t[1])
        elif head == "huang":
            cur["end"] = "Huang"
        elif head == "score":
            if len(t) != 5 or not all(x.lstrip("-").isdigit() for x in t[1:]):
                raise ValueError(f"{where}: expected 'Score <s0> <s1> <s2> <s3>', got {raw.strip()!r}")
            if cur["end"] is None:
                raise ValueError(f"{where}: 'Score' without a 'Fan' or 'Huang' line")
            cur["log_scores"] = [int(x) for x in t[1:]]
            _check_round(cur, len(rounds))
            rounds.append(cur)
            cur = None
        else:
            raise ValueError(f"{where}: unknown line {raw.strip()!r}")
    if cur is not None:
        raise ValueError(f"round {len(rounds)} (match {cur['match']}): the log ends before its 'Score' line")
    return rounds


def _check_round(r: dict, k: int) -> None:
    if r["quan"] is None:
        raise ValueError(f"round {k} (match {r['match']}, line {r['line']}): no 'Wind' line")
    for p in range(4):
        if r["deals"][p] is None:
            raise ValueError(f"round {k} (match {r['match']}, line {r['line']}): no deal of player {p}")


def parse_json(log: object) -> list[dict]:
    """The round of a Botzone JSON match log: a dict with ``log`` (judge outputs at even indices, the bots'
    answers at odd ones; ``initdata`` optional) or the JSON text of one, or a list of them."""
    if isinstance(log, str):
        try:
            log = json.loads(log)
        except json.JSONDecodeError as e:
            raise ValueError(f"malformed JSON: {e}") from None
    if isinstance(log, list) and (
        not log or "log" in log[0] if isinstance(log[0] if log else None, dict) else False
    ):
        return [r for x in log for r in parse_json(x)]
    if not isinstance(log, dict) or not isinstance(log.get("log"), list):
        raise ValueError("a Botzone JSON match log is an object with a 'log' list")
    entries = log["log"]
    mid = str(log.get("id", log.get("_id", "?")))
    quan = None
    init = (log.get("initdata") or {}) if isinstance(log.get("initdata"), dict) else {}
    r = {
        "match": mid,
        "quan": None,
        "deals": [None] * 4,
        "events": [],
        "end": None,
        "fan": None,
        "log_scores": None,
        "line": 0,
    }
    prev: dict = {}
    prev_answers: dict = {}
    last_tile = -1
    for k in range(0, len(entries), 2):
        where = f"round 0 (match {mid}) log entry {k}"
        try:
            out = entries[k]["output"]
            d = out["display"]
            act = d["action"]
        except (KeyError, TypeError):
            raise ValueError(f"{where}: not a judge output with a display") from None
        p = d.get("player")
        answers = entries[k + 1] if k + 1 < len(entries) and isinstance(entries[k + 1], dict) else {}
        if act == "INIT":
            quan = d.get("quan", init.get("quan"))
        elif act == "DEAL":
            hands = d.get("hand")
            if not isinstance(hands, list) or len(hands) != 4:
                raise ValueError(f"{where}: DEAL without four hands")
            for s in range(4):
                if any(str(c).startswith("H") for c in hands[s]):
                    raise ValueError(f"{where}: logs with flowers are not supported")
                if len(hands[s]) != 13:
                    raise ValueError(f"{where}: a deal holds 13 tiles, got {len(hands[s])}")
                r["deals"][s] = [_tile(c, where) for c in hands[s]]
        elif act == "BUHUA":
            raise ValueError(f"{where}: logs with flowers (BUHUA) are not supported")
        elif act == "DRAW":
            r["events"].append((k, p, "Draw", _tile(d["tile"], where), []))
        elif act in ("PLAY", "PENG", "CHI"):
            if act == "PENG":
                r["events"].append((k, p, "Peng", last_tile, _ignores(prev_answers, p, last_tile, where)))
            elif act == "CHI":
                r["events"].append(
                    (k, p, "Chi", _tile(d["tileCHI"], where), _ignores(prev_answers, p, last_tile, where))
                )
            last_tile = _tile(d["tile"], where)
            r["events"].append((k, p, "Play", last_tile, []))
        elif act == "GANG":
            t = _tile(d["tile"], where)
            if prev.get("action") == "DRAW" and prev.get("player") == p:
                r["events"].append((k, p, "AnGang", t, []))
            else:
                r["events"].append((k, p, "Gang", t, _ignores(prev_answers, p, t, where)))
        elif act == "BUGANG":
            last_tile = _tile(d["tile"], where)
            r["events"].append((k, p, "BuGang", last_tile, []))
        elif act == "HU":
            if prev.get("action") == "DRAW" and prev.get("player") == p:
                t = _tile(prev["tile"], where)
                ign = []
            else:
                t = last_tile
                ign = _ignores(prev_answers, p, t, where)
            r["events"].append((k, p, "Hu", t, ign))
            r["end"], r["fan"] = "Hu", d.get("fanCnt")
        elif act == "HUANG":
            r["end"] = "Huang"
        elif act in ("WA", "WH", "TLE", "RE", "MLE", "OLE"):
            r["events"].append((k, p, "Penalty", -1, []))
            r["end"] = act
        else:
            raise ValueError(f"{where}: unknown judge action {act!r}")
        if out.get("command") == "finish":
            sc = out.get("content", {})
            r["log_scores"] = [int(sc[str(s)]) for s in range(4)]
            break
        prev = d
        prev_answers = answers
    if r["log_scores"] is None:
        raise ValueError(f"round 0 (match {mid}): the log has no finish output")
    if r["end"] in ("WA", "WH", "TLE", "RE", "MLE", "OLE") and r["deals"][0] is None:
        r["deals"] = None  # ended before the deal: nothing to replay
    r["quan"] = quan
    if quan is None or r["deals"] is not None:
        _check_round(r, 0)
    return [r]


def _ignores(answers: dict, taker: int, tile: int, where: str) -> list:
    """The claims in ``answers`` (a bots' answer round) of seats other than ``taker``: outvoted claims."""
    out = []
    for s in range(4):
        if s == taker:
            continue
        resp = answers.get(str(s), {}).get("response", "") if isinstance(answers.get(str(s)), dict) else ""
        w = str(resp).split(" ")
        v = w[0].upper()
        if v == "HU":
            out.append((s, "Hu", tile))
        elif v == "PENG":
            out.append((s, "Peng", tile))
        elif v == "GANG" and len(w) == 1:
            out.append((s, "Gang", tile))
        elif v == "CHI" and len(w) == 3 and w[1] in _TILE:
            out.append((s, "Chi", _TILE[w[1]]))
    return out


# ---------------------------------------------------------------------------------------------- replay
def rebuild_wall(r: dict, k: int = 0) -> np.ndarray:
    """The 136-tile Botzone wall of round ``r`` rebuilt from its deals and draws (module docstring)."""
    seqs = [list(r["deals"][p]) for p in range(4)]
    for _ln, p, verb, t, _ in r["events"]:
        if verb == "Draw":
            seqs[p].append(t)
    wall = np.full(136, -1, np.int64)
    counts = np.zeros(34, np.int64)
    for p in range(4):
        if len(seqs[p]) > 34:
            raise ValueError(
                f"round {k} (match {r['match']}): the draws do not fit a wall: player {p} takes "
                f"{len(seqs[p])} tiles, a private wall holds 34"
            )
        for i, t in enumerate(seqs[p]):
            wall[34 * p + 33 - i] = t
            counts[t] += 1
    over = np.flatnonzero(counts > 4)
    if over.size:
        t = int(over[0])
        raise ValueError(
            f"round {k} (match {r['match']}): the draws do not fit a wall: {BOTZONE_CODES[t]} is "
            f"drawn {int(counts[t])} times"
        )
    rest = [t for t in range(34) for _ in range(4 - int(counts[t]))]
    wall[wall < 0] = rest
    return wall


class _Table:
    """The engine table of one replayed round, with checked steps."""

    def __init__(self, r: dict, k: int, rules: RuleConfig):
        self.r, self.k = r, k
        self.state = G.new_state()
        G.reset_wall(self.state, rebuild_wall(r, k), 0, r["quan"], rules)
        self.tabs = G.win_tables()
        self.rew = np.zeros(4, np.float32)
        self.hook = None  # called (state, seat, action) before every step (the dataset's recorder)

    def fail(self, ln: int, msg: str) -> None:
        raise ValueError(f"round {self.k} (match {self.r['match']}) line {ln}: {msg}")

    def act(self, ln: int, seat: int, action: int) -> None:
        st = self.state
        if st[G.PHASE] == G.PH_OVER:
            self.fail(ln, f"player {seat}: {A.action_to_str(action)} after the end of the round")
        if st[G.CUR] != seat:
            self.fail(ln, f"player {seat}: {A.action_to_str(action)} but player {int(st[G.CUR])} is to act")
        if self.hook is not None:
            self.hook(st, seat, action)
        if G.step_kernel(st, action, self.rew, *self.tabs) != G.OK:
            what = A.action_to_str(action)
            if A.CHOW <= action <= A.KONG:
                what += f" on {BOTZONE_CODES[int(st[G.OFFER_TILE])]}"
            self.fail(ln, f"illegal action for player {seat}: {what}")


def _claim_action(verb: str, tile: int, offer: int) -> int:
    if verb == "Hu":
        return A.WIN
    if verb == "Peng":
        return A.PUNG
    if verb == "Gang":
        return A.KONG
    pos = offer - tile + 1  # Chi: tile is the chow's middle tile
    return A.CHOW + pos if 0 <= pos <= 2 and tile < 27 and offer // 9 == tile // 9 else -1


def replay_round(r: dict, k: int = 0, *, hook=None) -> dict:
    """Replay one parsed round through the engine; the record (see :func:`replay_human_log`)."""
    if r["deals"] is None:  # a Botzone log that ended (a verdict) before the deal: only the penalty to pay
        st = G.new_state()
        G.reset_wall(st, np.repeat(np.arange(34), 4), 0, r["quan"] or 0, RuleConfig.botzone(r["quan"] or 0))
        rew = np.zeros(4, np.float32)
        G.penalize_kernel(st, r["events"][-1][1], PENALTY_TERMINATE, rew)
        sc = [int(x) for x in rew]
        return {
            "match": r["match"],
            "round": k,
            "scores": sc,
            "log_scores": r["log_scores"],
            "end": r["end"],
            "fan": None,
            "log_fan": None,
            "ok": sc == r["log_scores"],
            "state": st,
        }
    tb = _Table(r, k, RuleConfig.botzone(r["quan"]))
    tb.hook = hook
    st = tb.state
    penalty = np.zeros(4, np.float32)
    ev = r["events"]
    i = 0
    n = len(ev)
    while i < n:
        ln, p, verb, t, ignores = ev[i]
        i += 1
        if verb == "Draw":
            if st[G.PHASE] != G.PH_TURN or st[G.TURN] != p or st[G.DRAWN] != t:
                tb.fail(
                    ln,
                    f"player {p} draws {BOTZONE_CODES[t]}, but the engine has "
                    + (
                        "the round over"
                        if st[G.PHASE] == G.PH_OVER
                        else f"player {int(st[G.CUR])} to act (drawn {int(st[G.DRAWN])})"
                    ),
                )
            continue
        if verb == "Penalty":
            G.penalize_kernel(st, p, PENALTY_TERMINATE, tb.rew)
            penalty += tb.rew
            continue
        if verb in ("Chi", "Peng", "Gang") or (verb == "Hu" and st[G.PHASE] != G.PH_TURN):
            tb.fail(ln, f"player {p} {verb} {BOTZONE_CODES[t]} without a discard or kong to claim")
        action = {
            "Play": A.DISCARD + t,
            "AnGang": A.CONCEALED_KONG + t,
            "BuGang": A.ADDED_KONG + t,
            "Hu": A.WIN,
        }[verb]
        if verb == "Hu" and st[G.DRAWN] != t:
            tb.fail(
                ln,
                f"player {p} Hu {BOTZONE_CODES[t]}, but the tile drawn is "
                f"{BOTZONE_CODES[int(st[G.DRAWN])] if st[G.DRAWN] >= 0 else 'none'}",
            )
        tb.act(ln, p, action)
        if st[G.PHASE] not in (G.PH_CLAIM, G.PH_ROB):
            continue
        # a claim (or rob) window: the next line may be the claim that won, with the claims it outvoted
        offer = int(st[G.OFFER_TILE])
        answers: dict[int, tuple[int, int]] = {}
        taker = -1
        if i < n and ev[i][2] in _CLAIMS and ev[i][1] != p and ev[i][2] != "Draw":
            ln2, q, v2, t2, ign2 = ev[i]
            i += 1
            taker = q
            for s, v, tt in [(q, v2, t2)] + list(ign2):
                if v != "Chi" and tt != offer:
                    tb.fail(ln2, f"player {s} {v} {BOTZONE_CODES[tt]} on the offered {BOTZONE_CODES[offer]}")
                a = _claim_action(v, tt, offer)
                if a < 0:
                    tb.fail(
                        ln2,
                        f"player {s}: no chow with middle tile {BOTZONE_CODES[tt]} on {BOTZONE_CODES[offer]}",
                    )
                if s in answers or s == p:
                    tb.fail(ln2, f"player {s} claims twice or claims its own tile")
                answers[s] = (a, ln2)
        while st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
            s = int(st[G.CUR])
            a, lna = answers.pop(s, (A.PASS, ln))
            tb.act(lna, s, a)
        if answers:
            s, (a, lna) = next(iter(answers.items()))
            tb.fail(lna, f"player {s} was never asked ({A.action_to_str(a)})")
        if taker >= 0:
            if v2 == "Hu":
                ok = st[G.PHASE] == G.PH_OVER and st[G.WINNER] == taker
            else:  # a kong whose maker's own part is empty ends the round at the replacement draw
                ok = (st[G.PHASE] == G.PH_TURN and st[G.TURN] == taker) or (
                    v2 == "Gang" and st[G.PHASE] == G.PH_OVER and st[G.WINNER] < 0
                )
            if not ok:
                tb.fail(
                    ln2,
                    f"player {taker} {v2}, but the engine gave the tile to "
                    + (
                        f"player {int(st[G.WINNER])} (a win)"
                        if st[G.PHASE] == G.PH_OVER and st[G.WINNER] >= 0
                        else f"player {int(st[G.TURN])}"
                    ),
                )
    last = ev[-1][0] if ev else r["line"]
    if st[G.PHASE] != G.PH_OVER:
        tb.fail(last, f"the log ends ({r['end']}) but the round is not over in the engine")
    if r["end"] == "Huang" and st[G.WINNER] >= 0:
        tb.fail(last, "the log says Huang but the engine scored a win")
    # a verdict ends the round with the penalty alone (the judge pays nothing else)
    scores = [int(x) for x in (penalty if r["end"] not in ("Hu", "Huang") else st[G.SCORES : G.SCORES + 4])]
    fan = int(st[G.WIN_TOTAL]) if st[G.WINNER] >= 0 else None
    return {
        "match": r["match"],
        "round": k,
        "scores": scores,
        "log_scores": r["log_scores"],
        "end": r["end"],
        "fan": fan,
        "log_fan": r["fan"],
        "ok": scores == r["log_scores"],
        "state": st,
    }


def replay_human_log(text: object) -> list[dict]:
    """Parse and replay a human log: the course ``data.txt`` text format (a str not starting with ``{``/``[``),
    or a Botzone JSON match log (a dict, a list of them, or their JSON text).

    Returns one record per round: ``match`` (its id), ``round`` (index in the file), ``scores`` (the engine's
    payments, four ints), ``log_scores`` (the file's ``Score`` line), ``ok`` (equal), ``end`` (``Hu``,
    ``Huang`` or a verdict), ``fan`` / ``log_fan`` (totals of a win), ``state`` (the final engine state).
    Raises ``ValueError`` naming the round and line of a malformed line, an action the engine finds illegal, or
    draws that do not fit a wall.
    """
    if isinstance(text, str) and text.lstrip()[:1] not in ("{", "["):
        rounds = parse_text(text)
    else:
        rounds = parse_json(text)
    return [replay_round(r, k) for k, r in enumerate(rounds)]


# ---------------------------------------------------------------------------------------------- export
def record_round(wall, quan: int, policy, match_id: str = "0") -> dict:
    """Play one round in the engine (``RuleConfig.botzone(quan)``, ``wall`` in Botzone order) with
    ``policy(state, seat, mask) -> action`` and return it as a parsed round (the :func:`parse_text` form), with
    ``scores`` (the engine's payments)."""
    rules = RuleConfig.botzone(quan)
    st = G.new_state()
    G.reset_wall(st, wall, 0, quan, rules)
    tabs = G.win_tables()
    rew = np.zeros(4, np.float32)
    mask = np.zeros(A.NUM_ACTIONS, np.bool_)
    deals = [[int(t) for t in np.repeat(np.arange(34), G.seat_hand(st, s))] for s in range(4)]
    deals[0].remove(int(st[G.DRAWN]))
    ev: list = [(0, 0, "Draw", int(st[G.DRAWN]), [])]
    left = int(st[G.PWALL : G.PWALL + 4].sum())
    while st[G.PHASE] != G.PH_OVER:
        if st[G.PHASE] == G.PH_TURN:
            s = int(st[G.CUR])
            G.legal_mask_kernel(st, s, mask)
            a = int(policy(st, s, mask))  # asked once per decision (a window's seats are asked below)
            t = int(st[G.DRAWN])
            G.step_kernel(st, a, rew, *tabs)
            if a < A.CHOW:
                ev.append((0, s, "Play", a, []))
            elif a < A.ADDED_KONG:
                ev.append((0, s, "AnGang", a - A.CONCEALED_KONG, []))
            elif a < A.WIN:
                ev.append((0, s, "BuGang", a - A.ADDED_KONG, []))
            else:
                ev.append((0, s, "Hu", t, []))
        else:
            offer, d = int(st[G.OFFER_TILE]), int(st[G.OFFER_SEAT])
            answers = {}
            while st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
                s = int(st[G.CUR])
                G.legal_mask_kernel(st, s, mask)
                a = int(policy(st, s, mask))
                answers[s] = a
                G.step_kernel(st, a, rew, *tabs)
            claims = {s: a for s, a in answers.items() if a != A.PASS}
            if st[G.PHASE] == G.PH_OVER and st[G.WINNER] >= 0 and st[G.WINNER] != d:
                taker = int(st[G.WINNER])
            elif st[G.PHASE] != G.PH_OVER and int(st[G.TURN]) in claims:
                taker = int(st[G.TURN])
            elif st[G.PHASE] == G.PH_OVER and A.KONG in claims.values():  # kong, then an empty part: Huang
                taker = next(s for s, a in claims.items() if a == A.KONG)
            else:
                taker = -1
            if taker >= 0:
                v, t = _clause(claims.pop(taker), offer)
                ev.append((0, taker, v, t, [(s, *_clause(a, offer)) for s, a in sorted(claims.items())]))
        now = int(st[G.PWALL : G.PWALL + 4].sum())
        if now < left and st[G.PHASE] == G.PH_TURN:
            ev.append((0, int(st[G.TURN]), "Draw", int(st[G.DRAWN]), []))
        left = now
    win = st[G.WINNER] >= 0
    scores = [int(x) for x in st[G.SCORES : G.SCORES + 4]]
    fans = st[G.FANS : G.FANS + NUM_FANS]
    names = [FAN_NAME_ZH[f] for f in range(len(fans)) for _ in range(int(fans[f]))]
    return {
        "match": str(match_id),
        "quan": quan,
        "deals": deals,
        "events": ev,
        "end": "Hu" if win else "Huang",
        "fan": int(st[G.WIN_TOTAL]) if win else None,
        "fan_names": names,
        "log_scores": scores,
        "scores": scores,
        "line": 0,
        "state": st,
    }


def _clause(a: int, offer: int) -> tuple[str, int]:
    """The log verb and tile of claim action ``a`` on ``offer`` (a chow names its middle tile)."""
    if a == A.WIN:
        return "Hu", offer
    if a == A.PUNG:
        return "Peng", offer
    if a == A.KONG:
        return "Gang", offer
    return "Chi", offer - (a - A.CHOW) + 1


def export_text(rounds: list[dict]) -> str:
    """Rounds (the :func:`parse_text` / :func:`record_round` form) in the text grammar."""
    out = []
    for r in rounds:
        lines = [f"Match {r['match']}", f"Wind {r['quan']}"]
        for p in range(4):
            lines.append(f"Player {p} Deal " + " ".join(BOTZONE_CODES[t] for t in r["deals"][p]))
        for _, p, verb, t, ign in r["events"]:
            s = f"Player {p} {verb} {BOTZONE_CODES[t]}"
            for j, v, tt in ign:
                s += f" Ignore Player {j} {v} {BOTZONE_CODES[tt]}"
            lines.append(s)
        if r["end"] == "Hu":
            lines.append(f"Fan {r['fan']} " + " ".join(r.get("fan_names") or []))
        else:
            lines.append("Huang")
        lines.append("Score " + " ".join(str(x) for x in r["log_scores"]))
        out.append("\n".join(lines))
    return "\n\n".join(out) + "\n"
