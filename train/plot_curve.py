"""Learning curve of a PPO run: ``python -m train.plot_curve runs/ppo/progress.csv --out docs/img/learning_curve.png``.

Reads the ``progress.csv`` that :mod:`train.ppo` writes and plots the periodic duplicate evaluation against the
rule agent (points per hand of the learner in 1v3, with its 95% CI) against the training time (the run's own
``seconds`` counter: time spent in updates, which survives resumes; the evaluations themselves are not
counted), with the par line at 0. Several CSVs are phases of one run (a run started ``--init-from`` the previous
one's policy): each is drawn after the previous one's last ``seconds``.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path


def read_evals(path: str | Path) -> list[dict[str, float]]:
    """The rows of ``path`` that hold an evaluation, as floats (``ValueError`` when there are none)."""
    with Path(path).open(newline="") as f:
        rows = [
            {k: float(r[k]) for k in ("update", "seconds", "eval_mean", "eval_ci_lo", "eval_ci_hi")}
            for r in csv.DictReader(f)
            if r.get("eval_mean") not in (None, "")
        ]
    if not rows:
        raise ValueError(f"{path} has no evaluation rows (eval_mean); was the run made with eval_every > 0?")
    return rows


def _last_seconds(path: str | Path) -> float:
    with Path(path).open(newline="") as f:
        rows = list(csv.DictReader(f))
    return float(rows[-1]["seconds"]) if rows else 0.0


def plot(
    csv_paths: str | Path | list, out: str | Path, title: str | None = None, start: tuple | None = None
) -> Path:
    """Write the learning-curve PNG of ``csv_paths`` (one CSV or the phases of one run) to ``out``; ``start``:
    an optional ``(mean, lo, hi)`` drawn at time 0 (e.g. the BC policy on the same evaluation); returns ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = [csv_paths] if isinstance(csv_paths, (str, Path)) else list(csv_paths)
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.axhline(0, color="grey", lw=1, ls="--", label="par with the rule agent")
    if start is not None:
        m, lo, hi = start
        ax.errorbar([0], [m], yerr=[[m - lo], [hi - m]], fmt="s", color="C1", capsize=3, label="BC start")
    offset = 0.0
    for i, path in enumerate(paths):
        rows = read_evals(path)
        x = [(offset + r["seconds"]) / 60 for r in rows]
        y = [r["eval_mean"] for r in rows]
        lo = [r["eval_mean"] - r["eval_ci_lo"] for r in rows]
        hi = [r["eval_ci_hi"] - r["eval_mean"] for r in rows]
        label = "PPO learner (greedy), 95% CI" if i == 0 else None
        ax.errorbar(x, y, yerr=[lo, hi], fmt="o-", ms=4, capsize=3, color="C0", label=label)
        offset += _last_seconds(path)
        if i + 1 < len(paths):
            ax.axvline(offset / 60, color="C0", lw=0.8, ls=":")
    ax.set_xlabel("training time (minutes of collection and updates; evaluations excluded)")
    ax.set_ylabel("points per hand vs rule agent\n(1v3 duplicate)")
    ax.set_title(title or f"Learning curve: {Path(paths[-1]).parent.name}")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", nargs="+", help="progress.csv of a train.ppo run (several: its phases, in order)")
    ap.add_argument("--out", default="docs/img/learning_curve.png")
    ap.add_argument("--title", default=None)
    ap.add_argument("--start", type=float, nargs=3, default=None, metavar=("MEAN", "LO", "HI"),
                    help="an evaluation drawn at time 0 (e.g. of the BC policy)")  # fmt: skip
    args = ap.parse_args(argv)
    try:
        print(plot(args.csv, args.out, args.title, args.start))
    except (OSError, ValueError) as e:
        raise SystemExit(f"train.plot_curve: error: {e}") from None


if __name__ == "__main__":
    main(sys.argv[1:])
