"""Replay viewer: one self-contained, offline HTML file per game, built from :mod:`mjenv.record` game records.

Rules
-----
Nothing of the rules: every state shown comes from the engine. :func:`build_view` replays each record with
:func:`mjenv.record.replay` and writes down, step by step, what changed between consecutive engine states (tiles
that left and entered each hand, new or grown melds, discards and the claimed mark, flowers, the wall pointers,
scores). The page's script rebuilds every state by applying these moves to the deal; it knows no rule.

Specification in mjenv
----------------------
* Inputs: one ``mjenv-hand-v1`` record (dict), a list of them (several hands, a 16-hand match), or a dict with
  a ``"hands"`` list. A record may carry ``"players"`` (``{name: chair}``, as ``raw_env.hand_log`` writes) and
  ``"info"``: a list aligned with ``"ops"``, each entry ``null`` or ``{"probs": {action name or id: p} | [109
  floats], "value": v, "note": text}`` (arena records); the viewer shows the top actions and the value at that
  decision, and the note (a Botzone bot's fault) in the step's text.
* Botzone JSON match logs and human logs (``data.txt`` text, given as a str) are converted to records by
  :mod:`mjenv.viewer.logs` first; under private walls each seat shows its own wall count.
* :func:`build_view` returns the JSON embedded in the page (format ``mjenv-view-v1``, see ``docs/viewer.md``);
  :func:`render_html` the page as a string; :func:`write_html` writes it; :func:`load_records` reads a record
  file (JSON or JSON lines) with clear errors.
* Malformed, corrupt or truncated records raise ``ValueError`` naming the hand and the problem; no page is
  written then.
"""

from __future__ import annotations

import json
import math
from importlib import resources
from pathlib import Path

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv import melds as M
from mjenv.fans import FAN_NAME_EN, FAN_NAME_ZH, FAN_POINTS
from mjenv.record import LOG_FORMAT, OLD_FORMATS, log_rules, replay
from mjenv.rules import PENALTY_NAMES
from mjenv.tiles import ENGLISH_NAMES, WIND_NAMES, counts_to_tiles

VIEW_FORMAT = "mjenv-view-v1"
TOP_ACTIONS = 5  # policy actions shown per decision
_WIND_WORDS = ("East", "South", "West", "North")
_PENALTY_MODES = PENALTY_NAMES

__all__ = ["VIEW_FORMAT", "build_view", "load_records", "meld_view", "render_html", "write_html"]


# ----------------------------------------------------------------------------------------------- inputs
def _as_hand_list(records) -> list[dict]:
    from mjenv.viewer.logs import is_match_log, records_from_log

    if isinstance(records, str) or is_match_log(records):  # a human log's text, a Botzone match log
        records = records_from_log(records)
    if isinstance(records, dict):
        if "hands" in records and records.get("format") != LOG_FORMAT:
            records = records["hands"]
        else:
            records = [records]
    if not isinstance(records, (list, tuple)) or not records:
        raise ValueError("expected a game record (dict), a non-empty list of records, or {'hands': [...]}")
    for i, r in enumerate(records):
        if not isinstance(r, dict):
            raise ValueError(f"hand {i}: a record must be a JSON object, got {type(r).__name__}")  # noqa: TRY004 (file content)
        if r.get("format") not in (LOG_FORMAT, *OLD_FORMATS):
            raise ValueError(f"hand {i}: not a {LOG_FORMAT} record (format {r.get('format')!r})")
        rule_key = "min_fan" if r["format"] in OLD_FORMATS else "rules"
        missing = [k for k in ("seed", "dealer", "prevalent_wind", rule_key, "wall", "ops") if k not in r]
        if missing:
            raise ValueError(f"hand {i}: the record lacks {', '.join(missing)} (truncated or corrupt?)")
        if not isinstance(r["ops"], list) or not all(
            isinstance(o, (list, tuple)) and len(o) == 3 for o in r["ops"]
        ):
            raise ValueError(f"hand {i}: 'ops' must be a list of [kind, seat, value] triples")
        try:
            n_tiles = log_rules(r).num_tiles
        except (TypeError, ValueError) as e:
            raise ValueError(f"hand {i}: bad rules in the record: {e}") from None
        if not isinstance(r["wall"], list) or len(r["wall"]) != n_tiles:
            raise ValueError(f"hand {i}: 'wall' must list {n_tiles} tiles")
    return list(records)


