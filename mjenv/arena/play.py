"""Play of a duplicate evaluation (:mod:`mjenv.arena`): the hands of the schedule on a VectorEnv, in shards (in
this process or as Ray tasks), the per-hand outcomes merged exactly, and the records of chosen hands kept."""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.arena.outcome import MAX_LISTED_ILLEGAL, Kept, Outcome, merge_outcomes
from mjenv.arena.report import build_records, build_report
from mjenv.arena.schedule import Entrant, Schedule, Setup, agent_seed, check_seating, num_agents
from mjenv.policy import TableStreams, needs_observations
from mjenv.rules import ILLEGAL_MODES, check_rules

#: illegal actions in a row at one table after which the arena stops with a ValueError (illegal="penalty" asks
#: the offender again, so an agent that repeats an illegal action would otherwise never end the hand)
MAX_ILLEGAL_STREAK = 1000

#: legal actions kept per decision in the records' policy info (a decision has at most 22: 14 discards,
#: 3 concealed and 4 added kongs and a win)
_INFO_LEGAL = 24


def action_name(a: int) -> str:
    """:func:`mjenv.actions.action_to_str`, or ``"out of range (a)"`` for an id outside ``0..NUM_ACTIONS-1``."""
    return A.action_to_str(a) if 0 <= a < A.NUM_ACTIONS else f"out of range ({a})"


