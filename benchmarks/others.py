"""Throughput of other mahjong environments and of the reference scorer, under a random legal policy.

Rules
-----
Not a rules module. It measures third-party packages so that mjenv's figures have something to stand beside:

* RLCard's ``mahjong`` (a simplified Chinese mahjong without fan scoring: any 4 sets + a pair wins, no
  flowers);
* riichienv (Rust, Japanese riichi rules, one kyoku per hand);
* PyMahjongGB (the MCR fan calculator and shanten functions that mjenv's scorer is tested against);
* PettingZoo's own classic ``connect_four`` and ``tictactoe``, raw and wrapped (the reference for wrapper cost);
* the PKU/Botzone course MCR environment, which is not on PyPI: measured only when ``MJENV_BOTZONE_ENV``
  names a local copy of its files, skipped otherwise.

Specification in mjenv
----------------------
Every ``measure_*`` function takes ``seconds`` (budget of each timed repeat) and ``repeats`` and returns one
result dict of :data:`benchmarks.harness.RESULT_KEYS` (medians over the repeats, after a warm-up). A function
whose package is missing returns :func:`benchmarks.harness.skipped` (all figures None, ``skipped`` = the
reason) instead of raising. Each result's ``notes`` says exactly what its decision, step and hand are for that
environment. The random policy is Python's ``random.Random(seed).choice`` over the legal actions the
environment lists, the way a user of each package would write it; its cost is part of the figure.

Run ``python -m benchmarks.others --seconds 2 --repeats 5`` from the repository root to print them alone.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from importlib import metadata
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.harness import Counts, measure, result, skipped, until


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


# --------------------------------------------------------------------------------------------------- RLCard
RLCARD_NOTES = (
    "rlcard.make('mahjong'), one table, random legal action from state['legal_actions']. "
    "decision = step = one env.step(action) by env's current player (a discard, or a claim choice pong/gong/"
    "chow/'stand'; RLCard asks only the one seat its judger picks, wins are detected automatically and never "
    "asked); hand = env.reset() to env.is_over(), reset included. Observation encoding (6x34x4) is part of "
    "step. "
    "Rules are simplified (no fan scoring, no flowers)."
)


def measure_rlcard(seconds: float = 2.0, repeats: int = 5, seed: int = 0) -> dict:
    """RLCard's mahjong under a random legal policy (one table, Python)."""
    name = "RLCard mahjong"
    try:
        import rlcard
    except ImportError as e:
        return skipped(name, f"rlcard not installed ({e}); pip install rlcard")
    env = rlcard.make("mahjong", config={"seed": seed})
    rng = random.Random(seed)

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        steps = hands = forced = 0
        while not done():
            state, _ = env.reset()
            while not env.is_over():
                legal = list(state["legal_actions"])
                forced += len(legal) == 1
                state, _ = env.step(rng.choice(legal))
                steps += 1
            hands += 1
        return Counts(decisions=steps, steps=steps, hands=hands, extra={"forced_decisions": forced})

    timing = measure(work, seconds=seconds, repeats=repeats)
    return result(name, _version("rlcard"), timing, RLCARD_NOTES, rules="simplified Chinese (no fans)")


# ------------------------------------------------------------------------------------------------ riichienv
RIICHIENV_NOTES = (
    "riichienv.RiichiEnv(game_mode=0 (one kyoku), skip_mjai_logging=True), one table; "
    "obs = env.step(actions) "
    "returns an Observation for every seat that must act; each such seat picks a random action from "
    "obs.legal_actions(). decision = one seat's action in that dict (claim passes included); step = one "
    "env.step(dict) call (several seats may answer a claim window in one step); hand = env.reset() to "
    "env.done() (one kyoku), reset included. Japanese riichi rules, 136 tiles."
)


