"""Golden hand records: the scripted play that ``scripts/make_golden_hands.py`` records and ``tests/test_golden.py``
replays (see that script's docstring)."""

from __future__ import annotations

import hashlib

import numpy as np


def scripted_action(mask: np.ndarray, rng: np.random.Generator, eager: bool) -> int:
    """A legal action: always win; with ``eager`` prefer kongs, then pungs, then chows; else uniform."""
    from mjenv import actions as A

    legal = np.flatnonzero(mask)
    if mask[A.WIN]:
        return A.WIN
    if eager:
        for lo, hi, p in (
            (A.CONCEALED_KONG, A.WIN, 0.95),
            (A.KONG, A.KONG + 1, 0.95),
            (A.PUNG, A.PUNG + 1, 0.8),
            (A.CHOW, A.PUNG, 0.6),
        ):
            cand = legal[(legal >= lo) & (legal < hi)]
            if cand.size and rng.random() < p:
                return int(cand[rng.integers(cand.size)])
        disc = legal[legal < A.CHOW]
        if disc.size:
            return int(disc[rng.integers(disc.size)])
    return int(legal[rng.integers(legal.size)])


def play_case(
    rules: dict,
    seed: int,
    policy_seed: int,
    eager: bool = True,
    illegal_at: int | None = None,
    actions: list | None = None,
    illegal_action: int | None = None,
) -> dict:
    """Play one case (``actions`` given: replay them) and return its full golden record."""
    from mjenv import actions as A
    from mjenv.pettingzoo_env import raw_env

    env = raw_env(**rules)
    env.reset(seed=seed)
    rng = np.random.default_rng(policy_seed)
    h = hashlib.blake2b(digest_size=16)
    steps, played = [], []
    i = 0
    while not all(env.terminations.values()):
        agent = env.agent_selection
        ob = env.observe(agent)
        h.update(agent.encode())
        h.update(ob["observation"].tobytes())
        h.update(ob["action_mask"].tobytes())
        if actions is not None:
            if i >= len(actions):
                raise ValueError("the recorded actions end before the episode does")
            a = actions[i]
        elif illegal_at is not None and i == illegal_at:
            a = illegal_action  # given, or the first action that is not legal now
            if a is None or ob["action_mask"][a]:
                a = int(np.flatnonzero(ob["action_mask"] == 0)[0])
        else:
            a = scripted_action(ob["action_mask"].astype(bool), rng, eager)
        i += 1
        played.append(int(a))
        try:
            env.step(int(a))
        except ValueError as e:  # illegal="raise": the env must be unchanged; then act legally
            steps.append([agent, int(a), "raise", str(e)])
            continue
        steps.append([agent, int(a), [env.rewards[p] for p in env.possible_agents]])
    hands = [env.hand_log(k) for k in range(len(env._hands))]
    return {
        "rules": rules,
        "seed": seed,
        "actions": played,
        "steps": steps,
        "observation_digest": h.hexdigest(),
        "hands": hands,
        "final": {
            "cumulative_rewards": [env._cumulative_rewards[p] for p in env.possible_agents],
            "match_scores": list(env.match_scores),
        },
        "illegal_action": None if illegal_at is None else A.action_to_str(played[illegal_at]),
    }


def events_of(case: dict) -> set[str]:
    """Rule events seen in a case (from the logs), in the words of :data:`mjenv.game.EV_NAMES`."""
    out = set()
    for log in case["hands"]:
        for ev in log["events"]:
            if "flower" in ev:
                out.add("flower")
            if ev.get("action", "").startswith(("concealed_kong", "added_kong")):
                out.add(ev["action"].split()[0])
            if ev.get("action") == "kong":
                out.add("exposed_kong")
            if "end" in ev:
                out.add(ev["end"])
        if log["result"] and log["result"].get("win_type") == "robbed_kong":
            out.add("robbed_kong")
    return out
