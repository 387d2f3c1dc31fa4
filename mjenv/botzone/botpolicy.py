"""A Botzone bot program as an mjenv policy: duplicate evaluation of bots with :func:`mjenv.arena.run_arena`.

Specification in mjenv
----------------------
* :func:`bot_policy` (import string ``"mjenv.botzone.botpolicy:bot_policy"``, keyword ``bot``: a seat spec of
  :func:`mjenv.botzone.runner.make_bot`, e.g. ``"simple:python mybot.py"``, ``"json-keep:./bot"`` or
  ``"agent:module:factory"``, a zero-argument factory of seat objects, or one seat object) is a factory of the
  policy protocol (:mod:`mjenv.policy`): ``policy(obs, masks, seats) -> actions``. It plays the Botzone variant
  (``RuleConfig.botzone()``, e.g. ``run_arena(..., rules=RuleConfig.botzone())`` or ``mjenv eval --variant
  botzone``) in any seats of any number of tables: **each seat of each table is its own bot program** (its own
  process, started for the hand as Botzone starts a bot for a match, see :mod:`mjenv.botzone.runner`), the
  Botzone ``data`` of each seat kept for its hand and the program's ``globaldata`` shared by all its seats.
  The arena passes each row's table (``tables=``; the policy says ``wants_tables``), tells it when hands end
  (:meth:`BotPolicy.hands_done`: their programs are stopped) and plays at most ``max_tables`` tables with it;
  the turns of different seats run concurrently (``jobs`` at a time), so an evaluation uses the machine's cores.
  The arena's thread setting (``threads``, ``mjenv eval --threads``) is the default of ``jobs`` and bounds
  each program's threads (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``,
  ``NUMBA_NUM_THREADS`` in its environment).
* **The bot's view is built from Botzone requests derived from the observations** (the policy sees nothing
  else, as every policy): at each decision of its seat the policy works out, from the public facts of the
  observation (discards in order with their claimed marks, melds in order with where they came from, its own
  hand and drawn tile, the window on offer) and those of its previous decision, the requests the Botzone judge
  sent that seat since then (``3 p DRAW``, ``3 p PLAY t``, ``3 p PENG t``, ``3 p CHI mid t``, ``3 p GANG``,
  ``3 p BUGANG t``, its own echoes, ``2 t``; ``0 me quan`` and ``1 0 0 0 0 <13 tiles>`` at the start of a hand)
  and sends them in order. This is exact in the variant, where every seat is asked in every window: between
  two decisions of a seat only one other player's turn can run (its draw, concealed kongs, then a discard or
  an added kong that opens the seat's next window). A new hand is recognised when the observation does not
  continue the previous one (wall, discards or melds went back, or no sequence of requests leads to it).
* **Answers to actions**: ``PLAY t``, ``GANG t``, ``BUGANG t``, ``HU`` on a turn; ``PASS``, ``HU``, ``GANG``,
  ``PENG t``, ``CHI mid t`` in a window (``PASS``/``HU`` on an added kong). A ``PENG t`` / ``CHI mid t`` is
  the claim now and the discard ``t`` at the next decision (the env asks for it separately; the bot is not
  asked again). Every request is sent, ``PASS``-only ones included, as on Botzone.
* **Faults end the hand as the judge ends the game**: a verdict of the program (``TLE``, ``RE``, ``MLE``,
  ``NJ``: :class:`mjenv.botzone.runner.SubprocessBot`), an answer that does not parse or is not legal
  (``WA``; a false ``HU`` is ``WH``), or a non-``PASS`` answer to a request that needs ``PASS`` (``WA``, at
  that request: the later requests are not sent) becomes an *illegal action*, so the env's illegal mode
  (``"terminate"`` in the variant: offender -30, others +10) pays what the judge pays; the program is stopped.
  For an answer that parses to a move the mask forbids the note holds the move (``action``) and the arena's
  report says why the engine refuses it (:func:`mjenv.game.illegal_reason`: e.g. ``pung W5 on the last
  discard: the next seat's part of the wall is empty, ...``, ``win on T5 with 6 fan (< 8): Concealed Hand 2,
  ...``).
  :attr:`BotPolicy.verdicts` lists each fault (verdict, request, answer, why, the hand's requests and
  responses, the end of standard error), :meth:`BotPolicy.take_notes` gives the last call's by row (the arena
  puts them in its report and records) and :meth:`BotPolicy.bot_summary` counts the verdicts and keeps the
  answer times. Not supported: the env's ``illegal="penalty"`` mode (the hand would go on after a fault).
"""

