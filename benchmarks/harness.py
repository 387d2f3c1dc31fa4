"""Timing harness shared by every benchmark entry.

Rules
-----
Not a rules module: this file measures throughput. Units, used by every entry and printed in the suite header:

* **decision**: one action chosen by one seat, claim-window passes included (a seat asked "claim or pass?"
  that passes has made a decision);
* **step**: one call of the environment's step function (``env.step``), whatever number of decisions it
  carries (one for an AEC env; possibly several simultaneous claims for riichienv's dict step; one per table
  for a vector env's batched step);
* **hand**: one deal played to its end (a win or an exhaustive draw), reset included.

Specification in mjenv
----------------------
An entry is a function ``work(budget_s) -> Counts`` that plays on until at least ``budget_s`` seconds have
passed (checking the clock only at natural boundaries such as hand ends) and returns what it did.
:func:`measure` warms it up once, runs it ``repeats`` times, and reports the median rate of each unit over the
repeats (and every per-repeat rate), so that a slow outlier caused by a noisy neighbour does not move the
figure.
Every entry returns the same dict shape, built by :func:`result` (or :func:`skipped` when it cannot run).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

#: the units an entry may count; each becomes ``<unit>s_per_s`` in the result dict
UNITS = ("decisions", "steps", "hands", "calls")

#: every result dict carries at least these keys (None where a figure does not apply)
RESULT_KEYS = (
    "name",
    "version",
    "decisions_per_s",
    "steps_per_s",
    "hands_per_s",
    "calls_per_s",
    "seconds",
    "repeats",
    "n",
    "per_repeat",
    "notes",
    "skipped",
    "cpu_per_wall",
)


@dataclass
class Counts:
    """What one timed run did. Units that do not apply stay 0 and are reported as None.

    ``extra`` holds further counts (e.g. ``forced_decisions``: decisions with a single legal action), summed
    over the timed repeats into the result's ``n_extra``.
    """

    decisions: int = 0
    steps: int = 0
    hands: int = 0
    calls: int = 0
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict[str, int]:
        return {u: getattr(self, u) for u in UNITS}


def measure(
    work: Callable[[float], Counts],
    *,
    seconds: float,
    repeats: int,
    warmup_s: float | None = None,
) -> dict:
    """Warm ``work`` up, then time it ``repeats`` times for about ``seconds`` each.

    Parameters
    ----------
    work : callable
        ``work(budget_s) -> Counts``: runs until at least ``budget_s`` seconds have passed.
    seconds : float
        Budget of each timed repeat, > 0.
    repeats : int
        Number of timed repeats, >= 1. Medians are taken over them.
    warmup_s : float, optional
        Budget of the untimed warm-up run; default ``min(seconds, 1.0) / 2``.

    Returns
    -------
    dict
        ``{"<unit>_per_s": median or None, "seconds": total timed seconds, "repeats", "n": total counts,
        "per_repeat": [{"<unit>_per_s": rate, "seconds": s, "cpu_s": process CPU s}, ...],
        "<unit>_per_cpu_s": median per process-CPU second, "cpu_per_wall": median CPU/wall ratio,
        "warmup_s": warm-up wall time}``, plus
        ``"n_extra"``: the summed ``Counts.extra`` of the timed repeats when an entry counts extras.
    """
    if not callable(work):
        raise TypeError(f"work must be callable, got {type(work).__name__}")
    if not (isinstance(seconds, (int, float)) and seconds > 0):
        raise ValueError(f"seconds must be a positive number, got {seconds!r}")
    if not (isinstance(repeats, int) and repeats >= 1):
        raise ValueError(f"repeats must be an int >= 1, got {repeats!r}")
    if warmup_s is None:
        warmup_s = min(float(seconds), 1.0) / 2
    t0 = time.perf_counter()
    work(warmup_s)
    warm = time.perf_counter() - t0

    per_repeat: list[dict] = []
    totals = {u: 0 for u in UNITS}
    extra_totals: dict[str, float] = {}
    total_s = 0.0
    for _ in range(repeats):
        c0 = time.process_time()
        t0 = time.perf_counter()
        c = work(float(seconds))
        dt = time.perf_counter() - t0
        dc = time.process_time() - c0
        if not isinstance(c, Counts):
            raise TypeError(f"work must return Counts, got {type(c).__name__}")
        total_s += dt
        for k, v in c.extra.items():
            extra_totals[k] = extra_totals.get(k, 0) + v
        row = {"seconds": dt, "cpu_s": dc}
        for u, v in c.as_dict().items():
            totals[u] += v
            row[f"{u}_per_s"] = v / dt if v else None
            row[f"{u}_per_cpu_s"] = v / dc if v and dc > 0 else None
        per_repeat.append(row)

    out: dict = {}
    for u in UNITS:
        rates = [r[f"{u}_per_s"] for r in per_repeat if r[f"{u}_per_s"] is not None]
        out[f"{u}_per_s"] = statistics.median(rates) if rates else None
        cpu_rates = [r[f"{u}_per_cpu_s"] for r in per_repeat if r[f"{u}_per_cpu_s"] is not None]
        out[f"{u}_per_cpu_s"] = statistics.median(cpu_rates) if cpu_rates else None
    # process CPU seconds per wall second: ~1 for a single thread that had a core to itself, lower when other
    # processes took the core (the figure is then pessimistic), up to the thread count for a parallel entry
    cpu_per_wall = statistics.median(r["cpu_s"] / r["seconds"] for r in per_repeat)
    out.update(
        seconds=total_s,
        repeats=repeats,
        n=totals,
        per_repeat=per_repeat,
        warmup_s=warm,
        cpu_per_wall=cpu_per_wall,
    )
    if extra_totals:
        out["n_extra"] = extra_totals
    return out


def result(name: str, version: str | None, timing: dict, notes: str, **extra) -> dict:
    """Build an entry's result dict from :func:`measure`'s output (extra keys such as batch_size pass on)."""
    if not isinstance(name, str) or not name:
        raise ValueError("name must be a non-empty string")
    out = {k: None for k in RESULT_KEYS}
    out.update(name=name, version=version, notes=notes)
    out.update(timing)
    out.update(extra)
    return out


def skipped(name: str, reason: str, version: str | None = None) -> dict:
    """A result dict for an entry that could not run: all figures None, ``skipped`` gives the reason."""
    out = {k: None for k in RESULT_KEYS}
    out.update(name=name, version=version, skipped=str(reason), notes="")
    return out


def until(budget_s: float) -> Callable[[], bool]:
    """Return a cheap ``done()`` predicate, true once ``budget_s`` seconds have passed since this call."""
    end = time.perf_counter() + budget_s
    clock = time.perf_counter
    return lambda: clock() >= end


def aec_random_play(env, seed: int = 0) -> Callable[[float], Counts]:
    """A ``work`` function that plays a PettingZoo AEC env with a random legal policy.

    Parameters
    ----------
    env : pettingzoo.AECEnv
        Any AEC env whose observations are ``{"observation", "action_mask"}`` dicts (wrapped or raw).
    seed : int
        Seeds the env's first ``reset`` and the policy's ``random.Random``; later hands continue the env's
        own RNG (``reset()`` without a seed), as a training loop would.

    Notes
    -----
    The loop is PettingZoo's documented one: ``for agent in env.agent_iter(): obs, ... = env.last()``, then a
    random index among ``np.flatnonzero(obs["action_mask"])`` (or ``None`` once the agent is done), then
    ``env.step(action)``. decision = one ``env.step`` with an action (an agent asked to claim or pass that
    passes included); step = one ``env.step`` call, the ``None`` steps that retire finished agents included;
    hand = one ``reset()`` until every agent is done. ``Counts.extra["forced_decisions"]`` counts decisions with
    a single legal action.
    """
    import random

    import numpy as np

    rng = random.Random(seed)
    first = [True]
    flatnonzero = np.flatnonzero

    def work(budget_s: float) -> Counts:
        done = until(budget_s)
        decisions = steps = hands = forced = 0
        while not done():
            env.reset(seed=seed if first[0] else None)
            first[0] = False
            for _agent in env.agent_iter():
                obs, _reward, terminated, truncated, _info = env.last()
                if terminated or truncated:
                    action = None
                else:
                    legal = flatnonzero(obs["action_mask"])
                    forced += len(legal) == 1
                    action = int(legal[rng.randrange(len(legal))])
                    decisions += 1
                env.step(action)
                steps += 1
            hands += 1
        return Counts(decisions=decisions, steps=steps, hands=hands, extra={"forced_decisions": forced})

    return work
