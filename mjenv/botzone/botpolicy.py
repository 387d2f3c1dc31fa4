"""A Botzone bot program as an mjenv policy: duplicate evaluation of bots with :func:`mjenv.arena.run_arena`.

Specification in mjenv
----------------------
* :func:`bot_policy` (import string ``"mjenv.botzone.botpolicy:bot_policy"``, keyword ``bot``: a seat spec of
  :func:`mjenv.botzone.runner.make_bot`, e.g. ``"simple:python mybot.py"``, ``"json:./bot"`` or
  ``"agent:module:factory"``, or a seat object) is a factory of the policy protocol (:mod:`mjenv.policy`):
  ``policy(obs, masks, seats) -> actions``. It plays the Botzone variant (``RuleConfig.botzone()``, e.g.
  ``run_arena(..., rules=RuleConfig.botzone())`` or ``mjenv eval --variant botzone``), one table at a time
  (``tables=1``: a bot program holds one game).
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
  asked again). An answer that does not parse, TLE / RE (no answer in time, the program died), or a non-PASS
  answer to a request that needed PASS becomes an *illegal action* (a false ``HU`` the illegal ``WIN``), so the
  env's illegal mode (``"terminate"`` in the variant: offender -30, others +10) does what the judge's WA / WH /
  verdicts do; :attr:`BotPolicy.verdicts` lists each with the hand, the request and the answer. A non-PASS
  answer to a request that needs no decision is punished at the seat's next decision (the judge ends the game
  at once; no payment differs). Requests that need only PASS are not sent to a bot that runs one process per
  turn (no keep-running): its next history carries them with ``PASS`` answers.
* Processes: a new hand starts a new game (``new_game``: the program is restarted); :meth:`BotPolicy.close`
  (also at exit) stops it.
"""

from __future__ import annotations

import atexit
import weakref
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv.observation import OBS_SIZE, views
from mjenv.tiles import BOTZONE_CODES

__all__ = ["BotPolicy", "bot_policy"]

_TILE = {c: i for i, c in enumerate(BOTZONE_CODES[:34])}


class _Mismatch(Exception):
    """The observation does not follow from the previous one by any sequence of requests."""


class _Public:
    """The public facts of one observation, absolute seats."""

    def __init__(self, obs: np.ndarray, me: int) -> None:
        v = views(obs)
        self.me = me
        ab = [(me + r) % 4 for r in range(4)]  # relative index r -> absolute seat
        self.dseq: list[list[int]] = [[], [], [], []]
        self.melds: list[list[tuple[int, int, int]]] = [[], [], [], []]
        for r in range(4):
            p = ab[r]
            ds = v["discard_seq"][r]
            self.dseq[p] = [int(x) for x in ds[ds != 0]]
            for i in range(4):
                k, t, off = (int(x) for x in v["meld_seq"][r, i])
                if k == 0:
                    break
                self.melds[p].append((k, t - 1, off))
        self.hand = v["hand"].sum(axis=0).astype(np.int64)
        self.drawn = int(np.argmax(v["drawn"])) if v["drawn"].any() else -1
        self.wall = int(v["wall"][0])
        self.quan = int(np.argmax(v["prevalent_wind"]))
        ph = v["phase"]
        self.phase = int(np.argmax(ph)) if ph.any() else -1  # 0 turn, 1 turn after a claim, 2 window, 3 rob
        self.offer_tile = int(np.argmax(v["offer_tile"])) if v["offer_tile"].any() else -1
        self.offer_from = ab[int(np.argmax(v["offer_from"]))] if v["offer_from"].any() else -1


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