from __future__ import annotations

import atexit
import os
import weakref
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv import melds as M
from mjenv import view as V
from mjenv.botzone.runner import DEFAULT_MEMORY_LIMIT, DEFAULT_TIME_LIMIT
from mjenv.observation import OBS_SIZE
from mjenv.tiles import BOTZONE_CODES

__all__ = ["BotPolicy", "bot_policy"]

_TILE = {c: i for i, c in enumerate(BOTZONE_CODES[:34])}


class _Mismatch(Exception):
    """The observation does not follow from the previous one by any sequence of requests."""


class _Public:
    """The public facts of row ``i`` of a batch's decoded views (:func:`mjenv.view.decode_views`), absolute seats."""

    def __init__(self, v: V.OwnView, i: int, me: int) -> None:
        self.me = me
        ab = [(me + r) % 4 for r in range(4)]  # relative index r -> absolute seat
        self.dseq: list[list[int]] = [[], [], [], []]
        self.melds: list[list[tuple[int, int, int]]] = [[], [], [], []]
        for r in range(4):
            p = ab[r]
            self.dseq[p] = [int(x) for x in v.discards[i, r, : v.n_discards[i, r]]]
            for m in (int(x) for x in v.melds[i, r, : v.n_melds[i, r]]):
                face = M.tile_of(m) if V.face_shown(m, r) else -1
                self.melds[p].append((V.meld_seq_code(m), face, M.offer_of(m)))
        f = v.facts[i]
        self.hand = v.hand[i].astype(np.int64)
        self.drawn = int(f[V.FACT_DRAWN])
        self.wall = int(f[V.FACT_WALL])
        self.quan = int(f[V.FACT_PREVALENT])
        self.phase = int(f[V.FACT_PHASE])  # 0 turn, 1 turn after a claim, 2 window, 3 rob; -1 none
        self.offer_tile = int(f[V.FACT_OFFER])
        self.offer_from = ab[int(f[V.FACT_FROM])] if f[V.FACT_FROM] >= 0 else -1


