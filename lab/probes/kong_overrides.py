"""Lab probe (issue 25): does the shipped network decline wins or kongs it should take?

    PYTHONPATH=. python lab/probes/kong_overrides.py --tables 512 --steps 20000 --seed 31001
    python -m mjenv eval --agent new=lab.probes.kong_overrides:pung_to_kong \\
        --agent base=agents.nn:baseline --agent-opt base.waits=false --seating 1v3 --walls 10000 --seed 31003 \\
        --threads 2

The command plays ``steps`` batched decisions of self-play (every chair the greedy network, default
``agents/zoo/avg109-2026-12-06.safetensors``) and counts, per kind of offer (a win; an exposed kong on a discard; a concealed
kong; an added kong), how often it was legal and what the network chose then (one JSON line). A concealed or
added kong stays legal turn after turn while the four tiles are held, so those counts are per turn, not per set.

The two factories are the network with one override each, for a head-to-head evaluation against it:
``pung_to_kong`` declares the exposed kong where the network chose the pung of the same discard (the kong uses
the hand's third copy, which a pung leaves dead, and draws a replacement; 1 fan), and ``pass_to_kong`` declares
it wherever the network passed on a legal one. docs/training.md, "Session 31", has the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

import numpy as np

import agents.nn as ann
from mjenv.actions import ADDED_KONG, CONCEALED_KONG, KONG, NUM_TILE_TYPES, PASS, PUNG, WIN, action_to_str
from mjenv.vector import VectorEnv


class KongOverride:
    """``agents.nn:baseline`` (greedy) with one rule on exposed kongs: ``mode`` is ``"pung"`` (a chosen pung
    becomes the kong of the same discard where that is legal) or ``"pass"`` (a chosen pass does)."""

    needs_observations = True
    row_streams = True

    def __init__(self, num_envs: int, seed: int, mode: str, device: str = "cpu") -> None:
        if mode not in ("pung", "pass"):
            raise ValueError(f"mode must be 'pung' or 'pass', got {mode!r}")
        self.inner = ann.zoo(num_envs, seed, "avg109-2026-12-06", device)
        self.replaced = PUNG if mode == "pung" else PASS
        self.mode = mode

    def describe(self) -> str:
        return f"{self.inner.describe()}, every {self.mode} turned into an exposed kong where one is legal"

    def __call__(self, obs: Any, masks: Any, seats: Any = None, rng: Any = None) -> np.ndarray:
        actions = np.array(self.inner(obs, masks, seats, rng), dtype=np.int64)
        legal_kong = np.asarray(masks, dtype=bool)[:, KONG]
        actions[(actions == self.replaced) & legal_kong] = KONG
        return actions


def pung_to_kong(num_envs: int, seed: int, device: str = "cpu") -> KongOverride:
    """The shipped network, declaring the exposed kong wherever it chose the pung of the same discard."""
    return KongOverride(num_envs, seed, "pung", device)


def pass_to_kong(num_envs: int, seed: int, device: str = "cpu") -> KongOverride:
    """The shipped network, declaring the exposed kong wherever it passed on a legal one."""
    return KongOverride(num_envs, seed, "pass", device)


def count_offers(checkpoint: str, tables: int, steps: int, seed: int, threads: int) -> dict[str, Any]:
    """Self-play of the greedy network at every chair: per kind of offer, how often it was legal and the
    network's choices then (action names), over ``tables * steps`` decisions."""
    ann.set_torch_threads(threads)
    env = VectorEnv(tables, seed=seed, observations=True, threads=threads)
    policy = ann.make(tables, seed, checkpoint=checkpoint, greedy=True)
    env.reset(seed=seed)
    kinds = {
        "win": lambda m: m[:, WIN],
        "exposed kong": lambda m: m[:, KONG],
        "concealed kong": lambda m: m[:, CONCEALED_KONG : CONCEALED_KONG + NUM_TILE_TYPES].any(axis=1),
        "added kong": lambda m: m[:, ADDED_KONG : ADDED_KONG + NUM_TILE_TYPES].any(axis=1),
    }
    offered = {k: 0 for k in kinds}
    chosen: dict[str, dict[str, int]] = {k: {} for k in kinds}
    start = time.perf_counter()
    for _ in range(steps):
        actions = policy(env.obs, env.masks, env.seats)
        for kind, legal in kinds.items():
            rows = legal(env.masks)
            offered[kind] += int(rows.sum())
            ids, n = np.unique(actions[rows], return_counts=True)
            for a, c in zip(ids, n):
                name = action_to_str(int(a)).split(" ")[0]  # "discard W1" -> "discard"
                chosen[kind][name] = chosen[kind].get(name, 0) + int(c)
        env.step(actions)
    return {
        "checkpoint": checkpoint,
        "decisions": tables * steps,
        "seconds": round(time.perf_counter() - start, 1),
        "offered": offered,
        "chosen": chosen,
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--checkpoint", default=str(ann.zoo_path("avg109-2026-12-06")), help="agents.nn checkpoint (greedy)"
    )
    ap.add_argument("--tables", type=int, default=512)
    ap.add_argument("--steps", type=int, default=20000, help="batched decisions (each one per table)")
    ap.add_argument("--seed", type=int, default=31001)
    ap.add_argument("--threads", type=int, default=2)
    a = ap.parse_args(argv)
    for name in ("tables", "steps", "threads"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1, got {getattr(a, name)}")
    json.dump(count_offers(a.checkpoint, a.tables, a.steps, a.seed, a.threads), sys.stdout)
    print()


if __name__ == "__main__":
    main()