def load_records(path: str | Path) -> list[dict]:
    """Read game records from a JSON file (a record, a list, ``{"hands": [...]}`` or an arena report, whose kept
    ``records`` it reads) or a JSON-lines file, or a
    Botzone match log (JSON, or JSON lines as the corpus) or a human log (text), converted by
    :mod:`mjenv.viewer.logs`. A ``.gz`` file is read through gzip.

    Raises ValueError (naming the file) if it is empty, not JSON, truncated, or a log the engine refuses.
    """
    import gzip
    import zlib

    from mjenv.viewer.logs import is_match_log, records_from_log

    p = Path(path)
    try:
        raw = p.read_bytes()
        text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8")
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as e:
        raise ValueError(f"cannot read {p}: {e}") from None
    if not text.strip():
        raise ValueError(f"{p} is empty")
    if text.lstrip()[:1] not in ("{", "["):  # not JSON: a human log (data.txt text grammar)
        try:
            return records_from_log(text)
        except ValueError as e:
            raise ValueError(f"{p}: not a game record (JSON) nor a readable human log: {e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        lines = [ln for ln in text.splitlines() if ln.strip()]
        try:
            data = [json.loads(ln) for ln in lines] if len(lines) > 1 else None
        except json.JSONDecodeError:
            data = None
        if data is None:
            raise ValueError(f"{p} is not valid JSON (truncated or corrupt?): {e}") from None
    if is_match_log(data):
        try:
            return records_from_log(data)
        except ValueError as e:
            raise ValueError(f"{p}: Botzone match log: {e}") from None
    if isinstance(data, dict) and data.get("format") == "mjenv-arena-v1":  # an arena report: its kept hands
        if not data.get("records"):
            raise ValueError(f"{p}: the arena report keeps no records (run it with records > 0)")
        data = data["records"]
    return _as_hand_list(data)


# ----------------------------------------------------------------------------------------------- helpers
def meld_view(meld: int, seat: int) -> list:
    """Display form of a packed meld of ``seat``: ``[tiles, from_seat (-1), claimed_index (-1), concealed,
    added]``."""
    kind, offer = M.kind_of(meld), M.offer_of(meld)
    tiles = M.meld_tiles(meld)
    if kind == M.CHOW:
        return [tiles, (seat + 3) % 4, offer - 1, 0, 0]
    if offer == 0:
        return [tiles, -1, -1, 1, 0]
    return [
        tiles,
        (seat - offer) % 4,
        1 if offer == 2 else (0 if offer == 1 else len(tiles) - 1),
        0,
        int(M.is_added(meld)),
    ]


def _probs_top(probs, where: str) -> list:
    if isinstance(probs, dict):
        items = []
        for k, p in probs.items():
            try:
                a = (
                    int(k)
                    if (isinstance(k, int) or str(k).lstrip("-").isdigit())
                    else A.str_to_action(str(k))
                )
                A.action_to_str(a)
            except (ValueError, TypeError):
                raise ValueError(f"{where}: unknown action {k!r} in probs") from None
            items.append((a, p))
    elif isinstance(probs, list):
        if len(probs) != A.NUM_ACTIONS:
            raise ValueError(f"{where}: probs must list {A.NUM_ACTIONS} values, got {len(probs)}")
        items = list(enumerate(probs))
    else:
        raise ValueError(f"{where}: probs must be a dict or a list of {A.NUM_ACTIONS} floats")  # noqa: TRY004
    out = []
    for a, p in items:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not math.isfinite(p) or p < 0:
            raise ValueError(
                f"{where}: probability of {A.action_to_str(a)} must be a finite number >= 0, got {p!r}"
            )
        out.append((float(p), a))
    out.sort(key=lambda x: (-x[0], x[1]))
    return [[A.action_to_str(a), round(p, 4)] for p, a in out[:TOP_ACTIONS] if p > 0]


def _info_view(entry, where: str):
    if entry is None:
        return None
    if not isinstance(entry, dict):
        raise ValueError(f"{where}: an info entry must be null or an object")  # noqa: TRY004 (file content)
    out = {}
    if entry.get("probs") is not None:
        out["top"] = _probs_top(entry["probs"], where)
    if entry.get("value") is not None:
        v = entry["value"]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ValueError(f"{where}: value must be a finite number, got {v!r}")
        out["value"] = round(float(v), 4)
    return out or None


def _seat_hand(st, s):
    return st[G.HAND + 34 * s : G.HAND + 34 * s + 34]


def _drawn(st):
    if st[G.PHASE] == G.PH_TURN and st[G.DRAWN] >= 0:
        return [int(st[G.TURN]), int(st[G.DRAWN])]
    return None


def _moves(before: np.ndarray, after: np.ndarray) -> dict:
    """What changed from one engine state to the next, as moves the page applies (see docs/viewer.md)."""
    mv: dict = {}
    h, m, r, rc, f = [], [], [], [], []
    for s in range(4):
        d = _seat_hand(after, s).astype(np.int64) - _seat_hand(before, s)
        if d.any():
            h.append([s, counts_to_tiles(np.maximum(-d, 0)), counts_to_tiles(np.maximum(d, 0))])
        mb, ma = G.seat_melds(before, s), G.seat_melds(after, s)
        for i, meld in enumerate(ma):
            if i >= len(mb) or mb[i] != meld:
                m.append([s, i, meld_view(meld, s)])
        db, da = G.seat_discards(before, s), G.seat_discards(after, s)
        if len(da) > len(db):
            r.append([s, [t for t, _ in da[len(db) :]]])
        for i, (_, c) in enumerate(da):
            if c and (i >= len(db) or not db[i][1]):
                rc.append([s, i])
        new = int(after[G.FLOWER_BITS + s]) & ~int(before[G.FLOWER_BITS + s])
        if new:
            f.append([s, [34 + b for b in range(8) if new >> b & 1]])
    for key, val in (("h", h), ("m", m), ("r", r), ("rc", rc), ("f", f)):
        if val:
            mv[key] = val
    if (after[G.FRONT], after[G.BACK]) != (before[G.FRONT], before[G.BACK]):
        mv["w"] = [int(after[G.FRONT]), int(after[G.BACK])]
    if after[G.PRIVATE_WALLS] and not np.array_equal(
        after[G.PWALL : G.PWALL + 4], before[G.PWALL : G.PWALL + 4]
    ):
        mv["pw"] = G.wall_counts(after)
    if not np.array_equal(after[G.SCORES : G.SCORES + 4], before[G.SCORES : G.SCORES + 4]):
        mv["sc"] = [int(x) for x in after[G.SCORES : G.SCORES + 4]]
    return mv


def _end_view(st: np.ndarray, last_op: list) -> dict:
    r = G.result(st)
    fans = []
    for i in np.flatnonzero(st[G.FANS : G.FANS + len(FAN_NAME_EN)]):
        fans.append([FAN_NAME_ZH[i], FAN_NAME_EN[i], int(FAN_POINTS[i]), int(st[G.FANS + i])])
    end = {
        "type": r["win_type"],
        "winner": -1 if r["winner"] is None else r["winner"],
        "loser": -1 if r["loser"] is None else r["loser"],
        "fan_total": r["fan_total"],
        "fans": fans,
        "flowers": int(st[G.FLOWERS + r["winner"]]) if r["winner"] is not None else 0,
        "payments": r["payments"],
    }
    if r["winner"] is not None:
        end["win_tile"] = int(st[G.WIN_TILE])
    if last_op[0] == "penalty":
        end["type"] = "illegal"
        end["illegal"] = {"seat": int(last_op[1]), "mode": _PENALTY_MODES[int(last_op[2])]}
    return end


class _Words:
    def __init__(self, names: list[str], dealer: int):
        self.names, self.dealer = names, dealer

    def who(self, s: int) -> str:
        return f"{_WIND_WORDS[(s - self.dealer) % 4]} ({self.names[s]})"

    def op(self, op: list, before: np.ndarray, after: np.ndarray, mv: dict) -> str:
        kind, s, v = op[0], int(op[1]), int(op[2])
        who = self.who(s)
        if kind == "penalty":
            return f"{who}: illegal action, penalty ({_PENALTY_MODES[v]})"
        name = A.action_to_str(v)
        offer = int(before[G.OFFER_TILE])
        if v < A.CHOW:
            return f"{who} discards {ENGLISH_NAMES[v]}"
        if v == A.PASS:
            return f"{who} passes"
        if (
            before[G.PHASE] in (G.PH_CLAIM, G.PH_ROB)
            and after[G.PHASE] == before[G.PHASE]
            and after[G.OFFER_TILE] == before[G.OFFER_TILE]
        ):
            return f"{who} answers (hidden until every asked player has answered)"
        if v == A.WIN:
            if before[G.PHASE] == G.PH_TURN:
                return f"{who} wins, self-drawn on {ENGLISH_NAMES[int(after[G.WIN_TILE])]}"
            src = self.who(int(before[G.OFFER_SEAT]))
            what = "robbing the kong of" if before[G.PHASE] == G.PH_ROB else "on the discard of"
            return f"{who} wins {what} {src}: {ENGLISH_NAMES[offer]}"
        if name.startswith("concealed_kong"):
            return f"{who} declares a concealed kong"
        if name.startswith("added_kong"):
            return f"{who} adds {ENGLISH_NAMES[v - A.ADDED_KONG]} to the pung (added kong)"
        return ""  # claims resolved: described with the claims

    def claim(self, s: int, v: int, offer: int, rob: bool = False) -> str:
        name = A.action_to_str(v)
        if rob:
            return (
                f"{self.who(s)} "
                + ("robs the kong: wins on " if v == A.WIN else "passes on ")
                + ENGLISH_NAMES[offer]
            )
        if name.startswith("chow"):
            return f"{self.who(s)} chows {ENGLISH_NAMES[offer]} ({name.split()[1]})"
        word = {
            "pung": "pungs",
            "kong": "declares an exposed kong on",
            "win": "wins on",
            "pass": "passes on",
        }[name]
        return f"{self.who(s)} {word} {ENGLISH_NAMES[offer]}"


def _hand_view(rec: dict, index: int, totals: dict[str, int]) -> dict:
    where = f"hand {index}"
    try:
        states = replay(rec)
    except (KeyError, TypeError, IndexError) as e:
        raise ValueError(f"{where}: malformed record ({type(e).__name__}: {e})") from None
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    ops = [list(o) for o in rec["ops"]]
    info = rec.get("info")
    if info is not None and (not isinstance(info, list) or len(info) != len(ops)):
        raise ValueError(f"{where}: 'info' must be a list aligned with 'ops' ({len(ops)} entries)")
    players = rec.get("players")
    names = [f"seat {c}" for c in range(4)]
    if isinstance(players, dict) and sorted(players.values()) == [0, 1, 2, 3]:
        for name, c in players.items():
            names[int(c)] = str(name)
    st0 = states[0]
    dealer = int(st0[G.DEALER])
    words = _Words(names, dealer)
    steps = []
    pending: list[list] = []  # answers of the open claim / rob window, shown once it is resolved
    for i, op in enumerate(ops):
        before, after = states[i], states[i + 1]
        mv = _moves(before, after)
        step: dict = {"op": [op[0] == "act" and 1 or 0, int(op[1]), int(op[2])], "mv": mv}
        text = words.op(op, before, after, mv)
        in_window = before[G.PHASE] in (G.PH_CLAIM, G.PH_ROB) and op[0] == "act"
        if in_window:
            pending.append([int(op[1]), int(op[2])])
        window_open = (
            after[G.PHASE] in (G.PH_CLAIM, G.PH_ROB)
            and after[G.OFFER_TILE] == before[G.OFFER_TILE]
            and after[G.OFFER_SEAT] == before[G.OFFER_SEAT]
        )
        if in_window and not window_open:
            offer = int(before[G.OFFER_TILE])
            step["claims"] = [[s, A.action_to_str(v)] for s, v in pending]
            rob = before[G.PHASE] == G.PH_ROB
            said = [words.claim(s, v, offer, rob) for s, v in pending if v != A.PASS or len(pending) == 1]
            text = "; ".join(x for x in said if x) or text
            pending = []
        elif in_window and window_open:
            text = f"{words.who(int(op[1]))} answers (hidden until every asked player has answered)"
        extra = []
        for s, fl in mv.get("f", []):
            extra.append(f"{words.who(s)} sets aside {', '.join(ENGLISH_NAMES[t] for t in fl)}")
        dr = _drawn(after)
        if after[G.N_DRAWS] > before[G.N_DRAWS] and dr is not None:
            src = "draws" if after[G.DRAW_KIND] == G.KIND_NORMAL else "draws a replacement"
            extra.append(f"{words.who(dr[0])} {src}")
        if (
            after[G.PHASE] == G.PH_OVER
            and before[G.PHASE] != G.PH_OVER
            and after[G.WINNER] < 0
            and op[0] == "act"
        ):
            extra.append("the wall is empty: draw")
        step["say"] = "; ".join(x for x in [text, *extra] if x)
        step["dr"] = dr
        step["cur"] = int(after[G.CUR]) if after[G.PHASE] != G.PH_OVER else -1
        if after[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
            step["offer"] = [int(after[G.OFFER_SEAT]), int(after[G.OFFER_TILE])]
        if info is not None:
            iv = _info_view(info[i], f"{where}, info[{i}]")
            if iv is not None:
                step["info"] = iv
            # what the policy noted at this decision (a Botzone bot's fault)
            note = info[i].get("note") if isinstance(info[i], dict) else None
            if isinstance(note, str) and note:
                step["say"] += f" [{note}]"
        steps.append(step)
    last = states[-1]
    end = _end_view(last, ops[-1]) if last[G.PHASE] == G.PH_OVER and ops else None
    before_totals = [totals.get(n, 0) for n in names]
    if end is not None:
        for c, n in enumerate(names):
            totals[n] = totals.get(n, 0) + end["payments"][c]
    source = rec.get("source")
    label = None
    if isinstance(source, dict) and source.get("kind") in ("botzone-json", "human-text"):
        label = (
            f"{'Botzone' if source['kind'] == 'botzone-json' else 'human log'} match {source.get('match')}"
        )
        if source.get("round"):
            label += f" round {source['round']}"
    return {
        "seed": int(rec["seed"]),
        "label": label,
        "dealer": dealer,
        "prevalent": int(st0[G.PREVALENT]),
        "dice": [int(st0[G.DICE]) // 10, int(st0[G.DICE]) % 10],
        "names": names,
        "min_fan": int(st0[G.MIN_FAN]),
        "deal": {
            "hands": [counts_to_tiles(_seat_hand(st0, s)) for s in range(4)],
            "flowers": [[34 + b for b in range(8) if int(st0[G.FLOWER_BITS + s]) >> b & 1] for s in range(4)],
            "wall": [int(st0[G.FRONT]), int(st0[G.BACK])],
            "pw": G.wall_counts(st0) if st0[G.PRIVATE_WALLS] else None,
            "dr": _drawn(st0),
            "cur": int(st0[G.CUR]),
        },
        "steps": steps,
        "end": end,
        "totals_before": before_totals,
    }


def build_view(records, title: str | None = None) -> dict:
    """The JSON the page embeds (format ``mjenv-view-v1``) for one record, a list of records or a match."""
    hands = _as_hand_list(records)
    totals: dict[str, int] = {}
    views = [_hand_view(r, i, totals) for i, r in enumerate(hands)]
    return {
        "format": VIEW_FORMAT,
        "title": title or ("mjenv replay" if len(views) == 1 else f"mjenv replay: {len(views)} hands"),
        "winds": list(WIND_NAMES),
        "tiles": list(ENGLISH_NAMES),
        "hands": views,
    }


def _asset(name: str) -> str:
    return resources.files("mjenv.viewer").joinpath(name).read_text(encoding="utf-8")


def render_html(records, title: str | None = None) -> str:
    """The self-contained page (inline CSS, script and SVG tile faces; no network access) as a string."""
    from mjenv.viewer.faces import svg_defs

    view = build_view(records, title)
    data = json.dumps(view, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    page = _asset("viewer.html")
    title_html = view["title"].replace("&", "&amp;").replace("<", "&lt;")
    for key, val in (
        ("TITLE", title_html),
        ("CSS", _asset("viewer.css")),
        ("FACES", svg_defs()),
        ("JS", _asset("viewer.js")),
        ("DATA", data),
    ):
        page = page.replace("{{" + key + "}}", val, 1)
    return page


def write_html(records, path: str | Path, title: str | None = None) -> int:
    """Write the page for ``records`` to ``path``; returns its size in bytes. Nothing is written on bad input."""
    page = render_html(records, title)
    data = page.encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)
