"""The arena's report: the JSON-ready dict (statistics per agent and per pair, table outcomes, convergence), the
hands' records (:mod:`mjenv.record` logs), the markdown tables and the plot."""

from __future__ import annotations

import itertools
import os
import platform
import subprocess
from typing import Any

import numpy as np

from mjenv.arena.outcome import Outcome
from mjenv.arena.schedule import Setup, seating_players
from mjenv.arena.stats import mean_ci, ranks


def _git(args: list[str], cwd: str) -> str | None:
    """``git args`` run in ``cwd``: its standard output stripped, or None when git is missing or fails."""
    try:
        r = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=20, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout.strip() if r.returncode == 0 else None


def provenance(package_dir: str | os.PathLike | None = None) -> dict[str, Any]:
    """The code that made a report: ``{"version", "commit", "dirty"}``.

    ``version`` is mjenv's; ``commit`` the ``git rev-parse HEAD`` of the checkout the imported ``mjenv``
    package belongs to (its ``__init__.py`` tracked by that checkout's git), None when it is not in one (an
    installed package) or git is missing; ``dirty`` whether that checkout's tracked files differ from the commit
    (``git status --porcelain --untracked-files=no``: untracked files do not count), None without a commit.
    ``package_dir``: look there instead of at the imported package (a directory holding ``__init__.py``)."""
    from mjenv._version import __version__

    if package_dir is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # mjenv/arena/.. = mjenv
    elif isinstance(package_dir, (str, os.PathLike)):
        root = os.fspath(package_dir)
        if not os.path.isdir(root):
            raise ValueError(f"package_dir must be a directory, got {root!r}")
    else:
        raise TypeError(f"package_dir must be a path or None, got {type(package_dir).__name__}")
    commit = None
    dirty = None
    if _git(["ls-files", "--error-unmatch", "__init__.py"], root) is not None:
        commit = _git(["rev-parse", "HEAD"], root)
        if commit is not None:
            status = _git(["status", "--porcelain", "--untracked-files=no"], root)
            dirty = None if status is None else bool(status)
    return {"version": __version__, "commit": commit, "dirty": dirty}


