"""Bots out: any mjenv policy as a Botzone Chinese Standard Mahjong bot.

Protocol
--------
Botzone (the judge of ailab-pku/Chinese-Standard-Mahjong) sends every seat one request string per round and
reads one answer (``docs/botzone.md``): ``0 me quan``, ``1 f0 f1 f2 f3 <13 tiles> <flowers>``, ``2 t`` (my
draw), ``3 p DRAW | BUHUA h | PLAY t | PENG t | CHI mid t | GANG | BUGANG t``; the answers are ``PASS``,
``PLAY t``, ``GANG t``, ``BUGANG t``, ``HU``, ``PENG t``, ``CHI mid t``, ``GANG``.
:func:`main` (``python -m mjenv.botzone.bot --agent module:factory``) speaks both Botzone interactions:

* **simple**: a turn count line ``n``, then ``2n - 1`` lines (request, response, ..., request), optionally a
  ``data`` and a ``globaldata`` line; the bot prints the response (and a debug line);
* **JSON**: one line ``{"requests": [...], "responses": [...], ...}``; the bot prints
  ``{"response": ..., "debug": ...}``;

and **keep-running**: after each answer it prints ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` and waits for the next
input, which may be the next request only (a line, or a JSON string / ``{"requests": [r]}`` in JSON mode) or a
whole history again. The interaction is detected from the first character of the input.

Specification in mjenv
----------------------
:class:`BotCore` rebuilds, from the requests and its own responses alone, an engine state (:mod:`mjenv.game`,
:meth:`mjenv.rules.RuleConfig.botzone`) of the game from its seat's point of view and asks the policy with
:func:`mjenv.observation.observe_kernel` of that state, so the policy sees exactly what mjenv's engine shows
that player in the same game (tested against engine-driven games). Hidden tiles (the others' hands and every
undrawn wall tile) are filled *consistently*: the state's wall and the others' hands always hold the tiles the
seat has not seen (each tile 4 times in all), and a tile revealed by a draw, a discard or a meld is swapped in
from an unseen location. Only the one exception: another player's concealed kong, whose face is never shown,
takes a tile of which four copies are unseen when there is one.

A step of the engine that makes a seat draw (the end of a claim window, a kong, the deal) is applied when the
draw is announced (after its flower replacements, ``BUHUA``), so the engine draws exactly those tiles.
A 144-tile wall (flowers) is recognised when the first flower shows up; the state is then rebuilt (before it,
the bot counts a 136-tile wall).

Answers: on a claim (``PENG``/``CHI``) the policy is asked twice, for the claim and then, on the state where
the claim went through, for the discard that goes with it. The policy is asked only when the engine would ask
the seat (its turn, every claim window and robbing window of another seat's tile); the other requests are
answered ``PASS`` without a policy call. Bad input (malformed requests, histories that do not fit a game,
policies that raise or answer illegally) never crashes the bot: it answers ``PASS`` where that is legal (on its
own draw: ``PLAY`` of the drawn tile) and says why in ``debug``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.rules import RuleConfig
from mjenv.tiles import BOTZONE_CODES

__all__ = ["BotCore", "BotError", "KEEP_RUNNING", "action_to_response", "main", "serve"]

KEEP_RUNNING = ">>>BOTZONE_REQUEST_KEEP_RUNNING<<<"
_TILE = {c: i for i, c in enumerate(BOTZONE_CODES)}


class BotError(ValueError):
    """A request (or the history) that does not fit a game of the Botzone variant."""


def _tile(code: str, *, flower: bool = False) -> int:
    t = _TILE.get(code, -1)
    if t < 0 or (t >= 34) != flower:
        raise BotError(f"{code!r} is not a Botzone {'flower' if flower else 'tile'} code")
    return t


def action_to_response(action: int, offer_tile: int, discard: int = -1) -> str:
    """The Botzone answer of an mjenv action (``discard``: the tile played after a chow or pung)."""
    a = int(action)
    if a == A.PASS:
        return "PASS"
    if a == A.WIN:
        return "HU"
    if a < A.CHOW:
        return f"PLAY {BOTZONE_CODES[a]}"
    if a < A.PUNG:  # claimed tile at position p of the run: middle = t - p + 1
        return f"CHI {BOTZONE_CODES[offer_tile - (a - A.CHOW) + 1]} {BOTZONE_CODES[discard]}"
    if a == A.PUNG:
        return f"PENG {BOTZONE_CODES[discard]}"
    if a == A.KONG:
        return "GANG"
    if a < A.ADDED_KONG:
        return f"GANG {BOTZONE_CODES[a - A.CONCEALED_KONG]}"
    return f"BUGANG {BOTZONE_CODES[a - A.ADDED_KONG]}"


class BotCore:
    """One seat's view of a Botzone game, rebuilt from its requests; answers them with ``policy``.

    ``policy`` is an mjenv batched policy (:mod:`mjenv.policy`) called with batches of one; ``None`` answers
    ``PASS`` / plays the drawn tile (for state rebuilding only). :meth:`respond` takes the next request (and
    checks it against the history) and returns ``(response, debug)``; :meth:`feed` only records a request and
    the response the seat gave (e.g. to rebuild a history). ``record=True`` keeps every policy decision in
    :attr:`decisions` as ``(obs, mask, action)`` (copies; the discard after a claim is kept only once the next
    request shows the claim went through).
    """

    def __init__(self, policy: Any = None, *, record: bool = False) -> None:
        self.policy = policy
        self.record = record
        self._tabs = G.win_tables()
        self._rewards = np.zeros(4, np.float32)
        self._obs = np.zeros((1, OBS_SIZE), np.float32)
        self._mask = np.zeros((1, A.NUM_ACTIONS), np.bool_)
        self.decisions: list[tuple[np.ndarray, np.ndarray, int]] = []
        self._provisional: tuple | None = None
        self.requests: list[str] = []
        self.responses: list[str] = []
        self._reset(flowers=False)

    # ------------------------------------------------------------------------------------------ history
    def _reset(self, flowers: bool) -> None:
        self.flowers = flowers
        self.me = -1
        self.quan = 0
        self.state = G.new_state()
        self.started = False  # the engine state exists (after the dealer's first draw)
        self.deal: tuple | None = None  # (flower counts, my 13 tiles, flowers per seat)
        self.pending: tuple | None = None  # an engine step that makes a seat draw, waiting for its draw
        self.chain: list[int] = []  # flowers drawn in the pending draw so far
        self.last: tuple = ()  # the last request, parsed
        self.window = False  # a claim or robbing window is open in the state (waiting for the next request)

    def _rebuild(self, flowers: bool) -> None:
        reqs, resps = self.requests, self.responses
        rec, pol = self.record, self.policy
        self.requests, self.responses, self.record, self.policy = [], [], False, None
        self._reset(flowers)
        try:
            for k, r in enumerate(reqs):
                self._apply(r)
                self.requests.append(r)
                if k < len(resps):
                    self.responses.append(resps[k])
        finally:
            self.record, self.policy = rec, pol

    def feed(self, request: str, response: str | None = None) -> None:
        """Record ``request`` (and the answer this seat gave, when known) without asking the policy."""
        if len(self.responses) < len(self.requests):
            self.responses.append("PASS")
        self._apply(request)
        self.requests.append(request)
        if response is not None:
            self.responses.append(response)

    def respond(self, request: str) -> tuple[str, str]:
        """The answer to the next ``request``: ``(response, debug)``; never raises on bad input."""
        if len(self.responses) < len(self.requests):
            self.responses.append("PASS")
        try:
            self._apply(request)
            self.requests.append(request)
        except (BotError, IndexError, KeyError, ValueError) as e:
            resp = self._fallback(request)
            self.requests.append(request)
            self.responses.append(resp)
            return resp, f"bad request {request!r}: {e}; answered {resp}"
        try:
            resp, debug = self._decide()
        except Exception as e:  # the policy or a corrupted history: never crash the bot
            resp = self._fallback(request)
            debug = f"error deciding on {request!r}: {type(e).__name__}: {e}; answered {resp}"
        self.responses.append(resp)
        return resp, debug

    def _fallback(self, request: object) -> str:
        w = request.split(" ") if isinstance(request, str) else []
        if len(w) == 2 and w[0] == "2" and w[1] in _TILE:
            return f"PLAY {w[1]}"  # the tile just drawn is always in hand
        return "PASS"

    # ------------------------------------------------------------------------------------------ hidden tiles
    def _part(self) -> int:
        return 36 if self.flowers else 34

    def _undrawn_cells(self, exclude: set[int]):
        st, part = self.state, self._part()
        for s in range(4):
            base = G.WALL + part * s
            for i in range(int(st[G.PWALL + s])):
                c = base + i
                if c not in exclude:
                    yield c

    def _place_in_cell(self, c: int, t: int, reserved: set[int]) -> None:
        """Make wall cell ``c`` hold ``t``, swapping it in from an unseen location."""
        st = self.state
        u = int(st[c])
        if u == t:
            return
        for c2 in self._undrawn_cells(reserved | {c}):
            if st[c2] == t:
                st[c2] = u
                st[c] = t
                return
        if u < 34:
            for q in range(4):
                if q != self.me and st[G.HAND + 34 * q + t] > 0 and t < 34:
                    st[G.HAND + 34 * q + t] -= 1
                    st[G.HAND + 34 * q + u] += 1
                    self._update_waits(q)
                    st[c] = t
                    return
        st[c] = t  # no unseen copy left (the history does not fit a wall): overwrite

    def _place_in_hand(self, p: int, need: dict[int, int]) -> None:
        """Make other player ``p``'s hidden hand hold at least ``need[t]`` copies of each ``t``."""
        st = self.state
        h = G.HAND + 34 * p
        changed = False
        for t, n in need.items():
            while st[h + t] < n:
                u = next((x for x in range(34) if st[h + x] > need.get(x, 0)), -1)
                if u < 0:
                    raise BotError(f"player {p} cannot hold the tiles {need}")
                src = None
                for c in self._undrawn_cells(set()):
                    if st[c] == t:
                        src = c
                        break
                if src is not None:
                    st[src] = u
                else:
                    for q in range(4):
                        if q not in (p, self.me) and st[G.HAND + 34 * q + t] > need.get(t, 0) * (q == p):
                            st[G.HAND + 34 * q + t] -= 1
                            st[G.HAND + 34 * q + u] += 1
                            self._update_waits(q)
                            break
                st[h + t] += 1
                st[h + u] -= 1
                changed = True
        if changed:
            self._update_waits(p)

    def _update_waits(self, s: int) -> None:
        G.update_waits_kernel(self.state, s, *self._tabs)

    def _unseen(self) -> np.ndarray:
        """Copies of each tile in the unseen locations (the undrawn wall and the others' hands)."""
        st = self.state
        cnt = np.zeros(42, np.int64)
        for c in self._undrawn_cells(set()):
            cnt[st[c]] += 1
        for q in range(4):
            if q != self.me:
                cnt[:34] += st[G.HAND + 34 * q : G.HAND + 34 * q + 34]
        return cnt

    def _prepare_draw(self, s: int, flowers: list[int], tile: int) -> None:
        """Set the cells ``s`` will pop next: ``flowers`` then ``tile`` (-1: a hidden non-flower tile)."""
        st, part = self.state, self._part()
        n = int(st[G.PWALL + s])
        if n < len(flowers) + 1:
            raise BotError(f"player {s} draws {len(flowers) + 1} tiles from a wall of {n}")
        reserved: set[int] = set()
        for k, f in enumerate(flowers):
            c = G.WALL + part * s + n - 1 - k
            self._place_in_cell(c, f, reserved)
            reserved.add(c)
        c = G.WALL + part * s + n - 1 - len(flowers)
        if tile >= 0:
            self._place_in_cell(c, tile, reserved)
        elif st[c] >= 34:  # a hidden draw must not be a flower
            for c2 in self._undrawn_cells(reserved | {c}):
                if st[c2] < 34:
                    st[c], st[c2] = st[c2], st[c]
                    break

    # ------------------------------------------------------------------------------------------ engine
    def _step(self, action: int, state: np.ndarray | None = None) -> None:
        st = self.state if state is None else state
        err = G.step_kernel(st, action, self._rewards, *self._tabs)
        if err != G.OK:
            raise BotError(f"{A.action_to_str(action)} of player {int(st[G.CUR])} is not legal here")

    def _window_at_me(self) -> np.ndarray:
        """A copy of the state with the open window at my answer (the seats asked before me pass: their answers
        are hidden until the window closes)."""
        sim = self.state.copy()
        while sim[G.PHASE] in (G.PH_CLAIM, G.PH_ROB) and sim[G.CUR] != self.me:
            self._step(A.PASS, sim)
        if sim[G.PHASE] not in (G.PH_CLAIM, G.PH_ROB):  # pragma: no cover - every seat is asked
            raise BotError("I am not asked in this window")
        return sim

    def _resolve_window(self, claimer: int, action: int, state: np.ndarray | None = None) -> None:
        """Close the open window: ``claimer`` plays ``action``, everyone else passes."""
        st = self.state if state is None else state
        while st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
            self._step(action if st[G.CUR] == claimer else A.PASS, st)

    def _start(self, tile: int) -> None:
        """The deal and the dealer's first draw (``tile``: the drawn tile, -1 when hidden)."""
        counts, mine, seat_flowers = self.deal
        me, part = self.me, self._part()
        pool = [0] * 42
        for t in range(34):
            pool[t] = 4
        if self.flowers:
            for f in range(34, 42):
                pool[f] = 1
        seqs: list[list[int]] = []
        for s in range(4):
            seq = list(seat_flowers[s]) + (list(mine) if s == me else [-1] * 13)
            if s == 0:
                seq += self.chain + [tile]
            seqs.append(seq)
        for seq in seqs:
            for t in seq:
                if t >= 0:
                    pool[t] -= 1
                    if pool[t] < 0:
                        raise BotError(f"more than 4 copies of {BOTZONE_CODES[t]} in the deal")
        plain = [t for t in range(34) for _ in range(pool[t])]
        fl = [t for t in range(34, 42) for _ in range(pool[t])]
        wall = [-1] * (4 * part)
        for s, seq in enumerate(seqs):
            if len(seq) > part:
                raise BotError("the deal does not fit the wall")
            for k, t in enumerate(seq):
                wall[part * s + part - 1 - k] = t if t >= 0 else plain.pop()
        rest = plain + fl
        for i in range(len(wall)):
            if wall[i] < 0:
                wall[i] = rest.pop()
        rules = RuleConfig.botzone(self.quan, flowers=self.flowers)
        G.reset_wall(self.state, wall, 0, self.quan, rules)
        self.started = True

    def _flush(self, drawer: int, tile: int) -> None:
        """The announced draw of ``drawer`` (``tile``, or -1 hidden): apply the pending step that makes it."""
        pend = self.pending
        if pend is None:
            raise BotError(f"player {drawer} draws, but no draw is due")
        kind = pend[0]
        if kind == "deal":
            if drawer != 0:
                raise BotError(f"the first draw is the dealer's (player 0), not player {drawer}'s")
            self._start(tile)
        else:
            s = pend[1]
            if drawer != s:
                raise BotError(f"player {drawer} draws, but player {s} is to draw")
            self._prepare_draw(s, self.chain, tile)
            if kind == "window":  # everyone passed the discard (or the added kong)
                self._resolve_window(-1, A.PASS)
            elif kind == "kong":  # a concealed kong, or an exposed kong on the discard
                _, s, action = pend
                if self.state[G.PHASE] == G.PH_CLAIM:
                    self._resolve_window(s, action)
                else:
                    self._step(action)
            self.window = False
        st = self.state
        if st[G.PHASE] != G.PH_TURN or st[G.TURN] != drawer:
            raise BotError(f"the draw of player {drawer} does not fit the game")
        if tile >= 0 and st[G.DRAWN] != tile:  # pragma: no cover - _prepare_draw placed it
            raise BotError("internal: the drawn tile differs")
        self.pending = None
        self.chain = []

    def _apply(self, request: str) -> None:
        """Advance the state by one request (raises BotError when it does not fit)."""
        if not isinstance(request, str):
            raise BotError(f"a request must be a string, got {type(request).__name__}")
        w = request.strip().split()
        if not w or w[0] not in ("0", "1", "2", "3"):
            raise BotError(f"a request starts with 0, 1, 2 or 3, got {request!r}")
        kind = w[0]
        n_req = len(self.requests)
        if kind == "0":
            if n_req != 0 or len(w) != 3 or w[1] not in "0123" or w[2] not in "0123" or len(w[1]) != 1:
                raise BotError(f"'0 me quan' must be the first request, got {request!r}")
            self.me, self.quan = int(w[1]), int(w[2])
            self.last = ("0",)
            return
        if self.me < 0:
            raise BotError("the first request must be '0 me quan'")
        if kind == "1":
            if n_req != 1 or len(w) < 18:
                raise BotError(
                    f"'1 f0 f1 f2 f3 <13 tiles> <flowers>' must be the second request, got {request!r}"
                )
            try:
                counts = [int(x) for x in w[1:5]]
            except ValueError:
                raise BotError(f"bad flower counts in {request!r}") from None
            if any(c < 0 or c > 8 for c in counts) or len(w) != 18 + sum(counts):
                raise BotError(f"the deal {request!r} has {len(w)} words for {sum(counts)} flowers")
            mine = [_tile(x) for x in w[5:18]]
            fl = [_tile(x, flower=True) for x in w[18:]]
            if fl and not self.flowers:
                self._rebuild_with_flowers()
            seat_flowers, i = [], 0
            for c in counts:
                seat_flowers.append(fl[i : i + c])
                i += c
            self.deal = (counts, mine, seat_flowers)
            self.pending = ("deal",)
            self.last = ("1",)
            return
        if self.deal is None:
            raise BotError("the second request must be the deal '1 ...'")
        if kind == "2":
            if len(w) != 2:
                raise BotError(f"'2 t' takes one tile, got {request!r}")
            t = _tile(w[1])
            self._flush(self.me, t)
            self.last = ("2", self.me, t)
            return
        if len(w) < 3 or w[1] not in ("0", "1", "2", "3"):
            raise BotError(f"'3 p ACTION ...' needs a player 0..3, got {request!r}")
        p = int(w[1])
        verb = w[2]
        args = w[3:]
        st = self.state
        if verb == "DRAW" and not args:
            if p == self.me:
                raise BotError("my own draw is announced as '2 t'")
            self._flush(p, -1)
        elif verb == "BUHUA" and len(args) == 1:
            f = _tile(args[0], flower=True)
            if not self.flowers:
                self._rebuild_with_flowers()
                st = self.state
            if self.pending is None:
                raise BotError(f"player {p} replaces a flower, but no draw is due")
            self.chain.append(f)
        elif verb == "PLAY" and len(args) == 1:
            t = _tile(args[0])
            self._turn_of(p)
            if p != self.me:
                self._place_in_hand(p, {t: 1})
            self._step(A.DISCARD + t)
            self._after_offer(p)
        elif verb in ("PENG", "CHI") and len(args) == (1 if verb == "PENG" else 2):
            if not self.window or st[G.PHASE] != G.PH_CLAIM:
                raise BotError(f"{verb} of player {p} without a discard to claim")
            t = int(st[G.OFFER_TILE])
            if verb == "PENG":
                action, need = A.PUNG, {t: 2}
            else:
                mid = _tile(args[0])
                if mid >= 27 or mid % 9 in (0, 8) or abs(mid - t) > 1 or mid // 9 != t // 9:
                    raise BotError(f"CHI {args[0]} does not take {BOTZONE_CODES[t]}")
                action = A.CHOW + (t - mid + 1)
                need = {x: 1 for x in (mid - 1, mid, mid + 1) if x != t}
            t2 = _tile(args[-1])
            if p != self.me:
                self._place_in_hand(p, need)
            self._resolve_window(p, action)
            self.window = False
            self._confirm(p)
            if st[G.PHASE] != G.PH_TURN or st[G.TURN] != p:
                raise BotError(f"the {verb} of player {p} does not fit the game")
            if p != self.me:
                self._place_in_hand(p, {t2: 1})
            self._step(A.DISCARD + t2)
            self._after_offer(p)
        elif verb == "GANG" and not args:
            if self.window and st[G.PHASE] == G.PH_CLAIM:  # an exposed kong on the discard
                t = int(st[G.OFFER_TILE])
                if p != self.me:
                    self._place_in_hand(p, {t: 3})
                self.pending = ("kong", p, A.KONG)
            else:
                self._turn_of(p)
                if st[G.JUST_CLAIMED]:
                    raise BotError(f"player {p} cannot kong right after a claim")
                if p == self.me:
                    x = self._my_kong_tile()
                else:
                    x = self._hidden_kong_tile(p)
                    self._place_in_hand(p, {x: 4})
                self.pending = ("kong", p, A.CONCEALED_KONG + x)
        elif verb == "BUGANG" and len(args) == 1:
            t = _tile(args[0])
            self._turn_of(p)
            if p != self.me:
                self._place_in_hand(p, {t: 1})
            self._step(A.ADDED_KONG + t)
            self._after_offer(p)
        else:
            raise BotError(f"unknown request {request!r}")
        self.last = ("3", p, verb)

    def _rebuild_with_flowers(self) -> None:
        self._rebuild(flowers=True)

    def _turn_of(self, p: int) -> None:
        st = self.state
        if self.pending is not None or self.window or st[G.PHASE] != G.PH_TURN or st[G.TURN] != p:
            raise BotError(f"it is not player {p}'s turn")

    def _after_offer(self, p: int) -> None:
        """After ``p``'s discard or added kong: the window is open; pass the seats asked before me."""
        st = self.state
        if st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
            self.window = True
            self.pending = ("window", (p + 1) % 4 if st[G.PHASE] == G.PH_CLAIM else p)
        else:  # pragma: no cover - with claim_windows="all" a window always opens
            raise BotError("no claim window opened")

    def _my_kong_tile(self) -> int:
        r = self.responses[-1].split() if self.responses else []
        if len(r) == 2 and r[0] == "GANG" and r[1] in _TILE:
            return _TILE[r[1]]
        raise BotError(f"my concealed kong, but my last answer was {self.responses[-1:]!r}")

    def _hidden_kong_tile(self, p: int) -> int:
        """The face of another player's concealed kong (never shown): a tile with 4 unseen copies if any
        (preferring ones already in their hand), else the one with the most."""
        st = self.state
        un = self._unseen()[:34]
        h = st[G.HAND + 34 * p : G.HAND + 34 * p + 34]
        best = max(range(34), key=lambda x: (min(un[x], 4), int(h[x])))
        return best

    def _confirm(self, p: int) -> None:
        if self._provisional is not None:
            if p == self.me:
                self.decisions.append(self._provisional)
            self._provisional = None

    # ------------------------------------------------------------------------------------------ decisions
    def _ask(self, state: np.ndarray) -> tuple[int, str]:
        """Ask the policy on ``state`` (me to act). Returns (action, note)."""
        obs, mask = self._obs, self._mask
        observe_kernel(state, self.me, obs[0])
        n = G.legal_mask_kernel(state, self.me, mask[0])
        if n == 0:
            raise BotError("no legal action")
        if self.policy is None:
            legal = np.flatnonzero(mask[0])
            return (A.PASS if mask[0, A.PASS] else int(legal[0])), ""
        a = int(np.asarray(self.policy(obs, mask, np.full(1, self.me, np.int32))).reshape(-1)[0])
        note = ""
        if not (0 <= a < A.NUM_ACTIONS and mask[0, a]):
            note = f"policy answered illegal action {a}; "
            a = A.PASS if mask[0, A.PASS] else int(np.flatnonzero(mask[0])[0])
        return a, note

    def _decide(self) -> tuple[str, str]:
        """The answer to the request just applied: the policy is asked where the engine would ask me."""
        self._provisional = None
        last = self.last
        if last[0] == "2" and self.pending is None:
            a, note = self._ask(self.state)
            self._keep(a)
            return action_to_response(a, -1), note
        if not (last[0] == "3" and last[2] in ("PLAY", "PENG", "CHI", "BUGANG") and last[1] != self.me):
            return "PASS", ""
        sim = self._window_at_me()
        t = int(sim[G.OFFER_TILE])
        a, note = self._ask(sim)
        self._keep(a)
        if (
            a == A.PUNG or A.CHOW <= a < A.PUNG
        ):  # ask for the discard on the state where the claim went through
            self._resolve_window(self.me, a, sim)
            d, note2 = self._ask(sim)
            if self.record:
                self._provisional = (self._obs[0].copy(), self._mask[0].copy(), d)
            return action_to_response(a, t, d), note + note2
        return action_to_response(a, t), note

    def _keep(self, a: int) -> None:
        if self.record:
            self.decisions.append((self._obs[0].copy(), self._mask[0].copy(), a))


