"""Do two checkouts' agents play the same actions? ``record`` plays self-play tables (the agent at every seat) and
saves every step's observations (uint8), legal masks and actions; ``replay`` (run from the other checkout) plays the
saved steps through its agent, batch by batch as recorded, and counts the identical actions.

The wait check as a wrapper (2026-12-07) against ``agents.nn:baseline`` of commit caf698d::

    git archive caf698d | tar -x -C /tmp/old
    (cd /tmp/old && PYTHONPATH=. python lab/scripts/same_actions.py record /tmp/old.npz --agent agents.nn:baseline)
    PYTHONPATH=. python lab/scripts/same_actions.py replay /tmp/old.npz --agent agents.waits:checked

(caf698d has no ``lab/scripts/same_actions.py``: copy this file there.) 100,096 decisions of 256 tables of seed
20261207: identical, 100,096 of 100,096 (3,383 of them moved by the check; docs/agents.md, "The wait check").
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mjenv.actions import NUM_ACTIONS
from mjenv.policy import load_policy


def record(path: str, agent: str, tables: int, decisions: int, seed: int) -> None:
    from mjenv.vector import VectorEnv

    pol = load_policy(agent, tables, 0)
    env = VectorEnv(tables, seed=seed, obs_dtype=np.uint8)
    env.reset()
    obs, masks, actions = [], [], []
    t0 = time.perf_counter()
    while len(actions) * tables < decisions:
        o, m = env.obs.copy(), env.masks.copy()
        a = np.asarray(pol(o, m, env.seats), dtype=np.int64)
        obs.append(o)
        masks.append(np.packbits(m, axis=1))
        actions.append(a)
        env.step(a)
    np.savez(path, obs=np.stack(obs), masks=np.stack(masks), actions=np.stack(actions))
    print(f"{agent}: {len(actions) * tables:,} decisions in {time.perf_counter() - t0:.0f} s -> {path}")


def replay(path: str, agent: str) -> None:
    d = np.load(path)
    obs, masks, old = d["obs"], d["masks"], d["actions"]
    pol = load_policy(agent, obs.shape[1], 0)
    same = 0
    for i in range(obs.shape[0]):
        m = np.unpackbits(masks[i], axis=1)[:, :NUM_ACTIONS].astype(bool)
        same += int((np.asarray(pol(obs[i], m), dtype=np.int64) == old[i]).sum())
    print(f"{agent}: identical actions on {same:,} of {old.size:,} decisions")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("record", "replay"))
    ap.add_argument("path")
    ap.add_argument("--agent", required=True, help="the agent's import string")
    ap.add_argument("--tables", type=int, default=256)
    ap.add_argument("--decisions", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=20261207)
    args = ap.parse_args(argv)
    if args.mode == "record":
        record(args.path, args.agent, args.tables, args.decisions, args.seed)
    else:
        replay(args.path, args.agent)


if __name__ == "__main__":
    main()
