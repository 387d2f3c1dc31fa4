"""Who plays the training tables' chairs in :mod:`train.ppo`: the opponent settings, the chair draw and the pool.

* :class:`OpponentSettings`: the opponent kinds (``rule``, ``random``, ``pool``), how often a chair is an
  opponent, the pool's size and cadence, and ``pool_ratings`` (OpenSkill, :mod:`train.ratings`).
* :func:`draw_owners`: the owner codes of the four chairs of some tables for their next hand (never four
  opponents at a table).
* :func:`act`: the opponents' choices at their chairs.
* :class:`OpponentPool`: the frozen past selves of the learner (a snapshot every ``pool_every`` updates, the
  oldest replaced beyond ``pool_size``), their ratings and how often each slot plays, and their part of the
  trainer's checkpoint.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import torch

from agents import nn as ann
from mjenv.policy import random_legal_actions
from train.masked import masked_logits

OPPONENTS = ("rule", "random", "pool")
OWN_LEARNER, OWN_RULE, OWN_RANDOM, OWN_POOL = 0, 1, 2, 3  # chair owner codes; pool slot j is OWN_POOL + j


@dataclass
class OpponentSettings:
    """The opponents of the training tables (options of ``python -m train.ppo``)."""

    opponent_prob: float = 0.75
    """probability that a chair (never all four of a table) is played by an opponent instead of the learner
    (0.75 with ``rule``: most tables look like the 1v3 evaluation against the rule agent)"""
    opponents: tuple[str, ...] = ("rule",)
    """opponent kinds drawn uniformly: rule, random, pool (frozen past checkpoints)"""
    pool_size: int = 8
    pool_every: int = 25
    """add a frozen copy of the learner to the pool every this many updates"""
    pool_ratings: bool = False
    """OpenSkill ratings of the learner, rule, random and every pool snapshot (train/ratings.py): pool chairs
    play the snapshots that still beat the learner more often (PFSP), and the ratings go to the logs"""


def draw_owners(cfg: OpponentSettings, rng: np.random.Generator, k: int, pool_slots: int,
                pool_probs: np.ndarray | None) -> np.ndarray:  # fmt: skip
    """Owner codes ``[k, 4]`` of the chairs of ``k`` tables: each chair an opponent with probability
    ``opponent_prob`` (but one learner chair per table), its kind uniform over ``opponents``, a pool chair's
    slot uniform or by ``pool_probs``; a pool chair plays the learner while the pool is empty."""
    opp = rng.random((k, 4)) < cfg.opponent_prob
    opp[np.arange(k), rng.integers(0, 4, k)] = False  # at least one learner chair per table
    kinds = np.array([{"rule": OWN_RULE, "random": OWN_RANDOM, "pool": OWN_POOL}[o] for o in cfg.opponents])
    own = kinds[rng.integers(0, max(len(kinds), 1), (k, 4))] if len(kinds) else np.zeros((k, 4), np.int64)
    if pool_probs is not None and pool_slots:
        slot = rng.choice(pool_slots, size=(k, 4), p=pool_probs)
    else:
        slot = rng.integers(0, max(pool_slots, 1), (k, 4))
    own = np.where(own == OWN_POOL, OWN_POOL + slot if pool_slots else OWN_LEARNER, own)
    return np.where(opp, own, OWN_LEARNER)


def act(col, own: np.ndarray, actions: np.ndarray, pool: list, gen: torch.Generator, device) -> None:
    """Write the opponents' choices into ``actions``: at the tables of the collector ``col`` whose chair to act
    has owner code ``own`` (not the learner's), kind by kind, the rule agent's choice, a uniformly random legal
    action, or a pool snapshot's sample of its masked policy (with ``gen``, on ``device``; through the
    collector's wait check when it has one)."""
    env, seats = col.env, col.env.seats
    for code in np.unique(own[own != OWN_LEARNER]):
        r = np.flatnonzero(own == code)
        if code == OWN_RULE:
            actions[r] = col.rule(env.obs[r], env.masks[r], seats[r])
        elif code == OWN_RANDOM:
            actions[r] = random_legal_actions(env.masks[r], col.rng)
        else:
            snap = pool[code - OWN_POOL]
            tile, glob = ann.input_features(snap.config, env.obs[r], env.masks[r])
            illegal = ~torch.from_numpy(env.masks[r]).to(device)
            with torch.no_grad():
                logits = masked_logits(snap, tile.to(device), glob.to(device), illegal)[0]
                a = torch.multinomial(torch.softmax(logits, 1), 1, generator=gen)
            actions[r] = a[:, 0].cpu().numpy()
            if col.check is not None:  # the snapshot plays as the learner does
                actions[r] = col.check.apply(env.obs[r], env.masks[r], actions[r], env.rules)


class OpponentPool:
    """The frozen snapshots of the learner (:attr:`nets`, slot ``j`` is owner code ``OWN_POOL + j``) and,
    with ``pool_ratings``, everyone's ratings (:class:`train.ratings.Ratings`)."""

    def __init__(self, cfg: OpponentSettings) -> None:
        self.size = cfg.pool_size
        self.nets: list = []  # never rebound: the trainer's ``pool`` is this list
        self.next = 0  # the slot replaced next once the pool is full
        self.ratings = None
        if cfg.pool_ratings:
            from train.ratings import Ratings

            self.ratings = Ratings()
        self.names = ["learner", "rule", "random"] + [f"pool{j}" for j in range(cfg.pool_size)]

    def rate(self, batch: dict) -> dict[str, float]:
        """Rate a rollout's finished hands (``hand_owners``, ``hand_scores``); the learner's and the rule
        agent's ratings for the logs (nothing without ``pool_ratings``)."""
        if self.ratings is None:
            return {}
        self.ratings.update(self.names, batch["hand_owners"], batch["hand_scores"])
        return {"rating_learner": self.ratings.mu("learner"), "rating_rule": self.ratings.mu("rule")}

    def add(self, net) -> None:
        """A frozen copy of ``net`` into the next slot (the oldest one once the pool is full)."""
        snap = copy.deepcopy(net).eval()
        for p in snap.parameters():
            p.requires_grad_(False)
        if len(self.nets) < self.size:
            slot = len(self.nets)
            self.nets.append(snap)
        else:
            slot = self.next
            self.nets[self.next] = snap
            self.next = (self.next + 1) % self.size
        if self.ratings is not None:  # a new snapshot starts from the learner's rating
            self.ratings.copy_to("learner", f"pool{slot}")

    def sync(self, col) -> None:
        """Tell the collector ``col`` the filled slots and, with ratings, how often each plays (PFSP)."""
        col.pool_slots = len(self.nets)
        if self.ratings is not None and self.nets:
            col.pool_probs = self.ratings.pool_probs(len(self.nets))

    def state(self) -> tuple[dict, dict[str, str]]:
        """The checkpoint's tensors (``pool.<slot>.<name>``) and metadata of the pool."""
        tensors = {
            f"pool.{j}.{k}": v.detach().cpu().contiguous().clone()
            for j, net in enumerate(self.nets)
            for k, v in net.state_dict().items()
        }
        meta = {"pool_slots": str(len(self.nets)), "pool_next": str(self.next)}
        if self.ratings is not None:
            meta["ratings"] = self.ratings.to_json()
        return tensors, meta

    def load(self, tensors: dict, meta: dict[str, str], build, device) -> None:
        """Back to a checkpoint's pool (:meth:`state`); ``build()`` makes an empty network of the learner's."""
        for j in range(int(meta["pool_slots"])):
            net, pre = build(), f"pool.{j}."
            net.load_state_dict({k[len(pre) :]: v for k, v in tensors.items() if k.startswith(pre)})
            self.nets.append(net.to(device).eval())
        self.next = int(meta["pool_next"])
        if self.ratings is not None:
            self.ratings.load_json(meta["ratings"])