# ---------------------------------------------------------------------------------------------- the program
def _parse_simple_history(lines: list[str]) -> tuple[list[str], list[str]]:
    n = int(lines[0].strip())
    body = lines[1 : 2 * n]
    if len(body) < 2 * n - 1:
        raise BotError(f"simple interaction: {n} turns need {2 * n - 1} lines, got {len(body)}")
    return body[0::2], body[1::2]


class _Session:
    """The bot program's state between turns (keep-running) and its answer to one input."""

    def __init__(self, policy: Any) -> None:
        self.policy = policy
        self.core = BotCore(policy)

    def history(self, requests: list, responses: list) -> tuple[str, str]:
        """A whole history: rebuild (reusing the state when it extends the known one)."""
        known = self.core.requests
        reqs = [r if isinstance(r, str) else json.dumps(r) for r in requests]
        resps = [r if isinstance(r, str) else json.dumps(r) for r in responses]
        if len(reqs) < 1:
            raise BotError("no request")
        if not (
            len(known) == len(reqs) - 1 and known == reqs[:-1] and self.core.responses[: len(resps)] == resps
        ):
            self.core = BotCore(self.policy)
            debug = []
            for k, r in enumerate(reqs[:-1]):
                try:
                    self.core.feed(r, resps[k] if k < len(resps) else "PASS")
                except (BotError, IndexError, KeyError, ValueError) as e:
                    debug.append(f"history request {k} {r!r}: {e}")
                    self.core.requests.append(r)
                    self.core.responses.append(resps[k] if k < len(resps) else "PASS")
            resp, d = self.core.respond(reqs[-1])
            return resp, "; ".join(debug + ([d] if d else []))
        return self.core.respond(reqs[-1])

    def one(self, request: str) -> tuple[str, str]:
        return self.core.respond(request)