class _Stream:
    """Derive the requests between two public snapshots (see the module docstring)."""

    def __init__(self, seen_nd: list[int], seen_nm: list[int], now: _Public) -> None:
        self.nd = list(seen_nd)
        self.nm = list(seen_nm)
        self.now = now
        self.me = now.me
        self.out: list[str] = []
        self.decision: tuple | None = (
            None  # what the last request asks: ("draw",) / ("window", d, t) / ("rob",)
        )

    def _fail(self, why: str) -> None:
        raise _Mismatch(why)

    def _c(self, t: int) -> str:
        return BOTZONE_CODES[t]

    def draw(self, p: int) -> None:
        now = self.now
        if p == self.me:
            if now.phase != 0 or now.drawn < 0:
                self._fail("my draw, but the observation is not my turn after a draw")
            self.out.append(f"2 {self._c(now.drawn)}")
            self.decision = ("draw",)
            return
        self.out.append(f"3 {p} DRAW")
        self.chain(p)

    def chain(self, p: int) -> None:
        """``p`` (not me) has drawn: concealed kongs, then a discard or an added kong (my next decision)."""
        now = self.now
        while self.nm[p] < len(now.melds[p]):
            k = now.melds[p][self.nm[p]][0]
            if k != 5:
                self._fail(f"player {p} made a meld of kind {k} on its own turn")
            self.nm[p] += 1
            self.out.append(f"3 {p} GANG")
            self.out.append(f"3 {p} DRAW")
        if now.offer_from != p:
            self._fail(f"player {p}'s turn does not end in a window on its tile")
        if now.phase == 3:
            self.out.append(f"3 {p} BUGANG {self._c(now.offer_tile)}")
            self.decision = ("rob", p, now.offer_tile)
        elif now.phase == 2 and len(now.dseq[p]) == self.nd[p] + 1:
            self.nd[p] += 1
            self.out.append(f"3 {p} PLAY {self._c(now.offer_tile)}")
            self.decision = ("window", p, now.offer_tile)
        else:
            self._fail(f"player {p}'s turn does not end in a window on its tile")

    def resolve(self, d: int, t: int) -> None:
        """The window on ``d``'s discard ``t`` (``nd[d]`` counts it) closed: a claim, or the next player draws."""
        now = self.now
        i = self.nd[d] - 1
        if i >= len(now.dseq[d]) or abs(now.dseq[d][i]) != t + 1:
            self._fail(f"player {d}'s discard {i} is not {self._c(t)}")
        if now.dseq[d][i] > 0:
            self.draw((d + 1) % 4)
            return
        for k in range(1, 4):
            q = (d + k) % 4
            if self.nm[q] >= len(now.melds[q]):
                continue
            kind, mt, off = now.melds[q][self.nm[q]]
            chow = kind == 1 and k == 1 and mt - 1 <= t <= mt + 1
            if not (chow or (kind in (2, 3) and mt == t and off == k)):
                continue
            self.nm[q] += 1
            if kind == 3:  # an exposed kong: the replacement draw
                self.out.append(f"3 {q} GANG")
                self.draw(q)
                return
            if self.nd[q] >= len(now.dseq[q]):
                self._fail(f"player {q} claimed but did not discard")
            u = abs(now.dseq[q][self.nd[q]]) - 1
            self.nd[q] += 1
            verb = f"CHI {self._c(mt)}" if kind == 1 else "PENG"
            self.out.append(f"3 {q} {verb} {self._c(u)}")
            if q == self.me:
                self.resolve(q, u)
            elif (
                now.phase == 2
                and now.offer_from == q
                and now.offer_tile == u
                and len(now.dseq[q]) == self.nd[q]
            ):
                self.decision = ("window", q, u)
            else:
                self._fail(f"player {q}'s discard after its claim is not on offer")
            return
        self._fail(f"player {d}'s discard was claimed by nobody's new meld")

    def done(self) -> None:
        now = self.now
        if self.decision is None:
            self._fail("no request asks for this decision")
        if self.nd != [len(x) for x in now.dseq] or self.nm != [len(x) for x in now.melds]:
            self._fail("the observation holds discards or melds no request explains")


