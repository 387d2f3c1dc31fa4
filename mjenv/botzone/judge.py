"""A drop-in replacement of the Botzone Chinese Standard Mahjong judge, built on the mjenv engine.

Rules
-----
The judge of ailab-pku/Chinese-Standard-Mahjong (``judge/main.cpp``, the version with private walls): Botzone
calls it once per round with ``{"log": [...], "initdata": {...}}`` (the whole match log so far: judge outputs at
even indices, the bots' answers ``{"0": {"verdict", "response"}, ...}`` at odd ones) and it prints the next
``{"command": "request" | "finish", "content": {...}, "display": {...}}``. ``docs/botzone.md`` lists its
behaviour, including the odd parts this module reproduces.

Specification in mjenv
----------------------
* :func:`judge` is a pure function of the bots' answers in the log and ``initdata`` (the judge entries of the log
  are never read), like the C++ judge. :class:`Judge` is the same thing incremental: :meth:`Judge.feed` takes
  one round of answers and returns the next output, so a match costs one engine step per move instead of a
  replay of the whole log per call.
* The table is the engine (:mod:`mjenv.game`) with :meth:`mjenv.rules.RuleConfig.botzone` (``flowers=True`` for a
  144-tile ``walltiles``): the judge only checks the answers in the C++ judge's order, turns the accepted ones
  into engine actions and formats the engine's state (``canHu`` is the scorer's raw result,
  :func:`mjenv.game.raw_score_kernel`). A move the engine rejects is the judge's WA where the C++ judge rejects
  it too (claims and kongs on an empty wall); any other disagreement is an internal error (``RuntimeError``).
* Without ``walltiles`` in ``initdata`` the wall comes from glibc ``srand``/``rand`` and libstdc++
  ``std::random_shuffle``, and a missing or out-of-range ``quan`` from one ``rand()`` before the shuffle:
  :func:`srand_wall` reproduces both bit for bit (:class:`GlibcRand`; every shuffled wall of the shared corpus).
  Without an int ``srand`` the C++ judge seeds from the clock: that is a ``ValueError`` here.
"""

from __future__ import annotations

import json
import os
import sys

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.fans import FAN_NAME_ZH, FAN_POINTS, NUM_FANS, REFERENCE_ORDER, Fan
from mjenv.rules import RuleConfig
from mjenv.tiles import BOTZONE_CODES

__all__ = ["GlibcRand", "Judge", "judge", "main", "parse_walltiles", "srand_wall"]

_TILE = {c: i for i, c in enumerate(BOTZONE_CODES)}
_NOT_COMPUTED = -4
_KEYS = ("0", "1", "2", "3")
#: fan names as the judge's (older) calculator prints them; PyMahjongGB's newer names elsewhere
_JUDGE_FAN_NAME = list(FAN_NAME_ZH)
_JUDGE_FAN_NAME[Fan.EDGE_WAIT] = "边张"
_JUDGE_FAN_NAME[Fan.CLOSED_WAIT] = "嵌张"
_JUDGE_FAN_NAME[Fan.SINGLE_WAIT] = "单钓将"


def parse_walltiles(text: str) -> list[int]:
    """Tile ids of a ``walltiles`` string (Botzone codes separated by single spaces; 136 tiles, or 144 with the
    flowers ``H1``..``H8``). Raises ValueError naming the first bad token."""
    if not isinstance(text, str):
        raise TypeError(f"walltiles must be a string, got {type(text).__name__}")
    toks = text.split(" ")
    out = []
    for i, t in enumerate(toks):
        if t not in _TILE:
            raise ValueError(f"walltiles: token {i} {t!r} is not a Botzone tile code")
        out.append(_TILE[t])
    if len(out) not in (136, 144):
        raise ValueError(f"walltiles must hold 136 or 144 tiles, got {len(out)}")
    return out