class BotPolicy:
    """A Botzone bot program (or any seat object of :mod:`mjenv.botzone.runner`) as a policy; see the module
    docstring. Built by :func:`bot_policy`."""

    def __init__(self, bot: Any, *, time_limit: float = 1.0, first_time_limit: float = 10.0) -> None:
        from mjenv.botzone.runner import make_bot

        self.spec = bot if isinstance(bot, str) else getattr(bot, "name", type(bot).__name__)
        self.bot = make_bot(bot, time_limit=time_limit, first_time_limit=first_time_limit)
        self.verdicts: list[dict] = []
        self.hands = 0
        self.me = -1
        self._prev: _Public | None = None
        self._last: tuple | None = (
            None  # the decision answered last: ("draw", ans) / ("window", d, t, ans) / ...
        )
        self._pending_discard = -1
        self._fault = ""  # a non-PASS answer to a request that needed PASS, punished at this decision
        self.requests: list[str] = []
        self.responses: list[str] = []
        self._finalizer = weakref.finalize(self, _close_bot, self.bot)
        atexit.register(self._finalizer)

    # ------------------------------------------------------------------------------------------ the stream
    def _new_hand(self, now: _Public, me: int) -> list[str]:
        deal = now.hand.copy()
        if me == 0:
            deal[now.drawn] -= 1
        if now.melds[me]:
            raise _Mismatch("melds at the start of a hand")
        tiles = [BOTZONE_CODES[t] for t in range(34) for _ in range(int(deal[t]))]
        if len(tiles) != 13:
            raise _Mismatch("the first observation of a hand does not hold a deal of 13 tiles")
        st = _Stream([0] * 4, [0] * 4, now)
        st.out += [f"0 {me} {now.quan}", "1 0 0 0 0 " + " ".join(tiles)]
        st.draw(0)
        st.done()
        self._decision = st.decision
        return st.out

    def _continue(self, now: _Public) -> list[str]:
        prev, last = self._prev, self._last
        if prev is None or last is None or prev.me != now.me:
            raise _Mismatch("no previous decision")
        if now.wall > prev.wall or any(len(a) < len(b) for a, b in zip(now.dseq, prev.dseq)):
            raise _Mismatch("the wall or the discards went back")
        if any(len(a) < len(b) for a, b in zip(now.melds, prev.melds)):
            raise _Mismatch("melds went back")
        me = now.me
        st = _Stream([len(x) for x in prev.dseq], [len(x) for x in prev.melds], now)
        if last[0] == "draw":
            w = last[1].split(" ")
            if w[0] == "PLAY":
                st.nd[me] += 1
                st.out.append(f"3 {me} PLAY {w[1]}")
                st.resolve(me, _TILE[w[1]])
            elif w[0] == "GANG":
                st.nm[me] += 1
                st.out.append(f"3 {me} GANG")
                st.draw(me)
            elif w[0] == "BUGANG":
                st.out.append(f"3 {me} BUGANG {w[1]}")
                st.draw(me)
            else:
                raise _Mismatch("the hand should be over")
        elif last[0] == "window":
            st.resolve(last[1], last[2])
        else:  # a robbing window that nobody robbed: the kong maker's replacement draw
            st.draw(last[1])
        st.done()
        self._decision = st.decision
        return st.out

    # ------------------------------------------------------------------------------------------ the bot
    def _exchange(self, req: str, decision: bool) -> dict:
        from mjenv.botzone.runner import SubprocessBot

        self.requests.append(req)
        bot = self.bot
        if (
            isinstance(bot, SubprocessBot)
            and not decision
            and (bot.proc is None or bot.proc.poll() is not None)
        ):
            self.responses.append("PASS")  # one process per turn: asked only where it decides
            return {"verdict": "OK", "response": "PASS"}
        bot.send(req, (self.requests, self.responses))
        a = bot.receive()
        self.responses.append(a.get("response", "PASS") if a.get("verdict") == "OK" else "PASS")
        return a

    def _answer(self, obs: np.ndarray, mask: np.ndarray, me: int) -> int:
        now = _Public(obs, me)
        if now.phase == 1:  # the discard that goes with the bot's chow or pung
            t, self._pending_discard = self._pending_discard, -1  # (the snapshot stays the window's)
            if 0 <= t < 34 and mask[A.DISCARD + t]:
                return A.DISCARD + t
            why = f"the discard {BOTZONE_CODES[t] if 0 <= t < 34 else t} of its claim is not in hand"
            return self._verdict("WA", self.requests[-1] if self.requests else "", why, mask)
        try:
            reqs = self._continue(now)
        except _Mismatch:
            if hasattr(self.bot, "new_game"):
                self.bot.new_game()
            self.hands += 1
            self.requests, self.responses, self._fault, self._pending_discard = [], [], "", -1
            try:
                reqs = self._new_hand(now, me)
            except _Mismatch as e:
                raise ValueError(
                    f"cannot derive the Botzone requests of seat {me}'s observation ({e}): a Botzone bot policy "
                    "plays the variant, RuleConfig.botzone() (every seat asked in every window), from the start "
                    "of each hand"
                ) from None
        for r in reqs[:-1]:
            a = self._exchange(r, False)
            if not self._fault and (a.get("verdict") != "OK" or a.get("response") != "PASS"):
                self._fault = f"answered {a.get('response', a.get('verdict'))!r} to {r!r} (needs PASS)"
        a = self._exchange(reqs[-1], True)
        self._prev = now
        dec = self._decision
        resp = a.get("response", "") if a.get("verdict") == "OK" else None
        self._last = ("draw", resp or "") if dec[0] == "draw" else (*dec, resp or "")
        if self._fault:
            return self._verdict("WA", reqs[-1], self._fault, mask)
        if resp is None:
            return self._verdict(str(a.get("verdict")), reqs[-1], str(a.get("debug", "")), mask)
        action, discard = _parse(resp, dec, now)
        if action is None:
            return self._verdict("WA", reqs[-1], f"cannot use the answer {resp!r}", mask)
        if not mask[action]:
            return self._verdict(
                "WH" if action == A.WIN else "WA", reqs[-1], f"illegal answer {resp!r}", mask, action
            )
        self._pending_discard = discard
        return action

    def _verdict(self, kind: str, req: str, why: str, mask: np.ndarray, action: int | None = None) -> int:
        self.verdicts.append(
            {"hand": self.hands, "seat": self.me, "verdict": kind, "request": req, "why": why}
        )
        self._last = None
        return action if action is not None else _illegal(mask)

    def __call__(self, obs: np.ndarray | None, masks: np.ndarray, seats: np.ndarray) -> np.ndarray:
        if obs is None:
            raise ValueError("a Botzone bot policy needs observations")
        obs = np.asarray(obs)
        if obs.ndim != 2 or obs.shape[1] != OBS_SIZE:
            raise ValueError(f"obs must be [N, {OBS_SIZE}], got shape {obs.shape}")
        if obs.shape[0] > 1:
            raise ValueError("a Botzone bot policy plays one table at a time: run the arena with tables=1")
        out = np.zeros(obs.shape[0], np.int64)
        for i in range(obs.shape[0]):
            self.me = int(seats[i])
            out[i] = self._answer(obs[i], np.asarray(masks[i], bool), self.me)
        return out

    def close(self) -> None:
        """Stop the bot program."""
        self._finalizer()


def _close_bot(bot: Any) -> None:
    close = getattr(bot, "close", None)
    if close is not None:
        close()


def _illegal(mask: np.ndarray) -> int:
    """An action the mask forbids (the env's illegal mode then ends the hand as the judge's WA would)."""
    return int(np.flatnonzero(~mask)[0])


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
    num_envs: int, seed: int, *, bot: Any, time_limit: float = 1.0, first_time_limit: float = 10.0
) -> BotPolicy:
    """Factory (``"mjenv.botzone.botpolicy:bot_policy"``): a Botzone bot as a policy. ``bot`` is a seat spec of
    :func:`mjenv.botzone.runner.make_bot` (``"simple:<command>"``, ``"json:<command>"``, ``"agent:module:factory"``,
    ...) or a seat object. ``num_envs`` must be 1 (one game at a time: ``run_arena(..., tables=1)``)."""
    if num_envs != 1:
        raise ValueError(
            f"a Botzone bot policy plays one table at a time: run the arena with tables=1 (got num_envs={num_envs})"
        )
    return BotPolicy(bot, time_limit=time_limit, first_time_limit=first_time_limit)