class _Seat:
    """One seat of one table: its bot program and the requests and answers of its hand."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.prev: _Public | None = None
        self.last: tuple | None = (
            None  # the decision answered last: ("draw", ans) / ("window", d, t, ans) / ...
        )
        self.decision: tuple | None = None
        self.pending_discard = -1
        self.requests: list[str] = []
        self.responses: list[str] = []
        self.started = False  # a hand is in play (its first requests were sent)

    def new_hand(self) -> None:
        if hasattr(self.bot, "new_game"):
            self.bot.new_game()
        self.prev, self.last, self.decision, self.pending_discard = None, None, None, -1
        self.requests, self.responses = [], []
        self.started = True


_VERDICTS = ("OK", "TLE", "RE", "MLE", "NJ", "WA", "WH")


class BotPolicy:
    """A Botzone bot program (a :func:`mjenv.botzone.runner.make_bot` spec, a zero-argument factory of seat
    objects, or one seat object) as a policy, in any seats of any number of tables; see the module docstring.
    Built by :func:`bot_policy`."""

    #: the arena passes each row's table index (``tables=``) and calls :meth:`hands_done`
    wants_tables = True

    def __init__(
        self,
        bot: Any,
        *,
        time_limit: float = DEFAULT_TIME_LIMIT,
        first_time_limit: float | None = None,
        memory_limit: float | None = DEFAULT_MEMORY_LIMIT,
        jobs: int | None = None,
        max_tables: int | None = 64,
        threads: int | None = None,
    ) -> None:
        from mjenv.botzone.runner import make_bot

        if jobs is not None and (not isinstance(jobs, int) or jobs < 1):
            raise ValueError(f"jobs must be a positive int, got {jobs!r}")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ValueError(f"threads must be a positive int or None, got {threads!r}")
        if max_tables is not None and (not isinstance(max_tables, int) or max_tables < 1):
            raise ValueError(f"max_tables must be a positive int or None, got {max_tables!r}")
        self.globaldata: dict = {}  # Botzone's per-program store, shared by every seat of this policy
        limits = dict(time_limit=time_limit, first_time_limit=first_time_limit, memory_limit=memory_limit)
        shown = {**limits, "first_time_limit": first_time_limit or time_limit}
        if isinstance(bot, str):
            probe = make_bot(bot, **limits)  # a bad spec or limit is an error now, before any table
            shown = {k: getattr(probe, k, v) for k, v in shown.items()}  # the limits it runs with
            self._factory = lambda: make_bot(bot, **limits, globaldata=self.globaldata, threads=threads)
            self._single = None
            self.spec = bot
        elif hasattr(bot, "send") and hasattr(bot, "receive"):
            self._factory = None
            self._single = bot
            self.spec = getattr(bot, "name", type(bot).__name__)
        elif callable(bot):
            self._factory = bot
            self._single = None
            self.spec = getattr(bot, "__qualname__", "factory")
        else:
            raise TypeError(
                f"bot must be a seat spec, a seat object or a factory of them, got {type(bot).__name__}"
            )
        self.limits = shown
        self.threads = threads
        self.jobs = jobs or threads or os.cpu_count() or 1
        self.max_tables = max_tables
        self.hands = 0
        self.counts = dict.fromkeys(_VERDICTS, 0)
        self.times: list[float] = []
        self.verdicts: list[dict] = []  # every fault, in the order seen
        self._notes: dict[int, dict] = {}
        self._seats: dict[tuple[int, int], _Seat] = {}
        self._pool = None
        self._finalizer = weakref.finalize(self, _close_all, self._seats)
        atexit.register(self._finalizer)

    # ------------------------------------------------------------------------------------------ seats
    def _seat(self, table: int, me: int) -> _Seat:
        key = (table, me)
        st = self._seats.get(key)
        if st is None:
            if self._single is not None:
                if self._seats:
                    raise ValueError(
                        "one seat object plays one seat of one table at a time: give a seat spec string (or a "
                        "factory of seat objects) to play more seats or tables"
                    )
                st = _Seat(self._single)
            else:
                st = _Seat(self._factory())
            self._seats[key] = st
        return st

    def hands_done(self, tables: Any) -> None:
        """The hands of ``tables`` are over: their programs are stopped (Botzone ends a bot with its game)."""
        done = {int(t) for t in np.asarray(tables).reshape(-1)}
        for key in [k for k in self._seats if k[0] in done]:
            _close_bot(self._seats.pop(key).bot)

    # ------------------------------------------------------------------------------------------ the stream
    def _new_hand(self, st: _Seat, now: _Public, me: int) -> list[str]:
        deal = now.hand.copy()
        if me == 0:
            deal[now.drawn] -= 1
        if now.melds[me]:
            raise _Mismatch("melds at the start of a hand")
        tiles = [BOTZONE_CODES[t] for t in range(34) for _ in range(int(deal[t]))]
        if len(tiles) != 13:
            raise _Mismatch("the first observation of a hand does not hold a deal of 13 tiles")
        sm = _Stream([0] * 4, [0] * 4, now)
        sm.out += [f"0 {me} {now.quan}", "1 0 0 0 0 " + " ".join(tiles)]
        sm.draw(0)
        sm.done()
        st.decision = sm.decision
        return sm.out

    def _continue(self, st: _Seat, now: _Public) -> list[str]:
        prev, last = st.prev, st.last
        if prev is None or last is None or prev.me != now.me:
            raise _Mismatch("no previous decision")
        if now.wall > prev.wall or any(len(a) < len(b) for a, b in zip(now.dseq, prev.dseq)):
            raise _Mismatch("the wall or the discards went back")
        if any(len(a) < len(b) for a, b in zip(now.melds, prev.melds)):
            raise _Mismatch("melds went back")
        me = now.me
        sm = _Stream([len(x) for x in prev.dseq], [len(x) for x in prev.melds], now)
        if last[0] == "draw":
            w = last[1].split(" ")
            if w[0] == "PLAY":
                sm.nd[me] += 1
                sm.out.append(f"3 {me} PLAY {w[1]}")
                sm.resolve(me, _TILE[w[1]])
            elif w[0] == "GANG":
                sm.nm[me] += 1
                sm.out.append(f"3 {me} GANG")
                sm.draw(me)
            elif w[0] == "BUGANG":
                sm.out.append(f"3 {me} BUGANG {w[1]}")
                sm.draw(me)
            else:
                raise _Mismatch("the hand should be over")
        elif last[0] == "window":
            sm.resolve(last[1], last[2])
        else:  # a robbing window that nobody robbed: the kong maker's replacement draw
            sm.draw(last[1])
        sm.done()
        st.decision = sm.decision
        return sm.out

    def _requests(self, st: _Seat, now: _Public, me: int) -> list[str]:
        try:
            return self._continue(st, now)
        except _Mismatch:
            pass
        st.new_hand()
        self.hands += 1
        try:
            return self._new_hand(st, now, me)
        except _Mismatch as e:
            raise ValueError(
                f"cannot derive the Botzone requests of seat {me}'s observation ({e}): a Botzone bot policy "
                "plays the Botzone variant, RuleConfig.botzone() (every seat asked in every window; e.g. "
                "mjenv eval --variant botzone), from the start of each hand"
            ) from None

    # ------------------------------------------------------------------------------------------ the bot
    @staticmethod
    def _exchange(st: _Seat, reqs: list[str]) -> list[dict]:
        """Send ``reqs`` in order (every request but the last needs ``PASS``); stop at the first fault, where
        the judge would end the game. Runs in a worker thread: touches only this seat."""
        out = []
        for k, r in enumerate(reqs):
            st.requests.append(r)
            st.bot.send(r, (st.requests, st.responses))
            a = st.bot.receive()
            ok = a.get("verdict") == "OK"
            st.responses.append(str(a.get("response", "")) if ok else "")
            out.append(a)
            if not ok or (k < len(reqs) - 1 and a.get("response") != "PASS"):
                break
        return out

    def _run_all(self, work: list[tuple[int, _Seat, list[str]]]) -> dict[int, list[dict]]:
        """Every row's exchange, rows of different seats concurrently (``jobs`` at a time); ``globaldata`` is
        what it was at the start of the call for every row and its updates are applied in row order."""
        base = dict(self.globaldata)
        for _, st, _ in work:
            if hasattr(st.bot, "globaldata"):
                st.bot.globaldata = dict(base)
        if len(work) <= 1 or self.jobs <= 1:
            res = {i: self._exchange(st, reqs) for i, st, reqs in work}
        else:
            if self._pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self._pool = ThreadPoolExecutor(self.jobs, thread_name_prefix="botzone-bot")
            futs = {i: self._pool.submit(self._exchange, st, reqs) for i, st, reqs in work}
            res = {i: f.result() for i, f in futs.items()}
        for _, st, _ in work:
            gd = getattr(st.bot, "globaldata", None)
            if gd is not None:
                for k, v in gd.items():
                    if base.get(k) != v:
                        self.globaldata[k] = v
                st.bot.globaldata = self.globaldata
        return res

    def _answer(self, i: int, st: _Seat, now: _Public, answers: list[dict], reqs: list[str], mask) -> int:
        for a in answers:
            if a.get("verdict") == "OK":
                self.counts["OK"] += 1
                self.times.append(float(a.get("time", 0.0)))
        a = answers[-1]
        req = reqs[len(answers) - 1]
        st.prev = now
        dec = st.decision
        if a.get("verdict") != "OK":
            why = str(a.get("debug", ""))
            return self._fault(i, st, str(a["verdict"]), req, None, why, mask, stderr=a.get("stderr", ""))
        resp = str(a.get("response", ""))
        if len(answers) < len(reqs):
            return self._fault(i, st, "WA", req, resp, "a request that needs PASS", mask)
        st.last = ("draw", resp) if dec[0] == "draw" else (*dec, resp)
        action, discard = _parse(resp, dec, now)
        if action is None:
            return self._fault(
                i, st, "WA", req, resp, f"not an answer to this request ({_ANSWERS[dec[0]]})", mask
            )
        if not mask[action]:  # the arena replaces the why by the engine's (mjenv.game.illegal_reason)
            why = f"an illegal move ({A.action_to_str(action)})"
            return self._fault(i, st, "WH" if action == A.WIN else "WA", req, resp, why, mask, action)
        st.pending_discard = discard
        return action

    def _fault(self, i, st, kind, req, resp, why, mask, action=None, stderr="") -> int:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        note = {
            "verdict": kind,
            "request": req,
            "answer": resp,
            "why": why,
            "requests": list(st.requests),
            "responses": list(st.responses),
        }
        if stderr:
            note["stderr"] = stderr
        if action is not None:
            note["action"] = int(action)  # the move the answer parsed to, which the mask forbids
        self.verdicts.append(note)
        self._notes[i] = note
        st.last = None
        _close_bot(st.bot)  # the judge ends the game at a fault
        return action if action is not None else _illegal(mask)

    def take_notes(self) -> dict[int, dict]:
        """The faults of the last call, by row: ``{row: {"verdict", "request", "answer", "why", "requests",
        "responses"[, "stderr"][, "action"]}}`` (the arena puts them in its report and records). ``action``: for
        an answer that parses to a move the mask forbids (``WA``, ``WH``), that move's action id; the arena then
        says why it is illegal from the table's state (:func:`mjenv.game.illegal_reason`)."""
        out, self._notes = self._notes, {}
        return out

    def bot_summary(self) -> dict:
        """What the program did so far: its spec, limits, verdict counts (answers ``OK``; faults by kind) and
        answer times (seconds, of the ``OK`` answers)."""
        return {"command": self.spec, **self.limits, "verdicts": dict(self.counts), "times": list(self.times)}

    def __call__(
        self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray, tables: np.ndarray | None = None
    ) -> np.ndarray:
        if obs is None:
            raise ValueError("a Botzone bot policy needs observations")
        obs = np.asarray(obs)
        if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
            raise ValueError(f"obs must be [N, {OBS_SIZE}], got shape {obs.shape}")
        n = obs.shape[0]
        tabs = np.arange(n) if tables is None else np.asarray(tables).reshape(-1)
        if tabs.shape[0] != n:
            raise ValueError(f"tables must give one table per row ({n}), got {tabs.shape[0]}")
        masks = np.asarray(masks, bool)
        out = np.zeros(n, np.int64)
        self._notes = {}
        work = []
        rows = {}
        view = V.decode_views(obs)
        for i in range(n):
            me = int(seats[i])
            st = self._seat(int(tabs[i]), me)
            now = _Public(view, i, me)
            if now.phase == 1 and st.started:  # the discard that goes with the bot's chow or pung
                t, st.pending_discard = st.pending_discard, -1  # (the snapshot stays the window's)
                if 0 <= t < 34 and masks[i, A.DISCARD + t]:
                    out[i] = A.DISCARD + t
                else:
                    why = f"the discard {BOTZONE_CODES[t] if 0 <= t < 34 else t} of its claim is not in hand"
                    req = st.requests[-1] if st.requests else ""
                    out[i] = self._fault(
                        i, st, "WA", req, st.responses[-1] if st.responses else "", why, masks[i]
                    )
                continue
            reqs = self._requests(st, now, me)
            work.append((i, st, reqs))
            rows[i] = (st, now, reqs)
        res = self._run_all(work)
        for i, (st, now, reqs) in rows.items():
            out[i] = self._answer(i, st, now, res[i], reqs, masks[i])
        return out

    def close(self) -> None:
        """Stop every bot program."""
        self._finalizer()
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