# ------------------------------------------------------------------------------------------------ records
class _Recorder:
    """Per-table buffers of the ops (and policy info) of the hand in play; keeps the chosen finished hands."""

    def __init__(self, tables: int, keep_swings: int, keep_illegal: int, with_info: bool) -> None:
        self.cap = 256
        self.ops = np.zeros((tables, self.cap, 3), np.int32)  # kind (0 act, 1 penalty), seat, value
        self.n = np.zeros(tables, np.int64)
        self.with_info = with_info
        if with_info:
            self.has_info = np.zeros((tables, self.cap), np.bool_)
            self.legal = np.zeros((tables, self.cap, _INFO_LEGAL), np.uint8)
            self.n_legal = np.zeros((tables, self.cap), np.uint8)
            self.probs = np.zeros((tables, self.cap, _INFO_LEGAL), np.float32)
            self.value = np.full((tables, self.cap), np.nan, np.float32)
        self.bad_action = np.zeros((tables, self.cap), np.int64)  # the illegal action itself (penalty ops)
        self.keep_swings, self.keep_illegal = keep_swings, keep_illegal
        self.swings: list[Kept] = []  # min-heap of the largest swings
        self.illegal: list[
            tuple[int, Kept]
        ] = []  # max-heap (by -job) of the illegal hands with the lowest jobs
        self.illegal_seen = 0
        # (table, decision) -> what a policy noted at that decision (a Botzone bot's fault)
        self.notes: dict[tuple[int, int], str] = {}

    def _grow(self) -> None:
        old = self.cap
        self.cap *= 2
        pad = ((0, 0), (0, self.cap - old))
        self.ops = np.pad(self.ops, pad + ((0, 0),))
        self.bad_action = np.pad(self.bad_action, pad)
        if self.with_info:
            self.has_info = np.pad(self.has_info, pad)
            self.legal = np.pad(self.legal, pad + ((0, 0),))
            self.n_legal = np.pad(self.n_legal, pad)
            self.probs = np.pad(self.probs, pad + ((0, 0),))
            self.value = np.pad(self.value, pad, constant_values=np.nan)

    def decisions(self, rows: np.ndarray, seats: np.ndarray, actions: np.ndarray) -> np.ndarray:
        """Append one act op per row (before the step); returns the ops' positions."""
        if rows.size and int(self.n[rows].max()) >= self.cap:
            self._grow()
        pos = self.n[rows]
        self.ops[rows, pos, 0] = 0
        self.ops[rows, pos, 1] = seats
        self.ops[rows, pos, 2] = np.clip(actions, 0, A.NUM_ACTIONS - 1)
        self.n[rows] += 1
        if self.with_info:
            self.has_info[rows, pos] = False
            self.value[rows, pos] = np.nan
        return pos

    def info(self, rows, pos, legal, n_legal, probs, value) -> None:
        """Store policy info for the decisions at ``(rows, pos)``: probabilities over the legal actions."""
        self.has_info[rows, pos] = True
        k = np.minimum(n_legal, _INFO_LEGAL)
        self.n_legal[rows, pos] = k
        ids = legal[:, :_INFO_LEGAL]
        self.legal[rows, pos] = ids
        if probs is not None:
            self.probs[rows, pos] = np.take_along_axis(probs, ids.astype(np.int64), axis=1)
        if value is not None:
            self.value[rows, pos] = value

    def illegal_ops(self, rows: np.ndarray, pos: np.ndarray, modes: np.ndarray, actions: np.ndarray) -> None:
        """Turn the act ops at ``(rows, pos)`` into penalty ops (mode ``modes``) keeping the action played."""
        self.ops[rows, pos, 0] = 1
        self.ops[rows, pos, 2] = modes
        self.bad_action[rows, pos] = actions

    def finish(self, table: int, job: int, swing: int, had_illegal: bool) -> None:
        """The hand at ``table`` (evaluation hand ``job``) is over: keep it if chosen, clear the buffer."""
        n = int(self.n[table])
        self.n[table] = 0
        notes = {k[1]: self.notes.pop(k) for k in [k for k in self.notes if k[0] == table]}
        want_swing = self.keep_swings > 0 and (
            len(self.swings) < self.keep_swings or (swing, -job) > self.swings[0].key
        )
        self.illegal_seen += int(had_illegal)
        want_illegal = had_illegal and (
            len(self.illegal) < self.keep_illegal or (self.keep_illegal > 0 and -job > self.illegal[0][0])
        )
        if not (want_swing or want_illegal):
            return
        ops = self.ops[table, :n].copy()
        info = self._info_list(table, n, ops, notes)
        if want_swing:
            item = Kept((swing, -job), job, ops, info, {"swing"})
            if len(self.swings) < self.keep_swings:
                heapq.heappush(self.swings, item)
            else:
                heapq.heapreplace(self.swings, item)
        if want_illegal:
            item = (-job, Kept((swing, -job), job, ops, info, {"illegal"}))
            if len(self.illegal) < self.keep_illegal:
                heapq.heappush(self.illegal, item)
            else:
                heapq.heapreplace(self.illegal, item)

    def _info_list(self, table: int, n: int, ops: np.ndarray, notes: dict[int, str]) -> list:
        out: list = [None] * n
        for k in range(n):
            entry: dict[str, Any] = {}
            if self.with_info and self.has_info[table, k]:
                m = int(self.n_legal[table, k])
                ids = self.legal[table, k, :m]
                entry["probs"] = {
                    A.action_to_str(int(a)): float(p) for a, p in zip(ids, self.probs[table, k, :m])
                }
                v = float(self.value[table, k])
                if not math.isnan(v):
                    entry["value"] = v
            if ops[k, 0] == 1:
                a = int(self.bad_action[table, k])
                entry["illegal_action"] = a
                entry["illegal_name"] = action_name(a)
            if k in notes:
                entry["note"] = notes[k]
            out[k] = entry or None
        return out


