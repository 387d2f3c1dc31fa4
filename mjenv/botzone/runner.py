"""Bots in: a local Botzone match runner seating external bot programs and mjenv policies at one table.

Specification in mjenv
----------------------
* :func:`play_match` plays one game of the Botzone variant: the judge is :class:`mjenv.botzone.Judge`
  (incremental: one engine state for the match; ``judge_mode="per-call"`` calls :func:`mjenv.botzone.judge`
  with the whole log and JSON in and out on every round, Botzone's own protocol) and every round each seat
  answers.
* A seat is a :class:`SubprocessBot` (an external program speaking Botzone's simple or JSON interaction), which
  gets its request strings, or a :class:`PolicyBot` (an mjenv policy in process). With the incremental judge a
  policy seat reads observation and mask from the judge's engine state (``in_process="engine"``, the fast path:
  no requests built or parsed for it); with ``in_process="protocol"`` or the per-call judge it rebuilds the game
  from its requests (:class:`mjenv.botzone.bot.BotCore`). Both give the same log. :func:`make_bot` builds a
  seat from a spec.
* **Bot programs run as Botzone runs them** (its wiki pages "Bot", "JSON", "Simple interaction" are the
  specification). Every turn (every request of the game, ``PASS``-only ones included) a program that is not
  kept running is started afresh (its own process group) and gets the whole input: simple interaction, the
  turn number ``n``, the ``2n - 1`` lines request 1, response 1, ..., request n, then the ``data`` line and the
  ``globaldata`` line; JSON, one line ``{"requests", "responses", "data", "globaldata", "time_limit",
  "memory_limit"}``. Its standard input is then closed (a program may read to the end) and its whole standard
  output up to its exit is the answer: simple, the lines response, debug, data, globaldata (the rest); JSON,
  one object ``{"response", "debug", "data", "globaldata"}`` over any number of lines (``NJ`` when it is not
  one). ``data`` is kept per seat for the next turn of the same game (a new game starts empty); ``globaldata``
  per program (the seats of one program share it; :func:`play_match` can carry it from match to match). With
  ``keep_running`` (spec kinds ``simple-keep`` / ``json-keep``, Botzone's option) standard input stays open:
  a program that prints ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` after its answer has ended its turn, is stopped
  (``SIGSTOP`` to its group) until its next turn (``SIGCONT``) and then gets only that turn's request, one line
  (JSON: the request as a JSON string); its ``data`` and ``globaldata`` output is then ignored, as on Botzone.
* **Limits and verdicts**: each answer has ``time_limit`` seconds of wall time from the first byte written
  (``first_time_limit`` for a game's first turn, default the same), the process start included; each process
  has ``memory_limit`` MB of address space (``RLIMIT_AS`` set in the child, ``ulimit -v``; default 256). ``TLE``: no answer
  in time (the program is killed); ``RE``: the program ended with a non-zero status or a signal, or could not
  be started; ``MLE``: the same with an allocation failure in its standard error (``MemoryError``,
  ``std::bad_alloc``, ``Cannot allocate memory``, ``out of memory``); ``NJ``: a JSON program's output is not
  a JSON object. Any other answer goes to the judge as it is (garbage is ``WA``, a false ``HU`` ``WH``), and the
  judge ends the game on any of them: the offender -30, the others +10.
* The record (:func:`play_match`'s return value, one line of :func:`write_log`) is the corpus format of
  ``docs/botzone.md`` ("Match logs"): ``id``, ``init_input``, ``initdata``, ``log`` (judge outputs and answers
  ``{"verdict", "response"}``), ``scores``, ``bots`` (the seat specs) and ``meta`` (per-seat debug lines and
  answer times).
* :func:`play_engine` plays the same game straight on the engine (no protocol: the policies get
  :mod:`mjenv.observation` observations of the engine state), for checking that the protocol path gives the
  same game.
"""

from __future__ import annotations

import gzip
import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.botzone.bot import KEEP_RUNNING, BotCore, action_to_response
from mjenv.botzone.judge import Judge, judge, parse_walltiles
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.policy import needs_observations
from mjenv.rules import RuleConfig
from mjenv.tiles import BOTZONE_CODES

__all__ = [
    "THREAD_VARS",
    "PolicyBot",
    "SubprocessBot",
    "make_bot",
    "play_engine",
    "play_match",
    "random_initdata",
    "thread_env",
    "write_log",
]


