"""Learning curve of a PPO run: ``python -m train.plot_curve runs/ppo/progress.csv --out docs/img/learning_curve.png``.

Reads the ``progress.csv`` that :mod:`train.ppo` writes and plots the periodic duplicate evaluation against the
rule agent (points per hand of the learner in 1v3, with its 95% CI) against the training time (the run's own
``seconds`` counter, which survives resumes), with the par line at 0. Optional ``--baseline-csv``: the CSV of a
second run drawn in grey for comparison.
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


def plot(csv_path: str | Path, out: str | Path, title: str | None = None) -> Path:
    """Write the learning-curve PNG of ``csv_path`` to ``out``; returns ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = read_evals(csv_path)
    x = [r["seconds"] / 60 for r in rows]
    y = [r["eval_mean"] for r in rows]
    lo = [r["eval_mean"] - r["eval_ci_lo"] for r in rows]
    hi = [r["eval_ci_hi"] - r["eval_mean"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=110)
    ax.axhline(0, color="grey", lw=1, ls="--", label="par with the rule agent")
    ax.errorbar(x, y, yerr=[lo, hi], fmt="o-", ms=4, capsize=3, label="PPO learner (greedy), 95% CI")
    ax.set_xlabel("training time (minutes, wall clock of the run)")
    ax.set_ylabel("points per hand vs rule agent\n(1v3 duplicate)")
    ax.set_title(title or f"Learning curve: {Path(csv_path).parent.name}")
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
    ap.add_argument("csv", help="progress.csv of a train.ppo run")
    ap.add_argument("--out", default="docs/img/learning_curve.png")
    ap.add_argument("--title", default=None)
    args = ap.parse_args(argv)
    try:
        print(plot(args.csv, args.out, args.title))
    except (OSError, ValueError) as e:
        raise SystemExit(f"train.plot_curve: error: {e}") from None


if __name__ == "__main__":
    main(sys.argv[1:])