class GlibcRand:
    """glibc's ``srand`` / ``rand`` (the TYPE_3 additive feedback generator of ``random_r``), bit for bit:
    ``GlibcRand(1).rand() == 1804289383``."""

    def __init__(self, seed: int) -> None:
        seed &= 0xFFFFFFFF  # srand takes an unsigned int; 0 is treated as 1
        if seed == 0:
            seed = 1
        w = seed - (1 << 32) if seed >= 1 << 31 else seed  # state words are int32
        r = [w]
        for _ in range(1, 31):  # state[i] = 16807 * state[i-1] % (2^31 - 1), C's truncating division
            q = abs(w) // 127773
            hi = q if w >= 0 else -q
            lo = w - hi * 127773
            w = 16807 * lo - 2836 * hi
            if w < 0:
                w += 2147483647
            r.append(w)
        r += r[0:3]
        for i in range(34, 344):  # the 310 outputs srand discards
            r.append((r[i - 31] + r[i - 3]) & 0xFFFFFFFF)
        self._r = r

    def rand(self) -> int:
        r = self._r
        v = (r[-31] + r[-3]) & 0xFFFFFFFF
        r.append(v)
        if len(r) > 4096:
            del r[:-64]
        return v >> 1


#: the judge's wall before the shuffle: W_i B_i T_i four times for i = 1..9, then F1..F4 and J1..J3, 4 each
_JUDGE_WALL = (
    [c for i in range(1, 10) for _ in range(4) for c in (f"W{i}", f"B{i}", f"T{i}")]
    + [f"F{i}" for i in range(1, 5) for _ in range(4)]
    + [f"J{i}" for i in range(1, 4) for _ in range(4)]
)


def srand_wall(seed: int, quan: object = None) -> tuple[str, int]:
    """The C++ judge's ``walltiles`` and ``quan`` from ``srand`` alone: ``srand(seed)``; ``quan = rand() % 4``
    when ``quan`` is not an int 0..3; then libstdc++'s ``std::random_shuffle`` (``rand() % (i + 1)`` for
    ``i = 1 .. n-1``) of the 136-tile wall. Reproduces every shuffled wall of the shared corpus."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise TypeError(f"srand must be an int, got {type(seed).__name__}")
    g = GlibcRand(seed)
    if isinstance(quan, bool) or not isinstance(quan, int) or not 0 <= quan <= 3:
        quan = g.rand() % 4
    wall = list(_JUDGE_WALL)
    for i in range(1, len(wall)):
        j = g.rand() % (i + 1)
        wall[i], wall[j] = wall[j], wall[i]
    return " ".join(wall), quan


class _Finish(Exception):
    """The match is over: ``output`` is the judge's finish output."""

    def __init__(self, output: dict):
        self.output = output


def _text(v: object) -> str:
    """A bot's ``response`` as the judge's jsoncpp ``asString`` reads it."""
    if isinstance(v, str):
        return v
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return ""