def random_initdata(seed: int, quan: int | None = None, flowers: bool = False) -> dict:
    """A judge ``initdata`` with a shuffled ``walltiles`` (136 tiles, or 144 with ``flowers``) from ``seed``;
    ``quan`` defaults to ``seed % 4``."""
    rng = np.random.default_rng(seed)
    tiles = [t for t in range(34) for _ in range(4)] + (list(range(34, 42)) if flowers else [])
    rng.shuffle(tiles)
    q = seed % 4 if quan is None else quan
    return {"srand": int(seed), "quan": int(q), "walltiles": " ".join(BOTZONE_CODES[t] for t in tiles)}


# ---------------------------------------------------------------------------------------------- seats
class PolicyBot:
    """An mjenv policy at the table, in process (:class:`~mjenv.botzone.bot.BotCore`)."""

    def __init__(self, policy: Any, name: str = "policy", *, record: bool = False) -> None:
        self.policy = policy
        self.name = name
        self.record = record
        self.core = BotCore(policy, record=record)
        self._answer: dict = {}
        self._engine_decisions: list[tuple[np.ndarray, np.ndarray, int]] = []
        self._engine_path = False

    def new_game(self) -> None:
        self.core = BotCore(self.policy, record=self.record)
        self._engine_decisions = []
        self._engine_path = False

    @property
    def decisions(self) -> list[tuple[np.ndarray, np.ndarray, int]]:
        """With ``record``: every policy decision of the last game as ``(obs, mask, action)`` (the discard after a
        claim only when the claim went through), from whichever path played it (engine state or requests)."""
        return self._engine_decisions if self._engine_path else self.core.decisions

    def send(self, request: str, history: tuple[list[str], list[str]]) -> None:
        t0 = time.perf_counter()
        resp, debug = self.core.respond(request)
        self._answer = {"verdict": "OK", "response": resp, "debug": debug, "time": time.perf_counter() - t0}

    def receive(self) -> dict:
        return self._answer

    def close(self) -> None:
        pass


#: Botzone's limits (``time_limit`` per answer, seconds; ``memory_limit`` per bot process, MB)
DEFAULT_TIME_LIMIT = 1.0
DEFAULT_MEMORY_LIMIT = 256
#: markers of an allocation failure in a dead bot's standard error: the verdict is MLE rather than RE
_MEMORY_ERRORS = ("MemoryError", "std::bad_alloc", "Cannot allocate memory", "out of memory")
_STDERR_TAIL = 2000


#: the environment variables that bound a program's compute threads (OpenMP: torch and Numba's OpenMP layer;
#: MKL; OpenBLAS; Numba), all set to the thread count by :func:`thread_env`
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS")


def thread_env(threads: int | None, env: dict | None = None) -> dict | None:
    """The environment of a bot program whose compute threads are bounded by ``threads``: ``env`` (default a
    copy of this process's) with every variable of :data:`THREAD_VARS` set to ``threads``; ``env`` as given
    when ``threads`` is None."""
    if threads is None:
        return env
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)):
        raise TypeError(f"threads must be an int or None, got {type(threads).__name__}")
    if threads < 1:
        raise ValueError(f"threads must be >= 1, got {threads}")
    out = dict(os.environ if env is None else env)
    out.update(dict.fromkeys(THREAD_VARS, str(int(threads))))
    return out


def _with_memory_limit(command: list[str], limit_mb: float | None) -> list[str]:
    """``command`` run with its address space (``RLIMIT_AS``) capped at ``limit_mb`` MB: ``/bin/sh`` sets the
    limit with ``ulimit -v`` and execs the command (the same ``setrlimit`` in the child as a Python
    ``preexec_fn``, which would force a full ``fork`` of this process, ~4x the wall time of a start here, and is
    unsafe with the reader threads)."""
    if limit_mb is None:
        return command
    return ["/bin/sh", "-c", f'ulimit -v {int(limit_mb * 1024)} && exec "$0" "$@"', *command]