def build_report(setup: Setup, outcome: Outcome, curve_points: int) -> dict[str, Any]:
    """The report of :func:`mjenv.arena.run_arena` (all but ``settings["shards"]``, ``records``,
    ``records_dropped`` and ``timing``, which the run adds) from the merged outcome of every hand."""
    import numba

    from mjenv._version import __version__

    sch = setup.schedule
    names, seating, walls, seed, rules = setup.names, sch.seating, sch.walls, sch.seed, setup.rules
    orders, chair_agent, n_orders, n_jobs = sch.orders, sch.chair_agent, sch.n_orders, sch.n_jobs
    j_scores, j_winner, j_loser, j_fan = outcome.scores, outcome.winner, outcome.loser, outcome.fan
    n_tab = min(setup.tables, n_jobs, outcome.max_tables or n_jobs)  # capped by a policy's max_tables
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
    place = ranks(player_tot)  # [W, 4 players]
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
        st = mean_ci(per_wall[nm])
        out_agents[nm] = {
            "spec": setup.entrants[k].describe(),
            "seed": setup.entrants[k].seed,
            "hands": slots,
            "points_per_hand": st,
            "win_rate": wins / slots,
            "self_drawn_rate": int((self_drawn & m).sum()) / slots,
            "deal_in_rate": int((dealt_in & m).sum()) / slots,
            "draw_rate": int((no_winner & m).sum()) / slots,
            "mean_fan": fan_sum / wins if wins else None,
            "placement": float(pl.mean()),
            "rank_points": float((5.0 - pl).mean()),
            **outcome.agents[k].report_fields(),
        }
    adj_wall: dict[str, np.ndarray] = {}
    if outcome.adjusted is not None:  # the luck-adjusted figures beside the raw ones (mjenv.arena.luck)
        adj = outcome.adjusted.reshape(walls, n_orders, 4)
        for k, nm in enumerate(names):
            adj_wall[nm] = (adj * (chair_agent == k)).sum(axis=(1, 2)) / float((chair_agent == k).sum())
            out_agents[nm]["adjusted"] = adjusted_entry(per_wall[nm], adj_wall[nm])
    diffs = []
    for a, b in itertools.combinations(names, 2):
        st = mean_ci(per_wall[a] - per_wall[b])
        d = {"a": a, "b": b, **st, "significant": bool(st["p"] is not None and st["p"] < 0.05)}
        if adj_wall:
            d["adjusted"] = adjusted_entry(per_wall[a] - per_wall[b], adj_wall[a] - adj_wall[b])
        diffs.append(d)
    # CI half-width against hands played (prefixes of the walls)
    ks = sorted({round(float(x)) for x in np.geomspace(2, walls, curve_points)} if walls >= 2 else set())
    conv = {"walls": ks, "hands": [k * n_orders for k in ks], "half_width": {}}
    for nm in names:
        conv["half_width"][nm] = _half_widths(per_wall[nm], ks)
    if len(names) == 2:
        a, b = names
        conv["half_width"][f"{a} - {b}"] = _half_widths(per_wall[a] - per_wall[b], ks)
    if adj_wall:
        for nm in names:
            conv["half_width"][f"{nm} (adjusted)"] = _half_widths(adj_wall[nm], ks)
        if len(names) == 2:
            a, b = names
            conv["half_width"][f"{a} - {b} (adjusted)"] = _half_widths(adj_wall[a] - adj_wall[b], ks)
    hands_won = j_winner >= 0
    report_adjust = None if setup.luck is None else setup.luck.describe()
    return {
        "format": "mjenv-arena-v1",
        "versions": {
            "mjenv": __version__,
            "numpy": np.__version__,
            "numba": numba.__version__,
            "python": platform.python_version(),
        },
        "mjenv": provenance(),
        "settings": {
            "seating": seating,
            "walls": walls,
            "orders_per_wall": n_orders,
            "hands": n_jobs,
            "seed": seed,
            "tables": n_tab,
            "illegal": rules.illegal,
            "rules": rules.to_dict(),
            "observations": bool(outcome.observe),
            "records": setup.records,
            "illegal_records": setup.illegal_records,
            "agents": {nm: out_agents[nm]["spec"] for nm in names},
            "orders": orders.tolist(),
            "players": players.tolist(),
            **({"adjust": report_adjust} if report_adjust is not None else {}),
        },
        "seeds": {
            "seed": seed,
            "agents": {e.name: e.seed for e in setup.entrants},
            "walls": sch.wall_seed.tolist(),
            "dealers": sch.wall_dealer.tolist(),
            "prevalents": sch.wall_prevalent.tolist(),
        },
        "agents": out_agents,
        "differences": diffs,
        "table": {
            "hands": n_jobs,
            "decisions": int(outcome.decisions),
            "win_rate": float(hands_won.mean()),
            "self_drawn_rate": float((hands_won & (j_loser < 0)).mean()),
            "draw_rate": float((~hands_won).mean()),
            "aborted_rate": float(outcome.aborted.mean()),
            "mean_fan": float(j_fan[hands_won].mean()) if hands_won.any() else None,
            "mean_hand_steps": float(outcome.steps.mean()),
        },
        "convergence": conv,
        "illegal_actions": [e for _, e in outcome.illegal_list],
    }


def _half_widths(x: np.ndarray, ks: list[int]) -> list[float]:
    out = []
    for k in ks:
        ci = mean_ci(x[:k])["ci95"]
        out.append((ci[1] - ci[0]) / 2.0)
    return out


