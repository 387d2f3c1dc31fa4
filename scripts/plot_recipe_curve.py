"""The shipped network's chain as a learning curve against training time: ``python scripts/plot_recipe_curve.py``.

Points per hand against the rule agent (the strength each zoo file carries in its metadata: 10,000 walls of one
seed, 95% CI), alone and with the wait check, for the zoo entries of the chain that made ``avg109-2026-12-06``,
at the hours of the 2-core machine spent on every run each descends from (``docs/training.md``, "The recipe of
the shipped network"; ``lab/notebook.md`` has the runs). Writes ``docs/img/recipe_curve.png``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents.zoo_meta import read_metadata, zoo_path  # noqa: E402

#: the chain's entries and the training hours (2 cores) of every run each descends from
CHAIN = (("planes32-2026-12-04", 2.9), ("ens5-2026-12-05", 6.9), ("avg109-2026-12-06", 9.4))


def _parse(ci: str) -> tuple[float, float, float]:
    mean, lo, hi = (float(x) for x in re.findall(r"[+-]\d+\.\d+", ci))
    return mean, lo, hi


def main(out: Path = ROOT / "docs" / "img" / "recipe_curve.png") -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.8), dpi=110)
    strength = [json.loads(read_metadata(zoo_path(name))["zoo_strength"]) for name, _ in CHAIN]
    hours = [h for _, h in CHAIN]
    for key, label, marker in (("checked", "with the wait check", "s"), ("alone", "the network alone", "o")):
        m, lo, hi = zip(*(_parse(s[key]) for s in strength))
        ax.errorbar(hours, m, yerr=[[a - b for a, b in zip(m, lo)], [b - a for a, b in zip(m, hi)]],
                    marker=marker, capsize=4, label=label)  # fmt: skip
    for (name, h), s in zip(CHAIN, strength):
        ax.annotate(name, (h, _parse(s["alone"])[0]), textcoords="offset points", xytext=(0, -16), ha="center",
                    fontsize=7)  # fmt: skip
    ax.axhline(0, color="grey", lw=0.8)
    ax.set_xlabel("training time, hours of the 2-core machine (every run it descends from)")
    ax.set_ylabel("points per hand vs the rule agent")
    ax.set_title(
        f"The shipped chain, 1v3, {strength[0]['walls']:,} walls of seed {strength[0]['seed']}", fontsize=10
    )
    ax.set_xlim(0, 10.5)
    ax.legend(loc="center left", fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out)
    plt.close(fig)
    return out


if __name__ == "__main__":
    print(main())