def measure_riichienv(seconds: float = 2.0, repeats: int = 5, seed: int = 0) -> dict:
    """riichienv (Rust core, riichi rules) under a random legal policy (one table)."""
    name = "riichienv"
    try:
        import riichienv
    except ImportError as e:
        return skipped(name, f"riichienv not installed ({e}); pip install riichienv")
    env = riichienv.RiichiEnv(game_mode=0, skip_mjai_logging=True, seed=seed)
    rng = random.Random(seed)

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        decisions = steps = hands = forced = 0
        while not done():
            obs = env.reset()
            while not env.done():
                actions = {}
                for pid, o in obs.items():
                    legal = o.legal_actions()
                    if legal:
                        actions[pid] = rng.choice(legal)
                        forced += len(legal) == 1
                decisions += len(actions)
                steps += 1
                obs = env.step(actions)
            hands += 1
        return Counts(decisions=decisions, steps=steps, hands=hands, extra={"forced_decisions": forced})

    timing = measure(work, seconds=seconds, repeats=repeats)
    return result(name, _version("riichienv"), timing, RIICHIENV_NOTES, rules="Japanese riichi")


# ------------------------------------------------------------------------------------------------ PyMahjongGB
_CODES = tuple(
    [f"W{r}" for r in range(1, 10)]
    + [f"T{r}" for r in range(1, 10)]
    + [f"B{r}" for r in range(1, 10)]
    + [f"F{r}" for r in range(1, 5)]
    + [f"J{r}" for r in range(1, 4)]
)


def _random_winning_hand(rng: random.Random) -> tuple:
    """A random complete hand (4 sets + a pair, <= 4 copies per tile) as PyMahjongGB arguments.

    Sets are chows (60 %) or pungs; the first k of them (k in 0..3) are exposed packs (a pung becomes a kong,
    exposed or concealed, when a 4th copy is free). The win tile is one standing tile; flags are random but
    consistent (self-drawn or not; no 4th-tile/kong/last-tile flags), flowers 0..3, winds random.
    """
    counts = [0] * 34
    sets: list[tuple[str, int]] = []
    while len(sets) < 4:
        if rng.random() < 0.6:
            t = rng.randrange(3) * 9 + rng.randrange(7)
            if all(counts[t + i] < 4 for i in range(3)):
                for i in range(3):
                    counts[t + i] += 1
                sets.append(("chow", t))
        else:
            t = rng.randrange(34)
            if counts[t] <= 1:
                counts[t] += 3
                sets.append(("pung", t))
    pair = rng.choice([t for t in range(34) if counts[t] <= 2])
    counts[pair] += 2
    n_packs = rng.choice((0, 0, 1, 1, 2, 3))
    packs = []
    standing = [pair, pair]
    for i, (kind, t) in enumerate(sets):
        if i < n_packs:
            if kind == "chow":
                packs.append(("CHI", _CODES[t + 1], rng.randint(1, 3)))
            elif counts[t] < 4 and rng.random() < 0.3:
                counts[t] += 1
                packs.append(("GANG", _CODES[t], rng.randint(0, 3)))
            else:
                packs.append(("PENG", _CODES[t], rng.randint(1, 3)))
        else:
            standing += [t, t + 1, t + 2] if kind == "chow" else [t, t, t]
    win = standing.pop(rng.randrange(len(standing)))
    hand = tuple(_CODES[t] for t in sorted(standing))
    self_drawn = rng.random() < 0.5
    return (
        tuple(packs),
        hand,
        _CODES[win],
        rng.randint(0, 3),
        self_drawn,
        False,
        False,
        False,
        rng.randint(0, 3),
        rng.randint(0, 3),
    )


def winning_hands(n: int = 500, seed: int = 0) -> tuple[list[tuple], int]:
    """A fixed list of ``n`` hands the calculator accepts, and how many generated hands it rejected.

    Parameters
    ----------
    n : int
        Number of hands, >= 1.
    seed : int
        Seed of the generator (the list is the same for the same seed).
    """
    import MahjongGB

    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    rng = random.Random(seed)
    hands: list[tuple] = []
    rejected = 0
    while len(hands) < n:
        args = _random_winning_hand(rng)
        try:
            MahjongGB.MahjongFanCalculator(*args)
        except TypeError:  # the calculator's way of saying "not a win" (e.g. a pack layout it refuses)
            rejected += 1
            continue
        hands.append(args)
    return hands, rejected


