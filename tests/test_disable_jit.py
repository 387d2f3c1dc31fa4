"""``NUMBA_DISABLE_JIT=1`` (numba's switch for debugging kernels as plain Python) gives the compiled results: the
engine's observations and masks for the first decisions of a seeded hand; the scorer and compat on the golden fan
cases, the win test, and complete hands (golden records and seeded kernel hands); and the baseline agents' kernels
(the rule agent's actions, the nn agent's features)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import pytest

_ROOT = Path(__file__).resolve().parents[1]

_SCRIPT = """
import hashlib, warnings
import numpy as np
import mjenv
warnings.simplefilter("ignore", RuntimeWarning)  # the plain-Python RNG wraps uint64 (as the kernels do)
e = mjenv.env()
e.reset(seed=3)
h = hashlib.blake2b(digest_size=8)
for _ in range(12):
    ob, r, term, trunc, info = e.last()
    if term or trunc:
        break
    h.update(np.ascontiguousarray(ob["observation"]).tobytes())
    h.update(np.ascontiguousarray(ob["action_mask"]).tobytes())
    e.step(int(np.flatnonzero(ob["action_mask"])[-1]))
print(h.hexdigest())
"""


def _run(script: str, *args: str, disable_jit: bool = True) -> str:
    """The last line ``script`` prints, run in a subprocess of this checkout (plain Python by default)."""
    env = dict(os.environ, NUMBA_DISABLE_JIT="1" if disable_jit else "0", PYTHONPATH=str(_ROOT))
    out = subprocess.run(
        [sys.executable, "-c", script, *args], env=env, capture_output=True, text=True, timeout=600, cwd=_ROOT
    )
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout.strip().splitlines()[-1]


def _digest(disable_jit: bool) -> str:
    return _run(_SCRIPT, disable_jit=disable_jit)


def test_disable_jit_plays_the_same_decisions_as_the_kernels():
    plain = _digest(True)
    assert len(plain) == 16
    assert plain == _digest(False)


# the rule agent's actions (uint8 rows, widened, and float32 rows) and the nn agent's features and tile planes
# (uint8 rows), digested; run in this process (compiled) and under NUMBA_DISABLE_JIT=1 in a subprocess
_AGENTS_SCRIPT = """
import hashlib, sys, warnings
import numpy as np
from agents import features as F, planes as P, rule as R

def digest(rows):
    h = hashlib.blake2b(digest_size=8)
    for name in ("u8", "f32"):
        obs, masks = rows[name + "_obs"], rows[name + "_masks"]
        h.update(R.RulePolicy(len(obs))(obs, masks).tobytes())
        if name == "u8":
            for a in (*F.nn_features(obs, masks), *P.obs_planes(obs, masks), *P.obs_planes(obs, None)):
                h.update(a.tobytes())
    return h.hexdigest()

if __name__ == "__main__":
    warnings.simplefilter("ignore", RuntimeWarning)  # a popcount's multiply wraps int64 (as the kernels do)
    print(digest(np.load(sys.argv[1])))
"""


def _rule_rows(tables: int, steps: int, seed: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The observations and masks of a seeded VectorEnv played by the rule agent (compiled)."""
    from mjenv.policy import load_policy
    from mjenv.vector import VectorEnv

    env = VectorEnv(tables, seed=seed, threads=1, obs_dtype=dtype)
    policy = load_policy("agents.rule:make", tables, 0)
    obs, masks, seats = env.reset()
    rows, mrows = [], []
    for _ in range(steps):
        rows.append(obs.copy())
        mrows.append(masks.copy())
        obs, masks, seats, _, _ = env.step(policy(obs, masks, seats))
    return np.concatenate(rows), np.concatenate(mrows)


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compares against the compiled kernels")
def test_disable_jit_agents_decide_and_featurize_as_the_kernels(tmp_path):
    """The agents' kernels as plain Python on 480 rows of rule-agent play (recorded with the compiled engine,
    so that only the agents are compared): their small-integer arithmetic must promote as numba's does (int8
    counts in a base-5 key and in a shifted sort key wrapped as numpy scalars; most rows differed)."""
    u8 = _rule_rows(8, 40, 5, np.uint8)
    f32 = _rule_rows(4, 40, 6, np.float32)
    rows = {"u8_obs": u8[0], "u8_masks": u8[1], "f32_obs": f32[0], "f32_masks": f32[1]}
    path = tmp_path / "rows.npz"
    np.savez(path, **rows)
    ns: dict = {"__name__": "agents_digest"}  # not __main__: defines digest() only
    exec(_AGENTS_SCRIPT, ns)
    compiled = ns["digest"](rows)
    assert _run(_AGENTS_SCRIPT, str(path)) == compiled


