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
  policy has ``needs_observations`` True). Policies see observations and masks only. Optional hooks of a
  policy (a Botzone bot policy, :mod:`mjenv.botzone.botpolicy`): ``wants_tables`` (also called with
  ``tables=rows``), ``max_tables`` (the tables played are capped), ``take_notes()`` (faults per row, listed in
  the report and noted in the records), ``hands_done(tables)`` and ``bot_summary()`` (its report entry).
* **Statistics** (``docs/arena.md`` has the formulas). Per agent: points per hand with a 95% t-interval over
  walls (a wall's sample is the agent's mean score over all its seats in all the wall's orders, so the
  permutations of a wall form one paired sample), win, self-drawn, deal-in and draw rates (over the agent's
  seat-hands: a hand counts once per seat the agent holds), mean fan of its wins, mean placement per wall
  (players ranked by their summed score over the wall's orders, ties shared; rank points 4/3/2/1) and its
  illegal actions by name. For every pair of agents: the mean per-wall difference of their points per hand,
  its 95% CI, the two-sided p-value of the paired t-test and whether it is significant at 5%.
* **Reproducible.** The report is a function of (agents, seating, walls, seed, rules, illegal mode): the same
  inputs give the same report bit for bit, except its ``"timing"`` entry, the ``settings`` that say how it
  was run (``tables``, ``shards``) and what says which code ran it (``"versions"``, and ``"mjenv"``: its
  version, git commit and whether the checkout had uncommitted changes, :func:`provenance`); the thread count, the tables, the shards (the walls split into contiguous
  blocks, each played on its own env, the per-hand outcomes merged by hand index) and Ray workers
  (``workers=N``) do not change it. For that, a stochastic policy draws from per-table random streams
  (``row_streams = True``, :class:`mjenv.policy.TableStreams`) that the arena keys at each hand by (seed,
  agent, wall, seat order) (:meth:`Schedule.stream_keys`), so its draws at a table depend on no other table.
  A stochastic policy that uses only its own generator gets the same report for the same ``shards`` and
  ``tables``.
* **Records**: the hands with the largest swing (``max(score) - min(score)``) and every
  hand with an illegal action (up to ``illegal_records``, those of the lowest hand indices) are kept as :mod:`mjenv.record` logs (``mjenv.record.LOG_FORMAT``, replayable) with the
  extra keys ``"agents"`` (agent name per chair), ``"wall_index"``, ``"order"``, ``"swing"``, ``"reasons"`` and
  ``"info"``: a list aligned with ``"ops"`` holding, for each decision, the policy's info when it gives any
  (``{"probs": {action name: p over the legal actions}, "value": v}``, whichever of the two it holds; an info
  with neither is not recorded) and, for an illegal action, what was
  played (``{"illegal_action": a, "illegal_name": name}``); ``None`` otherwise.

Layout
------
:mod:`~mjenv.arena.schedule` (seatings, walls, the :class:`Schedule` of hands, the :class:`Entrant` agents and the
:class:`Setup` every shard shares), :mod:`~mjenv.arena.play` (the play loop on a VectorEnv, shards, Ray,
:func:`run_arena`), :mod:`~mjenv.arena.outcome` (the per-hand and per-agent :class:`Outcome` of the hands and its
exact merge over shards), :mod:`~mjenv.arena.stats` (Student's t, :func:`mean_ci`, placements), :mod:`~mjenv.arena.matches` (match
scoring: 16-hand matches per wall seed with the seatings rotated, :func:`run_matches`, ``mjenv eval --match``) and
:mod:`~mjenv.arena.report` (the report dict, the records, the markdown and the plot). A new per-agent report
field goes into :class:`AgentOutcome` (its value, its merge and its report entry).
"""

from mjenv.arena.matches import format_matches_markdown, run_matches
from mjenv.arena.outcome import AgentOutcome, Outcome, merge_outcomes
from mjenv.arena.play import action_name, play_shard, run_arena
from mjenv.arena.report import build_records, build_report, format_markdown, plot_report, provenance
from mjenv.arena.schedule import (
    SEATINGS,
    Entrant,
    Schedule,
    Setup,
    num_agents,
    seating_agents,
    seating_orders,
    seating_players,
    wall_schedule,
)
from mjenv.arena.stats import mean_ci, t_ppf, t_sf2

__all__ = [
    "SEATINGS",
    "AgentOutcome",
    "Entrant",
    "Outcome",
    "Schedule",
    "Setup",
    "action_name",
    "build_records",
    "build_report",
    "format_markdown",
    "format_matches_markdown",
    "merge_outcomes",
    "mean_ci",
    "num_agents",
    "play_shard",
    "plot_report",
    "provenance",
    "run_arena",
    "run_matches",
    "seating_agents",
    "seating_orders",
    "seating_players",
    "t_ppf",
    "t_sf2",
    "wall_schedule",
]