def adjusted_entry(raw: np.ndarray, adjusted: np.ndarray) -> dict[str, Any]:
    """The ``adjusted`` entry of an agent (or a difference) from its per-wall raw and luck-adjusted samples:
    ``points_per_hand`` (:func:`mean_ci` of the adjusted samples), ``variance_ratio`` (adjusted over raw
    variance between walls; None when the raw variance is 0) and ``equivalent_walls`` (the raw walls that would
    give the adjusted CI: walls / variance_ratio)."""
    st = mean_ci(adjusted)
    n = int(raw.size)
    vr = float(np.var(raw, ddof=1)) if n > 1 else 0.0
    va = float(np.var(adjusted, ddof=1)) if n > 1 else 0.0
    ratio = va / vr if vr > 0 else None
    return {
        "points_per_hand": st,
        "variance_ratio": ratio,
        "equivalent_walls": (n / ratio if ratio else None),
    }


def build_records(setup: Setup, outcome: Outcome) -> list[dict[str, Any]]:
    """The kept hands (:meth:`Outcome.kept`) as :mod:`mjenv.record` logs with the arena's extra keys."""
    from mjenv.record import make_log

    sch = setup.schedule
    names = setup.names
    out = []
    for item in outcome.kept():
        j = item.job
        ops = [["act" if k == 0 else "penalty", int(s), int(v)] for k, s, v in item.ops.tolist()]
        log = make_log(
            int(sch.job_seed[j]), int(sch.job_dealer[j]), int(sch.job_prevalent[j]), setup.rules, ops
        )
        order = int(sch.job_order[j])
        log.update(
            {
                "agents": [names[int(a)] for a in sch.chair_agent[order]],
                "wall_index": j // sch.n_orders,
                "order": order,
                "swing": int(item.key[0]),
                "reasons": sorted(item.reasons),
                "info": item.info,
            }
        )
        out.append(log)
    return out


# ------------------------------------------------------------------------------------------------ output
def format_ci(st: dict, fmt: str = "+.2f") -> str:
    """``mean [lo, hi]`` of a :func:`mjenv.arena.stats.mean_ci` dict (the mean alone without an interval)."""
    if st["ci95"] is None:
        return format(st["mean"], fmt)
    lo, hi = st["ci95"]
    return f"{st['mean']:{fmt}} [{lo:{fmt}}, {hi:{fmt}}]"


def difference_lines(differences: list[dict], what: str) -> list[str]:
    """The markdown table of pairwise differences (``what``: the unit's column title), after a blank line."""
    lines = ["", f"| difference | {what} (95% CI) | p | significant |", "|---|---|---:|---|"]
    for d in differences:
        p = "-" if d["p"] is None else f"{d['p']:.3g}"
        lines.append(
            f"| {d['a']} - {d['b']} | {format_ci(d)} | {p} | {'yes' if d['significant'] else 'no'} |"
        )
    return lines