def measure_pymahjonggb_fan(
    seconds: float = 2.0, repeats: int = 5, n_hands: int = 500, seed: int = 0
) -> dict:
    """Calls/s of ``MahjongGB.MahjongFanCalculator`` over a fixed list of random winning hands."""
    name = "PyMahjongGB MahjongFanCalculator"
    try:
        import MahjongGB
    except ImportError as e:
        return skipped(name, f"PyMahjongGB not installed ({e}); pip install pymahjonggb==1.4.0")
    hands, rejected = winning_hands(n_hands, seed)
    calc = MahjongGB.MahjongFanCalculator

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        calls = 0
        while not done():
            for args in hands:
                calc(*args)
            calls += len(hands)
        return Counts(calls=calls)

    timing = measure(work, seconds=seconds, repeats=repeats)
    notes = (
        f"call = one MahjongFanCalculator(packs, hand, win_tile, flowers, flags..., seat, prevalent) from "
        f"Python on a fixed list of {n_hands} random complete hands (seed {seed}; 0-3 exposed packs, kongs "
        f"included; "
        f"{rejected} generated hands the calculator refused were dropped), cycled."
    )
    return result(name, _version("PyMahjongGB"), timing, notes, n_hands=n_hands)


def random_hands_13(n: int = 500, seed: int = 0) -> list[tuple[str, ...]]:
    """A fixed list of ``n`` random 13-tile concealed hands drawn from a shuffled 136-tile wall."""
    if not (isinstance(n, int) and n >= 1):
        raise ValueError(f"n must be an int >= 1, got {n!r}")
    rng = random.Random(seed)
    wall = [t for t in range(34) for _ in range(4)]
    out = []
    for _ in range(n):
        rng.shuffle(wall)
        out.append(tuple(_CODES[t] for t in sorted(wall[:13])))
    return out


def measure_pymahjonggb_shanten(
    seconds: float = 2.0, repeats: int = 5, n_hands: int = 500, seed: int = 0
) -> dict:
    """Calls/s of ``MahjongGB.MahjongShanten`` over a fixed list of random 13-tile concealed hands."""
    name = "PyMahjongGB MahjongShanten"
    try:
        import MahjongGB
    except ImportError as e:
        return skipped(name, f"PyMahjongGB not installed ({e}); pip install pymahjonggb==1.4.0")
    hands = random_hands_13(n_hands, seed)
    shanten = MahjongGB.MahjongShanten
    no_packs = ()

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        calls = 0
        while not done():
            for hand in hands:
                shanten(no_packs, hand)
            calls += len(hands)
        return Counts(calls=calls)

    timing = measure(work, seconds=seconds, repeats=repeats)
    notes = (
        f"call = one MahjongShanten((), hand) from Python (all MCR forms) on a fixed list of {n_hands} "
        f"random "
        f"13-tile concealed hands from a shuffled 136-tile wall (seed {seed}), cycled."
    )
    return result(name, _version("PyMahjongGB"), timing, notes, n_hands=n_hands)


# ------------------------------------------------------------------------------------- PKU/Botzone course env
#: environment variable naming a local folder with the course's ``env.py``, ``feature.py`` and ``agent.py``
BOTZONE_ENV_VAR = "MJENV_BOTZONE_ENV"

