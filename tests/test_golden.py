"""Pinned behaviour: golden hand records and trajectory digests that any change of the rules, the RNG, the
observation or the fronts must reproduce exactly (regenerate only for an intended change of behaviour:
``scripts/make_golden_hands.py``; the digests below are printed by the failing assertions)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from mjenv import game as G
from mjenv.record import log_rules, make_log, replay
from mjenv.testing.golden import events_of, play_case

GOLDEN = json.loads((Path(__file__).parent / "golden" / "hands.json").read_text(encoding="utf-8"))

#: what the cases must cover between them (so that a regenerated file cannot silently lose a rule)
COVERED = {
    "flower",
    "exposed_kong",
    "added_kong",
    "concealed_kong",
    "robbed_kong",
    "draw",
    "self_drawn",
    "discard",
    "aborted",
}


def _json(obj):
    """As stored: JSON has lists where the engine returns tuples."""
    return json.loads(json.dumps(obj, ensure_ascii=False))


def test_golden_cases_cover_the_rules():
    seen = set().union(*(events_of(c) for c in GOLDEN.values()))
    assert COVERED <= seen, COVERED - seen
    engine = set().union(*(c.get("engine_events", []) for c in GOLDEN.values()))
    assert {"head_bump", "robbed_kong", "exhaustive_draw", "initial_flower", "flower_in_play"} <= engine
    assert {c["rules"].get("illegal") for c in GOLDEN.values() if c["illegal_action"]} == {
        "terminate",
        "penalty",
        "raise",
    }
    assert any(len(c["hands"]) == 16 for c in GOLDEN.values())


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_case_replays_exactly(name):
    """Through the AEC front: the same agents asked, rewards, observations, hand logs (events, result) and
    final scores."""
    want = GOLDEN[name]
    got = _json(play_case(want["rules"], want["seed"], want["seed"], actions=want["actions"]))
    for key in ("steps", "observation_digest", "final"):
        assert got[key] == want[key], f"{name}: {key} differs"
    assert len(got["hands"]) == len(want["hands"])
    for k, (g, w) in enumerate(zip(got["hands"], want["hands"])):
        for key in ("seed", "dealer", "prevalent_wind", "wall", "deal", "ops", "events", "result", "players"):
            assert g[key] == w[key], f"{name}: hand {k} {key} differs"


@pytest.mark.parametrize("name", ["robbed_kong", "false_win_penalty", "illegal_terminate"])
def test_golden_logs_replay_through_the_record_module(name):
    for log in GOLDEN[name]["hands"]:
        states = replay(log)
        assert len(states) == len(log["ops"]) + 1
        assert _json(G.result(states[-1])) == log["result"]
        again = make_log(log["seed"], log["dealer"], log["prevalent_wind"], log_rules(log), log["ops"])
        assert again["events"] == log["events"]


# ---------------------------------------------------------------------------------------------- digests
FUZZ_FIELDS = (
    ("HAND", 136),
    ("MELDS", 16),
    ("DISC", 4 * G.MAX_DISCARDS),
    ("N_DISC", 4),
    ("WALL", 144),
    ("FLOWERS", 4),
    ("SCORES", 4),
    ("FANS", G.NUM_FANS),
    ("WINNER", 1),
    ("LOSER", 1),
    ("WIN_TILE", 1),
    ("WIN_FLAGS", 1),
    ("WIN_TOTAL", 1),
    ("N_STEPS", 1),
    ("EVENTS", 1),
)


#: printed by ``scripts/fuzz_games.py --hands 300 --digest-every 300`` too
FUZZ_DIGEST = "78ed44fc049ba6cbcd67258e0cd62d7f"
VECTOR_DIGEST = "55d55518a13178f9865680071875764f"


def fuzz_digest(hands: int, seed: int = 0) -> str:
    """The running trajectory digest of ``scripts/fuzz_games.py`` (same fields, seeds and policies)."""
    from mjenv.testing.table import CHECK_ERRORS, playout_kernel

    st = G.new_state()
    tab = G.win_tables()
    rs = np.array([seed * 6364136223846793005 % 2**64 | 1], np.uint64)
    h = hashlib.blake2b(digest_size=16)
    for k in range(hands):
        G.reset_kernel(st, seed * 1_000_003 + k, k % 4, (k // 4) % 4, G.rules_block(), *tab)
        n = playout_kernel(st, k % 2, rs, True, *tab)
        assert n > 0, CHECK_ERRORS.get(n, n)
        h.update(np.int64(n).tobytes())
        for name, size in FUZZ_FIELDS:
            off = getattr(G, name)
            h.update(st[off : off + size].tobytes())
    return h.hexdigest()


def vector_digest(steps: int = 300, n: int = 64) -> str:
    """Digest of a VectorEnv run (random policy, observations on): seats, masks, observations, rewards,
    terminations and hand results of every step."""
    from mjenv.policy import RandomPolicy
    from mjenv.vector import VectorEnv

    env = VectorEnv(n, seed=7, observations=True, threads=1)
    obs, masks, seats = env.reset()
    pol = RandomPolicy(11, env=env)
    h = hashlib.blake2b(digest_size=16)
    for _ in range(steps):
        obs, masks, seats, rewards, terminated = env.step(pol(obs, masks, seats))
        for a in (seats, masks, obs, rewards, terminated, env.results.winner, env.results.fan_total):
            h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def test_fuzz_trajectory_digest_is_pinned():
    assert fuzz_digest(300) == FUZZ_DIGEST


def test_vector_trajectory_digest_is_pinned():
    assert vector_digest() == VECTOR_DIGEST
