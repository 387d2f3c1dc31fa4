"""Duplicate evaluation of policies on the vector env: seatings, paired statistics, records of chosen hands.

Rules
-----
No rules of its own: every hand is a hand of :mod:`mjenv.game`, played on :class:`mjenv.vector.VectorEnv`
through its seed schedule; payments are the engine's (MCR: 8 + fan, ``rules.py``), illegal actions are handled
by the env's illegal mode (default ``"terminate"``: the offender pays 30, the hand ends without a winner).

Specification in mjenv
----------------------
* **Walls.** Wall ``w`` (0..W-1) is a seed drawn from ``numpy.random.SeedSequence(seed)`` with dealer chair
  ``w % 4`` and prevailing wind ``(w // 4) % 4``, so dealer and wind go through all 16 combinations.
* **Seatings** (:data:`SEATINGS`): four *players* with fixed agents, and the chair orders every wall is played
  under (one hand per order, all on the same wall):

  ==========  ==========================  =============================================================
  seating     players                     orders per wall
  ==========  ==========================  =============================================================
  ``1v3``     A, B, B, B (2 agents)       4: the rotations (A sits once in each chair)
  ``2v2``     A, A, B, B (2 agents)       6: every choice of the two chairs of A
  ``perm24``  A, B, C, D (4 agents)       24: every order
  ==========  ==========================  =============================================================

  Every agent sits in every chair equally often on every wall.
* **Play.** The hands (wall, order) are dealt to the env's tables in order and each table takes its next hand
  from the schedule when it finishes one (``VectorEnv.schedule``, ``after_schedule="stop"``), so the whole
  evaluation runs at vector speed. At each step each policy is called once, on exactly the rows where one of
  its seats is to act (``policy(obs[rows], masks[rows], seats[rows])``; observations are built only when some
  policy has ``needs_observations`` True). Policies see observations and masks only.
* **Statistics** (``docs/arena.md`` has the formulas). Per agent: points per hand with a 95% t-interval over
  walls (a wall's sample is the agent's mean score over all its seats in all the wall's orders, so the
  permutations of a wall form one paired sample), win, self-drawn, deal-in and draw rates (over the agent's
  seat-hands: a hand counts once per seat the agent holds), mean fan of its wins, mean placement per wall
  (players ranked by their summed score over the wall's orders, ties shared; rank points 4/3/2/1) and its
  illegal actions by name. For every pair of agents: the mean per-wall difference of their points per hand,
  its 95% CI, the two-sided p-value of the paired t-test and whether it is significant at 5%.
* **Reproducible.** The report is a function of (agents, seating, walls, seed, tables, rules, illegal mode):
  the same inputs give the same report bit for bit, except its ``"timing"`` entry; the thread count does not
  change it, nor does playing the shards on Ray workers (``workers=N``: the walls are split into ``shards``
  contiguous blocks, each played on its own env, and the per-hand outcomes merged by hand index; with
  policies whose actions depend only on their rows the split does not change the hands either).
* **Records** (item 4 of issue 11): the hands with the largest swing (``max(score) - min(score)``) and every
  hand with an illegal action (up to ``illegal_records``, those of the lowest hand indices) are kept as :mod:`mjenv.record` logs (``mjenv.record.LOG_FORMAT``, replayable) with the
  extra keys ``"agents"`` (agent name per chair), ``"wall_index"``, ``"order"``, ``"swing"``, ``"reasons"`` and
  ``"info"``: a list aligned with ``"ops"`` holding, for each decision, the policy's info when it gives any
  (``{"probs": {action name: p over the legal actions}, "value": v}``) and, for an illegal action, what was
  played (``{"illegal_action": a, "illegal_name": name}``); ``None`` otherwise.
"""

from __future__ import annotations

import heapq
import itertools
import math
import platform
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mjenv import actions as A
from mjenv import game as G
from mjenv.policy import load_policy, needs_observations
from mjenv.rules import ILLEGAL_MODES, check_rules

SEATINGS = ("1v3", "2v2", "perm24")
#: legal actions kept per decision in the records' policy info (a decision has at most 22: 14 discards,
#: 3 concealed and 4 added kongs and a win)
_INFO_LEGAL = 24
_MAX_LISTED_ILLEGAL = 100


