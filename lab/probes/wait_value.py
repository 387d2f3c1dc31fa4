"""Lab probe (2026-12-07): the shipped network's choice of wait, checked by counting and scoring every wait.

    PYTHONPATH=. python lab/probes/wait_value.py --tables 512 --steps 600   # how often the check moves
    python -m mjenv eval --agent new=lab.probes.wait_value:wait_value --agent-opt new.margin=0.5 \\
        --agent base=agents.nn:baseline --agent-opt base.waits=false --seating 1v3 --walls 5000 --seed 35002 \\
        --threads 2

At the player's own turn, a discard that leaves a waiting hand (tenpai) has a value that the rules core computes
exactly from what the player sees: for each tile it waits on, the copies not yet visible (4 less those in its
hand, in every exposed meld and in the unclaimed discards) and the fan of the win on it, by discard and by its
own draw (:func:`mjenv.fans.score_batch`; a win needs 8 fan without the flowers). :func:`discard_values` gives

    value(d) = sum over waits w of unseen(w) * [p * 3 (fan_self(w) + 8) * ok_self(w)
                                                + (1 - p) * (fan_discard(w) + 24) * ok_discard(w)]

(the winner's takings of a self-drawn win and of a win on a discard; ``p`` the share of wins that are self-drawn;
``ok`` the 8-fan minimum). :class:`WaitValue` plays the network and, where the network discards into a waiting
hand and another such discard has a value above ``(1 + margin)`` times that of the network's discard, plays that
one instead (a large margin overrides only dead waits, whose value is 0). With ``keep=True`` it also plays the
best-valued such discard where the network's discard leaves no waiting hand and a live wait (value above 0) is on
offer. It does not weigh the danger of the discarded tile, which the network does. The values are those of
:mod:`agents.waits`, which ships the check (``agents.nn:baseline``); ``near`` (a margin) adds its second step.
``main`` (the first command) counts how often the shipped check moves the network's discards, and its cost
(docs/training.md, the wait check of 2026-12-07, commit 675608c). The network is the zoo's ``avg109-2026-12-06``.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

import agents.nn as ann
from agents import rule
from agents.waits import WaitCheck, check_discards, discard_values, move_discards, near_values
from mjenv.actions import DISCARD, NUM_TILE_TYPES, PASS
from mjenv.vector import VectorEnv

_T = NUM_TILE_TYPES


class WaitValue:
    """The shipped network, its discards into a waiting hand replaced by a better-valued one (module docstring);
    with ``near`` (a margin) also its discards into a hand one tile from waiting, by :func:`near_values`."""

    needs_observations = True

    def __init__(self, net: Any, margin: float, p_self: float, keep: bool = False, near: float | None = None
                 ) -> None:  # fmt: skip
        self.net, self.margin, self.p_self, self.keep, self.near = net, margin, p_self, keep, near

    def describe(self) -> str:
        return (
            f"agents.nn:baseline, its waits chosen by value (margin {self.margin}, p_self {self.p_self}, "
            f"keep {self.keep}, near {self.near})"
        )

    def _override(self, actions: np.ndarray, vals: np.ndarray, margin: float, keep: bool) -> np.ndarray:
        """:func:`agents.waits.move_discards`, and with ``keep`` each discard that ``vals`` does not value moved to
        the best one where that is above 0 (in place); the rows moved."""
        moved = move_discards(actions, vals, margin)
        if keep:
            rows = np.flatnonzero(actions < _T)
            lost = rows[(vals[rows, actions[rows]] < 0) & (vals[rows].max(axis=1) > 0)]
            actions[lost] = DISCARD + vals[lost].argmax(axis=1)
            moved = np.concatenate([moved, lost])
        return moved

    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        obs, m = np.asarray(obs), np.asarray(masks, dtype=bool)
        actions = np.asarray(self.net(obs, m, seats), dtype=np.int64).copy()
        self._override(actions, discard_values(obs, m, self.p_self), self.margin, self.keep)
        if self.near is not None:
            self._override(actions, near_values(obs, m, self.p_self), self.near, False)
        return actions


def wait_value(num_envs: int, seed: int, margin: float = 0.5, p_self: float = 0.3, keep: bool = False,
               near: float | None = None, device: str = "cpu") -> WaitValue:  # fmt: skip
    """The shipped network (greedy) with its waits checked by value (module docstring)."""
    s = WaitCheck(margin, near, p_self)
    margin, near, p_self = s.margin, s.near, s.p_self
    if not isinstance(keep, bool):
        raise ValueError(f"keep must be true or false, got {keep!r}")
    net = ann.make(num_envs, seed, checkpoint=ann.zoo_path("avg109-2026-12-06"), device=device, greedy=True)
    return WaitValue(net, margin, p_self, keep, near)


def moves(tables: int, steps: int, seed: int, threads: int = 1) -> dict[str, float]:
    """How often the shipped check (``agents.nn:baseline``) moves the network's own-turn decisions, by its first
    step (waiting hands) and its second (``near``), and its time per decision against the network alone's: the
    checked network in chair ``i % 4`` of table ``i``, three rule agents in the others, the two timed on the same
    batches."""
    ann.set_torch_threads(threads)
    env = VectorEnv(tables, seed=seed, threads=threads)
    env.reset()
    net = ann.zoo(tables, 0, "avg109-2026-12-06")
    checked = ann.zoo(tables, 0, "avg109-2026-12-06", waits=True)
    opp = rule.make(tables, seed + 1)
    chair = np.arange(tables) % 4
    turns = first = second = 0
    t_net = t_chk = 0.0
    for _ in range(steps):
        obs, m = env.obs, env.masks
        mine = env.seats == chair
        a = opp(obs, m, env.seats)
        if mine.any():
            o, mm = obs[mine], m[mine]
            t0 = time.perf_counter()
            b = net(o, mm)
            t1 = time.perf_counter()
            c = checked(o, mm)
            t_net, t_chk = t_net + t1 - t0, t_chk + time.perf_counter() - t1
            tenpai = check_discards(o, mm, b, margin=WaitCheck().margin, near=None)
            turns += int((~mm[:, PASS]).sum())
            first, second = first + int((tenpai != b).sum()), second + int((c != tenpai).sum())
            a[mine] = c
        env.step(a)
    return {"own_turns": turns, "moved_first": first / turns, "moved_near": second / turns,
            "time_ratio": t_chk / t_net}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=moves.__doc__)
    ap.add_argument("--tables", type=int, default=512)
    ap.add_argument("--steps", type=int, default=600)
    ap.add_argument("--seed", type=int, default=35200)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)
    if args.tables < 1 or args.steps < 1 or args.seed < 0 or args.threads < 1:
        ap.error("--tables, --steps and --threads must be >= 1 and --seed >= 0")
    print(moves(args.tables, args.steps, args.seed, args.threads))


if __name__ == "__main__":
    main()