def _close_all(seats: dict) -> None:
    for st in list(seats.values()):
        _close_bot(st.bot)
    seats.clear()


def _close_bot(bot: Any) -> None:
    close = getattr(bot, "close", None)
    if close is not None:
        close()


def _illegal(mask: np.ndarray) -> int:
    """An action the mask forbids (the env's illegal mode then ends the hand as the judge's WA would)."""
    return int(np.flatnonzero(~mask)[0])


#: the answers Botzone takes to each kind of request (the why of an answer that is none of them)
_ANSWERS = {
    "draw": "its own draw takes PLAY t, GANG t, BUGANG t or HU",
    "window": "a discard takes PASS, HU, GANG, PENG t or CHI mid t with mid next to or on the discard",
    "rob": "an added kong takes PASS or HU",
}


def _parse(resp: str, dec: tuple, now: _Public) -> tuple[int | None, int]:
    """(action, discard after a claim or -1) of a Botzone answer in decision ``dec``; (None, -1) if it does not
    parse as an answer to that request."""
    w = resp.split(" ")
    if dec[0] == "draw":
        if w == ["HU"]:
            return A.WIN, -1
        if len(w) == 2 and w[1] in _TILE:
            t = _TILE[w[1]]
            base = {"PLAY": A.DISCARD, "GANG": A.CONCEALED_KONG, "BUGANG": A.ADDED_KONG}.get(w[0])
            if base is not None:
                return base + t, -1
        return None, -1
    if w == ["PASS"]:
        return A.PASS, -1
    if w == ["HU"]:
        return A.WIN, -1
    if dec[0] == "rob":
        return None, -1
    t = dec[2]
    if w == ["GANG"]:
        return A.KONG, -1
    if len(w) == 2 and w[0] == "PENG" and w[1] in _TILE:
        return A.PUNG, _TILE[w[1]]
    if len(w) == 3 and w[0] == "CHI" and w[1] in _TILE and w[2] in _TILE:
        mid = _TILE[w[1]]
        p = t - mid + 1  # the claimed tile's place in the run
        if mid < 27 and mid // 9 == t // 9 and 0 <= p <= 2 and 1 <= mid % 9 <= 7:
            return A.CHOW + p, _TILE[w[2]]
    return None, -1


