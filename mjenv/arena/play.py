"""Play of a duplicate evaluation (:mod:`mjenv.arena`): the hands of the schedule on a VectorEnv, in shards (in
this process or as Ray tasks), the per-hand outcomes merged exactly, and the records of chosen hands kept."""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.arena.report import build_records, build_report
from mjenv.arena.schedule import (
    agent_seed,
    check_seating,
    num_agents,
    seating_agents,
    seating_orders,
    wall_schedule,
)
from mjenv.policy import load_policy, needs_observations
from mjenv.rules import ILLEGAL_MODES, check_rules

#: legal actions kept per decision in the records' policy info (a decision has at most 22: 14 discards,
#: 3 concealed and 4 added kongs and a win)
_INFO_LEGAL = 24
_MAX_LISTED_ILLEGAL = 100


def action_name(a: int) -> str:
    """:func:`mjenv.actions.action_to_str`, or ``"out of range (a)"`` for an id outside ``0..NUM_ACTIONS-1``."""
    return A.action_to_str(a) if 0 <= a < A.NUM_ACTIONS else f"out of range ({a})"


# ------------------------------------------------------------------------------------------------ records
@dataclass(order=True)
class _Kept:
    key: tuple
    job: int = field(compare=False)
    ops: np.ndarray = field(compare=False)
    info: list = field(compare=False)
    reasons: set = field(compare=False, default_factory=set)


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
        self.swings: list[_Kept] = []  # min-heap of the largest swings
        self.illegal: list[
            tuple[int, _Kept]
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
            item = _Kept((swing, -job), job, ops, info, {"swing"})
            if len(self.swings) < self.keep_swings:
                heapq.heappush(self.swings, item)
            else:
                heapq.heapreplace(self.swings, item)
        if want_illegal:
            item = (-job, _Kept((swing, -job), job, ops, info, {"illegal"}))
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


# ------------------------------------------------------------------------------------------------ arena
def play_shard(
    j0: int, j1: int, *, names, agents, agent_kwargs, agent_seeds, chair_agent, job_seed, job_dealer, job_prev,
    job_order, n_orders, tables, rules, records, illegal_records, record_info, threads=None, progress=False,
    desc="arena",
) -> dict[str, Any]:  # fmt: skip
    """Play the evaluation hands ``j0 .. j1 - 1`` (a block of whole walls) on one VectorEnv; the per-hand outcomes.

    One shard of :func:`run_arena` (all of it when ``shards=1``), run in this process or in a Ray worker. The
    hands' job indices are global, so the shards' results merge exactly (:func:`_merge_shards`); the kept records
    and listed illegal actions are each shard's best candidates by a key of the job index, never of time.
    """
    from mjenv.vector import VectorEnv

    n_jobs = j1 - j0
    n_tab = min(tables, n_jobs)
    policies = []
    for nm in names:
        pol = load_policy(agents[nm], n_tab, agent_seeds[nm], **dict(agent_kwargs.get(nm, {})))
        policies.append(pol)
    # a policy may cap the tables (a Botzone bot policy: each of its seats is a process)
    caps = [int(p.max_tables) for p in policies if getattr(p, "max_tables", None)]
    n_tab = min([n_tab, *caps])
    observe = any(needs_observations(p) for p in policies)
    has_info = [record_info and hasattr(p, "act_with_info") for p in policies]
    # optional hooks of a policy (mjenv.botzone.botpolicy): the rows' tables, faults noted per row, hands done
    wants_tables = [bool(getattr(p, "wants_tables", False)) for p in policies]
    take_notes = [getattr(p, "take_notes", None) for p in policies]
    hands_done = [getattr(p, "hands_done", None) for p in policies]
    bot_faults: list[list[dict]] = [[] for _ in policies]
    keep = records > 0 or illegal_records > 0
    rec = _Recorder(n_tab, records, illegal_records, any(has_info)) if keep else None

    env = VectorEnv(
        n_tab,
        seed=job_seed[j0 : j0 + n_tab],
        rules=rules,
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

    # outcomes per evaluation hand
    j_scores = np.zeros((n_jobs, 4), np.int64)
    j_winner = np.full(n_jobs, -9, np.int64)
    j_loser = np.full(n_jobs, -1, np.int64)
    j_fan = np.zeros(n_jobs, np.int64)
    j_steps = np.zeros(n_jobs, np.int64)
    j_aborted = np.zeros(n_jobs, np.bool_)
    j_illegal = np.zeros((n_jobs, 4), np.int64)  # illegal actions per chair
    illegal_by_agent: list[dict[str, int]] = [{} for _ in names]
    illegal_heap: list = []  # max-heap (negated keys) of the listed illegal actions, by (job, decision)
    hand_pos = np.zeros(n_tab, np.int64)  # decisions so far in each table's hand
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
                if has_info[k] and rec is not None:
                    a, info = pol.act_with_info(o, m, s)
                    if not isinstance(info, dict):
                        raise TypeError(f"agent {names[k]!r}: act_with_info must return (actions, dict)")
                    probs = info.get("probs")
                    value = info.get("value")
                    rec.info(
                        rows,
                        pos_of[rows],
                        env.legal_actions[rows],
                        env.n_legal[rows],
                        None if probs is None else _rows_array(probs, rows.size, names[k], "probs", 2),
                        None if value is None else _rows_array(value, rows.size, names[k], "value", 1),
                    )
                elif wants_tables[k]:
                    a = pol(o, m, s, tables=rows)
                else:
                    a = pol(o, m, s)
                actions[rows] = _check_policy_actions(a, rows.size, names[k])
                if take_notes[k] is not None:
                    for i, note in sorted(take_notes[k]().items()):
                        r = int(rows[i])
                        j = int(cur_job[r])
                        where = {"wall": j // n_orders, "order": j % n_orders, "chair": int(seats[r])}
                        bot_faults[k].append({**where, "decision": int(hand_pos[r]), **note})
                        if rec is not None:
                            rec.notes[(r, int(pos_of[r]))] = _fault_text(note)
            decisions += act_rows.size
            if rec is not None:
                rec.ops[act_rows, pos_of[act_rows], 2] = np.clip(actions[act_rows], 0, A.NUM_ACTIONS - 1)
            played_seats = seats.copy()
            try:
                env.step(actions)
            except ValueError as e:  # illegal="raise": name the agent
                bad = np.flatnonzero(env.illegal)
                who = sorted({names[int(row_agent[i])] for i in bad})
                raise ValueError(
                    f"agent(s) {', '.join(map(repr, who))} played an illegal action: {e}"
                ) from None
            if env.illegal.any():
                bad = np.flatnonzero(env.illegal)
                for i in bad:
                    agent = int(row_agent[i])
                    a = int(actions[i])
                    nm = action_name(a)
                    illegal_by_agent[agent][nm] = illegal_by_agent[agent].get(nm, 0) + 1
                    j = int(cur_job[i])
                    chair = int(played_seats[i])
                    j_illegal[j - j0, chair] += 1
                    key = (j, int(hand_pos[i]))
                    if len(illegal_heap) < _MAX_LISTED_ILLEGAL or (-key[0], -key[1]) > illegal_heap[0][0]:
                        entry = {
                            "agent": names[agent],
                            "wall": j // n_orders,
                            "order": j % n_orders,
                            "chair": chair,
                            "action": a,
                            "name": nm,
                        }
                        item = ((-key[0], -key[1]), entry)
                        if len(illegal_heap) < _MAX_LISTED_ILLEGAL:
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
            done = np.flatnonzero(env.terminated)
            if done.size:
                r = env.results
                jobs = cur_job[done]
                lj = jobs - j0
                if not (r.seed[done] == job_seed[jobs]).all():  # pragma: no cover - an internal invariant
                    raise RuntimeError("arena: a table finished a hand it was not dealt")
                j_scores[lj] = r.scores[done]
                j_winner[lj] = r.winner[done]
                j_loser[lj] = r.loser[done]
                j_fan[lj] = r.fan_total[done]
                j_steps[lj] = r.hand_steps[done]
                j_aborted[lj] = r.aborted[done]
                if rec is not None:
                    for i, j in zip(done.tolist(), jobs.tolist()):
                        sc = j_scores[j - j0]
                        rec.finish(i, j, int(sc.max() - sc.min()), bool(j_illegal[j - j0].any()))
                hand_pos[done] = 0
                for hd in hands_done:
                    if hd is not None:
                        hd(done)
                cur_job[done] = queued[done]
                queued[done] = -1
                refill(done[cur_job[done] >= 0])
                if bar is not None:
                    bar.update(done.size)
    finally:
        if bar is not None:
            bar.close()
        for hd in hands_done:
            if hd is not None:
                hd(all_rows)
    return {
        "j0": j0, "j1": j1, "scores": j_scores, "winner": j_winner, "loser": j_loser, "fan": j_fan,
        "steps": j_steps, "aborted": j_aborted, "illegal": j_illegal, "decisions": int(decisions),
        "illegal_by_agent": illegal_by_agent, "illegal_list": [(tuple(-x for x in k), e) for k, e in illegal_heap],
        "swings": [] if rec is None else list(rec.swings), "illegal_kept": [] if rec is None else [k for _, k in rec.illegal],
        "illegal_seen": 0 if rec is None else rec.illegal_seen, "observe": bool(observe), "max_tables": min(caps, default=None),
        "bots": [p.bot_summary() if hasattr(p, "bot_summary") else None for p in policies], "bot_faults": bot_faults,
    }  # fmt: skip


def _fault_text(note: dict) -> str:
    """One line naming a bot's fault (the records' ``note``, shown by the viewer)."""
    ans = "" if note.get("answer") is None else f", answered {note['answer']!r}"
    why = f" ({note['why']})" if note.get("why") else ""
    return f"bot fault {note['verdict']}: request {note['request']!r}{ans}{why}"


def _bot_reports(parts: list[dict], names: list[str]) -> tuple[dict, dict]:
    """Per Botzone bot agent (a policy with ``bot_summary``): its report entry (command, limits, verdict counts,
    the faults listed by (wall, order, decision), whether the run is reproducible from the seed: no verdict
    caused by time) and its answer times (``timing``: they depend on the machine)."""
    out, timing = {}, {}
    for k, nm in enumerate(names):
        sums = [p["bots"][k] for p in parts if p.get("bots") and p["bots"][k] is not None]
        if not sums:
            continue
        counts: dict[str, int] = {}
        times: list[float] = []
        for sm in sums:
            for v, c in sm["verdicts"].items():
                counts[v] = counts.get(v, 0) + int(c)
            times += sm["times"]
        faults = sorted(
            (f for p in parts for f in p["bot_faults"][k]),
            key=lambda f: (f["wall"], f["order"], f["decision"]),
        )
        limits = {key: v for key, v in sums[0].items() if key not in ("verdicts", "times")}
        out[nm] = {
            **limits,
            "verdicts": counts,
            "faults_count": len(faults),
            "faults": faults[:_MAX_LISTED_ILLEGAL],
            "reproducible": counts.get("TLE", 0) == 0,
        }
        t = np.asarray(times, np.float64)
        timing[nm] = {
            "answers": int(t.size),
            "median_s": float(np.median(t)) if t.size else None,
            "p99_s": float(np.quantile(t, 0.99)) if t.size else None,
        }
    return out, timing


def _merge_shards(parts: list[dict], n_jobs: int, n_agents: int, records: int, illegal_records: int) -> dict:
    """Merge :func:`play_shard` results (any split of the jobs) into the whole run's, exactly.

    Per-hand arrays are placed by job index; counts are summed; the kept records are the ``records`` largest
    swings (ties: the lower job) and the ``illegal_records`` illegal hands with the lowest job indices over
    all shards, the listed illegal actions the first ``_MAX_LISTED_ILLEGAL`` by (job, decision): each shard
    kept its own best candidates by the same keys, so the result does not depend on the split.
    """
    out: dict[str, Any] = {
        "scores": np.zeros((n_jobs, 4), np.int64), "winner": np.full(n_jobs, -9, np.int64),
        "loser": np.full(n_jobs, -1, np.int64), "fan": np.zeros(n_jobs, np.int64),
        "steps": np.zeros(n_jobs, np.int64), "aborted": np.zeros(n_jobs, np.bool_),
        "illegal": np.zeros((n_jobs, 4), np.int64),
    }  # fmt: skip
    decisions = 0
    by_agent: list[dict[str, int]] = [{} for _ in range(n_agents)]
    listed: list = []
    swings: list[_Kept] = []
    illegal_kept: list[_Kept] = []
    seen = 0
    observe = False
    for p in sorted(parts, key=lambda p: p["j0"]):
        sl = slice(p["j0"], p["j1"])
        for key in ("scores", "winner", "loser", "fan", "steps", "aborted", "illegal"):
            out[key][sl] = p[key]
        decisions += p["decisions"]
        for k, d in enumerate(p["illegal_by_agent"]):
            for nm, c in d.items():
                by_agent[k][nm] = by_agent[k].get(nm, 0) + c
        listed += p["illegal_list"]
        swings += p["swings"]
        illegal_kept += p["illegal_kept"]
        seen += p["illegal_seen"]
        observe = observe or p["observe"]
    swings = heapq.nlargest(records, swings) if records else []
    illegal_kept = sorted(illegal_kept, key=lambda k: k.job)[:illegal_records]
    kept: dict[int, _Kept] = {}  # largest swings first, then the illegal hands by job; one entry per hand
    for item in swings + illegal_kept:
        if item.job in kept:
            kept[item.job].reasons |= item.reasons
        else:
            kept[item.job] = item
    out.update(
        decisions=decisions, illegal_by_agent=by_agent, observe=observe, kept=list(kept.values()),
        illegal_list=[e for _, e in sorted(listed, key=lambda x: x[0])[:_MAX_LISTED_ILLEGAL]],
        records_dropped=seen - len(illegal_kept),
    )  # fmt: skip
    return out


def _play_shard_task(j0: int, j1: int, common: dict, threads: int | None) -> dict[str, Any]:
    """:func:`play_shard` as a Ray task (Ray resolves ``common``, an object reference, to the dict)."""
    return play_shard(j0, j1, threads=threads, progress=False, **common)


def _play_shards_on_ray(bounds, common, workers, threads, progress, seating, ray_address) -> list[dict]:
    """Run the shards as Ray tasks (at most ``workers`` at a time, one CPU each); results in shard order."""
    from mjenv._ray import ensure_ray, runtime_env

    ray = ensure_ray(ray_address, None if ray_address else workers)
    task = ray.remote(num_cpus=1)(_play_shard_task).options(runtime_env=runtime_env())
    common_ref = ray.put(common)  # the job schedule and the agents' specs, once for all shards
    n = len(bounds) - 1
    th = 1 if threads is None else threads
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(
            total=int(bounds[-1]), unit="hand", desc=f"arena {seating} ({workers} workers)", leave=False
        )
    pending: dict[Any, int] = {}
    results: list[dict | None] = [None] * n
    nxt = 0
    try:
        while nxt < n or pending:
            while nxt < n and len(pending) < workers:
                ref = task.remote(int(bounds[nxt]), int(bounds[nxt + 1]), common_ref, th)
                pending[ref] = nxt
                nxt += 1
            done, _ = ray.wait(list(pending), num_returns=1)
            s = pending.pop(done[0])
            results[s] = ray.get(done[0])
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
        Seed of the walls and of the agents (agent ``k`` gets its own seed derived from it).
    tables : int
        Tables of the vector env (at most the number of hands); more tables, fewer Python steps.
    threads : int, optional
        Numba threads of the env (the report does not depend on it).
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
        policies built from the agents' seeds (default: one per worker, 1 without workers). Policies whose
        actions depend only on their rows (the rule agent, a greedy network) give the same hands, hence the
        same report (but ``settings["shards"]``), for every split; a stochastic policy's random stream runs
        per shard, so its report is a function of ``shards`` (and ``tables``): pass the same ``shards`` to get
        the same report bit for bit with any ``workers``, 0 included.
    ray_address : str, optional
        Ray cluster to connect to (``"auto"``, ``"host:6379"``); default a local instance.

    Returns
    -------
    dict
        ``versions``, ``settings``, ``seeds``, ``agents`` (per agent statistics), ``differences``, ``table``
        (outcomes of all hands), ``convergence``, ``illegal_actions``, ``records``, ``timing``. Every entry but
        ``timing`` is reproducible bit for bit.

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
    illegal = rules.illegal
    agent_kwargs = dict(agent_kwargs or {})
    unknown = set(agent_kwargs) - set(names)
    if unknown:
        raise ValueError(f"agent_kwargs names unknown agents {sorted(unknown)}")

    orders = seating_orders(seating)
    chair_agent = seating_agents(seating).astype(np.int64)  # [P, 4]
    n_orders = orders.shape[0]
    n_jobs = walls * n_orders
    n_tab = min(tables, n_jobs)
    w_seed, w_dealer, w_prev = wall_schedule(seed, walls)
    if rules.private_walls:  # the Botzone variant: chair 0 always deals (seat wind = player index)
        w_dealer = np.full_like(w_dealer, rules.dealer)
    job_seed = np.repeat(w_seed, n_orders)
    job_dealer = np.repeat(w_dealer, n_orders)
    job_prev = np.repeat(w_prev, n_orders)
    job_order = np.tile(np.arange(n_orders), walls)

    agent_seeds = {nm: agent_seed(seed, k) for k, nm in enumerate(names)}
    workers = _check_int(workers, "workers", 0)
    shards = max(workers, 1) if shards is None else _check_int(shards, "shards", 1)
    shards = min(shards, walls)
    bounds = (np.arange(shards + 1, dtype=np.int64) * walls // shards) * n_orders  # job ranges, never empty
    common = dict(
        names=names, agents=dict(agents), agent_kwargs=agent_kwargs, agent_seeds=agent_seeds, chair_agent=chair_agent,
        job_seed=job_seed, job_dealer=job_dealer, job_prev=job_prev, job_order=job_order, n_orders=n_orders,
        tables=tables, rules=rules, records=records, illegal_records=illegal_records, record_info=record_info,
    )  # fmt: skip
    t_setup = time.perf_counter()
    if workers == 0:
        parts = []
        for s in range(shards):
            j0, j1 = int(bounds[s]), int(bounds[s + 1])
            desc = f"arena {seating}" + (f" {s + 1}/{shards}" if shards > 1 else "")
            parts.append(play_shard(j0, j1, threads=threads, progress=progress, desc=desc, **common))
    else:
        parts = _play_shards_on_ray(bounds, common, workers, threads, progress, seating, ray_address)
    t_play = time.perf_counter()
    m = _merge_shards(parts, n_jobs, len(names), records, illegal_records)
    j_scores, j_winner, j_loser, j_fan = m["scores"], m["winner"], m["loser"], m["fan"]
    j_steps, j_aborted, j_illegal, decisions = m["steps"], m["aborted"], m["illegal"], m["decisions"]
    illegal_by_agent = m["illegal_by_agent"]
    illegal_list = m["illegal_list"]
    observe = m["observe"]
    if (j_winner == -9).any():  # pragma: no cover - an internal invariant
        raise RuntimeError("arena: some hands were not played")

    n_tab = min([n_tab] + [p["max_tables"] for p in parts if p.get("max_tables")])  # capped by a policy
    report = build_report(
        names,
        agents,
        seating,
        walls,
        seed,
        n_tab,
        rules,
        illegal,
        orders,
        chair_agent,
        w_seed,
        w_dealer,
        w_prev,
        agent_seeds,
        j_scores,
        j_winner,
        j_loser,
        j_fan,
        j_steps,
        j_aborted,
        j_illegal,
        illegal_by_agent,
        illegal_list,
        decisions,
        curve_points,
        records,
        illegal_records,
        observe,
    )
    report["settings"]["shards"] = shards
    report["records"] = build_records(
        m["kept"], names, chair_agent, job_seed, job_dealer, job_prev, job_order, n_orders, rules
    )
    report["records_dropped"] = m["records_dropped"]
    bots, bot_times = _bot_reports(parts, names)
    for nm, b in bots.items():
        report["agents"][nm]["bot"] = b
    t_end = time.perf_counter()
    play = t_play - t_setup
    report["timing"] = {
        "seconds_total": t_end - t_start,
        "seconds_setup": t_setup - t_start,
        "seconds_play": play,
        "seconds_report": t_end - t_play,
        "hands_per_s": n_jobs / play if play > 0 else None,
        "decisions_per_s": decisions / play if play > 0 else None,
    }
    if bot_times:
        report["timing"]["bots"] = bot_times
    return report


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