# ------------------------------------------------------------------------------------------------ seatings
def seating_players(seating: str) -> np.ndarray:
    """``int8[4]``: the agent index (0..) of each of the four players of ``seating``."""
    _check_seating(seating)
    return np.array({"1v3": [0, 1, 1, 1], "2v2": [0, 0, 1, 1], "perm24": [0, 1, 2, 3]}[seating], np.int8)


def seating_orders(seating: str) -> np.ndarray:
    """``int8[P, 4]``: ``orders[p, chair]`` is the player at ``chair`` in order ``p`` of ``seating``.

    >>> seating_orders("1v3").tolist()
    [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1], [1, 2, 3, 0]]
    """
    _check_seating(seating)
    if seating == "1v3":  # rotation r: player q sits at chair (q + r) % 4
        return np.array([[(c - r) % 4 for c in range(4)] for r in range(4)], np.int8)
    if seating == "2v2":
        out = []
        for a in itertools.combinations(range(4), 2):
            b = [c for c in range(4) if c not in a]
            row = [0] * 4
            row[a[0]], row[a[1]], row[b[0]], row[b[1]] = 0, 1, 2, 3
            out.append(row)
        return np.array(out, np.int8)
    return np.array([list(p) for p in itertools.permutations(range(4))], np.int8)


def seating_agents(seating: str) -> np.ndarray:
    """``int8[P, 4]``: the agent index at each chair in each order of ``seating``."""
    return seating_players(seating)[seating_orders(seating)]


def num_agents(seating: str) -> int:
    """How many distinct agents ``seating`` takes (2, 2 or 4)."""
    return int(seating_players(seating).max()) + 1


def _check_seating(seating: object) -> None:
    if seating not in SEATINGS:
        raise ValueError(f"seating must be one of {SEATINGS}, got {seating!r}")