# the public scorer and the compat calculator on every golden fan case (fans.jsonl), the win test of int8 counts
# (batch_is_win), and the engine through complete hands: golden records replayed through the AEC front (flowers,
# the three kongs, a robbed kong, wins on a discard and self-drawn, an exhaustive draw) and seeded hands on the
# kernels with the kong-eager scripted policy (per step: the legal count, the mask, the state); digested per
# part, run in this process (compiled) and under NUMBA_DISABLE_JIT=1 in a subprocess
_ENGINE_SCRIPT = """
import hashlib, json, warnings
from pathlib import Path
import numpy as np

CASES = ("flowers_and_exposed_kong", "concealed_kong", "added_kong", "robbed_kong", "head_bump",
         "self_drawn_win", "exhaustive_draw")
# seeds of hands the scripted policy plays to: concealed, exposed and added kongs and a win on a discard; a 4th
# tile win after a concealed kong; a self-drawn win on a kong's replacement; self-drawn wins (one on the last
# tile); an exhaustive draw after two kongs
HANDS = (134, 190, 354, 214, 229, 13)

def digest(root):
    from mjenv import fans, game as G
    from mjenv.compat.mahjonggb import MahjongFanCalculator
    from mjenv.hand import batch_is_win
    from mjenv.testing.golden import play_case, scripted_action
    from mjenv.testing.hands import random_hand, random_win
    from mjenv.tiles import parse_tiles, tile_to_botzone

    out = {}
    h = hashlib.blake2b(digest_size=8)
    for line in (root / "tests" / "golden" / "fans.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        flags = row["flags"]
        try:
            got = repr(fans.score(
                row["hand"], row["win_tile"], melds=[tuple(p) for p in row["pack"]], seat_wind=row["seat"],
                prevalent_wind=row["prevalent"], flowers=row["flowers"], self_drawn=flags["isSelfDrawn"],
                fourth_tile=flags["is4thTile"], about_kong=flags["isAboutKong"], wall_last=flags["isWallLast"],
            ))
        except ValueError as e:  # the error cases (and melds the public API refuses)
            got = f"ValueError {e}"
        h.update(got.encode())
        try:
            got = repr(MahjongFanCalculator(
                pack=tuple(tuple(p) for p in row["pack"]),
                hand=tuple(tile_to_botzone(t) for t in parse_tiles(row["hand"])),
                winTile=tile_to_botzone(parse_tiles(row["win_tile"])[0]), flowerCount=row["flowers"],
                seatWind=row["seat"], prevalentWind=row["prevalent"], verbose=True, **flags,
            ))
        except TypeError as e:  # the reference's way of refusing a hand
            got = f"TypeError {e}"
        h.update(got.encode())
    out["fans"] = h.hexdigest()

    rng = np.random.default_rng(5)  # int8 counts: random wins and random 14-tile hands
    counts = np.stack([random_win(rng) if i % 2 else random_hand(rng, 14) for i in range(200)])
    out["is_win"] = hashlib.blake2b(batch_is_win(counts).tobytes(), digest_size=8).hexdigest()

    golden = json.loads((root / "tests" / "golden" / "hands.json").read_text(encoding="utf-8"))
    h = hashlib.blake2b(digest_size=8)
    for name in CASES:
        case = golden[name]
        got = play_case(case["rules"], case["seed"], case["seed"], actions=case["actions"])
        h.update(json.dumps(got, sort_keys=True, ensure_ascii=False).encode())
    out["golden_hands"] = h.hexdigest()

    h = hashlib.blake2b(digest_size=8)
    st = G.new_state()
    tab = G.win_tables()
    mask = np.zeros(G.NUM_ACTIONS, np.bool_)
    rewards = np.zeros(4, np.float32)
    for seed in HANDS:
        rng = np.random.default_rng(seed)
        G.reset_kernel(st, seed, seed % 4, seed // 4 % 4, G.rules_block(), *tab)
        while st[G.PHASE] != G.PH_OVER:
            n = G.legal_mask_kernel(st, st[G.CUR], mask)
            assert G.step_kernel(st, scripted_action(mask, rng, True), rewards, *tab) == 0
            h.update(np.int64(n).tobytes() + mask.tobytes() + st.tobytes() + rewards.tobytes())
    out["kernel_hands"] = h.hexdigest()
    return out

if __name__ == "__main__":
    warnings.simplefilter("ignore", RuntimeWarning)  # the RNG and the SWAR sums wrap int64 (as the kernels do)
    print(json.dumps(digest(Path.cwd())))
"""


@pytest.mark.skipif(numba.config.DISABLE_JIT, reason="compares against the compiled kernels")
def test_disable_jit_scores_and_plays_complete_hands_as_the_kernels():
    """The scorer as plain Python needs the plain stand-in of numba's ``trailing_zeros`` intrinsic (it raised on
    every win), int64 fan-mask bits (``1 << 63`` is no int64) and int64 sums of numpy bools (which add as a
    logical or: every hand with suited tiles scored a flush); the compat module's meld packing is the plain function
    itself (``py_func`` is no attribute of it); the waits kernel and the engine's legal count add their bools
    as integers (no waits when two groups held 2 mod 3 tiles; a turn with a concealed kong counted one
    action too few); the win test's base-5 group key is int64 (an int8 key wrapped)."""
    ns: dict = {"__name__": "engine_digest"}  # not __main__: defines digest() only
    exec(_ENGINE_SCRIPT, ns)
    compiled = ns["digest"](_ROOT)
    assert json.loads(_run(_ENGINE_SCRIPT)) == compiled
