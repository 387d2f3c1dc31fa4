"""OpenSkill ratings of the learner, the rule agent, the random agent and the opponent pool's past selves.

``train.ppo --pool-ratings`` keeps a Plackett-Luce rating (:mod:`openskill`, ``mu`` and ``sigma``) for every
kind of player of the training tables and uses it two ways:

* **Opponent choice** (prioritised fictitious self-play): a pool chair plays snapshot ``j`` with probability
  proportional to the rating model's probability that ``j`` beats the learner (plus ``PFSP_FLOOR``), so the
  past selves that still trouble the learner come back more often than the ones it has left behind.
* **A rating curve** in the logs (``rating_learner``, ``rating_rule``): the learner's skill against its
  opponents on the training tables, update by update, at no evaluation cost.

One rating game per opponent kind and update: over the update's finished hands, the learner's mean points per
hand against that kind's mean points per hand at the same tables (one ``rate`` call each, so a few per
update, not one per hand: ``rate`` costs ~0.1-0.3 ms). A snapshot entering the pool starts from the learner's
rating at that moment. Everything is deterministic (no sampling inside the rating model), and the state
(``to_json`` / ``from_json``) is in the trainer's checkpoint, so ``--resume`` stays exact.
"""

from __future__ import annotations

import json

import numpy as np
from openskill.models import PlackettLuce

PFSP_FLOOR = 0.05


class Ratings:
    """Ratings by name: ``learner``, ``rule``, ``random``, ``pool0``..``poolK``."""

    def __init__(self) -> None:
        self.model = PlackettLuce()
        self.table: dict[str, tuple[float, float]] = {}

    def _get(self, name: str):
        mu, sigma = self.table.get(name, (self.model.mu, self.model.sigma))
        return self.model.rating(mu=mu, sigma=sigma, name=name)

    def mu(self, name: str) -> float:
        return self._get(name).mu

    def copy_to(self, src: str, dst: str) -> None:
        """``dst`` (a new pool snapshot) starts from ``src``'s rating."""
        self.table[dst] = self.table.get(src, (self.model.mu, self.model.sigma))

    def update(self, owner_names: list[str], owners: np.ndarray, scores: np.ndarray) -> None:
        """One rating game per opponent kind from finished hands: ``owners`` ``[H, 4]`` owner codes of the
        chairs (index into ``owner_names``; 0 is the learner), ``scores`` ``[H, 4]`` their points."""
        is_l = owners == 0
        for code in np.unique(owners[~is_l]):
            rows = (owners == code).any(1) & is_l.any(1)
            if not rows.any():
                continue
            learner = float(scores[rows][is_l[rows]].mean())
            other = float(scores[rows][owners[rows] == code].mean())
            a, b = self._get("learner"), self._get(owner_names[code])
            [[a], [b]] = self.model.rate([[a], [b]], scores=[learner, other])
            self.table["learner"] = (a.mu, a.sigma)
            self.table[owner_names[code]] = (b.mu, b.sigma)

    def pool_probs(self, slots: int) -> np.ndarray:
        """Probability of choosing each of ``slots`` pool snapshots: P(snapshot beats the learner) + floor."""
        learner = self._get("learner")
        w = np.array(
            [
                self.model.predict_win([[self._get(f"pool{j}")], [learner]])[0] + PFSP_FLOOR
                for j in range(slots)
            ]
        )
        return w / w.sum()

    def to_json(self) -> str:
        return json.dumps(self.table, sort_keys=True)

    def load_json(self, text: str) -> None:
        self.table = {k: (float(v[0]), float(v[1])) for k, v in json.loads(text).items()}
