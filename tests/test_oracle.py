"""The oracle block: VectorEnv(oracle=True) fills the hidden state of the chair to act, for a
training-only critic; it never reaches the actor, a policy, or an evaluation."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import numpy as np
import pytest

from mjenv import game as G
from mjenv.observation import ORACLE_SIZE, observe_kernel, oracle_kernel, oracle_views
from mjenv.policy import random_legal_actions
from mjenv.rules import RuleConfig
from mjenv.vector import VectorEnv

ROOT = Path(__file__).resolve().parents[1]


def _played(n=32, steps=40, seed=3, **kw):
    env = VectorEnv(n, seed=seed, oracle=True, threads=1, **kw)
    env.reset()
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        env.step(random_legal_actions(env.masks, rng))
    return env


@pytest.mark.parametrize(
    "rules", [RuleConfig(illegal="raise"), RuleConfig(illegal="raise", private_walls=True)]
)
def test_oracle_block_is_the_hidden_state_of_the_chair_to_act(rules):
    env = _played(rules=rules)
    v = oracle_views(env.oracle)
    assert env.oracle.shape == (env.num_envs, ORACLE_SIZE) and env.oracle.dtype == env.obs.dtype
    for i in range(env.num_envs):
        st, seat = env.states[i], int(env.seats[i])
        for r in range(4):
            p = (seat + r) % 4
            assert (v["hands"][i, r] == st[G.HAND + 34 * p : G.HAND + 34 * p + 34]).all()
            waits = [t for t in range(34) if G.waits_on_kernel(st, p, t)]
            assert np.flatnonzero(v["waits"][i, r]).tolist() == waits
        wall = G.wall_tiles(st)
        seq = v["wall_seq"][i]
        assert seq[: len(wall)].astype(int).tolist() == [t + 1 for t in wall] and not seq[len(wall) :].any()
        suited = [t for t in wall if t < 34]
        assert (v["wall_counts"][i] == np.bincount(suited, minlength=34)).all()
        assert int(v["wall_next"][i].sum()) == min(len(suited), 16) or rules.private_walls
        assert (v["wall_next"][i] <= v["wall_counts"][i]).all()
    # the same block in float32
    f = VectorEnv(4, seed=3, oracle=True, threads=1, rules=rules)
    u = VectorEnv(4, seed=3, oracle=True, threads=1, rules=rules, obs_dtype=np.uint8)
    f.reset()
    u.reset()
    assert (f.oracle == u.oracle.astype(np.float32)).all()


def test_no_oracle_by_default_and_bad_values():
    env = VectorEnv(2, seed=0)
    assert env.oracle is None
    with pytest.raises(TypeError, match="oracle must be a bool"):
        VectorEnv(2, seed=0, oracle=1)
    with pytest.raises(ValueError, match="seat"):
        oracle_kernel(np.zeros(G.STATE_SIZE, np.int32), 4, np.zeros(ORACLE_SIZE, np.float32))


def _hide_swap(state, seat, rng):
    """Swap a concealed tile of another seat with a different tile of the wall (both hidden from ``seat``):
    the observation of ``seat`` stays the same, the hidden state changes. Returns whether it swapped."""
    others = [p for p in range(4) if p != seat]
    wall_idx = np.arange(state[G.FRONT], state[G.BACK])
    if state[G.PRIVATE_WALLS] or wall_idx.size == 0:
        return False
    for _ in range(50):
        p = int(rng.choice(others))
        held = np.flatnonzero(state[G.HAND + 34 * p : G.HAND + 34 * p + 34])
        j = int(rng.choice(wall_idx))
        a, b = int(rng.choice(held)), int(state[G.WALL + j])
        if b < 34 and a != b:
            state[G.HAND + 34 * p + a] -= 1
            state[G.HAND + 34 * p + b] += 1
            state[G.WALL + j] = a
            G.update_waits_kernel(state, p, *G.win_tables())
            return True
    return False


torch = pytest.importorskip("torch")


@pytest.mark.parametrize("arch", ["mlp", "planes"])
def test_hidden_information_changes_the_critic_never_the_actor(arch):
    """Perturb every hidden part (other hands, the wall) at many decisions: the acting chair's observation
    and mask, and so the actor's logits, stay bit for bit; the oracle block and the critic's value change.
    The critic reads the actor's inputs, of either architecture."""
    from agents import nn as ann
    from train.critic import OracleCritic

    env = _played(n=64, steps=25, seed=11, obs_dtype=np.uint8)
    torch.manual_seed(0)
    nc = (
        ann.NNConfig(8, 32)
        if arch == "mlp"
        else ann.NNConfig(8, 32, arch="planes", blocks=1, with_features=True)
    )
    actor = ann.build_net(nc).eval()
    critic = OracleCritic(net_config=nc).eval()
    rng = np.random.default_rng(0)
    changed = 0
    for i in range(env.num_envs):
        st, seat = env.states[i].copy(), int(env.seats[i])
        if st[G.PHASE] == G.PH_OVER or not _hide_swap(st, seat, rng):
            continue
        obs2 = np.zeros_like(env.obs[i])
        observe_kernel(st, seat, obs2)
        mask2 = np.zeros(109, np.bool_)
        G.legal_mask_kernel(st, seat, mask2)
        assert (obs2 == env.obs[i]).all() and (mask2 == env.masks[i]).all()
        orc2 = np.zeros_like(env.oracle[i])
        oracle_kernel(st, seat, orc2)
        assert (orc2 != env.oracle[i]).any()
        with torch.no_grad():
            la, _ = actor(env.obs[i : i + 1], env.masks[i : i + 1])
            lb, _ = actor(obs2[None], mask2[None])
            tile, glob = ann.input_features(nc, env.obs[i : i + 1], env.masks[i : i + 1])
            va = critic(tile, glob, torch.from_numpy(env.oracle[i : i + 1]))
            vb = critic(tile, glob, torch.from_numpy(orc2[None]))
        assert torch.equal(la, lb)
        changed += bool(va != vb)
    assert changed >= 20


