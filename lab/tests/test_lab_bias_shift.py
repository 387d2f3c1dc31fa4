"""The lab probe of session 34: ``lab/probes/bias_shift.py`` moves one action class's logits and nothing
else (every other logit and the value unchanged), and refuses bad shifts with one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lab.probes.bias_shift import CLASSES, main, parse_shift, shift_biases  # noqa: E402
from mjenv import actions as A  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]  # the repository root
ACTIONS = {
    "discard": range(A.DISCARD, A.DISCARD + A.NUM_TILE_TYPES),
    "concealed_kong": range(A.CONCEALED_KONG, A.CONCEALED_KONG + A.NUM_TILE_TYPES),
    "added_kong": range(A.ADDED_KONG, A.ADDED_KONG + A.NUM_TILE_TYPES),
    "chow": range(A.CHOW, A.CHOW + 3),
    "pung": [A.PUNG],
    "kong": [A.KONG],
    "win": [A.WIN],
    "pass": [A.PASS],
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_a_shift_moves_its_class_logits_alone(name):
    from agents import nn as ann
    from mjenv.vector import VectorEnv

    path = ROOT / "agents" / "zoo" / "avg109-2026-12-06.safetensors"
    env = VectorEnv(8, seed=6)
    env.reset()
    base, moved = ann.load(path), shift_biases(ann.load(path), {name: 0.75})
    with torch.no_grad():
        l0, v0 = base(env.obs)
        l1, v1 = moved(env.obs)
    expect = np.zeros(A.NUM_ACTIONS)
    expect[list(ACTIONS[name])] = 0.75
    assert torch.allclose(l1 - l0, torch.from_numpy(expect).float().expand_as(l0), atol=1e-5)
    assert torch.equal(v0, v1)


def test_bad_shifts_are_refused(tmp_path):
    assert parse_shift("chow=-0.5") == ("chow", -0.5)
    for text, match in (("pass", "CLASS=DELTA"), ("foo=1", "unknown class"), ("pung=x", "number"),
                        ("win=inf", "finite")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            parse_shift(text)
    out = tmp_path / "x.safetensors"
    with pytest.raises(SystemExit, match="twice"):
        main(["--shift", "pass=1", "--shift", "pass=2", "--out", str(out)])
    with pytest.raises(SystemExit, match="bias_shift"):
        main(["--shift", "pass=1", "--checkpoint", str(tmp_path / "missing.safetensors"), "--out", str(out)])
    assert not out.exists()


def test_discard_offset_moves_one_group_of_discards():
    from lab.probes.bias_shift import TILE_GROUPS, discard_offset
    from mjenv.vector import VectorEnv

    env = VectorEnv(16, seed=7)
    env.reset()
    base = discard_offset(16, 0, "honor", 0.0)
    # larger than the logits' spread (about 40): an honour is discarded wherever one is held
    moved = discard_offset(16, 0, "honor", 100.0)
    _, i0 = base.act_with_info(env.obs, env.masks)
    a1, i1 = moved.act_with_info(env.obs, env.masks)
    honor_discard = np.zeros(A.NUM_ACTIONS, dtype=bool)
    honor_discard[A.DISCARD + np.flatnonzero(TILE_GROUPS["honor"])] = True
    legal = env.masks & honor_discard
    rows = legal.any(axis=1)
    assert rows.any()
    assert honor_discard[a1[rows]].all()
    assert np.array_equal(i0["value"], i1["value"])
    with pytest.raises(ValueError, match="tile group"):
        discard_offset(1, 0, "bamboo", 1.0)
    with pytest.raises(ValueError, match="tile group"):
        discard_offset(1, 0, 28, 1.0)  # what --agent-opt new.group=28 gives (JSON): the group is rank28
    with pytest.raises(ValueError, match="finite"):
        discard_offset(1, 0, "honor", float("nan"))


def test_pass_offset_moves_the_pass_in_its_context_only():
    from lab.probes.bias_shift import pass_offset
    from mjenv.observation import O_MSEQ
    from mjenv.vector import VectorEnv

    env = VectorEnv(64, seed=8)
    env.reset()
    rows = {"concealed": 0, "open": 0}
    base = pass_offset(64, 0, "open", 0.0)
    policies = {w: pass_offset(64, 0, w, -100.0) for w in rows}  # below every logit: never pass where moved
    for _ in range(150):
        kinds = env.obs[:, O_MSEQ : O_MSEQ + 12 : 3].astype(int)
        opened = ((kinds >= 1) & (kinds <= 4)).any(axis=1)
        claim = env.masks[:, A.PASS] & (env.masks.sum(axis=1) > 1)
        a0 = base(env.obs, env.masks)
        for w, pol in policies.items():
            moved = claim & (opened if w == "open" else ~opened)
            a1 = pol(env.obs, env.masks)
            assert (a1[moved] != A.PASS).all()
            assert np.array_equal(a1[~moved], a0[~moved])
            rows[w] += int(moved.sum())
        env.step(a0)
    assert min(rows.values()) > 0
    with pytest.raises(ValueError, match="when"):
        pass_offset(1, 0, "closed", 1.0)


def test_defend_offset_moves_the_discards_a_threatening_opponent_made():
    from lab.probes.bias_shift import defend_offset
    from mjenv.observation import O_DISCARDS, O_MSEQ
    from mjenv.vector import VectorEnv

    env = VectorEnv(8, seed=10)
    env.reset()
    obs, masks = env.obs.copy(), env.masks
    base = defend_offset(8, 0, 0.0)(obs, masks)
    # each row: its least preferred legal discard, made by the opponent at relative seat 2
    target = np.array([np.flatnonzero(m[: A.NUM_TILE_TYPES])[0] for m in masks])
    target = np.where(target == base, [np.flatnonzero(m[: A.NUM_TILE_TYPES])[-1] for m in masks], target)
    rows = np.arange(8)
    obs[rows, O_DISCARDS + 136 * 2 + target] = 1
    moved = defend_offset(8, 0, 100.0, melds=3)
    assert np.array_equal(moved(obs, masks), base)  # no opponent shows 3 melds yet: nothing moves
    obs[:, O_MSEQ + 12 * 2 : O_MSEQ + 12 * 2 + 9 : 3] = 1  # three chows for seat 2
    assert np.array_equal(moved(obs, masks), target)
    assert np.array_equal(defend_offset(8, 0, 100.0, melds=4)(obs, masks), base)
    with pytest.raises(ValueError, match="melds"):
        defend_offset(1, 0, 1.0, melds=0)
