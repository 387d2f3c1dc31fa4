"""Batched self-play runs: N tables of a :class:`mjenv.vector.VectorEnv` driven by one policy, with statistics.

Rules
-----
No rules of its own: outcomes, fans and payments come from the engine (:mod:`mjenv.game`) through the vector
env's per-hand results.

Specification in mjenv
----------------------
:func:`run_selfplay` plays until a hand budget or a time budget is reached (whichever comes first) and returns a
JSON-ready record: throughput (decisions/s, hands/s; compile time apart), outcomes (win, self-drawn win,
discard win, exhaustive draw and aborted rates), mean fan of the wins, how often every fan was scored, and the
points won per chair. ``mjenv selfplay`` (:mod:`mjenv.cli`) prints it as text or JSON.

Units: a **decision** is one action chosen at one table (one table-step of the batch; claim-window passes
included); a **hand** is one deal played to its end.

The policy hook: ``--policy random`` (default, :class:`mjenv.vector.RandomPolicy`) or ``--policy
module:factory``, where ``factory(num_envs: int, seed: int)`` returns a :class:`mjenv.vector.Policy`
(``policy(obs, masks, seats) -> int array``). A policy object with ``needs_observations = False`` runs the env
in the masks-only mode; any other policy gets observations.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from mjenv.policy import Policy, RandomPolicy
from mjenv.policy import load_policy as _load_policy
from mjenv.rules import RuleConfig

# mjenv.fans / mjenv.vector are imported where used: importing them loads (on the first run: compiles) the
# kernels, which run_selfplay does under its progress bar


def load_policy(spec: str, num_envs: int, seed: int) -> Policy:
    """Build the policy named by ``spec``: ``"random"`` or ``"package.module:factory"``."""
    if not isinstance(spec, str) or not spec:
        raise ValueError("policy must be 'random' or 'module:factory'")
    if spec == "random":
        return RandomPolicy(seed)
    return _load_policy(spec, num_envs, seed)


class _Stats:
    """Running totals over finished hands."""

    def __init__(self) -> None:
        self.hands = self.wins = self.self_drawn = self.draws = self.aborted = 0
        self.fan_sum = 0
        self.hand_steps = 0
        from mjenv.fans import NUM_FANS

        self.fan_counts = np.zeros(NUM_FANS, np.int64)  # times each fan counted
        self.fan_hands = np.zeros(NUM_FANS, np.int64)  # winning hands that scored each fan
        self.points = np.zeros(4, np.int64)
        self.wins_by_chair = np.zeros(4, np.int64)

    def add(self, env, idx: np.ndarray) -> None:
        r = env.results
        w = r.winner[idx]
        won = w >= 0
        self.hands += len(idx)
        self.wins += int(won.sum())
        self.self_drawn += int((won & (r.loser[idx] < 0)).sum())
        self.aborted += int(r.aborted[idx].sum())
        self.draws += int((~won).sum()) - int(r.aborted[idx].sum())
        self.fan_sum += int(r.fan_total[idx].sum())
        self.hand_steps += int(r.hand_steps[idx].sum())
        fc = r.fan_counts[idx]
        self.fan_counts += fc.sum(axis=0, dtype=np.int64)
        self.fan_hands += (fc > 0).sum(axis=0)
        self.points += r.scores[idx].sum(axis=0, dtype=np.int64)
        self.wins_by_chair += np.bincount(w[won], minlength=4)[:4]


def run_selfplay(
    *,
    tables: int = 1024,
    hands: int | None = None,
    seconds: float | None = 10.0,
    seed: int = 0,
    threads: int | None = None,
    policy: str | Policy = "random",
    observations: bool | None = None,
    progress: bool = True,
    rules: RuleConfig | None = None,
) -> dict:
    """Play ``tables`` tables until ``hands`` hands finished or ``seconds`` passed; return the statistics.

    Parameters
    ----------
    tables : int
        Number of tables stepped together.
    hands : int, optional
        Stop once this many hands finished (over all tables).
    seconds : float, optional
        Stop once this much wall time passed (compile time not counted). At least one budget must be given.
    seed : int
        Seeds the tables (:func:`mjenv.vector.table_seeds`) and the random policy.
    threads : int, optional
        Numba threads (default all).
    policy : str or Policy
        ``"random"``, ``"module:factory"`` or a policy object.
    observations : bool, optional
        Force the observation mode; default: masks-only for the random policy, observations otherwise
        (or the policy's ``needs_observations``).
    progress : bool
        Show a tqdm progress bar on stderr.
    rules : RuleConfig, optional
        Table rules (default: the vector env's, ``RuleConfig(illegal="raise")``); ``mjenv selfplay --no-flowers`` etc.

    Returns
    -------
    dict
        ``settings``, ``throughput`` (decisions, hands, seconds, cpu_seconds, decisions_per_s, hands_per_s,
        compile_s, bytes_per_table), ``outcomes`` (rates), ``fans`` (every fan scored: name, Chinese name,
        times, hands, per_win), ``points`` (per chair: total, per hand, wins).
    """
    if hands is None and seconds is None:
        raise ValueError("give a hand budget, a time budget or both")
    if hands is not None and (isinstance(hands, bool) or not isinstance(hands, int) or hands < 1):
        raise ValueError(f"hands must be a positive int, got {hands!r}")
    if seconds is not None and (
        isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds <= 0
    ):
        raise ValueError(f"seconds must be > 0, got {seconds!r}")
    pol = load_policy(policy, tables, seed) if isinstance(policy, str) else policy
    if not callable(pol):
        raise TypeError(f"policy must be callable, got {type(pol).__name__}")
    if observations is None:
        observations = bool(getattr(pol, "needs_observations", not isinstance(pol, RandomPolicy)))
    if progress:
        print(
            "loading the kernels (compiled on the first run, about a minute; cached on disk after)",
            file=sys.stderr,
        )
    from mjenv._compile import warmup

    t0 = time.perf_counter()
    warmup(  # only what the vector env runs: not the batch scorer, not the single-table fronts' kernels
        imports=("mjenv.fans", "mjenv.game"),
        modules=("mjenv.vector",),
        progress=progress,
        observations=observations,
    )
    compile_s = time.perf_counter() - t0
    from mjenv.vector import VectorEnv

    env = VectorEnv(tables, seed=seed, rules=rules, observations=observations, threads=threads)
    if isinstance(pol, RandomPolicy) and pol.env is None:
        pol.env = env  # use the env's legal-action lists (same actions, cheaper)
    stats = _Stats()
    from tqdm import tqdm

    total = hands if hands is not None else None
    bar = tqdm(
        total=total,
        unit="hand",
        desc="selfplay",
        disable=not progress,
        file=sys.stderr,
        smoothing=0.1,
        mininterval=0.5,
    )
    decisions = 0
    policy_s = 0.0
    obs, masks, seats = env.reset()
    c0, t0 = time.process_time(), time.perf_counter()
    end = t0 + seconds if seconds is not None else float("inf")
    last_bar = t0
    while True:
        tp = time.perf_counter()
        actions = pol(obs, masks, seats)
        policy_s += time.perf_counter() - tp
        obs, masks, seats, _rewards, terminated = env.step(actions)
        decisions += tables
        if terminated.any():
            idx = np.flatnonzero(terminated)
            stats.add(env, idx)
            bar.update(len(idx))
        now = time.perf_counter()
        if progress and now - last_bar > 0.25:
            last_bar = now
            bar.set_postfix_str(f"{decisions / (now - t0):,.0f} decisions/s")
        if (hands is not None and stats.hands >= hands) or now >= end:
            break
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    bar.close()
    return _record(stats, env, locals_={
        "tables": tables, "hands": hands, "seconds": seconds, "seed": seed, "threads": env.threads, "observations": observations,
        "policy": policy if isinstance(policy, str) else type(policy).__name__, "decisions": decisions, "wall": wall,
        "cpu": cpu, "compile_s": compile_s, "policy_s": policy_s,
    })  # fmt: skip


def _rate(a: int, b: int) -> float | None:
    return a / b if b else None


def _record(st: _Stats, env, locals_: dict) -> dict:
    from mjenv.fans import FAN_NAME_EN, FAN_NAME_ZH
    from mjenv.vector import bytes_per_table

    v = locals_
    fans = [
        {
            "fan": FAN_NAME_EN[f],
            "zh": FAN_NAME_ZH[f],
            "times": int(st.fan_counts[f]),
            "hands": int(st.fan_hands[f]),
            "per_win": _rate(int(st.fan_hands[f]), st.wins),
        }
        for f in np.argsort(-st.fan_hands, kind="stable")
        if st.fan_hands[f]
    ]
    return {
        "settings": {
            k: v[k] for k in ("tables", "hands", "seconds", "seed", "threads", "observations", "policy")
        },
        "throughput": {
            "decisions": v["decisions"],
            "hands": st.hands,
            "seconds": v["wall"],
            "cpu_seconds": v["cpu"],
            "cpu_per_wall": v["cpu"] / v["wall"] if v["wall"] else None,
            "decisions_per_s": v["decisions"] / v["wall"] if v["wall"] else None,
            "hands_per_s": st.hands / v["wall"] if v["wall"] else None,
            "decisions_per_cpu_s": v["decisions"] / v["cpu"] if v["cpu"] else None,
            "policy_share": v["policy_s"] / v["wall"] if v["wall"] else None,
            "compile_s": v["compile_s"],
            "bytes_per_table": bytes_per_table(env.observations),
        },
        "outcomes": {
            "hands": st.hands,
            "win_rate": _rate(st.wins, st.hands),
            "self_drawn_rate": _rate(st.self_drawn, st.hands),
            "discard_win_rate": _rate(st.wins - st.self_drawn, st.hands),
            "draw_rate": _rate(st.draws, st.hands),
            "aborted_rate": _rate(st.aborted, st.hands),
            "mean_fan": _rate(st.fan_sum, st.wins),
            "mean_decisions_per_hand": _rate(st.hand_steps, st.hands),
        },
        "fans": fans,
        "points": {
            "chairs": ["E0", "S1", "W2", "N3"],
            "total": [int(x) for x in st.points],
            "per_hand": [_rate(int(x), st.hands) for x in st.points],
            "wins": [int(x) for x in st.wins_by_chair],
            "dealer_chair": int(env.rules.dealer),
        },
        "rules": env.rules.to_dict(),
    }


def format_report(rec: dict) -> str:
    """The human-readable report of a :func:`run_selfplay` record."""
    s, t, o, p = rec["settings"], rec["throughput"], rec["outcomes"], rec["points"]

    def pct(x):
        return "-" if x is None else f"{100 * x:.2f}%"

    lines = [
        (
            f"mjenv selfplay: {s['tables']} tables, policy {s['policy']}, "
            f"{'observations' if s['observations'] else 'masks only'}, {s['threads']} thread(s), seed {s['seed']}"
        ),
        "",
        (
            f"throughput   {t['decisions_per_s']:,.0f} decisions/s   {t['hands_per_s']:,.1f} hands/s   "
            f"({t['decisions']:,} decisions, {t['hands']:,} hands in {t['seconds']:.2f} s; "
            f"CPU {t['cpu_seconds']:.2f} s = {t['cpu_per_wall']:.2f} cores, "
            f"{t['decisions_per_cpu_s']:,.0f} decisions per CPU-s; policy {pct(t['policy_share'])} of the time; "
            f"compile/load {t['compile_s']:.1f} s not counted)"
        ),
        f"memory       {t['bytes_per_table']:,} bytes per table",
        "",
        f"hands        {o['hands']:,}   decisions per hand {o['mean_decisions_per_hand'] or 0:.1f}",
        (
            f"wins         {pct(o['win_rate'])}  (self-drawn {pct(o['self_drawn_rate'])}, "
            f"on a discard {pct(o['discard_win_rate'])})"
        ),
        f"draws        {pct(o['draw_rate'])}   aborted {pct(o['aborted_rate'])}",
        f"mean fan     {'-' if o['mean_fan'] is None else format(o['mean_fan'], '.2f')} (wins, flowers included)",
        "",
        "points per chair (dealer = chair " + str(p["dealer_chair"]) + "):",
    ]
    for c, tot, ph, w in zip(p["chairs"], p["total"], p["per_hand"], p["wins"], strict=True):
        lines.append(f"  {c}  total {tot:+,}  per hand {ph or 0:+.3f}  wins {w:,}")
    lines += ["", f"fans scored ({len(rec['fans'])} kinds; share of wins that scored each):"]
    for f in rec["fans"]:
        lines.append(f"  {f['fan']:<28s} {f['zh']:<6s} {f['hands']:>8,} hands  {pct(f['per_win']):>8s}"
                     f"  ({f['times']:,} times)")  # fmt: skip
    return "\n".join(lines)
