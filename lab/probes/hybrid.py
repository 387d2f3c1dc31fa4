"""Lab probe (issue 25): where does the shipped network's edge over the rule agent lie, in its claims or its turns?

    python -m mjenv eval --agent new=lab.probes.hybrid:hybrid --agent-opt new.claims=rule \\
        --agent rule=agents.rule:make --seating 1v3 --walls 10000 --seed 34009 --threads 2

:func:`hybrid` is one chair played by two agents: in a claim window (a discard or an added kong on offer: the rows
where passing is legal) the agent ``claims`` names decides, in the player's own turns (discard, kong, win) the
other one. ``claims="rule"`` is the shipped network (``agents.nn:baseline`` without its wait check, greedy) with the rule agent's claims;
``claims="nn"`` is the rule agent with the network's claims. Played against three rule agents beside the network
and the rule agent alone on the same walls, the four rows split the network's edge between the two kinds of
decision (the split need not add up: the two kinds interact). docs/training.md, "Session 34", has the figures.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import agents.nn as ann
import agents.rule as rule
from mjenv.actions import PASS


class Hybrid:
    """One chair, two agents: ``claimer`` decides where passing is legal, ``player`` elsewhere."""

    needs_observations = True

    def __init__(self, claimer: Any, player: Any, names: tuple[str, str]) -> None:
        self.claimer, self.player, self.names = claimer, player, names

    def describe(self) -> str:
        return f"claims by {self.names[0]}, turns by {self.names[1]}"

    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        m = np.asarray(masks, dtype=bool)
        window = m[:, PASS]
        actions = np.zeros(m.shape[0], dtype=np.int64)
        for rows, agent in ((window, self.claimer), (~window, self.player)):
            if rows.any():
                actions[rows] = agent(np.asarray(obs)[rows], m[rows], None if seats is None else seats[rows])
        return actions


def hybrid(num_envs: int, seed: int, claims: str = "rule", device: str = "cpu") -> Hybrid:
    """``claims="rule"``: the shipped network with the rule agent's claims; ``claims="nn"``: the rule agent with
    the shipped network's claims."""
    if claims not in ("rule", "nn"):
        raise ValueError(f"claims must be 'rule' or 'nn', got {claims!r}")
    net, agent = ann.zoo(num_envs, seed, "avg109-2026-12-06", device), rule.make(num_envs, seed)
    if claims == "rule":
        return Hybrid(agent, net, ("the rule agent", "agents.nn:baseline"))
    return Hybrid(net, agent, ("agents.nn:baseline", "the rule agent"))