def test_only_training_reads_the_oracle_block():
    """In mjenv/ only observation.py (the layout and kernel) and vector.py (which fills it) name the oracle; in
    agents/ nothing does (no policy ever reads it); the arena's env never asks for it."""
    names = {"oracle", "oracle_kernel", "oracle_rows_kernel", "oracle_views", "ORACLE_SIZE", "ORACLE_PIECES",
             "ORACLE_OFFSETS", "ORACLE_NEXT_DRAWS"}  # fmt: skip
    allowed = {"mjenv/observation.py", "mjenv/vector.py"}
    seen = set()
    for top in ("mjenv", "agents"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text())
            used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
            used |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
            used |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
            used |= {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords if k.arg}
            if used & names:
                seen.add(rel)
    assert seen <= allowed, seen - allowed
    assert allowed <= seen  # the test looks at the right files


@pytest.mark.parametrize("arch", ["mlp", "planes"])
def test_ppo_oracle_critic_resumes_exactly_and_stays_out_of_the_policy_file(tmp_path, arch):
    from safetensors.torch import load_file

    from train.ppo import PPOConfig, Trainer, net_config, read_checkpoint, train

    tiny = dict(num_envs=16, rollout_steps=12, threads=1, torch_threads=1, channels=4, hidden=16, updates=3,
                minibatch_size=64, epochs=2, eval_every=0, save_every=1, progress=False, min_fan=4,
                opponents=("rule", "random"), opponent_prob=0.5, value_warmup=1, critic="oracle",
                critic_channels=4, critic_hidden=16, arch=arch)  # fmt: skip
    if arch == "planes":
        tiny.update(blocks=1, with_features=True)
    a = PPOConfig(run_dir=str(tmp_path / "a"), **tiny)
    train(a)
    b = PPOConfig(run_dir=str(tmp_path / "b"), **tiny)
    train(b, stop_after=1)
    train(dataclasses.replace(b, resume=True))
    ta, meta = read_checkpoint(tmp_path / "a" / "checkpoint.safetensors")
    tb, _ = read_checkpoint(tmp_path / "b" / "checkpoint.safetensors")
    assert ta.keys() == tb.keys() and any(k.startswith("critic.") for k in ta)
    for k in ta:
        assert torch.equal(ta[k], tb[k]), k
    pol = load_file(str(tmp_path / "a" / "policy.safetensors"))
    assert not any("critic" in k for k in pol)
    from agents import nn as ann

    assert set(pol) == set(ann.build_net(net_config(a)).state_dict())
    with pytest.raises(ValueError, match="critic must be one of"):
        Trainer(PPOConfig(run_dir=str(tmp_path / "c"), critic="perfect"))
    with pytest.raises(ValueError, match="workers=0"):
        Trainer(PPOConfig(run_dir=str(tmp_path / "c"), critic="oracle", workers=1))
    assert not (tmp_path / "c").exists()