class Judge:
    """The Botzone judge as an incremental object: ``Judge(initdata)`` gives the INIT output as :attr:`output`;
    :meth:`feed` takes one round of bot answers (``{"0": {"verdict": "OK", "response": "PASS"}, ...}``) and
    returns the next output. After a ``finish`` output :meth:`feed` raises ``ValueError``.

    ``initdata``: ``{"srand": int, "quan": 0..3, "walltiles": str}``. As in the C++ judge, a missing
    ``walltiles`` is shuffled and a missing or out-of-range ``quan`` drawn from ``srand`` (:func:`srand_wall`);
    without an int ``srand`` they are a ``ValueError`` (the C++ judge would seed from the clock).
    """

    def __init__(self, initdata: dict, *, display: bool = True):
        if not isinstance(initdata, dict):
            raise TypeError(f"initdata must be a dict, got {type(initdata).__name__}")
        wt = initdata.get("walltiles")
        quan = initdata.get("quan")
        srand = initdata.get("srand")
        given = wt if isinstance(wt, str) else ""
        quan_ok = not isinstance(quan, bool) and isinstance(quan, int) and 0 <= quan <= 3
        if not given or not quan_ok:  # the C++ judge: srand(srand); quan = rand() % 4; random_shuffle
            if isinstance(srand, bool) or not isinstance(srand, int):
                raise ValueError(
                    "initdata needs an int 'srand' when 'walltiles' is missing or 'quan' is not an int 0..3 "
                    f"(the judge would seed rand() from the clock); got walltiles {'given' if given else 'missing'}"
                    f", quan {quan!r}, srand {srand!r}"
                )
            gen, quan = srand_wall(srand, quan)
            wt = given or gen
        if srand is None:
            srand = 0
        self.wall = parse_walltiles(wt)
        self.walltiles = wt
        self.strlen = len(given)  # display.strlen: the length of the given walltiles (0 when shuffled)
        self.quan = quan
        self.srand = srand
        self.display = display  # False: skip canHu (the scorer) on request outputs that are not kept
        self.rules = RuleConfig.botzone(quan, flowers=len(self.wall) == 144)
        self.part = len(self.wall) // 4
        self.state = G.new_state()
        G.reset_wall(self.state, self.wall, 0, quan, self.rules)
        self._tabs = G.win_tables()
        self._rewards = np.zeros(4, np.float32)
        self._fans = np.zeros(NUM_FANS, np.int16)
        self.stage = "init"  # init, deal, pass (BUHUA: all pass), draw, discard, kong, rob, over
        self.queue: list[dict] = []  # outputs already decided by the engine, emitted one per call
        self.output = self._init_output()
        self.over = False

    # ------------------------------------------------------------------------------------------ outputs
    def _base(self, action: str, player: int | None = None, tile: str | None = None) -> dict:
        d: dict = {"action": action, "canHu": [_NOT_COMPUTED] * 4}
        if player is not None:
            d["player"] = player
        if tile is not None:
            d["tile"] = tile
        return d

    def _init_output(self) -> dict:
        q = self.quan
        return {
            "command": "request",
            "content": {str(i): f"0 {i} {q}" for i in range(4)},
            "display": {
                "action": "INIT",
                "canHu": [_NOT_COMPUTED] * 4,
                "quan": q,
                "srand": self.srand,
                "strlen": self.strlen,
            },
            "initdata": {"walltiles": self.walltiles, "quan": q, "srand": self.srand},
        }

    def _counts(self) -> list[int]:
        return [int(x) for x in self.state[G.PWALL : G.PWALL + 4]]

    def _deal_output(self) -> dict:
        """The DEAL output, and the queue of the dealer's first draw (its pops after the deal)."""
        hands: list[list[str]] = []
        tiles13: list[list[str]] = []
        flowers: list[list[str]] = []
        popped = [0] * 4
        for s in range(4):
            h: list[str] = []
            t13: list[str] = []
            fl: list[str] = []
            i = self.part - 1
            while len(t13) < 13:
                c = BOTZONE_CODES[self.wall[self.part * s + i]]
                h.append(c)
                (fl if c[0] == "H" else t13).append(c)
                i -= 1
            popped[s] = self.part - 1 - i
            hands.append(h)
            tiles13.append(t13)
            flowers.append(fl)
        content = {}
        for i in range(4):
            text = "1 " + " ".join(str(len(f)) for f in flowers) + " " + " ".join(tiles13[i])
            for f in flowers:
                for c in f:
                    text += " " + c
            content[str(i)] = text
        d = self._base("DEAL")
        d["hand"] = hands
        d["tileCnt"] = [self.part - popped[s] for s in range(4)]
        out = {"command": "request", "content": content, "display": d}
        self._queue_draw(0, self.part - popped[0])
        return out

    def _queue_draw(self, s: int, before: int) -> None:
        """Queue the outputs of ``s``'s draw that the engine made: its part went from ``before`` to now (BUHUA per
        flower, then DRAW, or HUANG when the part ran out)."""
        now = int(self.state[G.PWALL + s])
        counts = self._counts()
        for k in range(before - now):
            c = BOTZONE_CODES[self.wall[self.part * s + before - 1 - k]]
            counts[s] = before - 1 - k
            if c[0] == "H":
                d = self._base("BUHUA", s, c)
                d["tileCnt"] = list(counts)
                self.queue.append(
                    {
                        "command": "request",
                        "content": {str(i): f"3 {s} BUHUA {c}" for i in range(4)},
                        "display": d,
                        "_stage": "pass",
                    }
                )
            else:
                d = self._base("DRAW", s, c)
                d["tileCnt"] = list(counts)
                content = {str(i): (f"2 {c}" if i == s else f"3 {s} DRAW") for i in range(4)}
                self.queue.append(
                    {
                        "command": "request",
                        "content": content,
                        "display": d,
                        "_stage": "draw",
                        "_canhu": "draw",
                    }
                )
        if self.state[G.PHASE] == G.PH_OVER:  # exhaustive draw: the drawer's part is empty
            d = self._base("HUANG")
            d["tileCnt"] = self._counts()
            self.queue.append(
                {
                    "command": "finish",
                    "content": {str(i): 0 for i in range(4)},
                    "display": d,
                    "_stage": "over",
                }
            )

    def _emit(self) -> dict:
        out = self.queue.pop(0)
        self.stage = out.pop("_stage")
        kind = out.pop("_canhu", None)
        if kind is not None and self.display:
            self._fill_canhu(out["display"], kind)
        if out["command"] == "finish":
            self.over = True
        self.output = out
        return out

    def _fill_canhu(self, d: dict, kind: str) -> None:
        st = self.state
        if kind == "draw":
            s = int(st[G.TURN])
            d["canHu"][s] = int(
                G.raw_score_kernel(st, s, int(st[G.DRAWN]), int(st[G.WIN_FLAGS_P + s]), True, self._fans)
            )
            return
        t = int(st[G.OFFER_TILE])
        o = int(st[G.OFFER_SEAT])
        flags = int(st[G.WIN_FLAGS_P + (o + 1) % 4])
        for i in range(4):
            if kind == "rob" and i == o:
                continue
            d["canHu"][i] = int(G.raw_score_kernel(st, i, t, flags, False, self._fans))

    # ------------------------------------------------------------------------------------------ errors, wins
    def _error(self, player: int, code: str) -> None:
        score = [10] * 4
        score[player] = -30
        d = {"action": code, "canHu": [_NOT_COMPUTED] * 4, "player": player, "score": score}
        if self.stage == "init":
            d["strlen"] = self.strlen
        raise _Finish({"command": "finish", "content": {str(i): score[i] for i in range(4)}, "display": d})

    def _hu(self, player: int, tile: int, in_hand: bool) -> None:
        """``player`` answered HU: the win (finish) or WH."""
        st = self.state
        flags = int(st[G.WIN_FLAGS_P + player])
        fans = np.zeros(NUM_FANS, np.int16)
        total = int(G.raw_score_kernel(st, player, tile, flags, in_hand, fans))
        fan_list = [
            {"name": _JUDGE_FAN_NAME[f], "cnt": int(fans[f]), "value": int(FAN_POINTS[f])}
            for f in REFERENCE_ORDER
            if fans[f] > 0
        ]
        flowers = int(st[G.FLOWERS + player])
        if total < 8 + flowers:
            score = [10] * 4
            score[player] = -30
            d = {
                "action": "WH",
                "canHu": [_NOT_COMPUTED] * 4,
                "fanCnt": total,
                "player": player,
                "score": score,
            }
            if fan_list:
                d["fan"] = fan_list
            raise _Finish(
                {"command": "finish", "content": {str(i): score[i] for i in range(4)}, "display": d}
            )
        self._act({player: A.WIN})
        if st[G.WINNER] != player or int(st[G.WIN_TOTAL]) != total:  # pragma: no cover - engine disagreement
            raise RuntimeError(f"engine disagrees on the win of seat {player}: {G.result(st)}")
        score = [int(x) for x in st[G.SCORES : G.SCORES + 4]]
        d = {
            "action": "HU",
            "canHu": [_NOT_COMPUTED] * 4,
            "fan": fan_list,
            "fanCnt": total,
            "player": player,
            "score": score,
        }
        raise _Finish({"command": "finish", "content": {str(i): score[i] for i in range(4)}, "display": d})

    # ------------------------------------------------------------------------------------------ engine
    def _step(self, action: int) -> None:
        err = G.step_kernel(self.state, action, self._rewards, *self._tabs)
        if err != G.OK:  # pragma: no cover - the judge only sends moves it checked
            raise RuntimeError(f"engine rejected {A.action_to_str(action)} of seat {int(self.state[G.CUR])}")

    def _act(self, moves: dict[int, int]) -> None:
        """Play one decision: in a claim or robbing window every asked seat answers (``moves`` or PASS); on a
        turn the seat to act plays ``moves[seat]``."""
        st = self.state
        if st[G.PHASE] == G.PH_TURN:
            self._step(moves[int(st[G.CUR])])
            return
        while st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
            self._step(moves.get(int(st[G.CUR]), A.PASS))

    def _hand(self, s: int, t: int) -> int:
        return int(self.state[G.HAND + 34 * s + t])

    # ------------------------------------------------------------------------------------------ rounds
    def feed(self, answers: dict) -> dict:
        """One round of bot answers -> the judge's next output (a dict, new each call)."""
        if self.over:
            raise ValueError("the match is over (the last output was a finish)")
        if not isinstance(answers, dict):
            answers = {}
        try:
            self._round(answers)
        except _Finish as f:
            self.over = True
            self.stage = "over"
            self.output = f.output
            return f.output
        return self._emit()

    def _answer(self, answers: dict, i: int) -> tuple[str, str]:
        a = answers.get(_KEYS[i])
        if not isinstance(a, dict):
            return "", ""
        v, r = a.get("verdict"), a.get("response")
        return (v if type(v) is str else _text(v)), (r if type(r) is str else _text(r))

    def _check_pass(self, answers: dict, i: int) -> None:
        v, r = self._answer(answers, i)
        if v != "OK":
            self._error(i, v)
        if r != "PASS":
            self._error(i, "WA")

    def _round(self, answers: dict) -> None:
        stage = self.stage
        if stage in ("init", "deal", "pass"):
            for i in range(4):
                self._check_pass(answers, i)
            if stage == "init":
                self.queue.append(dict(self._deal_output(), _stage="deal"))
                # the deal output goes first, then the dealer's first draw (already queued after it)
                self.queue.insert(0, self.queue.pop())
            return
        if stage == "draw":
            self._round_draw(answers)
        elif stage == "discard":
            self._round_discard(answers)
        else:  # kong, rob
            self._round_kong(answers, stage == "rob")

    def _round_draw(self, answers: dict) -> None:
        st = self.state
        p = int(st[G.TURN])
        move = None
        for i in range(4):
            if i != p:
                self._check_pass(answers, i)
                continue
            v, r = self._answer(answers, i)
            if v != "OK":
                self._error(i, v)
            w = r.split(" ")
            if len(w) == 1 and w[0] == "HU":
                self._hu(p, int(st[G.DRAWN]), True)
            elif len(w) == 2 and w[1] in _TILE and _TILE[w[1]] < 34:
                t = _TILE[w[1]]
                if w[0] == "PLAY" and self._hand(p, t) > 0:
                    move = ("PLAY", t)
                elif w[0] == "GANG" and self._hand(p, t) == 4:
                    move = ("GANG", t)
                elif w[0] == "BUGANG" and self._hand(p, t) > 0 and G.pung_index_kernel(st, p, t) >= 0:
                    move = ("BUGANG", t)
            if move is None:
                self._error(i, "WA")
        kind, t = move
        if kind == "PLAY":
            self._act({p: A.DISCARD + t})
            self._queue_discard("PLAY", p, t)
            return
        if G.kong_blocked_kernel(st, p):  # the output phase: a kong on an empty wall
            self._error(p, "WA")
        before = int(st[G.PWALL + p])
        d = self._base("GANG" if kind == "GANG" else "BUGANG", p, BOTZONE_CODES[t])
        d["tileCnt"] = self._counts()
        if kind == "GANG":
            self._act({p: A.CONCEALED_KONG + t})
            self.queue.append(
                {
                    "command": "request",
                    "content": {str(i): f"3 {p} GANG" for i in range(4)},
                    "display": d,
                    "_stage": "kong",
                }
            )
            self._queue_draw(p, before)
        else:
            self._act({p: A.ADDED_KONG + t})
            self.queue.append(
                {
                    "command": "request",
                    "content": {str(i): f"3 {p} BUGANG {BOTZONE_CODES[t]}" for i in range(4)},
                    "display": d,
                    "_stage": "rob",
                    "_canhu": "rob",
                }
            )

    def _queue_discard(self, what: str, p: int, t: int, mid: int = -1) -> None:
        c = BOTZONE_CODES[t]
        d = self._base(what, p, c)
        if what == "CHI":
            d["tileCHI"] = BOTZONE_CODES[mid]
            text = f"3 {p} CHI {BOTZONE_CODES[mid]} {c}"
        else:
            text = f"3 {p} {what} {c}"
        d["tileCnt"] = self._counts()
        self.queue.append(
            {
                "command": "request",
                "content": {str(i): text for i in range(4)},
                "display": d,
                "_stage": "discard",
                "_canhu": "discard",
            }
        )

    def _round_discard(self, answers: dict) -> None:
        st = self.state
        dsc = int(st[G.OFFER_SEAT])
        t = int(st[G.OFFER_TILE])
        self._check_pass(answers, dsc)
        resp = {}
        for k in range(1, 4):
            o = (dsc + k) % 4
            v, r = self._answer(answers, o)
            if v != "OK":
                self._error(o, v)
            if r == "HU":
                self._hu(o, t, False)
            resp[o] = r.split(" ")
        claim = None
        for o in range(4):  # PENG / GANG (and the shape of every answer) in seat order
            if o == dsc:
                continue
            w = resp[o]
            if len(w) == 1:
                if w[0] == "PASS":
                    continue
                if w[0] == "GANG" and self._hand(o, t) == 3:
                    claim = (o, A.KONG, -1, -1)
                    break
                self._error(o, "WA")
            elif len(w) == 2:
                if w[0] == "PENG" and self._hand(o, t) >= 2:
                    t2 = _TILE.get(w[1], -1)
                    if 0 <= t2 < 34 and self._hand(o, t2) - 2 * (t2 == t) > 0:
                        claim = (o, A.PUNG, t2, -1)
                        break
                self._error(o, "WA")
            elif len(w) != 3:
                self._error(o, "WA")
        if claim is None:
            for o in range(4):  # CHI in seat order: only the next seat may
                if o == dsc or len(resp[o]) != 3:
                    continue
                w = resp[o]
                if w[0] != "CHI" or o != (dsc + 1) % 4:
                    self._error(o, "WA")
                mid = _TILE.get(w[1], -1)
                if not (0 <= mid < 27 and t < 27 and mid // 9 == t // 9 and abs(mid - t) <= 1):
                    self._error(o, "WA")
                lo = mid - 1
                if mid % 9 == 0 or mid % 9 == 8:  # the run would leave the suit
                    self._error(o, "WA")
                for x in (lo, mid, mid + 1):
                    if x != t and self._hand(o, x) == 0:
                        self._error(o, "WA")
                t2 = _TILE.get(w[2], -1)  # the discard, from the hand less the two tiles of the run
                if not (0 <= t2 < 34) or self._hand(o, t2) + (t2 == t) - (t2 in (lo, mid, mid + 1)) <= 0:
                    self._error(o, "WA")
                claim = (o, A.CHOW + (t - lo), t2, mid)
                break
        if claim is None:
            before = int(st[G.PWALL + (dsc + 1) % 4])
            self._act({})
            self._queue_draw((dsc + 1) % 4, before)
            return
        o, a, t2, mid = claim
        if G.last_tile_kernel(st, dsc):  # the output phase: a claim when the next seat's part is empty
            self._error(o, "WA")
        if a == A.KONG:
            before = int(st[G.PWALL + o])
            d = self._base("GANG", o, BOTZONE_CODES[t])
            d["tileCnt"] = self._counts()
            self._act({o: a})
            self.queue.append(
                {
                    "command": "request",
                    "content": {str(i): f"3 {o} GANG" for i in range(4)},
                    "display": d,
                    "_stage": "kong",
                }
            )
            self._queue_draw(o, before)
            return
        self._act({o: a})
        self._act({o: A.DISCARD + t2})
        self._queue_discard("PENG" if a == A.PUNG else "CHI", o, t2, mid)

    def _round_kong(self, answers: dict, rob: bool) -> None:
        st = self.state
        s = int(st[G.OFFER_SEAT]) if rob else int(st[G.TURN])
        for k in range(4):
            i = (s + k) % 4
            v, r = self._answer(answers, i)
            if v != "OK":
                self._error(i, v)
            if r == "PASS":
                continue
            if rob and i != s and r == "HU":
                self._hu(i, int(st[G.OFFER_TILE]), False)
            self._error(i, "WA")
        if rob:
            before = int(st[G.PWALL + s])
            self._act({})
            self._queue_draw(s, before)
        # after a concealed or exposed kong the replacement draw is queued already


def judge(inp: dict) -> dict:
    """The Botzone judge: ``{"log": [...], "initdata": {...}}`` -> the next output (see the module docstring).

    Raises ValueError / TypeError on input the judge cannot use (no ``walltiles``, a bad wall, a log after a
    finish).
    """
    if not isinstance(inp, dict):
        raise TypeError(f"judge input must be a dict, got {type(inp).__name__}")
    log = inp.get("log", [])
    if not isinstance(log, list):
        raise TypeError(f"'log' must be a list, got {type(log).__name__}")
    init = inp.get("initdata")
    if isinstance(init, str):  # Botzone may hand initdata over as a JSON string
        try:
            init = json.loads(init) if init else {}
        except ValueError as e:
            raise ValueError(f"'initdata' is a string but not JSON: {e}") from None
    answers = log[1::2]
    j = Judge(init if init is not None else {}, display=False)
    for k, a in enumerate(answers):
        if k == len(answers) - 1:
            j.display = True
        j.feed(a)
    out = j.output
    if answers:
        out.pop("initdata", None)
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m mjenv.botzone.judge``: one judge input as JSON on stdin (one object, as Botzone sends it),
    the output as one line of JSON on stdout; exit status 0.

    Input the judge cannot use (empty, not JSON, not one object, a bad ``log`` or ``initdata``) writes nothing
    to stdout, one line ``{"error": "..."}`` naming the problem to stderr, and exits with status 2."""
    data = sys.stdin.buffer.read()
    try:
        if not data.strip():
            raise ValueError(
                'empty input: the judge reads one JSON object {"log": [...], "initdata": {...}} from stdin'
            )
        try:
            inp = json.loads(data)
        except ValueError as e:  # JSONDecodeError, UnicodeDecodeError
            raise ValueError(f"input is not one JSON object: {e}") from None
        out = judge(inp)
    except (ValueError, TypeError) as e:
        print(json.dumps({"error": str(e)}, ensure_ascii=False), file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(out, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    code = main()
    sys.stdout.flush()
    sys.stderr.flush()
    # Botzone starts the judge once per round: leave without the interpreter's teardown (numba's finalizers
    # and LLVM's, ~0.25 s of CPU per call, more than the round itself); the output is written and flushed.
    os._exit(code)