# ------------------------------------------------------------------------------------------------ play
def play_shard(
    setup: Setup, j0: int, j1: int, *, threads: int | None = None, progress: bool = False, desc: str = "arena"
) -> Outcome:
    """Play the evaluation hands ``j0 .. j1 - 1`` (a block of whole walls) on one VectorEnv; their outcomes.

    One shard of :func:`run_arena` (all of it when ``shards=1``), run in this process or in a Ray worker. The
    hands' job indices are global, so the shards' results merge exactly (:func:`merge_outcomes`); the kept
    records and listed illegal actions are each shard's best candidates by a key of the job index, never of time.
    """
    from mjenv.vector import VectorEnv

    sch = setup.schedule
    names = setup.names
    job_seed, job_dealer, job_prev, job_order = sch.job_seed, sch.job_dealer, sch.job_prevalent, sch.job_order
    chair_agent, n_orders = sch.chair_agent, sch.n_orders
    n_jobs = j1 - j0
    n_tab = min(setup.tables, n_jobs)
    # the thread setting goes to the factories that take a threads option
    policies = [e.make(n_tab, threads) for e in setup.entrants]
    # a policy may cap the tables (a Botzone bot policy: each of its seats is a process)
    caps = [int(p.max_tables) for p in policies if getattr(p, "max_tables", None)]
    n_tab = min([n_tab, *caps])
    # per-table random streams of the policies that take them, keyed per hand by (seed, agent, wall, order)
    streams = [TableStreams(n_tab) if getattr(p, "row_streams", False) else None for p in policies]
    stream_keys = [
        None if st is None else sch.stream_keys(e.seed, j0, j1) for st, e in zip(streams, setup.entrants)
    ]

    def start_hands(tables: np.ndarray, jobs: np.ndarray) -> None:
        for st, keys in zip(streams, stream_keys):
            if st is not None:
                st.start(tables, keys[jobs - j0])

    observe = any(needs_observations(p) for p in policies)
    has_info = [setup.record_info and hasattr(p, "act_with_info") for p in policies]
    # optional hooks of a policy (mjenv.botzone.botpolicy): the rows' tables, faults noted per row, hands done
    wants_tables = [bool(getattr(p, "wants_tables", False)) for p in policies]
    take_notes = [getattr(p, "take_notes", None) for p in policies]
    hands_done = [getattr(p, "hands_done", None) for p in policies]
    keep = setup.records > 0 or setup.illegal_records > 0
    rec = _Recorder(n_tab, setup.records, setup.illegal_records, any(has_info)) if keep else None

    env = VectorEnv(
        n_tab,
        seed=job_seed[j0 : j0 + n_tab],
        rules=setup.rules,
        observations=observe,
        threads=threads,
        after_schedule="stop",
    )
    env.reset(
        job_seed[j0 : j0 + n_tab], dealers=job_dealer[j0 : j0 + n_tab], prevalents=job_prev[j0 : j0 + n_tab]
    )
    cur_job = np.arange(j0, j0 + n_tab, dtype=np.int64)
    next_job = j0 + n_tab
    queued = np.full(n_tab, -1, np.int64)

    def refill(idx: np.ndarray) -> None:
        nonlocal next_job
        k = min(idx.size, j1 - next_job)
        if k <= 0:
            return
        jobs = np.arange(next_job, next_job + k, dtype=np.int64)
        env.schedule(job_seed[jobs], job_dealer[jobs], job_prev[jobs], tables=idx[:k])
        queued[idx[:k]] = jobs
        next_job += k

    refill(np.arange(n_tab, dtype=np.int64))
    start_hands(np.arange(n_tab, dtype=np.int64), cur_job)
    luck = None
    if setup.luck is not None:  # the luck-adjusted evaluation's corrections (mjenv.arena.luck)
        from mjenv.arena.luck import LuckAdjuster

        luck = LuckAdjuster(setup.luck, n_tab, record=setup.luck_record)
        luck.start(env.states, np.arange(n_tab, dtype=np.int64))

    out = Outcome.empty(j0, j1, len(names))
    if luck is not None:
        out.adjusted = np.zeros((n_jobs, 4), np.float64)
        if setup.luck_record:
            out.luck_z = np.zeros((n_jobs, 4, luck.z.shape[2]), np.float32)
    out.observe = bool(observe)
    illegal_heap: list = []  # max-heap (negated keys) of the listed illegal actions, by (job, decision)
    hand_pos = np.zeros(n_tab, np.int64)  # decisions so far in each table's hand
    streak = np.zeros(n_tab, np.int64)  # illegal actions in a row at each table (penalty mode asks again)
    decisions = 0
    actions = np.zeros(n_tab, np.int64)
    all_rows = np.arange(n_tab, dtype=np.int64)

    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=n_jobs, unit="hand", desc=desc, dynamic_ncols=True, leave=False)
    try:
        while True:
            active = env.active
            if not active.any():
                break
            seats = env.seats
            row_agent = np.full(n_tab, -1, np.int64)
            act_rows = all_rows[active]
            row_agent[act_rows] = chair_agent[job_order[cur_job[act_rows]], seats[act_rows]]
            pos = rec.decisions(act_rows, seats[act_rows], np.zeros(act_rows.size, np.int64)) if rec else None
            pos_of = np.zeros(n_tab, np.int64)
            if rec is not None:
                pos_of[act_rows] = pos
            for k, pol in enumerate(policies):
                rows = act_rows[row_agent[act_rows] == k]
                if rows.size == 0:
                    continue
                if rows.size == n_tab:  # every table: pass the env's own arrays (no copies)
                    o, m, s = env.obs, env.masks, env.seats
                else:
                    o = env.obs[rows] if observe and needs_observations(pol) else None
                    m, s = env.masks[rows], env.seats[rows]
                if not needs_observations(pol):
                    o = None
                kw = {} if streams[k] is None else {"rng": streams[k].rows(rows)}
                if has_info[k] and rec is not None:
                    a, info = pol.act_with_info(o, m, s, **kw)
                    if not isinstance(info, dict):
                        raise TypeError(f"agent {names[k]!r}: act_with_info must return (actions, dict)")
                    probs = info.get("probs")
                    value = info.get("value")
                    if probs is not None or value is not None:  # other keys (a wrapper's) are not recorded
                        rec.info(
                            rows,
                            pos_of[rows],
                            env.legal_actions[rows],
                            env.n_legal[rows],
                            None if probs is None else _rows_array(probs, rows.size, names[k], "probs", 2),
                            None if value is None else _rows_array(value, rows.size, names[k], "value", 1),
                        )
                elif wants_tables[k]:
                    a = pol(o, m, s, tables=rows, **kw)
                else:
                    a = pol(o, m, s, **kw)
                actions[rows] = _check_policy_actions(a, rows.size, names[k])
                if take_notes[k] is not None:
                    for i, note in sorted(take_notes[k]().items()):
                        r = int(rows[i])
                        if "action" in note:  # a move the mask forbids: the engine says why, from the state
                            why = G.illegal_reason(env.states[r], int(seats[r]), int(note["action"]))
                            note = {**note, "why": why}
                        j = int(cur_job[r])
                        where = {"wall": j // n_orders, "order": j % n_orders, "chair": int(seats[r])}
                        out.agents[k].bot_faults.append({**where, "decision": int(hand_pos[r]), **note})
                        if rec is not None:
                            rec.notes[(r, int(pos_of[r]))] = _fault_text(note)
            decisions += act_rows.size
            if rec is not None:
                rec.ops[act_rows, pos_of[act_rows], 2] = np.clip(actions[act_rows], 0, A.NUM_ACTIONS - 1)
            played_seats = seats.copy()
            if luck is not None:
                luck.before_step(env.states, actions, act_rows)
            try:
                env.step(actions)
            except ValueError as e:  # illegal="raise": name the agent
                bad = np.flatnonzero(env.illegal)
                who = sorted({names[int(row_agent[i])] for i in bad})
                raise ValueError(
                    f"agent(s) {', '.join(map(repr, who))} played an illegal action: {e}"
                ) from None
            streak[act_rows] = np.where(env.illegal[act_rows], streak[act_rows] + 1, 0)
            if (streak > MAX_ILLEGAL_STREAK).any():
                i = int(np.argmax(streak))
                raise ValueError(
                    f"agent {names[int(row_agent[i])]!r} answered {int(streak[i])} illegal actions in a row at one "
                    f"decision (the last: {action_name(int(actions[i]))}); with illegal='penalty' the offender is "
                    "asked again, so a policy that repeats an illegal action never ends the hand: fix the agent "
                    "or play illegal='terminate'"
                )
            if env.illegal.any():
                bad = np.flatnonzero(env.illegal)
                for i in bad:
                    agent = int(row_agent[i])
                    a = int(actions[i])
                    nm = action_name(a)
                    out.agents[agent].add_illegal(nm)
                    j = int(cur_job[i])
                    chair = int(played_seats[i])
                    out.illegal[j - j0, chair] += 1
                    key = (j, int(hand_pos[i]))
                    if len(illegal_heap) < MAX_LISTED_ILLEGAL or (-key[0], -key[1]) > illegal_heap[0][0]:
                        entry = {
                            "agent": names[agent],
                            "wall": j // n_orders,
                            "order": j % n_orders,
                            "chair": chair,
                            "action": a,
                            "name": nm,
                        }
                        item = ((-key[0], -key[1]), entry)
                        if len(illegal_heap) < MAX_LISTED_ILLEGAL:
                            heapq.heappush(illegal_heap, item)
                        else:
                            heapq.heapreplace(illegal_heap, item)
                if rec is not None:
                    # the engine's one mapping: penalty_kind_kernel reads the illegal mode from the table's rules
                    modes = np.array(
                        [G.penalty_kind_kernel(env.states[i], actions[i]) for i in bad.tolist()], np.int64
                    )
                    rec.illegal_ops(bad, pos_of[bad], modes, actions[bad])
            hand_pos[act_rows] += 1
            if luck is not None:
                r = env.results
                luck_done = luck.after_step(env.states, act_rows, env.terminated, r.events, r.aborted)
            done = np.flatnonzero(env.terminated)
            if done.size:
                r = env.results
                jobs = cur_job[done]
                lj = jobs - j0
                if not (r.seed[done] == job_seed[jobs]).all():  # pragma: no cover - an internal invariant
                    raise RuntimeError("arena: a table finished a hand it was not dealt")
                out.scores[lj] = r.scores[done]
                out.winner[lj] = r.winner[done]
                out.loser[lj] = r.loser[done]
                out.fan[lj] = r.fan_total[done]
                out.steps[lj] = r.hand_steps[done]
                out.aborted[lj] = r.aborted[done]
                if luck is not None:  # after_step returned the ended hands' corrections in the order of done
                    out.adjusted[lj] = out.scores[lj] - luck_done
                    if setup.luck_record:
                        out.luck_z[lj] = luck.z[done]
                if rec is not None:
                    for i, j in zip(done.tolist(), jobs.tolist()):
                        sc = out.scores[j - j0]
                        rec.finish(i, j, int(sc.max() - sc.min()), bool(out.illegal[j - j0].any()))
                hand_pos[done] = 0
                streak[done] = 0
                for hd in hands_done:
                    if hd is not None:
                        hd(done)
                cur_job[done] = queued[done]
                queued[done] = -1
                nxt = done[cur_job[done] >= 0]
                refill(nxt)
                start_hands(nxt, cur_job[nxt])
                if luck is not None and nxt.size:
                    luck.start(env.states, nxt)
                if bar is not None:
                    bar.update(done.size)
    finally:
        if bar is not None:
            bar.close()
        for hd in hands_done:
            if hd is not None:
                hd(all_rows)
    out.decisions = int(decisions)
    out.illegal_list = [(tuple(-x for x in k), e) for k, e in illegal_heap]
    if rec is not None:
        out.swings = list(rec.swings)
        out.illegal_kept = [k for _, k in rec.illegal]
        out.illegal_seen = rec.illegal_seen
    out.max_tables = min(caps, default=None)
    # a Botzone bot's summary (command, limits, verdict counts, answer times), after its last hand
    for k, p in enumerate(policies):
        if hasattr(p, "bot_summary"):
            out.agents[k].bot = p.bot_summary()
    return out


def _fault_text(note: dict) -> str:
    """One line naming a bot's fault (the records' ``note``, shown by the viewer)."""
    ans = "" if note.get("answer") is None else f", answered {note['answer']!r}"
    why = f" ({note['why']})" if note.get("why") else ""
    return f"bot fault {note['verdict']}: request {note['request']!r}{ans}{why}"


def _play_shard_task(setup: Setup, j0: int, j1: int, threads: int | None) -> Outcome:
    """:func:`play_shard` as a Ray task (Ray resolves ``setup``, an object reference, to the :class:`Setup`)."""
    return play_shard(setup, j0, j1, threads=threads, progress=False)


def _play_shards_on_ray(
    setup: Setup,
    bounds: np.ndarray,
    workers: int,
    threads: int | None,
    progress: bool,
    ray_address: str | None,
) -> list[Outcome]:
    """Run the shards as Ray tasks (at most ``workers`` at a time, one CPU each); results in shard order."""
    from mjenv._ray import ensure_ray, runtime_env

    ray = ensure_ray(ray_address, None if ray_address else workers)
    task = ray.remote(num_cpus=1)(_play_shard_task).options(runtime_env=runtime_env())
    setup_ref = ray.put(setup)  # the job schedule and the agents' specs, once for all shards
    n = len(bounds) - 1
    th = 1 if threads is None else threads
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=int(bounds[-1]),
            unit="hand",
            desc=f"arena {setup.schedule.seating} ({workers} workers)",
            leave=False,
        )
    pending: dict[Any, int] = {}
    results: list[Outcome | None] = [None] * n
    nxt = 0
    try:
        while nxt < n or pending:
            while nxt < n and len(pending) < workers:
                ref = task.remote(setup_ref, int(bounds[nxt]), int(bounds[nxt + 1]), th)
                pending[ref] = nxt
                nxt += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            s = pending.pop(done[0])
            try:
                results[s] = ray.get(done[0])
            except ray.exceptions.RayTaskError as e:  # an agent's or a setting's error in a worker: raise it
                cause = getattr(e, "cause", None)  # as the single-process run does (one line, its own type),
                if isinstance(cause, Exception):  # not wrapped in Ray's remote traceback
                    raise cause from None
                raise
            if bar is not None:
                bar.update(int(bounds[s + 1] - bounds[s]))
    finally:
        if bar is not None:
            bar.close()
    return results  # type: ignore[return-value]