def adjusted_lines(report: dict) -> list[str]:
    """The luck-adjusted table of a report made with ``adjust`` (agents, then differences), after a blank
    line: raw and adjusted points per hand, the variance ratio and the equivalent raw walls."""
    a = report["settings"]["adjust"]
    lines = [
        "",
        f"luck-adjusted (AIVAT chance corrections, value model {a['name']}; same walls):",
        "",
        "| agent / difference | raw (95% CI) | adjusted (95% CI) | variance ratio | equivalent walls |",
        "|---|---|---|---:|---:|",
    ]
    rows = [(nm, ag["points_per_hand"], ag["adjusted"]) for nm, ag in report["agents"].items()]
    rows += [(f"{d['a']} - {d['b']}", d, d["adjusted"]) for d in report["differences"]]
    for label, raw, adj in rows:
        vr = "-" if adj["variance_ratio"] is None else f"{adj['variance_ratio']:.3f}"
        eq = "-" if adj["equivalent_walls"] is None else f"{adj['equivalent_walls']:,.0f}"
        lines.append(f"| {label} | {format_ci(raw)} | {format_ci(adj['points_per_hand'])} | {vr} | {eq} |")
    return lines


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
            f"| {nm} | {a['hands']} | {format_ci(a['points_per_hand'])} | {100 * a['win_rate']:.1f} | "
            f"{100 * a['self_drawn_rate']:.1f} | {100 * a['deal_in_rate']:.1f} | {100 * a['draw_rate']:.1f} | "
            f"{fan} | {a['placement']:.2f} | {a['illegal_actions']['count']} |"
        )
    lines += difference_lines(report["differences"], "points/hand")
    if s.get("adjust"):
        lines += adjusted_lines(report)
    bots = {nm: a["bot"] for nm, a in report["agents"].items() if a.get("bot")}
    if bots:
        kinds = ["TLE", "RE", "MLE", "NJ", "WA", "WH"]
        kinds += sorted({v for b in bots.values() for v in b["verdicts"]} - set(kinds) - {"OK"})
        lines += [
            "",
            "| bot | command | answers | "
            + " | ".join(kinds)
            + " | answer time median / p99 | reproducible |",
            "|---|---|---:|" + "---:|" * len(kinds) + "---|---|",
        ]
        bt = (report.get("timing") or {}).get("bots", {})
        for nm, b in bots.items():
            tm = bt.get(nm, {})
            ms = (
                "-"
                if tm.get("median_s") is None
                else f"{1e3 * tm['median_s']:.1f} / {1e3 * tm['p99_s']:.1f} ms"
            )
            cells = " | ".join(str(b["verdicts"].get(v, 0)) for v in kinds)
            repro = "yes" if b["reproducible"] else "no (a time-out depends on the machine)"
            lines.append(
                f"| {nm} | `{b['command']}` | {b['verdicts'].get('OK', 0)} | {cells} | {ms} | {repro} |"
            )
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
    code = report.get("mjenv")
    if code:
        if code.get("commit"):
            at = f"commit {code['commit'][:12]}" + (" with uncommitted changes" if code.get("dirty") else "")
        else:
            at = "no git commit known"
        lines.append(f"code: mjenv {code.get('version')}, {at}")
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
    ax1.errorbar(range(len(names)), means, yerr=errs, fmt="o", capsize=6, label="raw")
    if report["settings"].get("adjust"):
        am = [report["agents"][n]["adjusted"]["points_per_hand"] for n in names]
        ae = [0.0 if st["ci95"] is None else (st["ci95"][1] - st["ci95"][0]) / 2.0 for st in am]
        ax1.errorbar(
            np.arange(len(names)) + 0.15, [st["mean"] for st in am], yerr=ae, fmt="s", capsize=6,
            label="luck-adjusted",
        )  # fmt: skip
        ax1.legend(fontsize=8)
    ax1.axhline(0.0, color="grey", lw=0.8)
    ax1.set_xticks(range(len(names)), names)
    ax1.set_xlim(-0.6, len(names) - 0.4)
    ax1.set_ylabel("points per hand (mean, 95% CI over walls)")
    s = report["settings"]
    ax1.set_title(f"{s['seating']}, {s['walls']} walls, {s['hands']} hands")
    conv = report["convergence"]
    hands = np.asarray(conv["hands"], np.float64)
    plotted = False
    for label, hw in conv["half_width"].items():
        hw = np.asarray(hw, np.float64)
        pos = hw > 0  # a log axis shows no zero (identical agents, or too few walls for a spread)
        if pos.any():
            ax2.loglog(hands[pos], hw[pos], "o-", label=label, ms=3)
            plotted = True
    if not plotted:
        ax2.text(0.5, 0.5, "no spread between walls yet", ha="center", va="center", transform=ax2.transAxes)
    elif hands.size:
        ref = np.asarray(next(iter(conv["half_width"].values())), np.float64)
        ok = ref > 0
        if ok.any():
            c = np.median(ref[ok] * np.sqrt(hands[ok]))
            ax2.loglog(hands, c / np.sqrt(hands), "k--", lw=0.8, label=r"$\propto 1/\sqrt{\mathrm{hands}}$")
    ax2.set_xlabel("hands played")
    ax2.set_ylabel("95% CI half-width (points per hand)")
    if plotted:
        ax2.legend(fontsize=8)
    ax2.set_title("CI half-width against hands played")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
