"""Digests of arena reports: the JSON report of :func:`mjenv.arena.run_arena` and its markdown
(:func:`mjenv.arena.format_markdown`) over seatings, seeds and agents (the rule agent, the random agent, a
deterministic agent that plays illegal actions, a uniform agent that reports policy info), pinned by SHA-256.

The arena's code may be rearranged freely; these reports must not change. A change of the reports on purpose
(e.g. of the agents' random streams) regenerates the digests in a commit of its own that says why:
``PYTHONPATH=$PWD python tests/test_arena_digest.py`` prints them. The ``"timing"`` entry (wall-clock), the
``"versions"`` entry (numpy, numba, python of the host) and the ``"mjenv"`` entry (the code's version and git
commit) are left out of the digest; everything else is in it.
"""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from mjenv import actions as A
from mjenv.arena import format_markdown, run_arena
from mjenv.policy import random_legal_actions
from mjenv.rules import RuleConfig

RANDOM = "mjenv.policy:make_random"
RULE = "agents.rule:make"


class FirstLegalOrIllegal:
    """Deterministic row by row: the first legal action, but the first illegal one when 5 actions are legal."""

    needs_observations = False

    def __call__(self, obs, masks, seats):
        a = np.argmax(masks, axis=1)
        five = masks.sum(axis=1) == 5
        a[five] = np.argmin(masks[five], axis=1)
        return a


class UniformWithInfo:
    """Uniformly random legal actions, reporting the uniform distribution and a value (``act_with_info``)."""

    needs_observations = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, masks, seats):
        return self.act_with_info(obs, masks, seats)[0]

    def act_with_info(self, obs, masks, seats):
        probs = masks / masks.sum(axis=1, keepdims=True)
        a = random_legal_actions(masks, self.rng)
        a[masks[:, A.WIN]] = A.WIN
        return a, {"probs": probs.astype(np.float32), "value": np.full(len(masks), 0.5, np.float32)}


class SometimesIllegal:
    """Uniformly random legal actions, but the first illegal action on ~3% of rows (it may repeat it: in the
    penalty mode the offender acts again)."""

    needs_observations = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, masks, seats):
        a = random_legal_actions(masks, self.rng)
        bad = self.rng.random(len(masks)) < 0.03
        a[bad] = np.argmin(masks[bad], axis=1)
        return a


def make_sometimes(num_envs, seed, **kwargs):
    return SometimesIllegal(seed)


def make_bad(num_envs, seed, **kwargs):
    return FirstLegalOrIllegal()


def make_info(num_envs, seed, **kwargs):
    return UniformWithInfo(seed)


#: name -> (agents, run_arena keywords)
CASES: dict[str, tuple[dict, dict]] = {
    "1v3-rule-random-s0": (
        {"rule": RULE, "random": RANDOM},
        dict(seating="1v3", walls=6, seed=0, tables=8, records=3),
    ),
    "1v3-random-rule-s7-minfan0": (
        {"random": RANDOM, "rule": RULE},
        dict(seating="1v3", walls=5, seed=7, tables=5, records=2, rules=RuleConfig(min_fan=0)),
    ),
    "1v3-info-random-s3-shards2": (
        {"info": make_info, "random": RANDOM},
        dict(seating="1v3", walls=6, seed=3, tables=6, records=2, shards=2),
    ),
    "2v2-bad-random-s1": (
        {"bad": make_bad, "random": RANDOM},
        dict(seating="2v2", walls=4, seed=1, tables=6, records=2, illegal_records=3),
    ),
    "2v2-rule-sometimes-s5-penalty": (
        {"rule": RULE, "sometimes": make_sometimes},
        dict(seating="2v2", walls=3, seed=5, tables=7, records=1, illegal_records=2, illegal="penalty"),
    ),
    "perm24-all-s2": (
        {"rule": RULE, "random": RANDOM, "info": make_info, "bad": make_bad},
        dict(seating="perm24", walls=1, seed=2, tables=12, records=4, illegal_records=2),
    ),
}

DIGESTS = {
    "1v3-rule-random-s0": "dd004f81fd4b9b0264a42e4dba6a13dff3e784559793c0b864fdb27d19ea1cdd",
    "1v3-random-rule-s7-minfan0": "13cae9921da86abcb39e1af32ff59821d53ed2ab4fd7ff76f995f04939a9b2d1",
    "1v3-info-random-s3-shards2": "331d76aa87daacbbc4868aca2d8eee7fedeed1a9b70787d0e37641f622889ac8",
    "2v2-bad-random-s1": "4f3bdd568e1ddb0863b59cdfccf812b6e5a12636dc033f683adc0dd9690ab39b",
    "2v2-rule-sometimes-s5-penalty": "85409f6f3327e0f7e712d4eebf16d51b8ab7c8861a56e993d6ee280b4eb3c0d6",
    "perm24-all-s2": "98dd053ddb4c53490634e3c40829830cda4e23d83471e4e35fbafb86a36cace5",
}


def report_digest(name: str) -> str:
    """SHA-256 of case ``name``'s report (JSON, sorted keys, without timing, versions and mjenv) and its
    markdown."""
    agents, kw = CASES[name]
    rep = run_arena(agents, progress=False, **kw)
    rep = {k: v for k, v in rep.items() if k not in ("timing", "versions", "mjenv")}
    h = hashlib.sha256(json.dumps(rep, sort_keys=True).encode())
    h.update(b"\0")
    h.update(format_markdown(rep).encode())
    return h.hexdigest()


@pytest.mark.parametrize("name", sorted(CASES))
def test_report_digest(name):
    assert report_digest(name) == DIGESTS[name]


if __name__ == "__main__":  # print the digests (after a change of the reports on purpose)
    for name in CASES:
        print(f'    "{name}": "{report_digest(name)}",')