def run_arena(
    agents: Mapping[str, str | Callable[..., Any]],
    seating: str = "1v3",
    walls: int = 100,
    seed: int = 0,
    *,
    tables: int = 1024,
    threads: int | None = None,
    rules: Any = None,
    illegal: str | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
    records: int = 10,
    illegal_records: int = 100,
    record_info: bool = True,
    progress: bool = True,
    curve_points: int = 12,
    workers: int = 0,
    shards: int | None = None,
    ray_address: str | None = None,
    adjust: Any = None,
) -> dict[str, Any]:
    """Duplicate evaluation of ``agents`` (see the module docstring); returns the JSON-ready report.

    Parameters
    ----------
    agents : mapping of name to ``"module:factory"`` (or a factory ``factory(num_envs, seed, **kwargs)``)
        In seating order: for ``1v3`` the first is the candidate A (one seat) and the second the opponent B
        (three seats); ``2v2`` takes two agents and ``perm24`` four.
    seating : str
        ``"1v3"``, ``"2v2"`` or ``"perm24"``.
    walls : int
        Number of walls W; ``W * orders`` hands are played (4, 6 or 24 orders per wall).
    seed : int
        Seed of the walls and of the agents (agent ``k`` gets its own seed derived from it; a stochastic
        agent's random stream at a hand is keyed by that seed, the wall and the seat order).
    tables : int
        Tables of the vector env (at most the number of hands); more tables, fewer Python steps.
    threads : int, optional
        Threads of the evaluation (default: all cores): the env's Numba threads, and the ``threads`` option of
        every agent factory that names one in its signature (``agents.nn``: torch's threads during its calls;
        the Botzone bot policy: its bots' concurrent turns and its programs' ``OMP_NUM_THREADS``,
        ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS`` and ``NUMBA_NUM_THREADS``) unless ``agent_kwargs`` gives
        it. The report does not depend on it for agents whose actions do not (a network's float32 outputs may
        differ in the last bits with the thread count, as with the batch size).
    rules : RuleConfig, optional
        Table rules (minimum fan); dealer and prevailing wind come from the wall schedule.
    illegal : str
        The env's illegal mode: ``"terminate"`` (default: the offender pays 30, the hand ends, the run goes on),
        ``"penalty"`` (competition rules) or ``"raise"`` (stop with a ``ValueError`` naming the agent).
    agent_kwargs : mapping of name to dict, optional
        Extra keyword arguments of each agent's factory.
    records : int
        Keep the records of this many hands with the largest swings (0: none).
    illegal_records : int
        Keep the records of up to this many hands with an illegal action (the count dropped is reported).
    record_info : bool
        Store the policies' per-decision info (``act_with_info``) in the records.
    progress : bool
        Show a tqdm progress bar (hands, with an ETA).
    curve_points : int
        Points of the CI half-width curve (``report["convergence"]``).
    workers : int
        0 (default): play in this process. N > 0: play the shards as Ray tasks, N at a time, one CPU and
        ``threads`` (default 1) Numba threads each (needs the ``distributed`` extra; a local Ray with N CPUs
        is started unless Ray is initialised or ``ray_address`` is given). Agents are shipped as their import
        strings and ``agent_kwargs`` (factories must be picklable); the workers import them from the driver's
        checkout (``mjenv._ray``). The report does not depend on ``workers``.
    shards : int, optional
        Split the walls into this many contiguous blocks, each played on its own VectorEnv with its own
        policies built from the agents' seeds (default: one per worker, 1 without workers). The report (but
        ``settings["shards"]``) is the same for every split, and for every ``tables``, when each policy's
        actions depend only on its rows: deterministic policies (the rule agent, a greedy network) and
        stochastic ones that draw from the arena's per-table streams (``row_streams = True``: the random
        agent, a sampling ``agents.nn`` network; :mod:`mjenv.policy`), keyed per hand by (seed, agent, wall,
        seat order). A stochastic policy with its own generator only draws from it per shard: its report is
        then a function of ``shards`` and ``tables`` (the same with any ``workers``, 0 included).
    ray_address : str, optional
        Ray cluster to connect to (``"auto"``, ``"host:6379"``); default a local instance.
    adjust : optional
        Also report luck-adjusted figures (:mod:`mjenv.arena.luck`: AIVAT's chance corrections): ``True`` or
        ``"shipped"`` for the shipped value model, or a :class:`mjenv.arena.luck.LuckModel`, a path to its
        ``.npz`` or an import string ``"module:factory"``. Each agent's entry (and each difference) gains
        ``adjusted``; the raw entries are unchanged. ``None``/``False`` (default): raw only.

    Returns
    -------
    dict
        ``versions``, ``mjenv`` (the code's version, git commit and whether its checkout was dirty:
        :func:`mjenv.arena.report.provenance`), ``settings``, ``seeds``, ``agents`` (per agent statistics),
        ``differences``, ``table`` (outcomes of all hands), ``convergence``, ``illegal_actions``, ``records``,
        ``timing``. Every entry but ``timing``, ``versions`` and ``mjenv`` is reproducible bit for bit.

    Raises
    ------
    ValueError
        Bad seating, agent count, names or numbers, a bad import string, a policy returning the wrong shape,
        or an illegal action in ``illegal="raise"`` mode.
    TypeError
        A factory with the wrong signature, or a policy returning non-integer actions.
    """
    t_start = time.perf_counter()
    check_seating(seating)
    if not isinstance(agents, Mapping) or not agents:
        raise TypeError("agents must be a non-empty mapping of name -> 'module:factory'")
    names = list(agents)
    for nm in names:
        if not isinstance(nm, str) or not nm:
            raise ValueError(f"agent names must be non-empty strings, got {nm!r}")
    need = num_agents(seating)
    if len(names) != need:
        raise ValueError(f"seating {seating!r} takes {need} agents, got {len(names)} ({', '.join(names)})")
    walls = _check_int(walls, "walls", 1)
    seed = _check_int(seed, "seed", 0)
    tables = _check_int(tables, "tables", 1)
    records = _check_int(records, "records", 0)
    illegal_records = _check_int(illegal_records, "illegal_records", 0)
    curve_points = _check_int(curve_points, "curve_points", 1)
    if illegal is not None and illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {illegal!r}")
    rules = check_rules(rules, illegal=illegal)  # default RuleConfig(): illegal="terminate"
    agent_kwargs = dict(agent_kwargs or {})
    unknown = set(agent_kwargs) - set(names)
    if unknown:
        raise ValueError(f"agent_kwargs names unknown agents {sorted(unknown)}")

    luck_model = None
    if adjust is not None and adjust is not False:
        from mjenv.arena.luck import resolve_model

        luck_model = resolve_model(adjust)
    setup = _build_setup(agents, names, seating, walls, seed, tables, rules, agent_kwargs)
    setup = replace(
        setup,
        records=records,
        illegal_records=illegal_records,
        record_info=bool(record_info),
        luck=luck_model,
    )
    if threads is not None:
        threads = _check_int(threads, "threads", 1)
    workers = _check_int(workers, "workers", 0)
    shards = max(workers, 1) if shards is None else _check_int(shards, "shards", 1)
    shards = min(shards, walls)
    n_orders = setup.schedule.n_orders
    bounds = (np.arange(shards + 1, dtype=np.int64) * walls // shards) * n_orders  # job ranges, never empty
    t_setup = time.perf_counter()
    if workers == 0:
        parts = []
        for s in range(shards):
            desc = f"arena {seating}" + (f" {s + 1}/{shards}" if shards > 1 else "")
            parts.append(
                play_shard(
                    setup, int(bounds[s]), int(bounds[s + 1]), threads=threads, progress=progress, desc=desc
                )
            )
    else:
        parts = _play_shards_on_ray(setup, bounds, workers, threads, progress, ray_address)
    t_play = time.perf_counter()
    outcome = merge_outcomes(parts, setup)
    if (outcome.winner == -9).any():  # pragma: no cover - an internal invariant
        raise RuntimeError("arena: some hands were not played")

    report = build_report(setup, outcome, curve_points)
    report["settings"]["shards"] = shards
    report["records"] = build_records(setup, outcome)
    report["records_dropped"] = outcome.illegal_seen - len(outcome.illegal_kept)
    t_end = time.perf_counter()
    play = t_play - t_setup
    report["timing"] = {
        "seconds_total": t_end - t_start,
        "seconds_setup": t_setup - t_start,
        "seconds_play": play,
        "seconds_report": t_end - t_play,
        "hands_per_s": setup.schedule.n_jobs / play if play > 0 else None,
        "decisions_per_s": outcome.decisions / play if play > 0 else None,
    }
    bot_times = {nm: a.timing_fields() for nm, a in zip(setup.names, outcome.agents) if a.bot is not None}
    if bot_times:
        report["timing"]["bots"] = bot_times
    return report


def _build_setup(agents, names, seating, walls, seed, tables, rules, agent_kwargs) -> Setup:
    schedule = Schedule.build(seating, walls, seed, rules)
    entrants = tuple(
        Entrant(nm, agents[nm], dict(agent_kwargs.get(nm, {})), agent_seed(seed, k))
        for k, nm in enumerate(names)
    )
    return Setup(schedule, entrants, tables, rules, 0, 0, False)


def run_arena_setup(
    agents: Mapping[str, str | Callable[..., Any]],
    seating: str,
    walls: int,
    seed: int,
    *,
    tables: int = 1024,
    rules: Any = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> Setup:
    """The :class:`Setup` that :func:`run_arena` plays for these arguments (no records), checked as it checks
    them: for a caller that plays the shards itself (:func:`mjenv.arena.luck.collect`)."""
    check_seating(seating)
    if not isinstance(agents, Mapping) or not agents:
        raise TypeError("agents must be a non-empty mapping of name -> 'module:factory'")
    names = list(agents)
    need = num_agents(seating)
    if len(names) != need:
        raise ValueError(f"seating {seating!r} takes {need} agents, got {len(names)} ({', '.join(names)})")
    return _build_setup(
        agents, names, seating, _check_int(walls, "walls", 1), _check_int(seed, "seed", 0),
        _check_int(tables, "tables", 1), check_rules(rules), dict(agent_kwargs or {}),
    )  # fmt: skip


def _check_int(v: object, name: str, lo: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(v).__name__}")
    if int(v) < lo:
        raise ValueError(f"{name} must be >= {lo}, got {v}")
    return int(v)


def _check_policy_actions(a: object, n: int, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.shape != (n,):
        raise ValueError(f"agent {name!r} returned actions of shape {arr.shape} for {n} rows (want ({n},))")
    if not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"agent {name!r} returned actions of dtype {arr.dtype}, not integers")
    return arr


def _rows_array(x: object, n: int, name: str, what: str, ndim: int) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float32)
    want = (n, A.NUM_ACTIONS) if ndim == 2 else (n,)
    if arr.shape != want:
        raise ValueError(f"agent {name!r}: info[{what!r}] has shape {arr.shape}, want {want}")
    return arr
