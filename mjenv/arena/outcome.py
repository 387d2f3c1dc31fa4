"""The outcomes of a duplicate evaluation's hands (:mod:`mjenv.arena`): per hand, per agent and the candidate
records, as one shard plays them (:func:`mjenv.arena.play.play_shard`) and merged over shards, exactly
(:func:`merge_outcomes`).

A per-agent field (e.g. a bot's verdicts or answer times) is added to :class:`AgentOutcome` with its line in
:meth:`AgentOutcome.merge` and its entry in :meth:`AgentOutcome.report_fields`; the report picks it up.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mjenv.arena.schedule import Setup

#: illegal actions listed in the report (the first by hand, then decision)
MAX_LISTED_ILLEGAL = 100


@dataclass(order=True)
class Kept:
    key: tuple
    job: int = field(compare=False)
    ops: np.ndarray = field(compare=False)
    info: list = field(compare=False)
    reasons: set = field(compare=False, default_factory=set)


@dataclass
class AgentOutcome:
    """What one agent did in a block of hands (a shard, or the whole run after :func:`merge_outcomes`).

    A per-agent field (e.g. a bot's verdicts or answer times) is added here with its line in :meth:`merge`, and
    its report entry in :meth:`report_fields`; nothing else changes.

    ``bot`` is a Botzone bot policy's summary (``bot_summary()``, :mod:`mjenv.botzone.botpolicy`; None for other
    agents): its command and limits, its verdict counts and the times of its answers; ``bot_faults`` the faults
    it noted (``take_notes()``), each with its (wall, order, chair, decision), request, answer and verdict.
    """

    illegal_by_action: dict[str, int] = field(default_factory=dict)
    bot: dict[str, Any] | None = None
    bot_faults: list[dict[str, Any]] = field(default_factory=list)

    def add_illegal(self, name: str) -> None:
        """Count one illegal action, named ``name`` (:func:`action_name`)."""
        self.illegal_by_action[name] = self.illegal_by_action.get(name, 0) + 1

    def merge(self, other: AgentOutcome) -> None:
        """Add ``other`` (the same agent's outcome of other hands) to this one."""
        for nm, c in other.illegal_by_action.items():
            self.illegal_by_action[nm] = self.illegal_by_action.get(nm, 0) + c
        if other.bot is not None:
            if self.bot is None:  # the command and limits are the same in every shard
                self.bot = {**other.bot, "verdicts": {}, "times": []}
            for v, c in other.bot["verdicts"].items():
                self.bot["verdicts"][v] = self.bot["verdicts"].get(v, 0) + int(c)
            self.bot["times"] = [*self.bot["times"], *other.bot["times"]]
        self.bot_faults = [*self.bot_faults, *other.bot_faults]

    def report_fields(self) -> dict[str, Any]:
        """This agent's entries of ``report["agents"][name]`` that come from play (after the statistics)."""
        by_action = dict(sorted(self.illegal_by_action.items()))
        out: dict[str, Any] = {"illegal_actions": {"count": sum(by_action.values()), "by_action": by_action}}
        if self.bot is not None:
            # the bot's entry: command, limits, verdict counts, the faults listed by (wall, order, decision), and
            # whether the run is reproducible from the seed (no verdict caused by time); its answer times are in
            # timing_fields (they depend on the machine)
            faults = sorted(self.bot_faults, key=lambda f: (f["wall"], f["order"], f["decision"]))
            counts = dict(self.bot["verdicts"])
            out["bot"] = {
                **{k: v for k, v in self.bot.items() if k not in ("verdicts", "times")},
                "verdicts": counts,
                "faults_count": len(faults),
                "faults": faults[:MAX_LISTED_ILLEGAL],
                "reproducible": counts.get("TLE", 0) == 0,
            }
        return out

    def timing_fields(self) -> dict[str, Any] | None:
        """This agent's entry of ``report["timing"]["bots"]`` (a bot's answer times: count, median and 99th
        percentile in seconds), None for an agent that is not a bot."""
        if self.bot is None:
            return None
        t = np.asarray(self.bot["times"], np.float64)
        return {
            "answers": int(t.size),
            "median_s": float(np.median(t)) if t.size else None,
            "p99_s": float(np.quantile(t, 0.99)) if t.size else None,
        }


@dataclass(eq=False)
class Outcome:
    """The outcomes of the hands ``j0 .. j1 - 1`` (job indices of the :class:`Schedule`): one shard's, or the
    whole run's after :func:`merge_outcomes`.

    Per hand (first dimension ``j1 - j0``): ``scores`` ``int64[J, 4]`` (per chair), ``winner`` and ``loser``
    (chairs, -1 for none; ``winner`` -9 for a hand not played), ``fan``, ``steps``, ``aborted``, ``illegal``
    ``int64[J, 4]`` (illegal actions per chair). Then ``agents`` (one :class:`AgentOutcome` per agent in seating
    order), ``decisions`` (policy decisions), ``observe`` (whether observations were built), ``illegal_list``
    (``((job, decision), entry)`` of the listed illegal actions, at most ``MAX_LISTED_ILLEGAL``, the first by
    key), ``swings`` and ``illegal_kept`` (the candidate records, see :class:`_Recorder`), ``illegal_seen``
    (hands with an illegal action) and ``max_tables`` (the tables a policy allows, its ``max_tables``; None:
    no cap).
    """

    j0: int
    j1: int
    scores: np.ndarray
    winner: np.ndarray
    loser: np.ndarray
    fan: np.ndarray
    steps: np.ndarray
    aborted: np.ndarray
    illegal: np.ndarray
    agents: list[AgentOutcome]
    decisions: int = 0
    observe: bool = False
    illegal_list: list = field(default_factory=list)
    swings: list[Kept] = field(default_factory=list)
    illegal_kept: list[Kept] = field(default_factory=list)
    illegal_seen: int = 0
    max_tables: int | None = None
    #: luck-adjusted scores ``float64[J, 4]`` (scores minus the chance corrections; None without adjust)
    adjusted: np.ndarray | None = None
    #: each hand's summed feature corrections ``float32[J, 4, N_PARAMS]`` (only to fit a value model)
    luck_z: np.ndarray | None = None

    #: the per-hand arrays (placed by job index when shards merge)
    PER_HAND = ("scores", "winner", "loser", "fan", "steps", "aborted", "illegal")
    #: per-hand arrays that only some runs have
    OPTIONAL_PER_HAND = ("adjusted", "luck_z")

    @classmethod
    def empty(cls, j0: int, j1: int, n_agents: int) -> Outcome:
        """No hand played yet (``winner`` -9 everywhere)."""
        n = j1 - j0
        return cls(
            j0, j1, scores=np.zeros((n, 4), np.int64), winner=np.full(n, -9, np.int64),
            loser=np.full(n, -1, np.int64), fan=np.zeros(n, np.int64), steps=np.zeros(n, np.int64),
            aborted=np.zeros(n, np.bool_), illegal=np.zeros((n, 4), np.int64),
            agents=[AgentOutcome() for _ in range(n_agents)],
        )  # fmt: skip

    def kept(self) -> list[Kept]:
        """The kept records: the largest swings first, then the illegal hands by job; one entry per hand (a hand
        kept for both reasons carries both)."""
        out: dict[int, Kept] = {}
        for item in self.swings + self.illegal_kept:
            if item.job in out:
                out[item.job].reasons |= item.reasons
            else:
                out[item.job] = item
        return list(out.values())


def merge_outcomes(parts: list[Outcome], setup: Setup) -> Outcome:
    """Merge :func:`play_shard` outcomes (any split of the jobs) into the whole run's, exactly.

    Per-hand arrays are placed by job index; counts are summed; the kept records are the ``records`` largest
    swings (ties: the lower job) and the ``illegal_records`` illegal hands with the lowest job indices over
    all shards, the listed illegal actions the first ``MAX_LISTED_ILLEGAL`` by (job, decision): each shard
    kept its own best candidates by the same keys, so the result does not depend on the split.
    """
    out = Outcome.empty(0, setup.schedule.n_jobs, len(setup.entrants))
    listed: list = []
    for p in sorted(parts, key=lambda p: p.j0):
        sl = slice(p.j0, p.j1)
        for key in Outcome.PER_HAND:
            getattr(out, key)[sl] = getattr(p, key)
        for key in Outcome.OPTIONAL_PER_HAND:
            part = getattr(p, key)
            if part is not None:
                if getattr(out, key) is None:
                    setattr(out, key, np.zeros((out.j1 - out.j0, *part.shape[1:]), part.dtype))
                getattr(out, key)[sl] = part
        out.decisions += p.decisions
        for mine, theirs in zip(out.agents, p.agents):
            mine.merge(theirs)
        listed += p.illegal_list
        out.swings += p.swings
        out.illegal_kept += p.illegal_kept
        out.illegal_seen += p.illegal_seen
        out.observe = out.observe or p.observe
        if p.max_tables is not None:
            out.max_tables = p.max_tables if out.max_tables is None else min(out.max_tables, p.max_tables)
    out.swings = heapq.nlargest(setup.records, out.swings) if setup.records else []
    out.illegal_kept = sorted(out.illegal_kept, key=lambda k: k.job)[: setup.illegal_records]
    out.illegal_list = sorted(listed, key=lambda x: x[0])[:MAX_LISTED_ILLEGAL]
    return out
