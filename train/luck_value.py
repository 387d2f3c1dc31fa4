"""Fit the value model of the luck-adjusted evaluation: ``python -m train.luck_value``.

Why
---
``mjenv eval --adjust`` subtracts AIVAT's chance corrections from every hand (:mod:`mjenv.arena.luck`). They
keep the estimate unbiased whatever the value model is; a better model removes more of the deal's and the
draws' luck. The model must be fixed *before* the walls it is used on are seen: fitted on the evaluated walls,
it would shrink their variance by overfitting. So it is fitted here, once, on walls of seeds reserved for it
(:data:`TRAIN_SEEDS`, docs/arena.md), which no evaluation in the docs uses.

What
----
Plays the games of :data:`GAMES` (the agents people evaluate, in both variants) on walls of the reserved
seeds with :func:`collect`, which records per hand and seat the summed feature corrections,
and fits the weights by least squares (:func:`mjenv.arena.luck.fit`: the control-variate coefficients that
minimise the adjusted scores' variance on these walls). Each game's data is kept in ``--work-dir`` as it is
played, so a killed run resumes at the next game. Writes the model (``.npz``, :func:`mjenv.arena.luck.save`)
with its metadata: the command, commit, date, the games and walls it was fitted on, and its in-sample
variance ratio per game.
"""

from __future__ import annotations

import datetime
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import tyro

from mjenv.arena import luck as L
from mjenv.arena.play import play_shard, run_arena_setup
from mjenv.arena.report import provenance
from mjenv.rules import RuleConfig

#: walls of these seeds are the value model's training walls; no evaluation may use a seed in this range
TRAIN_SEEDS = range(7_000_000, 8_000_000)

#: (name, agents, variant, share of the walls): the games the model is fitted on
GAMES: tuple[tuple[str, dict[str, str], str, float], ...] = (
    ("baseline-rule", {"baseline": "agents.nn:baseline", "rule": "agents.rule:make"}, "mcr", 1.0),
    ("latest-rule", {"latest": "agents.nn:latest", "rule": "agents.rule:make"}, "mcr", 0.5),
    ("baseline-latest", {"baseline": "agents.nn:baseline", "latest": "agents.nn:latest"}, "mcr", 0.5),
    ("rule-rule", {"rule": "agents.rule:make", "rule2": "agents.rule:make"}, "mcr", 1.0),
    ("rule-random", {"rule": "agents.rule:make", "random": "agents.random:make"}, "mcr", 0.1),
    ("baseline-rule-botzone", {"baseline": "agents.nn:baseline", "rule": "agents.rule:make"}, "botzone", 0.5),
    ("rule-rule-botzone", {"rule": "agents.rule:make", "rule2": "agents.rule:make"}, "botzone", 0.5),
)


@dataclass
class LuckValueConfig:
    """Settings of ``python -m train.luck_value``."""

    walls: int = 4000
    """walls of a game of share 1 (each game plays ``max(1, round(walls * share))`` walls, 1v3)"""
    seed: int = 7_000_000
    """the first training seed (game k plays seed + 1000 k); must lie in TRAIN_SEEDS"""
    out: str = "mjenv/arena/values/value-2026-12-07.npz"
    """where the fitted model goes"""
    work_dir: str = "runs/luck_value"
    """each game's data, kept as it is played (a rerun resumes at the next game)"""
    ridge: float = 1e-3
    """ridge of the least squares, times the mean diagonal"""
    deals: int = 8
    """alternative deals of the deal's correction (the model's ``deals``)"""
    threads: int | None = None
    """Numba and torch threads of the games (default: all cores)"""
    tables: int = 1024
    """tables stepped together"""
    name: str = "value-2026-12-07"
    """the model's name in reports"""


def _command() -> str:
    """This run's command line as the metadata records it: without the settings that do not change the model
    (where the work is kept, threads, tables), which would otherwise name a folder of one machine."""
    out, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            skip = False
            continue
        key = a.split("=", 1)[0].replace("_", "-")
        if key in ("--work-dir", "--threads", "--tables"):
            skip = "=" not in a
            continue
        out.append(a)
    return " ".join(["python -m train.luck_value", *out])


