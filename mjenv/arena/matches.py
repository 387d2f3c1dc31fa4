"""Match scoring for the arena (``mjenv eval --match``): 16-hand matches per wall seed, seatings rotated.

Rules
-----
No rules of its own: every match is a match of the AEC env (``RuleConfig(match=True)``: four rounds of four
hands, the dealer moving every hand, the players changing chairs between rounds, ``mjenv.rules.SEATING``),
played on :class:`mjenv.vector.VectorEnv` in match mode; an illegal action in ``"terminate"`` mode ends the
hand and the match (as in the AEC env), whose scores so far are its result.

Specification in mjenv
----------------------
* **Matches.** Wall ``w`` (0..W-1) is the seed of :func:`mjenv.arena.wall_schedule` (the hands' dealers and
  winds come from the match, not from the wall schedule); it is played once under every order ``p`` of the
  seating (:func:`mjenv.arena.seating_agents`: ``orders[p, q]`` is the agent of match player ``q``), each a
  whole match from that seed, so every agent plays as each match player equally often on every wall (1v3: 4
  matches per wall, 2v2: 6, perm24: 24).
* **Statistics** per agent, over walls as the hand arena (``docs/arena.md``): ``match_points``, the mean final
  match score of the agent's players (per wall the mean over its (order, player) slots, then the mean and 95%
  t-interval over walls); ``placement``, the mean place 1..4 of its players in their matches by final score,
  players level sharing the mean of their places (:func:`mjenv.rules.placements`, as the hand arena's
  placement), with its 95% interval; ``first_rate``, the share of its matches with place 1 (a place 1.5 of a
  tie for first counts half); and per pair of agents the per-wall difference of match points (mean, 95% CI,
  paired t-test p-value). ``matches_cut`` counts matches an illegal action ended early.
* **Play.** ``tables`` matches run at once (``after_schedule="stop"``: a table stops when its match ends; the
  next batch of matches starts when every table of a batch is done). Each policy is called on the rows where
  one of its players is to act (``VectorEnv.players``). A stochastic policy with ``row_streams`` draws from a
  stream per table keyed by (seed, agent, wall, order), so the report does not depend on ``tables``.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from mjenv.arena.report import difference_lines, format_ci
from mjenv.arena.schedule import Entrant, Schedule, agent_seed, check_seating, num_agents, seating_agents
from mjenv.arena.stats import mean_ci
from mjenv.policy import TableStreams, needs_observations
from mjenv.rules import HANDS_PER_MATCH, ILLEGAL_MODES, check_rules, placements


def run_matches(
    agents: Mapping[str, str | Callable[..., Any]],
    seating: str = "1v3",
    walls: int = 20,
    seed: int = 0,
    *,
    tables: int = 256,
    threads: int | None = None,
    rules: Any = None,
    illegal: str | None = None,
    agent_kwargs: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """Score ``agents`` over 16-hand matches (see the module docstring); returns the JSON-ready report.

    Parameters are those of :func:`mjenv.arena.run_arena` (``walls``: match seeds; ``walls * orders`` matches
    are played). ``rules`` gets ``match=True``. Raises ``ValueError`` / ``TypeError`` as ``run_arena``.
    """
    from mjenv.vector import VectorEnv

    t0 = time.perf_counter()
    check_seating(seating)
    if not isinstance(agents, Mapping) or not agents:
        raise TypeError("agents must be a non-empty mapping of name -> 'module:factory'")
    names = list(agents)
    if len(names) != num_agents(seating):
        raise ValueError(f"seating {seating!r} takes {num_agents(seating)} agents, got {len(names)}")
    for v, nm, lo in ((walls, "walls", 1), (tables, "tables", 1), (seed, "seed", 0)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{nm} must be an int, got {type(v).__name__}")
        if v < lo:
            raise ValueError(f"{nm} must be >= {lo}, got {v}")
    if illegal is not None and illegal not in ILLEGAL_MODES:
        raise ValueError(f"illegal must be one of {ILLEGAL_MODES}, got {illegal!r}")
    rules = dataclasses.replace(check_rules(rules, illegal=illegal), match=True)
    agent_kwargs = dict(agent_kwargs or {})
    sch = Schedule.build(seating, walls, seed, rules)
    orders = seating_agents(seating).astype(np.int64)  # [P, player] -> agent
    n_jobs = sch.n_jobs
    entrants = [
        Entrant(nm, agents[nm], dict(agent_kwargs.get(nm, {})), agent_seed(seed, k))
        for k, nm in enumerate(names)
    ]
    n_tab = min(tables, n_jobs)
    policies = [e.make(n_tab, threads) for e in entrants]
    streams = [TableStreams(n_tab) if getattr(p, "row_streams", False) else None for p in policies]
    observe = any(needs_observations(p) for p in policies)
    final = np.zeros((n_jobs, 4), np.int64)  # final score per match player
    hands = np.zeros(n_jobs, np.int64)
    decisions = 0
    env = None
    for j0 in range(0, n_jobs, n_tab):
        jobs = np.arange(j0, min(j0 + n_tab, n_jobs))
        if env is None or env.num_envs != jobs.size:
            env = VectorEnv(
                jobs.size, rules=rules, observations=observe, threads=threads, after_schedule="stop"
            )
        env.reset(sch.job_seed[jobs])
        rows_all = np.arange(jobs.size)
        for st, e in zip(streams, entrants):
            if st is not None:
                st.start(rows_all, sch.stream_keys(e.seed, int(jobs[0]), int(jobs[-1]) + 1))
        actions = np.zeros(jobs.size, np.int64)
        while env.active.any():
            rows = rows_all[env.active]
            player = env.players[rows, env.seats[rows]]
            agent = orders[sch.job_order[jobs[rows]], player]
            for k, pol in enumerate(policies):
                r = rows[agent == k]
                if r.size:
                    o = env.obs[r] if needs_observations(pol) else None
                    kw = {} if streams[k] is None else {"rng": streams[k].rows(r)}
                    actions[r] = np.asarray(pol(o, env.masks[r], env.seats[r], **kw))
            decisions += rows.size
            env.step(actions)
            done = np.flatnonzero(env.match_over)
            final[jobs[done]] = env.match_results.scores[done]
            hands[jobs[done]] = env.match_results.hands[done]
    t_play = time.perf_counter()
    return _report(names, sch, orders, final, hands, rules, tables, decisions, t0, t_play)


def _report(names, sch, orders, final, hands, rules, tables, decisions, t0, t_play) -> dict[str, Any]:
    walls, n_ord = sch.walls, sch.n_orders
    sc = final.reshape(walls, n_ord, 4)
    place = placements(sc)  # [W, P, player]
    agent_of = np.broadcast_to(orders, sc.shape)  # agent of each (order, player) slot
    points, places, firsts = {}, {}, {}
    out_agents: dict[str, Any] = {}
    for k, nm in enumerate(names):
        mine = agent_of == k
        n = mine.sum(axis=(1, 2))
        points[nm] = (sc * mine).sum(axis=(1, 2)) / n
        places[nm] = (place * mine).sum(axis=(1, 2)) / n
        first = np.clip(2.0 - place, 0.0, 1.0)  # place 1 counts 1, a tie for first (1.5) one half
        firsts[nm] = float((first * mine).sum() / mine.sum())
        out_agents[nm] = {
            "matches": int(mine.sum()),
            "match_points": mean_ci(points[nm]),
            "placement": mean_ci(places[nm]),
            "first_rate": firsts[nm],
        }
    diffs = []
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            d = mean_ci(points[names[a]] - points[names[b]])
            p = d["p"]
            diffs.append({"a": names[a], "b": names[b], **d, "significant": p is not None and p < 0.05})
    play = t_play - t0
    return {
        "mode": "matches",
        "settings": {
            "seating": sch.seating,
            "walls": walls,
            "seed": sch.seed,
            "orders_per_wall": n_ord,
            "matches": walls * n_ord,
            "hands_per_match": HANDS_PER_MATCH,
            "tables": tables,
            "illegal": rules.illegal,
            "rules": rules.to_dict(),
        },  # fmt: skip
        "agents": out_agents,
        "differences": diffs,
        "matches_cut": int((hands < HANDS_PER_MATCH).sum()),
        "hands": int(hands.sum()),
        "timing": {
            "seconds": play,
            "decisions_per_s": decisions / play if play > 0 else None,
            "matches_per_s": walls * n_ord / play if play > 0 else None,
        },
    }


def format_matches_markdown(report: dict) -> str:
    """The match report as markdown tables (agents, then the pairwise differences)."""
    s = report["settings"]
    lines = [
        f"**mjenv arena, matches** {s['seating']}: {s['walls']} walls x {s['orders_per_wall']} orders = "
        f"{s['matches']} matches of {s['hands_per_match']} hands ({report['hands']} hands played, "
        f"{report['matches_cut']} cut short by an illegal action), seed {s['seed']}, illegal={s['illegal']}",
        "",
        "| agent | matches | match points (95% CI) | placement (95% CI) | 1st % |",
        "|---|---:|---|---|---:|",
    ]
    for nm, a in report["agents"].items():
        lines.append(
            f"| {nm} | {a['matches']} | {format_ci(a['match_points'])} | {format_ci(a['placement'], '.3f')} | "
            f"{100 * a['first_rate']:.1f} |"
        )
    lines += difference_lines(report["differences"], "match points")
    return "\n".join(lines)