def bot_policy(
    num_envs: int,
    seed: int,
    *,
    bot: Any,
    time_limit: float = DEFAULT_TIME_LIMIT,
    first_time_limit: float | None = None,
    memory_limit: float | None = DEFAULT_MEMORY_LIMIT,
    jobs: int | None = None,
    max_tables: int | None = 64,
    threads: int | None = None,
) -> BotPolicy:
    """Factory (``"mjenv.botzone.botpolicy:bot_policy"``): a Botzone bot as a policy. ``bot`` is a seat spec of
    :func:`mjenv.botzone.runner.make_bot` (``"simple:<command>"``, ``"json-keep:<command>"``,
    ``"agent:module:factory"``, ...), a zero-argument factory of seat objects, or one seat object (one seat of
    one table). ``time_limit`` / ``first_time_limit`` (seconds per answer) and ``memory_limit`` (MB per process)
    are Botzone's limits; ``jobs`` bot turns run at once (default: ``threads``, else the CPU count); the arena
    plays at most ``max_tables`` tables with this policy (each of its seats is a process). ``threads`` (the
    arena fills it from ``mjenv eval --threads``): the default of ``jobs``, and each program of a spec string
    runs with ``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``NUMBA_NUM_THREADS`` set
    to it (:func:`mjenv.botzone.runner.thread_env`)."""
    return BotPolicy(
        bot, time_limit=time_limit, first_time_limit=first_time_limit, memory_limit=memory_limit, jobs=jobs,
        max_tables=max_tables, threads=threads,
    )  # fmt: skip