BOTZONE_NOTES = (
    "the PKU/Botzone course MCR env (env.MahjongGBEnv({'agent_clz': feature.FeatureAgent}), default config: "
    "duplicate walls of 34 tiles per seat, PyMahjongGB for win checks), one table, loaded from $"
    + BOTZONE_ENV_VAR
    + "; every seat in obs answers with a random action from np.flatnonzero(action_mask). "
    "decision = one seat's action in the dict passed to env.step (after every discard ALL three other seats "
    "are asked, even when Pass is their only legal action: see forced_decisions); step = one env.step(dict); "
    "hand = env.reset() to done, reset included."
)


def _load_course_env(folder: str):
    """Import the course's env.py and feature.py from ``folder`` under private module names."""
    import importlib.util
    import os

    paths = {m: os.path.join(folder, f"{m}.py") for m in ("env", "feature", "agent")}
    missing = [p for p in paths.values() if not os.path.isfile(p)]
    if missing:
        raise FileNotFoundError(f"{BOTZONE_ENV_VAR}={folder!r} lacks {missing}")
    sys.path.insert(0, folder)  # env.py and feature.py do `from agent import MahjongGBAgent`
    try:
        mods = {}
        for m in ("env", "feature"):
            spec = importlib.util.spec_from_file_location(f"_botzone_course_{m}", paths[m])
            mods[m] = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mods[m])
    finally:
        sys.path.remove(folder)
    return mods["env"].MahjongGBEnv, mods["feature"].FeatureAgent


def measure_botzone_course_env(
    seconds: float = 2.0, repeats: int = 5, folder: str | None = None, seed: int = 0
) -> dict:
    """The PKU/Botzone course MCR env under a random legal policy, when a local copy is given.

    The course env is a repository script, not a package: point ``folder`` (or the environment variable
    ``MJENV_BOTZONE_ENV``) at a folder holding its ``env.py``, ``feature.py`` and ``agent.py``. Without one
    the entry is skipped. Its walls come from Python's global ``random`` module, seeded here with ``seed``.
    """
    import os

    name = "PKU/Botzone course MCR env"
    folder = folder or os.environ.get(BOTZONE_ENV_VAR)
    if not folder:
        return skipped(
            name,
            f"not on PyPI (a course repository script); set {BOTZONE_ENV_VAR} to a folder "
            "with its env.py, feature.py and agent.py to measure it",
        )
    try:
        import numpy as np

        env_cls, agent_cls = _load_course_env(folder)
    except (ImportError, FileNotFoundError) as e:
        return skipped(name, f"could not load it from {folder!r}: {e}")
    random.seed(seed)  # the course env shuffles its walls with the global `random` module
    env = env_cls({"agent_clz": agent_cls})
    rng = random.Random(seed)

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        decisions = steps = hands = forced = 0
        while not done():
            obs = env.reset()
            finished = False
            while not finished:
                actions = {}
                for agent, o in obs.items():
                    legal = np.flatnonzero(o["action_mask"])
                    forced += len(legal) == 1
                    actions[agent] = int(legal[rng.randrange(len(legal))])
                decisions += len(actions)
                steps += 1
                obs, _, finished = env.step(actions)
            hands += 1
        return Counts(decisions=decisions, steps=steps, hands=hands, extra={"forced_decisions": forced})

    timing = measure(work, seconds=seconds, repeats=repeats)
    return result(
        name, "course code", timing, BOTZONE_NOTES, rules="MCR (8-fan minimum, no flowers)", source=folder
    )


# ------------------------------------------------------------------------------ PettingZoo classic wrappers
PETTINGZOO_NOTES = (
    "PettingZoo classic {game} (pettingzoo {version}), one table, PettingZoo's documented loop: "
    "for agent in env.agent_iter(): env.last(), a random index among np.flatnonzero(action_mask), env.step. "
    "decision = one env.step with an action; step = one env.step call, the None steps that retire finished "
    "agents included; hand = reset() until every agent is done. raw_env() is the bare game, env() adds "
    "PettingZoo's classic wrappers (TerminateIllegal, AssertOutOfBounds, OrderEnforcing). "
    "wrapper_overhead_us = microseconds per decision that env() adds over raw_env() (medians)."
)