class SubprocessBot:
    """An external Botzone bot program (``command``: a list or a shell-like string) at the table, run as
    Botzone runs it (see the module docstring).

    ``interaction``: ``"simple"`` or ``"json"``. ``keep_running``: whether the program may keep running
    between turns (Botzone's per-bot option): ``False`` (default) runs one process per turn, which gets the
    whole input (the history, ``data``, ``globaldata``) with its standard input closed after it and whose
    whole standard output up to its exit is the answer; ``True`` leaves standard input open, so a program that
    prints ``>>>BOTZONE_REQUEST_KEEP_RUNNING<<<`` after an answer is stopped (``SIGSTOP``), woken for the next
    turn (``SIGCONT``) and sent only that turn's request. Each answer has ``time_limit`` seconds of wall time
    (``first_time_limit`` for the first turn of a game; default the same), process start included; each
    process gets ``memory_limit`` MB of address space (``RLIMIT_AS``; ``None``: no limit). ``globaldata``: the
    store of Botzone's per-program ``globaldata`` (a dict shared by the seats of one program, key ``name``).
    """

    def __init__(
        self,
        command: str | Sequence[str],
        interaction: str = "simple",
        *,
        keep_running: bool = False,
        time_limit: float = DEFAULT_TIME_LIMIT,
        first_time_limit: float | None = None,
        memory_limit: float | None = DEFAULT_MEMORY_LIMIT,
        name: str | None = None,
        cwd: str | None = None,
        env: dict | None = None,
        globaldata: dict | None = None,
    ) -> None:
        if interaction not in ("simple", "json"):
            raise ValueError(f"interaction must be 'simple' or 'json', got {interaction!r}")
        self.command = shlex.split(command) if isinstance(command, str) else list(command)
        if not self.command:
            raise ValueError("empty bot command")
        for nm, v in (("time_limit", time_limit), ("first_time_limit", first_time_limit)):
            if v is not None and not (isinstance(v, (int, float)) and v > 0):
                raise ValueError(f"{nm} must be a positive number of seconds, got {v!r}")
        if memory_limit is not None and not (isinstance(memory_limit, (int, float)) and memory_limit > 0):
            raise ValueError(f"memory_limit must be a positive number of MB or None, got {memory_limit!r}")
        self.interaction = interaction
        self.keep_running = bool(keep_running)
        self.time_limit = float(time_limit)
        self.first_time_limit = float(first_time_limit if first_time_limit is not None else time_limit)
        self.memory_limit = memory_limit
        self.name = name or " ".join(self.command)
        self.cwd = cwd
        self.env = env
        self.globaldata = {} if globaldata is None else globaldata
        self.data = ""  # Botzone's data: what the program saved in its previous turn of this game
        self.proc: subprocess.Popen | None = None
        self._lines: queue.Queue = queue.Queue()
        self._stderr: list[str] = []
        self._err_thread: threading.Thread | None = None
        self._kept = False  # the process printed the keep-running marker and waits for the next request
        self._full = True  # this turn's input was the whole history (not a kept process's single request)
        self._turn = 0
        self._t0 = 0.0
        self._limit = self.first_time_limit
        self._error = ""

    def new_game(self) -> None:
        self.close()
        self._turn = 0
        self.data = ""

    def _spawn(self) -> None:
        self.proc = subprocess.Popen(
            _with_memory_limit(self.command, self.memory_limit),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            cwd=self.cwd,
            env=self.env,
            # its own process group (stopped, woken and killed as a whole) in this session: if this process
            # dies without closing it (SIGTERM, SIGKILL), the group is orphaned and the kernel sends a stopped
            # bot SIGHUP then SIGCONT, so no stopped bot outlives the evaluation
            process_group=0,
        )
        self._lines = queue.Queue()
        self._stderr = []
        threading.Thread(target=self._read, args=(self.proc, self._lines), daemon=True).start()
        self._err_thread = threading.Thread(
            target=self._read_err, args=(self.proc, self._stderr), daemon=True
        )
        self._err_thread.start()

    @staticmethod
    def _read(proc: subprocess.Popen, lines: queue.Queue) -> None:
        try:
            for line in proc.stdout:
                lines.put((time.perf_counter(), line.rstrip("\n")))
        except (OSError, ValueError):
            pass
        lines.put((time.perf_counter(), None))

    @staticmethod
    def _read_err(proc: subprocess.Popen, tail: list) -> None:
        try:
            while True:
                chunk = proc.stderr.read(4096)
                if not chunk:
                    break
                tail.append(chunk)
                if sum(len(c) for c in tail) > 2 * _STDERR_TAIL:
                    joined = "".join(tail)[-_STDERR_TAIL:]
                    tail[:] = [joined]
        except (OSError, ValueError):
            pass

    def stderr_tail(self) -> str:
        """The end of the program's standard error (this game's process; at most 2,000 characters)."""
        return "".join(self._stderr)[-_STDERR_TAIL:]

    def full_input(self, requests: list[str], responses: list[str]) -> str:
        """The whole input of a turn (Botzone's normal mode): the history, ``data`` and ``globaldata``."""
        gd = self.globaldata.get(self.name, "")
        if self.interaction == "json":
            obj = {
                "requests": requests,
                "responses": responses,
                "data": self.data,
                "globaldata": gd,
                "time_limit": self._limit,
                "memory_limit": self.memory_limit,
            }
            return json.dumps(obj, ensure_ascii=False) + "\n"
        body = [x for pair in zip(requests, responses + [""]) for x in pair][: 2 * len(requests) - 1]
        return "\n".join([str(len(requests)), *body, self.data, gd]) + "\n"

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self.proc.pid, sig)
        except (OSError, AttributeError):
            pass

    def send(self, request: str, history: tuple[list[str], list[str]]) -> None:
        """Start this turn: ``history`` is (requests so far including ``request``, this seat's responses)."""
        self._error = ""
        self._limit = self.first_time_limit if self._turn == 0 else self.time_limit
        self._turn += 1
        self._t0 = time.perf_counter()
        if self._kept and (self.proc is None or self.proc.poll() is not None):
            self._error = "the bot kept running after its last answer but ended before this turn"
            self.close()
            return
        try:
            if self._kept and self.proc is not None:
                self._full = False
                self._signal(signal.SIGCONT)
                text = (
                    json.dumps(request, ensure_ascii=False) if self.interaction == "json" else request
                ) + "\n"
                self.proc.stdin.write(text)
                self.proc.stdin.flush()
            else:
                self.close()
                self._full = True
                self._spawn()
                self.proc.stdin.write(self.full_input(*history))
                if self.keep_running:
                    self.proc.stdin.flush()
                else:
                    self.proc.stdin.close()  # the whole input: a program may read to the end
        except (OSError, ValueError) as e:
            self._error = f"cannot {'start' if self.proc is None else 'write to'} the bot: {e}"
        self._kept = False

    def _dead(self, why: str, dt: float) -> dict:
        self.close()  # (after the reader of standard error saw its end)
        err = self.stderr_tail()
        kind = "MLE" if any(m in err for m in _MEMORY_ERRORS) else "RE"
        return {"verdict": kind, "debug": why, "time": dt, "stderr": err}

    def receive(self) -> dict:
        """This turn's answer: ``{"verdict": "OK", "response", "debug", "time"}``, or a verdict ``TLE``, ``RE``,
        ``MLE`` or ``NJ`` (JSON interaction: the output is not a JSON object) with ``debug`` saying why."""
        if self._error and self.proc is None:  # the program could not be started, or a kept one died
            return {"verdict": "RE", "debug": self._error, "time": 0.0, "stderr": self.stderr_tail()}
        deadline = self._t0 + self._limit
        out: list[str] = []
        keep = False
        tle = {"verdict": "TLE", "debug": f"no answer in {self._limit:g} s", "time": self._limit}
        at = self._t0
        while True:  # lines carry their arrival time: a seat read after a slow one is judged by its own clock
            left = deadline - time.perf_counter()
            try:
                at, line = self._lines.get(timeout=max(left, 0.0)) if left > 0 else self._lines.get_nowait()
            except queue.Empty:
                self.close()
                return {**tle, "stderr": self.stderr_tail()}
            if at > deadline:
                self.close()
                return {**tle, "stderr": self.stderr_tail()}
            if line is None:
                break
            if line.strip() == KEEP_RUNNING:
                keep = True
                break
            out.append(line)
        if keep and self.keep_running:
            self._kept = True
            self._signal(signal.SIGSTOP)  # asleep until its next turn, as on Botzone
        elif keep:  # the marker with standard input closed: the program cannot go on
            self.close()
        else:  # the output ended: the turn ends when the program exits
            try:
                code = self.proc.wait(timeout=max(deadline - time.perf_counter(), 0.0))
            except subprocess.TimeoutExpired:
                self.close()
                return {**tle, "stderr": self.stderr_tail()}
            if code != 0:
                why = (
                    f"the bot exited with status {code}"
                    if code > 0
                    else f"the bot was killed by signal {-code}"
                )
                return self._dead(why + ("" if out else " without an answer"), at - self._t0)
            if not out and not self._full:  # a kept program has to answer its request
                return self._dead("the kept bot ended without an answer", at - self._t0)
            self.close()
        dt = at - self._t0
        if self.interaction == "json":
            try:
                obj = json.loads("\n".join(out))
            except json.JSONDecodeError:
                obj = None
            if not isinstance(obj, dict):
                text = "\n".join(out)
                return {"verdict": "NJ", "debug": f"output is not a JSON object: {text[:200]!r}", "time": dt}
            resp = obj.get("response", "")
            if self._full:
                self.data = _text(obj.get("data", ""))
                if "globaldata" in obj:
                    self.globaldata[self.name] = _text(obj["globaldata"])
            return {
                "verdict": "OK",
                "response": resp if isinstance(resp, str) else json.dumps(resp),
                "debug": _text(obj.get("debug", ""))[:1024],
                "time": dt,
            }
        if self._full:
            self.data = out[2] if len(out) > 2 else ""
            if len(out) > 3:
                self.globaldata[self.name] = "\n".join(out[3:])
        return {
            "verdict": "OK",
            "response": out[0] if out else "",
            "debug": out[1][:1024] if len(out) > 1 else "",
            "time": dt,
        }

    def close(self) -> None:
        p = self.proc
        self.proc = None
        self._kept = False
        if p is None:
            return
        try:  # the whole group: a wrapper script's children too (also after the leader exited)
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        try:
            p.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if self._err_thread is not None:  # the group is dead: its standard error ends now
            self._err_thread.join(timeout=2.0)
            self._err_thread = None
        for f in (p.stdin, p.stdout, p.stderr):
            try:
                f.close()
            except (OSError, ValueError):
                pass


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