def wall_schedule(seed: int, walls: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seeds int64[W], dealers int32[W], prevalents int32[W])`` of the walls of an evaluation."""
    ss = np.random.SeedSequence([int(seed), 0x57A11])
    seeds = (ss.generate_state(walls, dtype=np.uint64) >> np.uint64(2)).astype(np.int64)
    w = np.arange(walls)
    return seeds, (w % 4).astype(np.int32), ((w // 4) % 4).astype(np.int32)


def action_name(a: int) -> str:
    """:func:`mjenv.actions.action_to_str`, or ``"out of range (a)"`` for an id outside ``0..NUM_ACTIONS-1``."""
    return A.action_to_str(a) if 0 <= a < A.NUM_ACTIONS else f"out of range ({a})"


def _agent_seed(seed: int, k: int) -> int:
    return int(np.random.SeedSequence([int(seed), 0xA6E47, k]).generate_state(1, dtype=np.uint64)[0] >> 2)


# ------------------------------------------------------------------------------------------------ statistics
def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (
            m * (b - m) * x / ((a + m2 - 1.0) * (a + m2)),
            -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_sf2(t: float, df: float) -> float:
    """Two-sided tail ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom."""
    if math.isinf(t):
        return 0.0
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def t_ppf(q: float, df: float) -> float:
    """Quantile of Student's t (``q`` in (0.5, 1)), by bisection of :func:`t_sf2` (to ~1e-12).

    >>> round(t_ppf(0.975, 10), 6), round(t_ppf(0.975, 1e9), 4)
    (2.228139, 1.96)
    """
    if not 0.5 < q < 1.0 or df <= 0:
        raise ValueError(f"t_ppf needs 0.5 < q < 1 and df > 0, got q={q}, df={df}")
    target = 2.0 * (1.0 - q)
    lo, hi = 0.0, 1.0
    while t_sf2(hi, df) > target:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf2(mid, df) > target:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def mean_ci(x: np.ndarray, level: float = 0.95) -> dict[str, Any]:
    """Mean of the per-wall samples ``x`` with its t-interval: ``{"mean", "ci95", "sd", "se", "n", "p"}``.

    ``ci95`` is ``mean -+ t_{(1+level)/2, n-1} * sd / sqrt(n)`` (``None`` with fewer than two walls); ``p`` is
    the two-sided p-value of ``mean == 0`` (1 when every sample is 0).
    """
    x = np.asarray(x, np.float64)
    n = int(x.size)
    m = float(x.mean()) if n else float("nan")
    if n < 2:
        return {"mean": m, "ci95": None, "sd": None, "se": None, "n": n, "p": None}
    sd = float(x.std(ddof=1))
    se = sd / math.sqrt(n)
    half = t_ppf(0.5 + level / 2.0, n - 1) * se
    if se > 0:
        p = t_sf2(m / se, n - 1)
    else:
        p = 1.0 if m == 0 else 0.0
    return {"mean": m, "ci95": [m - half, m + half], "sd": sd, "se": se, "n": n, "p": p}


def _ranks(totals: np.ndarray) -> np.ndarray:
    """Placement 1..4 (1 = highest) of each player per row of ``totals`` ``[W, 4]``; ties share the mean."""
    gt = (totals[:, None, :] > totals[:, :, None]).sum(axis=2)  # players above
    eq = (totals[:, None, :] == totals[:, :, None]).sum(axis=2) - 1  # others level
    return 1.0 + gt + eq / 2.0


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
        info = self._info_list(table, n, ops)
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

    def _info_list(self, table: int, n: int, ops: np.ndarray) -> list:
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
    observe = any(needs_observations(p) for p in policies)
    has_info = [record_info and hasattr(p, "act_with_info") for p in policies]
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
                else:
                    a = pol(o, m, s)
                actions[rows] = _check_policy_actions(a, rows.size, names[k])
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
                cur_job[done] = queued[done]
                queued[done] = -1
                refill(done[cur_job[done] >= 0])
                if bar is not None:
                    bar.update(done.size)
    finally:
        if bar is not None:
            bar.close()
    return {
        "j0": j0, "j1": j1, "scores": j_scores, "winner": j_winner, "loser": j_loser, "fan": j_fan,
        "steps": j_steps, "aborted": j_aborted, "illegal": j_illegal, "decisions": int(decisions),
        "illegal_by_agent": illegal_by_agent, "illegal_list": [(tuple(-x for x in k), e) for k, e in illegal_heap],
        "swings": [] if rec is None else list(rec.swings), "illegal_kept": [] if rec is None else [k for _, k in rec.illegal],
        "illegal_seen": 0 if rec is None else rec.illegal_seen, "observe": bool(observe),
    }  # fmt: skip


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
    _check_seating(seating)
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

    agent_seeds = {nm: _agent_seed(seed, k) for k, nm in enumerate(names)}
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

    report = _report(
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
    report["records"] = _build_records(
        m["kept"], names, chair_agent, job_seed, job_dealer, job_prev, job_order, n_orders, rules
    )
    report["records_dropped"] = m["records_dropped"]
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


def _report(
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
):
    import numba

    from mjenv._version import __version__

    n_orders = orders.shape[0]
    n_jobs = walls * n_orders
    sc = j_scores.reshape(walls, n_orders, 4)
    chairs = np.arange(4)
    won = j_winner[:, None] == chairs  # [J, 4]
    self_drawn = won & (j_loser[:, None] < 0)
    dealt_in = j_loser[:, None] == chairs
    no_winner = np.broadcast_to((j_winner < 0)[:, None], (n_jobs, 4))
    ca = np.tile(chair_agent, (walls, 1))  # [J, 4] agent at each chair
    # per wall, per player: summed score over the wall's orders -> placement
    onehot = orders[:, :, None] == np.arange(4)  # [P, chair, player]
    player_tot = np.einsum("wpc,pcq->wq", sc, onehot.astype(np.int64))
    place = _ranks(player_tot)  # [W, 4 players]
    players = seating_players(seating)
    per_wall: dict[str, np.ndarray] = {}
    out_agents: dict[str, Any] = {}
    for k, nm in enumerate(names):
        m = ca == k
        slots = int(m.sum())
        per_wall[nm] = (sc * (chair_agent == k)).sum(axis=(1, 2)) / float((chair_agent == k).sum())
        wins = int((won & m).sum())
        fan_sum = int((j_fan[:, None] * (won & m)).sum())
        pl = place[:, players == k]
        ill = int(j_illegal[m].sum())
        st = mean_ci(per_wall[nm])
        out_agents[nm] = {
            "spec": agents[nm]
            if isinstance(agents[nm], str)
            else getattr(agents[nm], "__qualname__", "factory"),
            "seed": agent_seeds[nm],
            "hands": slots,
            "points_per_hand": st,
            "win_rate": wins / slots,
            "self_drawn_rate": int((self_drawn & m).sum()) / slots,
            "deal_in_rate": int((dealt_in & m).sum()) / slots,
            "draw_rate": int((no_winner & m).sum()) / slots,
            "mean_fan": fan_sum / wins if wins else None,
            "placement": float(pl.mean()),
            "rank_points": float((5.0 - pl).mean()),
            "illegal_actions": {"count": ill, "by_action": dict(sorted(illegal_by_agent[k].items()))},
        }
    diffs = []
    for a, b in itertools.combinations(names, 2):
        st = mean_ci(per_wall[a] - per_wall[b])
        diffs.append({"a": a, "b": b, **st, "significant": bool(st["p"] is not None and st["p"] < 0.05)})
    # CI half-width against hands played (prefixes of the walls)
    ks = sorted({round(float(x)) for x in np.geomspace(2, walls, curve_points)} if walls >= 2 else set())
    conv = {"walls": ks, "hands": [k * n_orders for k in ks], "half_width": {}}
    for nm in names:
        hw = []
        for k in ks:
            ci = mean_ci(per_wall[nm][:k])["ci95"]
            hw.append((ci[1] - ci[0]) / 2.0)
        conv["half_width"][nm] = hw
    if len(names) == 2:
        a, b = names
        hw = []
        for k in ks:
            ci = mean_ci((per_wall[a] - per_wall[b])[:k])["ci95"]
            hw.append((ci[1] - ci[0]) / 2.0)
        conv["half_width"][f"{a} - {b}"] = hw
    hands_won = j_winner >= 0
    return {
        "format": "mjenv-arena-v1",
        "versions": {
            "mjenv": __version__,
            "numpy": np.__version__,
            "numba": numba.__version__,
            "python": platform.python_version(),
        },
        "settings": {
            "seating": seating,
            "walls": walls,
            "orders_per_wall": n_orders,
            "hands": n_jobs,
            "seed": seed,
            "tables": n_tab,
            "illegal": illegal,
            "rules": rules.to_dict(),
            "observations": bool(observe),
            "records": records,
            "illegal_records": illegal_records,
            "agents": {nm: out_agents[nm]["spec"] for nm in names},
            "orders": orders.tolist(),
            "players": players.tolist(),
        },
        "seeds": {
            "seed": seed,
            "agents": agent_seeds,
            "walls": w_seed.tolist(),
            "dealers": w_dealer.tolist(),
            "prevalents": w_prev.tolist(),
        },
        "agents": out_agents,
        "differences": diffs,
        "table": {
            "hands": n_jobs,
            "decisions": int(decisions),
            "win_rate": float(hands_won.mean()),
            "self_drawn_rate": float((hands_won & (j_loser < 0)).mean()),
            "draw_rate": float((~hands_won).mean()),
            "aborted_rate": float(j_aborted.mean()),
            "mean_fan": float(j_fan[hands_won].mean()) if hands_won.any() else None,
            "mean_hand_steps": float(j_steps.mean()),
        },
        "convergence": conv,
        "illegal_actions": illegal_list,
    }


def _build_records(kept, names, chair_agent, job_seed, job_dealer, job_prev, job_order, n_orders, rules):
    from mjenv.record import make_log

    out = []
    for item in kept:
        j = item.job
        ops = [["act" if k == 0 else "penalty", int(s), int(v)] for k, s, v in item.ops.tolist()]
        log = make_log(int(job_seed[j]), int(job_dealer[j]), int(job_prev[j]), rules, ops)
        order = int(job_order[j])
        log.update(
            {
                "agents": [names[int(a)] for a in chair_agent[order]],
                "wall_index": j // n_orders,
                "order": order,
                "swing": int(item.key[0]),
                "reasons": sorted(item.reasons),
                "info": item.info,
            }
        )
        out.append(log)
    return out


# ------------------------------------------------------------------------------------------------ output
def _fmt_ci(st: dict) -> str:
    if st["ci95"] is None:
        return f"{st['mean']:+.2f}"
    lo, hi = st["ci95"]
    return f"{st['mean']:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def format_markdown(report: dict) -> str:
    """The report as markdown tables (agents, then the pairwise differences)."""
    s = report["settings"]
    t = report["table"]
    lines = [
        (
            f"**mjenv arena** {s['seating']}: {s['walls']} walls x {s['orders_per_wall']} orders = "
            f"{s['hands']} hands, seed {s['seed']}, illegal={s['illegal']}"
        ),
        "",
        (
            "| agent | hands | points/hand (95% CI) | win % | self-drawn % | deal-in % | draw % | mean fan | "
            "placement | illegal |"
        ),
        "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for nm, a in report["agents"].items():
        fan = "-" if a["mean_fan"] is None else f"{a['mean_fan']:.1f}"
        lines.append(
            f"| {nm} | {a['hands']} | {_fmt_ci(a['points_per_hand'])} | {100 * a['win_rate']:.1f} | "
            f"{100 * a['self_drawn_rate']:.1f} | {100 * a['deal_in_rate']:.1f} | {100 * a['draw_rate']:.1f} | "
            f"{fan} | {a['placement']:.2f} | {a['illegal_actions']['count']} |"
        )
    lines += ["", "| difference | points/hand (95% CI) | p | significant |", "|---|---|---:|---|"]
    for d in report["differences"]:
        p = "-" if d["p"] is None else f"{d['p']:.3g}"
        lines.append(f"| {d['a']} - {d['b']} | {_fmt_ci(d)} | {p} | {'yes' if d['significant'] else 'no'} |")
    fan = "-" if t["mean_fan"] is None else f"{t['mean_fan']:.1f}"
    lines.append("")
    lines.append(
        f"all hands: win {100 * t['win_rate']:.1f}%, self-drawn {100 * t['self_drawn_rate']:.1f}%, "
        f"draw {100 * t['draw_rate']:.1f}%, aborted {100 * t['aborted_rate']:.1f}%, mean fan {fan}, "
        f"{t['decisions']} decisions"
    )
    tm = report.get("timing")
    if tm and tm.get("hands_per_s"):
        lines.append(
            f"time: {tm['seconds_play']:.1f} s of play ({tm['hands_per_s']:.0f} hands/s, "
            f"{tm['decisions_per_s']:.0f} decisions/s), {tm['seconds_total']:.1f} s in all"
        )
    if report["illegal_actions"]:
        lines.append(
            f"illegal actions: {sum(a['illegal_actions']['count'] for a in report['agents'].values())}"
            f" (first: {report['illegal_actions'][0]})"
        )
    return "\n".join(lines)


def plot_report(report: dict, path: str) -> None:
    """Save a figure: mean points per hand +- 95% CI per agent, and the CI half-width against hands played.

    Needs matplotlib (not a dependency of mjenv): ``pip install matplotlib``.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("plotting the arena report needs matplotlib: pip install matplotlib") from e
    names = list(report["agents"])
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    means = [report["agents"][n]["points_per_hand"]["mean"] for n in names]
    errs = []
    for n in names:
        ci = report["agents"][n]["points_per_hand"]["ci95"]
        errs.append(0.0 if ci is None else (ci[1] - ci[0]) / 2.0)
    ax1.errorbar(range(len(names)), means, yerr=errs, fmt="o", capsize=6)
    ax1.axhline(0.0, color="grey", lw=0.8)
    ax1.set_xticks(range(len(names)), names)
    ax1.set_xlim(-0.6, len(names) - 0.4)
    ax1.set_ylabel("points per hand (mean, 95% CI over walls)")
    s = report["settings"]
    ax1.set_title(f"{s['seating']}, {s['walls']} walls, {s['hands']} hands")
    conv = report["convergence"]
    hands = np.asarray(conv["hands"], np.float64)
    for label, hw in conv["half_width"].items():
        if len(hw):
            ax2.loglog(hands, hw, "o-", label=label, ms=3)
    if hands.size:
        ref = np.asarray(next(iter(conv["half_width"].values())), np.float64)
        ok = ref > 0
        if ok.any():
            c = np.median(ref[ok] * np.sqrt(hands[ok]))
            ax2.loglog(hands, c / np.sqrt(hands), "k--", lw=0.8, label=r"$\propto 1/\sqrt{\mathrm{hands}}$")
    ax2.set_xlabel("hands played")
    ax2.set_ylabel("95% CI half-width (points per hand)")
    ax2.legend(fontsize=8)
    ax2.set_title("CI half-width against hands played")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