def collect(
    agents: dict[str, Any],
    seating: str = "1v3",
    walls: int = 100,
    seed: int = 0,
    *,
    rules: Any = None,
    tables: int = 1024,
    threads: int | None = None,
    agent_kwargs: dict[str, dict[str, Any]] | None = None,
    deals: int = 8,
    progress: bool = True,
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``walls`` walls of ``seed`` as :func:`mjenv.arena.run_arena` does and return, per hand, the summed
    feature corrections of every seat (``z``: ``float32[hands, 4, mjenv.arena.luck.N_PARAMS]``) and the scores
    (``int64[hands, 4]``): the data :func:`mjenv.arena.luck.fit` takes. For training walls only (see the module docstring)."""
    setup = run_arena_setup(
        agents, seating, walls, seed, tables=tables, rules=rules, agent_kwargs=agent_kwargs
    )
    # run_arena_setup keeps no records; the corrections are recorded with a model of zeros (no correction)
    setup = replace(setup, luck=L.LuckModel(np.zeros(L.N_PARAMS), deals), luck_record=True)
    out = play_shard(
        setup, 0, setup.schedule.n_jobs, threads=threads, progress=progress, desc=f"collect {seed}"
    )
    return out.luck_z, out.scores


def _rules(variant: str) -> RuleConfig:
    return RuleConfig.botzone() if variant == "botzone" else RuleConfig()


def run(cfg: LuckValueConfig) -> L.LuckModel:
    """Play (or read back) every game of :data:`GAMES`, fit, write ``cfg.out``; returns the model."""
    if cfg.walls < 1:
        raise ValueError(f"walls must be >= 1, got {cfg.walls}")
    last = cfg.seed + 1000 * (len(GAMES) - 1)
    if cfg.seed not in TRAIN_SEEDS or last not in TRAIN_SEEDS:
        raise ValueError(f"seeds {cfg.seed}..{last} leave the training range {TRAIN_SEEDS}")
    work = Path(cfg.work_dir)
    work.mkdir(parents=True, exist_ok=True)
    zs, ys, games = [], [], []
    t0 = time.perf_counter()
    for k, (name, agents, variant, share) in enumerate(GAMES):
        walls = max(1, round(cfg.walls * share))
        seed = cfg.seed + 1000 * k
        path = work / f"{name}-{seed}-{walls}-d{cfg.deals}.npz"
        if path.is_file():
            with np.load(path) as f:
                z, y = f["z"], f["scores"]
            print(f"{name}: {walls} walls of seed {seed} read back from {path}")
        else:
            z, y = collect(agents, "1v3", walls, seed, rules=_rules(variant), tables=cfg.tables,
                             threads=cfg.threads, deals=cfg.deals)  # fmt: skip
            tmp = path.with_suffix(".tmp.npz")
            np.savez(tmp, z=z, scores=y)
            tmp.replace(path)
            print(f"{name}: {walls} walls of seed {seed} played ({time.perf_counter() - t0:.0f} s so far)")
        zs.append(z)
        ys.append(y)
        games.append({"game": name, "agents": agents, "variant": variant, "walls": walls, "seed": seed})
    # every game weighs by its hands; the weights minimise the adjusted scores' variance over all of them
    w = L.fit(np.concatenate(zs), np.concatenate(ys), cfg.ridge)
    for g, z, y in zip(games, zs, ys):
        y = y.astype(np.float64)
        res = y - np.einsum("hjp,p->hj", z.astype(np.float64), w)
        g["in_sample_variance_ratio"] = float(res.var() / y.var()) if y.var() > 0 else None
    prov = provenance()
    meta = {
        "name": cfg.name,
        "command": _command(),
        "commit": prov["commit"],
        "dirty": prov["dirty"],
        "date": datetime.date.today().isoformat(),
        "mjenv": prov["version"],
        "training_seeds": f"{TRAIN_SEEDS.start}..{TRAIN_SEEDS.stop - 1} (reserved for this model)",
        "games": games,
        "ridge": cfg.ridge,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    model = L.LuckModel(w, cfg.deals, meta)
    Path(cfg.out).parent.mkdir(parents=True, exist_ok=True)
    L.save(model, cfg.out)
    for g in games:
        r = g["in_sample_variance_ratio"]
        print(f"  {g['game']}: in-sample variance ratio " + ("-" if r is None else f"{r:.3f}"))
    print(f"value model written to {cfg.out}")
    return model


def main() -> None:
    run(tyro.cli(LuckValueConfig))


if __name__ == "__main__":
    main()