_PASS = ("PASS", "", 0.0)
_KEYS = ("0", "1", "2", "3")


class _EngineSeats:
    """The in-process policy seats of a match read the judge's engine state (no Botzone requests): the fast path
    of :func:`play_match`.

    Each seat is asked exactly where :class:`~mjenv.botzone.bot.BotCore` asks it when it rebuilds the game from
    its requests (its own draw; every window on another seat's discard or added kong; on a chow or pung the
    discard that goes with it, on the state where the claim went through), with the observation and mask of the
    same kernels (:func:`~mjenv.observation.observe_kernel`, :func:`~mjenv.game.legal_mask_kernel`), so a
    policy plays the same game on both paths (tested); a policy with ``needs_observations = False`` gets
    ``obs=None`` (the policy protocol's masks-only mode) unless its decisions are recorded. The answer is the Botzone response string, and the judge
    checks it as any other answer. Every other request is answered ``PASS`` without a policy call.
    """

    def __init__(self, seats: dict[int, PolicyBot]) -> None:
        self.seats = seats
        self._tabs = G.win_tables()
        self._rewards = np.zeros(4, np.float32)
        self._obs = np.zeros((1, OBS_SIZE), np.float32)
        self._mask = np.zeros((1, A.NUM_ACTIONS), np.bool_)
        self._obs0, self._mask0 = self._obs[0], self._mask[0]
        self._seat_arr = [np.full(1, i, np.int32) for i in range(4)]
        # observations only for policies that read them (``needs_observations``) or when decisions are kept
        self._observe = {i: b.record or needs_observations(b.policy) for i, b in seats.items()}
        self._provisional: dict[int, tuple] = {}
        for b in seats.values():
            b._engine_path = True
            b._engine_decisions = []

    def _step(self, st: np.ndarray, action: int) -> None:
        if G.step_kernel(st, action, self._rewards, *self._tabs) != G.OK:  # pragma: no cover - masked moves
            raise RuntimeError(f"engine rejected {A.action_to_str(action)} of seat {int(st[G.CUR])}")

    def _ask(self, seat: int, st: np.ndarray) -> tuple[int, str]:
        """Ask seat's policy on ``st`` (``seat`` to act): (action, note); an illegal answer falls back to PASS or
        the first legal action, as :class:`~mjenv.botzone.bot.BotCore` does."""
        mask0 = self._mask0
        observe = self._observe[seat]
        if observe:
            observe_kernel(st, seat, self._obs0)
        if G.legal_mask_kernel(st, seat, mask0) == 0:  # pragma: no cover - the judge asks seats to act
            raise RuntimeError(f"seat {seat} has no legal action")
        out = self.seats[seat].policy(self._obs if observe else None, self._mask, self._seat_arr[seat])
        a = int(out[0]) if type(out) is np.ndarray and out.ndim == 1 else int(np.asarray(out).reshape(-1)[0])
        if 0 <= a < A.NUM_ACTIONS and mask0[a]:
            return a, ""
        note = f"policy answered illegal action {a}; "
        return (A.PASS if mask0[A.PASS] else int(np.flatnonzero(mask0)[0])), note

    def _keep(self, seat: int, a: int) -> None:
        if self.seats[seat].record:
            self.seats[seat]._engine_decisions.append((self._obs[0].copy(), self._mask[0].copy(), a))

    def _turn(self, seat: int, st: np.ndarray) -> tuple[str, str]:
        a, note = self._ask(seat, st)
        self._keep(seat, a)
        return action_to_response(a, -1), note

    def _window(self, seat: int, sim: np.ndarray) -> tuple[str, str]:
        """``seat``'s answer in the window of ``sim`` (at its turn to answer, the seats before it passed)."""
        t = int(sim[G.OFFER_TILE])
        a, note = self._ask(seat, sim)
        self._keep(seat, a)
        if a == A.PUNG or A.CHOW <= a < A.PUNG:  # the discard, on the state where the claim went through
            sim2 = sim.copy()
            while sim2[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
                self._step(sim2, a if sim2[G.CUR] == seat else A.PASS)
            d, note2 = self._ask(seat, sim2)
            if self.seats[seat].record:
                self._provisional[seat] = (self._obs[0].copy(), self._mask[0].copy(), d)
            return action_to_response(a, t, d), note + note2
        return action_to_response(a, t), note

    def _safe(self, fn, seat: int, st: np.ndarray, own_draw: bool) -> tuple[str, str, float]:
        t0 = time.perf_counter()
        try:
            resp, debug = fn(seat, st)
        except Exception as e:  # a policy that raises: never stop the match (as BotCore)
            resp = f"PLAY {BOTZONE_CODES[int(st[G.DRAWN])]}" if own_draw else "PASS"
            debug = f"error deciding: {type(e).__name__}: {e}; answered {resp}"
        return resp, debug, time.perf_counter() - t0

    def answers(self, j: Judge) -> dict[int, tuple[str, str, float]]:
        """This round's answers of the in-process seats: ``{seat: (response, debug, seconds)}``."""
        stage, st = j.stage, j.state
        out = {i: _PASS for i in self.seats}
        if stage == "draw":
            p = int(st[G.TURN])
            if p in out:
                out[p] = self._safe(self._turn, p, st, True)
        elif stage in ("discard", "rob") and st[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
            sim = st.copy()  # every asked seat answers at its turn with the seats before it passing
            while sim[G.PHASE] in (G.PH_CLAIM, G.PH_ROB):
                o = int(sim[G.CUR])
                if o in out:
                    out[o] = self._safe(self._window, o, sim, False)
                self._step(sim, A.PASS)
        return out

    def confirm(self, out: dict) -> None:
        """After the judge's next output: keep a provisional claim discard when the claim went through."""
        if not self._provisional:
            return
        d = out.get("display", {})
        p = d.get("player") if d.get("action") in ("PENG", "CHI") else None
        if p in self._provisional:
            self.seats[p]._engine_decisions.append(self._provisional[p])
        self._provisional.clear()


_KINDS = ("simple", "json", "simple-keep", "json-keep")


def make_bot(
    spec: Any,
    *,
    time_limit: float = DEFAULT_TIME_LIMIT,
    first_time_limit: float | None = None,
    memory_limit: float | None = DEFAULT_MEMORY_LIMIT,
    seed: int = 0,
    globaldata: dict | None = None,
    threads: int | None = None,
) -> Any:
    """A seat from a spec: a bot object (returned as is); ``"policy:module:factory"`` (an mjenv policy in
    process); an external program ``"simple:<command>"`` / ``"json:<command>"`` (one process per turn) or
    ``"simple-keep:<command>"`` / ``"json-keep:<command>"`` (the program may keep running,
    :class:`SubprocessBot`); ``"agent:module:factory"`` / ``"agent-json:module:factory"`` (an mjenv policy
    wrapped as a keep-running Botzone bot program, ``python -m mjenv.botzone.bot``, in a subprocess: no memory
    limit, 10 s for the first answer unless given, as it loads mjenv). ``globaldata``: the store shared by the
    seats of one program (see :class:`SubprocessBot`). ``threads``: bound the seat's compute threads: a
    program's environment gets :data:`THREAD_VARS` set to it (:func:`thread_env`), an in-process policy's
    factory its ``threads`` option when it names one (:func:`mjenv.policy.takes_option`)."""
    if not isinstance(spec, str):
        if hasattr(spec, "send") and hasattr(spec, "receive"):
            return spec
        raise TypeError(f"a seat is a spec string or a bot object, got {type(spec).__name__}")
    kind, _, rest = spec.partition(":")
    env = thread_env(threads)  # checks threads
    if kind == "policy":
        from mjenv.policy import load_policy, takes_option

        kw = {"threads": threads} if threads is not None and takes_option(rest, "threads") else {}
        return PolicyBot(load_policy(rest, 1, seed, **kw), name=spec)
    if kind in _KINDS:
        if not rest.strip():
            raise ValueError(f"seat spec {spec!r} names no command")
        return SubprocessBot(
            rest, kind.split("-")[0], keep_running=kind.endswith("-keep"), time_limit=time_limit,
            first_time_limit=first_time_limit, memory_limit=memory_limit, name=spec, env=env,
            globaldata=globaldata,
        )  # fmt: skip
    if kind in ("agent", "agent-json"):
        import sys

        cmd = [sys.executable, "-m", "mjenv.botzone.bot", "--agent", rest, "--seed", str(seed)]
        env = dict(os.environ) if env is None else env
        env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
        return SubprocessBot(
            cmd, "json" if kind == "agent-json" else "simple", keep_running=True, time_limit=time_limit,
            first_time_limit=max(time_limit, 10.0) if first_time_limit is None else first_time_limit,
            memory_limit=None, name=spec, env=env, globaldata=globaldata,
        )  # fmt: skip
    raise ValueError(
        "a seat spec is 'policy:module:factory', 'simple:<command>', 'json:<command>', 'simple-keep:<command>', "
        f"'json-keep:<command>', 'agent:module:factory' or 'agent-json:module:factory', got {spec!r}"
    )


# ---------------------------------------------------------------------------------------------- matches
def play_match(
    bots: Sequence[Any],
    initdata: dict,
    *,
    judge_mode: str = "incremental",
    in_process: str = "engine",
    match_id: int | str | None = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    first_time_limit: float | None = None,
    memory_limit: float | None = DEFAULT_MEMORY_LIMIT,
    globaldata: dict | None = None,
    close: bool = True,
) -> dict:
    """Play one game with the four seats ``bots`` (objects or :func:`make_bot` specs) on ``initdata``
    (``{"srand", "quan", "walltiles"}``, see :func:`random_initdata`); returns the corpus-format record.

    ``judge_mode``: ``"incremental"`` (:class:`~mjenv.botzone.Judge`: one engine state for the match, one
    engine step per move) or ``"per-call"`` (:func:`~mjenv.botzone.judge` on the whole log every round,
    through JSON, as Botzone calls its judge).

    ``in_process``: how :class:`PolicyBot` seats play with the incremental judge: ``"engine"`` (default, the
    fast path: they read observation and mask from the judge's engine state, no requests are built or parsed
    for them) or ``"protocol"`` (they rebuild the game from their Botzone requests, as a wrapped bot does).
    Both give the same log (tested); with ``judge_mode="per-call"`` there is no engine state to read, so
    policies always use their requests. Subprocess bots always get Botzone requests.

    ``time_limit`` / ``first_time_limit`` / ``memory_limit``: the limits of the seats made from specs
    (:class:`SubprocessBot`). ``globaldata``: Botzone's per-program store (``{seat spec: text}``), shared by
    the seats of one program and updated in place, so a dict passed to several matches carries it from one to
    the next (default: a new one for this match).

    The record's ``meta`` also holds ``faults``: per verdict other than OK, ``{"seat", "index"`` (of the answer
    in ``log``), ``"verdict", "request", "why", "stderr"}`` (the end of the program's standard error).
    """
    if len(bots) != 4:
        raise ValueError(f"a table has 4 seats, got {len(bots)}")
    if judge_mode not in ("incremental", "per-call"):
        raise ValueError(f"judge_mode must be 'incremental' or 'per-call', got {judge_mode!r}")
    if in_process not in ("engine", "protocol"):
        raise ValueError(f"in_process must be 'engine' or 'protocol', got {in_process!r}")
    if not isinstance(initdata, dict):
        raise TypeError(f"initdata must be a dict, got {type(initdata).__name__}")
    Judge(initdata, display=False)  # a bad initdata is an error before any bot starts
    store = {} if globaldata is None else globaldata
    seats = [
        make_bot(
            b, time_limit=time_limit, first_time_limit=first_time_limit, memory_limit=memory_limit, seed=i,
            globaldata=store,
        )
        for i, b in enumerate(bots)
    ]  # fmt: skip
    for s in seats:
        s.new_game()
    j = Judge(initdata) if judge_mode == "incremental" else None
    fast = None
    if j is not None and in_process == "engine":
        engine_seats = {i: s for i, s in enumerate(seats) if isinstance(s, PolicyBot)}
        fast = _EngineSeats(engine_seats) if engine_seats else None
    fast_ids = set(fast.seats) if fast is not None else set()
    proto = [(i, s) for i, s in enumerate(seats) if i not in fast_ids]  # seats that get requests
    log: list[dict] = []
    requests: list[list[str]] = [[], [], [], []]
    responses: list[list[str]] = [[], [], [], []]
    debug: list[list[str]] = [[], [], [], []]
    times: list[list[float]] = [[], [], [], []]
    faults: list[dict] = []
    try:
        out = j.output if j is not None else json.loads(json.dumps(judge({"log": [], "initdata": initdata})))
        while True:
            log.append({"output": out, "verdict": "OK"})
            if out["command"] == "finish":
                break
            content = out["content"]
            for i, s in proto:
                req = content[str(i)]
                requests[i].append(req)
                s.send(req, (requests[i], responses[i]))
            answers = {}
            if fast is not None:
                for i, (resp, dbg, dt) in fast.answers(j).items():
                    times[i].append(round(dt, 6))
                    if dbg:
                        debug[i].append(f"{len(log) - 1}: {dbg}")
                    answers[_KEYS[i]] = {"verdict": "OK", "response": resp}
            for i, s in proto:
                a = s.receive()
                times[i].append(round(float(a.get("time", 0.0)), 6))
                if a.get("debug"):
                    debug[i].append(f"{len(log) - 1}: {a['debug']}")
                if a["verdict"] == "OK":
                    answers[str(i)] = {"verdict": "OK", "response": a["response"]}
                    responses[i].append(a["response"])
                else:
                    answers[str(i)] = {"verdict": a["verdict"]}
                    faults.append(
                        {
                            "seat": i, "index": len(log), "verdict": a["verdict"], "request": requests[i][-1],
                            "why": str(a.get("debug", "")), "stderr": a.get("stderr", ""),
                        }
                    )  # fmt: skip
            log.append({k: answers[k] for k in _KEYS})
            if j is not None:
                out = j.feed(answers)
                if fast is not None:
                    fast.confirm(out)
            else:
                # later calls get the initdata the judge echoed on its first turn, as on Botzone
                text = json.dumps({"log": log, "initdata": log[0]["output"].get("initdata", initdata)})
                out = json.loads(json.dumps(judge(json.loads(text)), ensure_ascii=False))
    finally:
        if close:
            for s in seats:
                s.close()
    final = log[-1]["output"]
    init_echo = dict(log[0]["output"].get("initdata", initdata))
    return {
        "id": match_id if match_id is not None else initdata.get("srand", 0),
        "init_input": initdata,
        "initdata": init_echo,
        "log": log,
        "scores": final["content"],
        "bots": [getattr(s, "name", repr(s)) for s in seats],
        "meta": {
            "debug": debug,
            "times": times,
            "faults": faults,
            "judge": judge_mode,
            "in_process": "engine" if fast else "protocol",
        },
    }


def write_log(records: Sequence[dict], path: str) -> None:
    """Write match records as JSON lines (gzip when ``path`` ends in ``.gz``), the corpus format."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "wt", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")


def play_engine(policies: Sequence[Any], initdata: dict, *, record: bool = False) -> dict:
    """The same game straight on the engine: ``policies`` (4 batched mjenv policies) are asked at every
    decision with :func:`~mjenv.observation.observe_kernel` observations of the engine state.

    Returns ``{"scores": [4 ints], "actions": [(seat, action), ...], "decisions": 4 lists of (obs, mask,
    action)}`` (``decisions`` with ``record``)."""
    echo = Judge(initdata, display=False).output["initdata"]  # the wall and quan as the judge deals them
    wall = parse_walltiles(echo["walltiles"])
    quan = int(echo["quan"])
    rules = RuleConfig.botzone(quan, flowers=len(wall) == 144)
    st = G.new_state()
    G.reset_wall(st, wall, 0, quan, rules)
    tabs = G.win_tables()
    rewards = np.zeros(4, np.float32)
    obs = np.zeros((1, OBS_SIZE), np.float32)
    mask = np.zeros((1, A.NUM_ACTIONS), np.bool_)
    actions: list[tuple[int, int]] = []
    decisions: list[list] = [[], [], [], []]
    while st[G.PHASE] != G.PH_OVER:
        s = int(st[G.CUR])
        observe_kernel(st, s, obs[0])
        G.legal_mask_kernel(st, s, mask[0])
        a = int(np.asarray(policies[s](obs, mask, np.full(1, s, np.int32))).reshape(-1)[0])
        if not mask[0, a]:
            raise ValueError(f"policy of seat {s} played illegal action {A.action_to_str(a)}")
        if record:
            decisions[s].append((obs[0].copy(), mask[0].copy(), a))
        actions.append((s, a))
        if G.step_kernel(st, a, rewards, *tabs) != G.OK:  # pragma: no cover - checked by the mask
            raise RuntimeError("engine rejected a legal action")
    return {
        "scores": [int(x) for x in st[G.SCORES : G.SCORES + 4]],
        "actions": actions,
        "decisions": decisions if record else None,
    }