def measure_pettingzoo_wrappers(seconds: float = 2.0, repeats: int = 5, seed: int = 0) -> list[dict]:
    """raw_env() and env() of PettingZoo's own classic connect_four and tictactoe under random legal play.

    The reference for the issue's "the wrappers cost no more than PettingZoo's own classic envs": each
    ``env()`` row carries ``wrapper_overhead_us`` (the microseconds per decision its wrappers add) and
    ``wrapper_slowdown`` (raw decisions/s over wrapped decisions/s).
    """
    from benchmarks.harness import aec_random_play

    name = "PettingZoo classic wrappers"
    try:
        from pettingzoo.classic.connect_four import connect_four as connect_four_v3
        from pettingzoo.classic.tictactoe import tictactoe as tictactoe_v3
    except ImportError as e:  # pettingzoo's classic games import pygame at module level
        return [skipped(name, f"pettingzoo classic games unavailable ({e}); pip install pygame")]
    version = _version("pettingzoo")
    rows = []
    for game, module in (("connect_four_v3", connect_four_v3), ("tictactoe_v3", tictactoe_v3)):
        notes = PETTINGZOO_NOTES.format(game=game, version=version)
        raw = result(
            f"PettingZoo {game} raw_env()",
            version,
            measure(aec_random_play(module.raw_env(), seed), seconds=seconds, repeats=repeats),
            notes,
        )
        wrapped = result(
            f"PettingZoo {game} env()",
            version,
            measure(aec_random_play(module.env(), seed), seconds=seconds, repeats=repeats),
            notes,
        )
        wrapped["wrapper_overhead_us"] = 1e6 / wrapped["decisions_per_s"] - 1e6 / raw["decisions_per_s"]
        wrapped["wrapper_slowdown"] = raw["decisions_per_s"] / wrapped["decisions_per_s"]
        rows += [raw, wrapped]
    return rows


#: every third-party measurement, in the order the suite shows them
ALL = (
    ("RLCard mahjong", measure_rlcard),
    ("riichienv", measure_riichienv),
    ("PyMahjongGB MahjongFanCalculator", measure_pymahjonggb_fan),
    ("PyMahjongGB MahjongShanten", measure_pymahjonggb_shanten),
    ("PKU/Botzone course MCR env", measure_botzone_course_env),
    ("PettingZoo classic wrappers", measure_pettingzoo_wrappers),
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=2.0, help="budget of each timed repeat")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats (medians reported)")
    p.add_argument("--json", action="store_true", help="print full result dicts as JSON")
    args = p.parse_args(argv)
    rows = []
    for _, fn in ALL:
        out = fn(seconds=args.seconds, repeats=args.repeats)
        rows += out if isinstance(out, list) else [out]
    for r in rows:
        if args.json:
            print(json.dumps(r, indent=1))
            continue
        if r["skipped"]:
            print(f"{r['name']}: skipped ({r['skipped']})")
            continue
        figs = ", ".join(
            f"{u} {r[f'{u}_per_s']:,.0f}/s"
            for u in ("decisions", "steps", "hands", "calls")
            if r[f"{u}_per_s"]
        )
        per_cpu = r.get("decisions_per_cpu_s") or r.get("calls_per_cpu_s")
        figs += f"; {per_cpu:,.0f}/CPU-s (cpu/wall {r['cpu_per_wall']:.2f})"
        forced = (r.get("n_extra") or {}).get("forced_decisions")
        if forced is not None:
            figs += f", forced {100 * forced / r['n']['decisions']:.0f}% of decisions"
        if r.get("wrapper_overhead_us") is not None:
            figs += (
                f", wrappers add {r['wrapper_overhead_us']:.1f} us/decision (x{r['wrapper_slowdown']:.2f})"
            )
        print(f"{r['name']} {r['version']}: {figs}  ({r['repeats']} x {args.seconds}s, medians)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
