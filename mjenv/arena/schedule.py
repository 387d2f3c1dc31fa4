"""What a duplicate evaluation (:mod:`mjenv.arena`) plays: the seatings (which agent sits at which chair in each
seat order), the walls (seed, dealer, prevailing wind), the hands in job order (:class:`Schedule`), the agents
(:class:`Entrant`) and the settings every shard shares (:class:`Setup`)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np

from mjenv.policy import load_policy, takes_option
from mjenv.rng import GOLDEN, splitmix64

SEATINGS = ("1v3", "2v2", "perm24")


def seating_players(seating: str) -> np.ndarray:
    """``int8[4]``: the agent index (0..) of each of the four players of ``seating``."""
    check_seating(seating)
    return np.array({"1v3": [0, 1, 1, 1], "2v2": [0, 0, 1, 1], "perm24": [0, 1, 2, 3]}[seating], np.int8)


def seating_orders(seating: str) -> np.ndarray:
    """``int8[P, 4]``: ``orders[p, chair]`` is the player at ``chair`` in order ``p`` of ``seating``.

    >>> seating_orders("1v3").tolist()
    [[0, 1, 2, 3], [3, 0, 1, 2], [2, 3, 0, 1], [1, 2, 3, 0]]
    """
    check_seating(seating)
    if seating == "1v3":  # rotation r: player q sits at chair (q + r) % 4
        return np.array([[(c - r) % 4 for c in range(4)] for r in range(4)], np.int8)
    if seating == "2v2":
        out = []
        for a in itertools.combinations(range(4), 2):
            b = [c for c in range(4) if c not in a]
            row = [0] * 4
            row[a[0]], row[a[1]], row[b[0]], row[b[1]] = 0, 1, 2, 3
            out.append(row)
        return np.array(out, np.int8)
    return np.array([list(p) for p in itertools.permutations(range(4))], np.int8)


def seating_agents(seating: str) -> np.ndarray:
    """``int8[P, 4]``: the agent index at each chair in each order of ``seating``."""
    return seating_players(seating)[seating_orders(seating)]


def num_agents(seating: str) -> int:
    """How many distinct agents ``seating`` takes (2, 2 or 4)."""
    return int(seating_players(seating).max()) + 1


def check_seating(seating: object) -> None:
    if seating not in SEATINGS:
        raise ValueError(f"seating must be one of {SEATINGS}, got {seating!r}")


def wall_schedule(seed: int, walls: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(seeds int64[W], dealers int32[W], prevalents int32[W])`` of the walls of an evaluation."""
    ss = np.random.SeedSequence([int(seed), 0x57A11])
    seeds = (ss.generate_state(walls, dtype=np.uint64) >> np.uint64(2)).astype(np.int64)
    w = np.arange(walls)
    return seeds, (w % 4).astype(np.int32), ((w // 4) % 4).astype(np.int32)


def agent_seed(seed: int, k: int) -> int:
    """The seed of agent ``k`` (0.. in seating order) of an evaluation seeded with ``seed``."""
    return int(np.random.SeedSequence([int(seed), 0xA6E47, k]).generate_state(1, dtype=np.uint64)[0] >> 2)


@dataclass(frozen=True, eq=False)
class Schedule:
    """The hands of an evaluation in job order: wall ``w`` is played under every seat order ``p`` of the seating,
    as job ``w * n_orders + p``.

    Attributes
    ----------
    seating, walls, seed
        As given to :func:`mjenv.arena.run_arena`.
    orders : ndarray[int8, (P, 4)]
        ``orders[p, chair]``: the player at ``chair`` in order ``p`` (:func:`seating_orders`).
    chair_agent : ndarray[int64, (P, 4)]
        The agent index at each chair in each order (:func:`seating_agents`).
    wall_seed, wall_dealer, wall_prevalent : ndarray[(W,)]
        The walls (:func:`wall_schedule`; in the Botzone variant every dealer is the rules' dealer).
    """

    seating: str
    walls: int
    seed: int
    orders: np.ndarray
    chair_agent: np.ndarray
    wall_seed: np.ndarray
    wall_dealer: np.ndarray
    wall_prevalent: np.ndarray

    @classmethod
    def build(cls, seating: str, walls: int, seed: int, rules: Any) -> Schedule:
        """The schedule of ``walls`` walls of ``seed`` under ``seating`` for the table rules ``rules``."""
        w_seed, w_dealer, w_prev = wall_schedule(seed, walls)
        if rules.private_walls:  # the Botzone variant: chair 0 always deals (seat wind = player index)
            w_dealer = np.full_like(w_dealer, rules.dealer)
        return cls(
            seating, walls, seed, seating_orders(seating), seating_agents(seating).astype(np.int64),
            w_seed, w_dealer, w_prev,
        )  # fmt: skip

    @property
    def n_orders(self) -> int:
        """Seat orders per wall (4, 6 or 24)."""
        return int(self.orders.shape[0])

    @property
    def n_jobs(self) -> int:
        """Hands of the evaluation: ``walls * n_orders``."""
        return self.walls * self.n_orders

    @cached_property
    def job_seed(self) -> np.ndarray:
        """``int64[J]``: the wall seed of each job."""
        return np.repeat(self.wall_seed, self.n_orders)

    @cached_property
    def job_dealer(self) -> np.ndarray:
        """``int32[J]``: the dealer chair of each job."""
        return np.repeat(self.wall_dealer, self.n_orders)

    @cached_property
    def job_prevalent(self) -> np.ndarray:
        """``int32[J]``: the prevailing wind of each job."""
        return np.repeat(self.wall_prevalent, self.n_orders)

    @cached_property
    def job_order(self) -> np.ndarray:
        """``int64[J]``: the seat order of each job."""
        return np.tile(np.arange(self.n_orders), self.walls)

    def stream_keys(self, agent_seed: int, j0: int, j1: int) -> np.ndarray:
        """``uint64[j1 - j0]``: the keys of an agent's random streams (:class:`mjenv.policy.TableStreams`) for
        jobs ``j0 .. j1 - 1``: a splitmix64 chain of (the agent's seed, the wall, the seat order), so a
        stochastic agent's draws in a hand depend on (seed, agent, wall, order) only."""
        jobs = np.arange(j0, j1, dtype=np.uint64)
        n = np.uint64(self.n_orders)
        k = splitmix64(np.uint64(agent_seed) + GOLDEN)
        k = splitmix64(k + (jobs // n + np.uint64(1)) * GOLDEN)  # the wall
        return splitmix64(k + (jobs % n + np.uint64(1)) * GOLDEN)  # the seat order


@dataclass(frozen=True)
class Entrant:
    """One agent of an evaluation: its name, its spec (``"module:factory"`` or a factory), its factory's extra
    keyword arguments and its seed (:func:`agent_seed`)."""

    name: str
    spec: str | Callable[..., Any]
    kwargs: Mapping[str, Any]
    seed: int

    def describe(self) -> str:
        """The spec as the report names it: the import string, else the factory's qualified name."""
        return self.spec if isinstance(self.spec, str) else getattr(self.spec, "__qualname__", "factory")

    def make(self, num_envs: int, threads: int | None = None) -> Any:
        """A policy for ``num_envs`` tables (:func:`mjenv.policy.load_policy`). ``threads``: the evaluation's
        thread setting, passed as the factory's ``threads`` option when its signature names one
        (:func:`mjenv.policy.takes_option`) and the option was not given explicitly."""
        kwargs = dict(self.kwargs)
        if threads is not None and "threads" not in kwargs and takes_option(self.spec, "threads"):
            kwargs["threads"] = threads
        return load_policy(self.spec, num_envs, self.seed, **kwargs)


@dataclass(frozen=True, eq=False)
class Setup:
    """Everything a shard of :func:`mjenv.arena.run_arena` needs (shipped once to the Ray workers): the schedule,
    the agents in seating order, the env's tables and rules, and what to record."""

    schedule: Schedule
    entrants: tuple[Entrant, ...]
    tables: int
    rules: Any
    records: int
    illegal_records: int
    record_info: bool
    #: the luck-adjusted evaluation's value model (mjenv.arena.luck.LuckModel), None: raw only
    luck: Any = None
    #: also keep each hand's summed feature corrections (Outcome.luck_z; fitting a value model)
    luck_record: bool = False

    @property
    def names(self) -> list[str]:
        """The agents' names in seating order."""
        return [e.name for e in self.entrants]