def serve(policy: Any, stdin=None, stdout=None, *, keep_running: bool = True) -> int:
    """Run the bot program on ``stdin``/``stdout`` (see the module docstring). Returns the exit status (0)."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    sess = _Session(policy)
    mode = None  # "simple" or "json", from the first input

    def out(resp: str, debug: str) -> None:
        if mode == "json":
            stdout.write(json.dumps({"response": resp, "debug": debug[:1000]}) + "\n")
        else:
            stdout.write(resp + "\n" + debug.replace("\n", " ")[:1000] + "\n")
        if keep_running:
            stdout.write(KEEP_RUNNING + "\n")
        stdout.flush()

    while True:
        line = stdin.readline()
        if not line:
            return 0
        text = line.strip()
        if not text:
            continue
        t0 = time.perf_counter()
        try:
            if text[0] in '{"[':
                mode = "json"
                try:
                    inp = json.loads(text)
                except json.JSONDecodeError as e:
                    raise BotError(f"malformed JSON input: {e}") from None
                if isinstance(inp, dict) and isinstance(inp.get("requests"), list):
                    reqs, resps = inp["requests"], inp.get("responses") or []
                    if not isinstance(resps, list):
                        raise BotError("'responses' must be a list")
                    if len(reqs) == 1 and sess.core.requests and not resps:  # keep-running: the new request
                        resp, debug = sess.one(reqs[0] if isinstance(reqs[0], str) else json.dumps(reqs[0]))
                    else:
                        resp, debug = sess.history(reqs, resps)
                elif isinstance(inp, str):
                    resp, debug = sess.one(inp)
                elif isinstance(inp, dict) and isinstance(inp.get("request"), str):
                    resp, debug = sess.one(inp["request"])
                else:
                    raise BotError(f"unknown JSON input {text[:80]!r}")
            elif text.isdigit():  # simple interaction: n, then 2n - 1 lines
                mode = mode or "simple"
                n = int(text)
                lines = [text]
                for _ in range(2 * n - 1):
                    lines.append(stdin.readline().rstrip("\n"))
                reqs, resps = _parse_simple_history(lines)
                if n == 1 and sess.core.requests:
                    resp, debug = sess.one(reqs[0])
                else:
                    resp, debug = sess.history(reqs, resps)
            else:  # keep-running, simple interaction: the new request alone
                mode = mode or "simple"
                resp, debug = sess.one(text)
        except (BotError, ValueError) as e:
            resp, debug = "PASS", f"bad input: {e}; answered PASS"
        except Exception as e:  # never crash
            resp, debug = "PASS", f"internal error {type(e).__name__}: {e}; answered PASS"
        ms = (time.perf_counter() - t0) * 1000
        out(resp, (debug + "; " if debug else "") + f"{ms:.1f} ms")
        if not keep_running:
            return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m mjenv.botzone.bot --agent module:factory [--seed S] [--no-keep-running]``."""
    ap = argparse.ArgumentParser(prog="python -m mjenv.botzone.bot", description=__doc__.split("\n")[0])
    ap.add_argument("--agent", default="mjenv.policy:make_random", help="policy factory 'module:factory'")
    ap.add_argument("--seed", type=int, default=0, help="seed of the policy")
    ap.add_argument(
        "--no-keep-running", action="store_true", help="answer one input and exit (Botzone's default mode)"
    )
    args = ap.parse_args(argv)
    from mjenv.policy import load_policy

    policy = load_policy(args.agent, 1, args.seed)
    return serve(policy, keep_running=not args.no_keep_running)


if __name__ == "__main__":
    raise SystemExit(main())
