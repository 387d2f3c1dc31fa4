"""The baseline agents (agents/): factories, legality inside the VectorEnv, the rule agent's contract and
strength, the nn agent's checkpoints."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import observation as O
from mjenv.policy import load_policy
from mjenv.vector import VectorEnv


def _play(policy, n_envs, steps, seed):
    """Play ``steps`` batched decisions with ``policy`` at every seat; returns (hands, wins, illegal count)."""
    env = VectorEnv(n_envs, seed=seed, threads=1, illegal="terminate")
    obs, masks, seats = env.reset()
    hands = wins = bad = 0
    for _ in range(steps):
        a = policy(obs, masks, seats)
        bad += int((~masks[np.arange(n_envs), a]).sum())
        obs, masks, seats, _, term = env.step(a)
        hands += int(term.sum())
        wins += int((env.results.winner[term] >= 0).sum())
    return hands, wins, bad


@pytest.mark.parametrize("spec", ["agents.random:make", "agents.rule:make", "agents.nn:make"])
def test_factories_play_legal_actions(spec):
    if spec == "agents.nn:make":
        pytest.importorskip("torch")
    policy = load_policy(spec, 64, 0)
    _, _, bad = _play(policy, 64, 60, seed=1)
    assert bad == 0


def test_rule_agent_never_illegal_over_100k_decisions():
    policy = load_policy("agents.rule:make", 512, 0)
    hands, _, bad = _play(policy, 512, 200, seed=7)
    assert bad == 0
    assert hands > 500  # the run covered whole hands (auto-reset), not only opening turns


def test_rule_agent_always_takes_an_offered_win():
    env = VectorEnv(256, seed=3, threads=1)
    policy = load_policy("agents.rule:make", 256, 0)
    obs, masks, seats = env.reset()
    offered = 0
    for _ in range(300):
        a = policy(obs, masks, seats)
        win = masks[:, A.WIN]
        offered += int(win.sum())
        assert (a[win] == A.WIN).all()
        obs, masks, seats, _, _ = env.step(a)
    assert offered > 50


def test_rule_agent_sees_only_obs_and_mask():
    """The same observation and mask give the same action, whatever the hidden state or the batch around it."""
    env = VectorEnv(128, seed=5, threads=1)
    policy = load_policy("agents.rule:make", 256, 0)
    obs, masks, seats = env.reset()
    for _ in range(40):
        obs, masks, seats, _, _ = env.step(policy(obs, masks, seats))
    a = policy(obs, masks, seats)
    perm = np.random.default_rng(0).permutation(128)
    assert (policy(obs[perm], masks[perm], seats[perm]) == a[perm]).all()
    assert (policy(obs, masks, (seats + 1) % 4) == a).all()  # the chair is not used either
    for i in range(0, 128, 17):  # alone in a batch of one: the same action
        assert policy(obs[i : i + 1], masks[i : i + 1], seats[i : i + 1])[0] == a[i]
    with pytest.raises(ValueError, match="needs observations"):
        policy(None, masks, seats)


def test_rule_agent_decodes_uint8_observations():
    env = VectorEnv(64, seed=9, threads=1)
    policy = load_policy("agents.rule:make", 64, 0)
    obs, masks, seats = env.reset()
    for _ in range(30):
        a = policy(obs, masks, seats)
        obs8 = (obs.astype(np.int16) % 256).astype(np.uint8)  # negative entries as two's-complement bytes
        assert (policy(obs8, masks, seats) == a).all()
        obs, masks, seats, _, _ = env.step(a)


def test_rule_agent_beats_random_and_wins_often():
    rule = load_policy("agents.rule:make", 256, 0)
    rand = load_policy("agents.random:make", 256, 0)
    h_rule, w_rule, _ = _play(rule, 256, 400, seed=11)
    h_rand, w_rand, _ = _play(rand, 256, 400, seed=11)
    assert w_rule / h_rule > 0.5  # four rule agents: most hands end in a win (measured ~0.9)
    assert w_rand / h_rand < 0.1


def test_rule_agent_seated_with_random_wins_more():
    """One rule agent at chair 0 and three random ones: chair 0 wins far more than its share."""
    n = 256
    env = VectorEnv(n, seed=13, threads=1)
    rule = load_policy("agents.rule:make", n, 0)
    rand = load_policy("agents.random:make", n, 1)
    obs, masks, seats = env.reset()
    wins = np.zeros(4, np.int64)
    for _ in range(600):
        a = rand(obs, masks, seats)
        mine = seats == 0
        if mine.any():
            a[mine] = rule(obs[mine], masks[mine], seats[mine])
        obs, masks, seats, _, term = env.step(a)
        w = env.results.winner[term]
        wins += np.bincount(w[w >= 0], minlength=4)
    assert wins[0] > 20 * max(wins[1:].max(), 1) or (wins[0] > 50 and wins[1:].sum() < wins[0] / 5)


def test_rule_bad_kwargs():
    with pytest.raises(TypeError, match="unknown option"):
        load_policy("agents.rule:make", 4, 0, foo=1)
    with pytest.raises(ValueError, match="danger_wall"):
        load_policy("agents.rule:make", 4, 0, danger_wall=-1)
    with pytest.raises(TypeError, match="num_envs"):
        load_policy("agents.rule:make", "4", 0)
    with pytest.raises(ValueError, match="obs must"):
        load_policy("agents.rule:make", 4, 0)(
            np.zeros((2, 5), np.float32), np.ones((2, A.NUM_ACTIONS), bool), None
        )
    with pytest.raises(TypeError, match="takes no options|unexpected"):
        load_policy("agents.random:make", 4, 0, foo=1)


def test_random_agent_reproducible():
    m = np.ones((32, A.NUM_ACTIONS), bool)
    a = load_policy("agents.random:make", 32, 5)(None, m, np.zeros(32, np.int32))
    b = load_policy("agents.random:make", 32, 5)(None, m, np.zeros(32, np.int32))
    assert (a == b).all()


# ------------------------------------------------------------------------------------------------ nn
torch = pytest.importorskip("torch")


def test_nn_masked_logits_never_illegal_and_info():
    from agents import nn as N

    policy = N.make(8, 0)
    assert "parameters" in policy.describe()
    rng = np.random.default_rng(0)
    obs = rng.integers(0, 2, (500, O.OBS_SIZE)).astype(np.float32)
    masks = rng.random((500, A.NUM_ACTIONS)) < 0.05
    masks[np.arange(500), rng.integers(0, A.NUM_ACTIONS, 500)] = True
    a, info = policy.act_with_info(obs, masks, None)
    assert masks[np.arange(500), a].all()
    assert info["probs"].shape == (500, A.NUM_ACTIONS) and info["value"].shape == (500,)
    assert (info["probs"][~masks] == 0).all()
    np.testing.assert_allclose(info["probs"].sum(1), 1, rtol=1e-5)
    g = N.make(8, 0, greedy=True)
    assert (g(obs, masks) == g(obs.astype(np.uint8), masks)).all()  # uint8 observations are accepted
    assert masks[np.arange(500), g(obs, masks)].all()


def _rule_rollout(n_tables=64, steps=40, seed=3):
    """Observations (uint8), masks and rule-agent actions of the non-forced decisions of a short rollout."""
    env = VectorEnv(n_tables, seed=seed, threads=1, obs_dtype=np.uint8)
    rule = load_policy("agents.rule:make", n_tables, 0)
    obs, masks, seats = env.reset()
    keep = []
    for _ in range(steps):
        a = rule(obs, masks, seats)
        r = np.flatnonzero(env.n_legal > 1)
        keep.append((obs[r].copy(), masks[r].copy(), a[r]))
        obs, masks, seats, _, _ = env.step(a)
    return tuple(np.concatenate(x) for x in zip(*keep))


def test_nn_features_explain_the_rule_agent_and_read_only_the_observation():
    """The engineered features carry what the rule agent decides from: its discard is recovered from them by
    its own comparison (off-target pick, else the better of its two pre-ordered candidates by useful tiles,
    regular shanten, danger) on >= 97% of discards, and its claims from the claim-advance flags; uint8 and
    float32 observations give the same features."""
    from agents import features as Fe

    obs, masks, act = _rule_rollout()
    tile, glob = Fe.nn_features(obs, masks)
    assert tile.shape == (obs.shape[0], 34, Fe.NUM_TILE_FEATURES) and np.isfinite(tile).all()
    t2, g2 = Fe.nn_features(O.decode(obs), masks)
    np.testing.assert_array_equal(tile, t2)
    np.testing.assert_array_equal(glob, g2)
    hits = n = 0
    claims = claim_hits = 0
    for i in range(obs.shape[0]):
        f, g = tile[i], glob[i]
        if act[i] < A.CHOW:
            off = np.flatnonzero(f[:, Fe.F_OFFT] > 0)
            cand = [np.flatnonzero(f[:, Fe.F_PRE + j] > 0) for j in range(2)]
            cand = [c[0] for c in cand if c.size]
            if off.size:
                pred = off[0]
            else:
                key = [
                    (-f[t, Fe.F_USE], np.argmax(f[t, Fe.F_REG : Fe.F_REG + 3]), f[t, Fe.F_DANGER])
                    for t in cand
                ]
                pred = cand[min(range(len(cand)), key=key.__getitem__)] if cand else -1
            hits += pred == act[i]
            n += 1
        elif g[Fe.G_PHASE + 2] and act[i] in (A.PASS, A.CHOW, A.CHOW + 1, A.CHOW + 2, A.PUNG):
            adv = [g[Fe.G_CLAIM + 4 * c] and g[Fe.G_CLAIM + 4 * c + 1] for c in range(4)]
            claims += 1
            claim_hits += (act[i] == A.PASS) == (not any(adv))
    assert n > 300 and hits / n >= 0.97, (hits, n)
    assert claims > 50 and claim_hits == claims, (claim_hits, claims)


def test_nn_save_load_round_trip(tmp_path):
    from agents import nn as N

    p = N.make(4, 3, channels=16, hidden=32)
    path = tmp_path / "net.safetensors"
    N.save(p.net, path)
    q = N.make(4, 0, checkpoint=path, greedy=True)
    assert q.net.config == p.net.config
    obs = np.random.default_rng(1).random((20, O.OBS_SIZE)).astype(np.float32)
    masks = np.ones((20, A.NUM_ACTIONS), bool)
    with torch.no_grad():
        la, va = p.net(torch.from_numpy(obs), torch.from_numpy(masks))
        lb, vb = q.net(torch.from_numpy(obs), torch.from_numpy(masks))
    assert torch.equal(la, lb) and torch.equal(va, vb)
    # the same seed gives the same fresh weights
    r = N.make(4, 3, channels=16, hidden=32)
    assert all(torch.equal(x, y) for x, y in zip(p.net.state_dict().values(), r.net.state_dict().values()))


def test_nn_checkpoint_errors(tmp_path, monkeypatch):
    from agents import nn as N

    p = N.make(4, 0, channels=8, hidden=16)
    path = tmp_path / "net.safetensors"
    N.save(p.net, path)
    with pytest.raises(ValueError, match="config"):
        N.load(path, config=N.NNConfig(channels=8, hidden=32))
    with pytest.raises(ValueError, match="hidden"):
        N.make(4, 0, checkpoint=path, hidden=32)
    data = path.read_bytes()
    bad = bytearray(data)
    bad[-3] ^= 0xFF  # a weight byte
    (tmp_path / "tampered.safetensors").write_bytes(bytes(bad))
    with pytest.raises(ValueError, match="SHA-256"):
        N.load(tmp_path / "tampered.safetensors")
    (tmp_path / "short.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupt or truncated"):
        N.load(tmp_path / "short.safetensors")
    with pytest.raises(FileNotFoundError):
        N.load(tmp_path / "missing.safetensors")
    monkeypatch.setattr(N, "NN_FEATURES_VERSION", "v999")
    with pytest.raises(ValueError, match="features"):
        N.load(path)


def test_nn_checkpoint_of_old_features_fails_clearly(tmp_path):
    """A checkpoint of the previous input layout (features "v0", the convolutional network) is refused."""
    from safetensors.torch import save_file

    from agents import nn as N

    meta = {"format": N.FORMAT, "config": '{"channels": 16, "hidden": 128}', "features_version": "v0",
            "obs_size": str(O.OBS_SIZE), "num_actions": str(A.NUM_ACTIONS), "sha256": "0"}  # fmt: skip
    save_file({"w": torch.zeros(2)}, str(tmp_path / "old.safetensors"), metadata=meta)
    with pytest.raises(ValueError, match="made for network features 'v0'"):
        N.load(tmp_path / "old.safetensors")


def test_nn_baseline_loads_and_plays_legally():
    """``agents.nn:latest`` (the newest network of the zoo) is the tile-plane network 2 x 32 + features with the
    wait and near inputs, greedy, within 20 MB, and plays only legal actions; the zoo's ``ens5-2026-12-05`` and
    ``planes32-2026-12-04`` (older ones) have the same network without those inputs and ``mlp-2026-12-01`` (the
    first) is the mlp, each a different policy."""
    from agents import nn as N

    policy = load_policy("agents.nn:latest", 32, 0)
    cfg = policy.net.config
    assert policy.greedy and cfg.arch == "planes" and cfg.with_features
    assert (cfg.blocks, cfg.channels) == (2, 32)
    assert N.zoo_path(N.LATEST).stat().st_size <= 20 * 2**20
    obs, masks, _ = _rule_rollout(32, 12, seed=5)
    a = policy(obs, masks)
    assert masks[np.arange(a.size), a].all()
    e5 = load_policy("agents.nn:zoo", 32, 0, name="ens5-2026-12-05")
    assert cfg.wait_inputs and cfg.near_inputs and e5.greedy
    assert e5.net.config == dataclasses.replace(cfg, wait_inputs=False, near_inputs=False)
    e = e5(obs, masks)
    assert masks[np.arange(e.size), e].all() and (a != e).any()
    # the weight average of PPO runs from it: close to it, not the same network
    avg = load_policy("agents.nn:zoo", 32, 0, name="avg109-2026-12-06")
    v = avg(obs, masks)
    assert not torch.equal(avg.net.stem.weight, e5.net.stem.weight) and (v == e).mean() > 0.9
    p32 = load_policy("agents.nn:zoo", 32, 0, name="planes32-2026-12-04")
    assert p32.greedy and (p32.net.config.arch, p32.net.config.channels) == ("planes", 32)
    c = p32(obs, masks)
    assert masks[np.arange(c.size), c].all()
    # it descends from the student of an ensemble that has this network as a member
    assert (e != c).any() and (e == c).mean() > 0.5
    mlp = load_policy("agents.nn:zoo", 32, 0, name="mlp-2026-12-01")
    assert mlp.greedy and mlp.net.config.arch == "mlp"
    b = mlp(obs, masks)
    assert masks[np.arange(b.size), b].all()
    assert (a != b).any() and (a == b).mean() > 0.5  # a different network, trained on the same teacher


def test_nn_bad_kwargs():
    from agents import nn as N

    with pytest.raises(TypeError):
        N.make(4, 0, bogus=1)
    with pytest.raises(ValueError, match="must be in"):
        N.make(4, 0, channels=0)
    with pytest.raises(TypeError, match="greedy"):
        N.make(4, 0, greedy="yes")
    with pytest.raises(ValueError, match="observations"):
        N.make(4, 0)(None, np.ones((1, A.NUM_ACTIONS), bool))


def test_nn_device_errors():
    from agents import nn as N

    with pytest.raises(ValueError, match="bad device"):
        N.make(4, 0, device="nonsense")
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA is not available"):
            N.make(4, 0, device="cuda")


@pytest.mark.gpu
def test_nn_cuda_inference_matches_cpu():
    if not torch.cuda.is_available():
        pytest.skip("needs CUDA")
    from agents import nn as N

    cpu, gpu = N.make(4, 0, greedy=True), N.make(4, 0, greedy=True, device="cuda")
    obs = np.random.default_rng(2).integers(0, 2, (64, O.OBS_SIZE)).astype(np.uint8)
    masks = np.ones((64, A.NUM_ACTIONS), bool)
    _, a = cpu.act_with_info(obs, masks)
    _, b = gpu.act_with_info(obs, masks)
    np.testing.assert_allclose(a["probs"], b["probs"], atol=1e-4)


# ------------------------------------------------------------------------------------------------ nn, arch="planes"
def _planes_reference(obs, masks):
    """The planes and scalars of agents.planes, computed plainly from the observation's named views."""
    from agents import planes as P
    from mjenv.view import decode_views

    v = O.views(obs)
    view = decode_views(obs)
    n = obs.shape[0]
    pl = np.zeros((n, P.NUM_PLANES, 34), np.uint8)
    sc = np.zeros((n, P.NUM_SCALARS), np.uint8)
    for i in range(n):
        pl[i, P.P_HAND : P.P_HAND + 4] = v["hand"][i] != 0
        pl[i, P.P_DRAWN] = v["drawn"][i] != 0
        pl[i, P.P_OFFER] = v["offer_tile"][i] != 0
        pl[i, P.P_MELDS : P.P_MELDS + 16] = v["melds"][i].reshape(16, 34) != 0
        pl[i, P.P_DISC : P.P_DISC + 16] = v["discards"][i].reshape(16, 34) != 0
        for k in range(4):
            pl[i, P.P_VIS + k] = view.visible[i] > k
        for p in range(4):
            seq = [abs(int(x)) - 1 for x in v["discard_seq"][i, p] if x != 0]
            for j, t in enumerate(reversed(seq[-4:])):
                pl[i, P.P_RECENT + 4 * p + j, t] = 1
            pl[i, P.P_EARLY + p, seq[:6]] = 1
            sc[i, P.S_MELDS + p] = int((v["meld_seq"][i, p, :, 0] != 0).sum())
            sc[i, P.S_DISC + p] = len(seq)
        pl[i, P.P_SEAT, 27:31] = v["seat_wind"][i] != 0
        pl[i, P.P_PREV, 27:31] = v["prevalent_wind"][i] != 0
        pl[i, P.P_LEGAL] = masks[i, :34]
        pl[i, P.P_LEGAL + 1] = masks[i, A.CONCEALED_KONG : A.CONCEALED_KONG + 34]
        pl[i, P.P_LEGAL + 2] = masks[i, A.ADDED_KONG : A.ADDED_KONG + 34]
        for name, off in (("phase", P.S_PHASE), ("concealed", P.S_CONC), ("flowers", P.S_FLOWERS),
                          ("seat_wind", P.S_SEAT), ("prevalent_wind", P.S_PREV), ("offer_from", P.S_FROM),
                          ("turn", P.S_TURN)):  # fmt: skip
            sc[i, off : off + 4] = v[name][i]
        sc[i, P.S_WALL] = v["wall"][i, 0]
        sc[i, P.S_NOWIN] = v["no_win"][i, 0]
        sc[i, P.S_LEGAL :] = masks[i, [A.CHOW, A.CHOW + 1, A.CHOW + 2, A.PUNG, A.KONG, A.WIN, A.PASS]]
    return pl, sc


def test_nn_planes_are_the_observation():
    """agents.planes' kernel gives what a plain reading of the observation's views gives (uint8 and float32
    observations alike), and the legal-mask rows are zero without a mask."""
    from agents import planes as P

    obs, masks, _ = _rule_rollout(32, 60, seed=8)
    pl, sc = P.obs_planes(obs, masks)
    ref_pl, ref_sc = _planes_reference(obs, masks)
    np.testing.assert_array_equal(pl, ref_pl)
    np.testing.assert_array_equal(sc, ref_sc)
    assert (
        pl[:, P.P_RECENT].any() and pl[:, P.P_MELDS + 4 : P.P_MELDS + 16].any() and pl[:, P.P_LEGAL + 1].any()
    )
    pl32, sc32 = P.obs_planes(O.decode(obs), masks)
    np.testing.assert_array_equal(pl32, pl)
    np.testing.assert_array_equal(sc32, sc)
    pl0, sc0 = P.obs_planes(obs, None)
    assert not pl0[:, P.P_LEGAL :].any() and not sc0[:, P.S_LEGAL :].any()
    np.testing.assert_array_equal(pl0[:, : P.P_LEGAL], pl[:, : P.P_LEGAL])
    with pytest.raises(ValueError, match="masks must have shape"):
        P.obs_planes(obs, masks[:, :5])


@pytest.mark.parametrize("with_features", [False, True])
def test_nn_planes_ignore_hidden_information(with_features):
    """Table states that differ only in hidden information (opponents' concealed tiles, the wall) give the
    acting seat the same planes network inputs and outputs; without the engineered features the value does
    not read the legal mask at all."""
    from agents import nn as N
    from mjenv import game as G
    from mjenv.observation import observe_kernel

    n = 48
    cfg = N.NNConfig(8, 16, arch="planes", blocks=1, with_features=with_features)
    net = N.build_net(cfg).eval()
    env = VectorEnv(n, seed=23, threads=1)
    rule = load_policy("agents.rule:make", n, 0)
    rng = np.random.default_rng(6)
    obs, masks, seats = env.reset()
    checked = 0
    for step in range(40):
        if step % 8 == 7:
            rows = {0: ([], []), 1: ([], [])}
            for i in range(n):
                alt = _swap_hidden(env.states[i], int(seats[i]), rng)
                if alt is None:
                    continue
                assert (alt != env.states[i]).any()
                for k, s_ in ((0, env.states[i]), (1, alt)):
                    o = np.zeros(O.OBS_SIZE, np.uint8)
                    m = np.zeros(A.NUM_ACTIONS, np.bool_)
                    observe_kernel(s_, int(seats[i]), o)
                    G.legal_mask_kernel(s_, int(seats[i]), m)
                    rows[k][0].append(o)
                    rows[k][1].append(m)
            (oa, ma), (ob, mb) = ((np.array(o), np.array(m)) for o, m in rows.values())
            fa, fb = N.input_features(cfg, oa, ma), N.input_features(cfg, ob, mb)
            assert all(torch.equal(x, y) for x, y in zip(fa, fb))
            with torch.no_grad():
                la, va = net.forward_features(*fa, torch.from_numpy(ma))
                lb, vb = net.forward_features(*fb, torch.from_numpy(mb))
                assert torch.equal(la, lb) and torch.equal(va, vb)
                if not with_features:
                    _, v0 = net.forward_features(*N.input_features(cfg, oa, None), None)
                    assert torch.equal(v0, va)  # the value is a function of the observation alone
            checked += oa.shape[0]
        obs, masks, seats, _, _ = env.step(rule(obs, masks, seats))
    assert checked > 100


@pytest.mark.parametrize("with_features", [False, True])
def test_nn_planes_save_load_round_trip(tmp_path, with_features):
    from agents import nn as N

    p = N.make(4, 3, arch="planes", channels=8, hidden=16, blocks=2, with_features=with_features)
    assert isinstance(p.net, N.PlanesNet) and "PlanesNet(blocks=2" in p.describe()
    path = tmp_path / "planes.safetensors"
    N.save(p.net, path)
    q = N.make(4, 0, checkpoint=path, greedy=True)
    assert q.net.config == p.net.config and isinstance(q.net, N.PlanesNet)
    obs, masks, _ = _rule_rollout(16, 20, seed=2)
    with torch.no_grad():
        la, va = p.net(obs, torch.from_numpy(masks))
        lb, vb = q.net(obs, torch.from_numpy(masks))
    assert torch.equal(la, lb) and torch.equal(va, vb)
    a = q(obs, masks)
    assert masks[np.arange(a.size), a].all()
    r = N.make(4, 3, arch="planes", channels=8, hidden=16, blocks=2, with_features=with_features)
    assert all(torch.equal(x, y) for x, y in zip(p.net.state_dict().values(), r.net.state_dict().values()))
    with pytest.raises(ValueError, match="blocks=2, not 3"):
        N.make(4, 0, checkpoint=path, blocks=3)
    with pytest.raises(ValueError, match="arch=planes, not mlp"):
        N.make(4, 0, checkpoint=path, arch="mlp")
    with pytest.raises(ValueError, match="config"):
        N.load(path, config=N.NNConfig(8, 16))


def test_nn_checkpoint_inputs_must_fit_its_arch(tmp_path):
    """A checkpoint whose recorded input layout is not its network's (a planes network labelled with the mlp's
    features) is refused, naming both."""
    from safetensors import safe_open
    from safetensors.torch import save_file

    from agents import nn as N

    path = tmp_path / "planes.safetensors"
    N.save(N.make(4, 0, arch="planes", channels=4, hidden=8, blocks=1).net, path)
    with safe_open(str(path), framework="pt") as f:
        meta = f.metadata()
        state = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118
    meta["features_version"] = N.NN_FEATURES_VERSION
    save_file(state, str(tmp_path / "relabelled.safetensors"), metadata=meta)
    with pytest.raises(ValueError, match="holds inputs 'v0\\+f1', but its config .* reads 'v0\\+p1'"):
        N.load(tmp_path / "relabelled.safetensors")


def test_nn_mlp_baseline_is_the_mlp():
    """The previous shipped checkpoint (its saved config has no ``arch``: written before the planes network
    existed) loads as the mlp it always was."""
    from safetensors import safe_open

    from agents import nn as N

    with safe_open(str(N.zoo_path("mlp-2026-12-01")), framework="pt") as f:
        assert "arch" not in f.metadata()["config"]
    net = N.load(N.zoo_path("mlp-2026-12-01"))
    assert type(net) is N.PolicyValueNet and net.config == N.NNConfig() and net.config.arch == "mlp"
    assert net.num_parameters == 68_547 and N.features_version(net.config) == N.NN_FEATURES_VERSION
    obs, masks, _ = _rule_rollout(8, 10, seed=1)
    a = [
        torch.equal(x, y)
        for x, y in zip(N.input_features(net.config, obs, masks), N.obs_features(obs, masks))
    ]
    assert all(a) and len(a) == 2


def test_nn_bad_configs_fail_clearly():
    from agents import nn as N

    with pytest.raises(ValueError, match="arch must be one of"):
        N.NNConfig(arch="cnn")
    with pytest.raises(TypeError, match="arch must be a str"):
        N.NNConfig(arch=1)
    with pytest.raises(ValueError, match="blocks is a setting of arch='planes'"):
        N.NNConfig(blocks=2)
    with pytest.raises(ValueError, match="with_features is a setting of arch='planes'"):
        N.NNConfig(with_features=True)
    with pytest.raises(ValueError, match="blocks must be in 1..64"):
        N.NNConfig(arch="planes", blocks=0)
    with pytest.raises(TypeError, match="blocks must be an int"):
        N.NNConfig(arch="planes", blocks=2.0)
    with pytest.raises(TypeError, match="with_features must be a bool"):
        N.NNConfig(arch="planes", with_features=1)
    assert N.NNConfig(arch="planes").blocks == 2
    with pytest.raises(ValueError, match="use build_net"):
        N.PolicyValueNet(N.NNConfig(arch="planes"))
    with pytest.raises(ValueError, match="use build_net"):
        N.PlanesNet(N.NNConfig())
    with pytest.raises(TypeError, match="NNConfig"):
        N.build_net({"arch": "planes"})
    with pytest.raises(ValueError, match="arch must be one of"):
        N.make(4, 0, arch="transformer")


def test_agent_policy_adapter_with_rule_agent():
    """The per-agent adapter (AEC / Gymnasium fronts) drives the rule agent with batches of one."""
    from mjenv.policy import AgentPolicy

    env = VectorEnv(8, seed=2, threads=1)
    rule = load_policy("agents.rule:make", 8, 0)
    adapter = AgentPolicy(rule)
    obs, masks, seats = env.reset()
    batch = rule(obs, masks, seats)
    assert [adapter(obs[i], masks[i]) for i in range(8)] == batch.tolist()


# ------------------------------------------------------------------------------------------------ rule agent internals
def _swap_hidden(state, seat, rng):
    """A copy of ``state`` with tiles swapped between two opponents' concealed hands and between an opponent's
    hand and the wall (every count consistent); None when no such swap exists."""
    from mjenv import game as G

    s = state.copy()
    opp = [p for p in range(4) if p != seat]
    rng.shuffle(opp)
    a, b = opp[0], opp[1]
    ha = s[G.HAND + 34 * a : G.HAND + 34 * a + 34]  # views into the copy
    hb = s[G.HAND + 34 * b : G.HAND + 34 * b + 34]
    pairs = [
        (x, y) for x in np.flatnonzero(ha) for y in np.flatnonzero(hb) if x != y and ha[y] < 4 and hb[x] < 4
    ]
    if not pairs:
        return None
    x, y = pairs[rng.integers(len(pairs))]
    ha[x] -= 1
    ha[y] += 1
    hb[y] -= 1
    hb[x] += 1
    wall = [i for i in range(s[G.FRONT], s[G.BACK]) if s[G.WALL + i] < 34 and ha[s[G.WALL + i]] < 4]
    held = np.flatnonzero(ha)
    if wall and len(held):
        i = wall[rng.integers(len(wall))]
        z = held[rng.integers(len(held))]
        w = s[G.WALL + i]
        if w != z:
            ha[z] -= 1
            ha[w] += 1
            s[G.WALL + i] = z
    return s


def test_rule_agent_action_ignores_hidden_information():
    """Two table states that differ only in hidden information (opponents' concealed tiles, the wall) give the
    acting seat the same observation and mask, and the rule agent the same action."""
    from mjenv import game as G
    from mjenv.observation import observe_kernel

    n = 64
    env = VectorEnv(n, seed=21, threads=1)
    policy = load_policy("agents.rule:make", n, 0)
    rng = np.random.default_rng(4)
    obs, masks, seats = env.reset()
    checked = 0
    for step in range(60):
        if step % 6 == 5:
            rows_a, rows_b, masks_a, masks_b = [], [], [], []
            for i in range(n):
                st = env.states[i]
                alt = _swap_hidden(st, int(seats[i]), rng)
                if alt is None:
                    continue
                hidden = [p for p in range(4) if p != seats[i]]
                assert any((alt[G.HAND + 34 * p : G.HAND + 34 * p + 34] != st[G.HAND + 34 * p : G.HAND + 34 * p + 34]).any()
                           for p in hidden)  # fmt: skip
                assert (alt[G.HAND + 34 * seats[i] : G.HAND + 34 * seats[i] + 34] == st[G.HAND + 34 * seats[i] : G.HAND + 34 * seats[i] + 34]).all()  # fmt: skip
                for s_, ro, ma in ((st, rows_a, masks_a), (alt, rows_b, masks_b)):
                    o = np.zeros(O.OBS_SIZE, np.float32)
                    m = np.zeros(A.NUM_ACTIONS, np.bool_)
                    observe_kernel(s_, int(seats[i]), o)
                    G.legal_mask_kernel(s_, int(seats[i]), m)
                    ro.append(o)
                    ma.append(m)
                np.testing.assert_array_equal(rows_a[-1], obs[i])  # the env's own observation, rebuilt
                np.testing.assert_array_equal(masks_a[-1], masks[i])
            oa, ob = np.array(rows_a), np.array(rows_b)
            ma, mb = np.array(masks_a), np.array(masks_b)
            np.testing.assert_array_equal(oa, ob)
            np.testing.assert_array_equal(ma, mb)
            assert (policy(oa, ma, None) == policy(ob, mb, None)).all()
            checked += len(oa)
        obs, masks, seats, _, _ = env.step(policy(obs, masks, seats))
    assert checked > 300


def _decoded_hands(n_envs=64, steps=80, seed=17):
    """(conc, nm, mk, mt) of the acting seat at turn decisions of rule-agent play, decoded from observations."""
    env = VectorEnv(n_envs, seed=seed, threads=1)
    policy = load_policy("agents.rule:make", n_envs, 0)
    obs, masks, seats = env.reset()
    out = []
    for step in range(steps):
        if step % 8 == 7:
            v = O.views(obs)
            for i in np.flatnonzero(v["phase"][:, :2].any(1)):
                conc = v["hand"][i].sum(0).astype(np.int8)
                mk = np.zeros(5, np.int64)
                mt = np.zeros(5, np.int64)
                nm = 0
                for kind, tile, _ in v["meld_seq"][i, 0].astype(int):
                    if kind <= 0:
                        break
                    mk[nm], mt[nm] = (1, tile - 2) if kind == 1 else (2, tile - 1)
                    nm += 1
                out.append((conc, nm, mk, mt))
        obs, masks, seats, _, _ = env.step(policy(obs, masks, seats))
    return out


def test_rule_agent_fast_paths_match_target_shanten():
    """The agent's shortcuts give exactly what its generic target shanten gives, on hands from play: the lower
    bounds of chow and shape targets never exceed the value (filters ruled out by melds: exactly NO); the incremental three-chow form matches per discard; the useful-tile
    counts (with their candidate filters and the knitted straight's early stop) match a brute force over all
    34 draws."""
    from agents import rule as R
    from mjenv import hand as H

    pol = R.RulePolicy(1)
    tabs, shapes = pol._tabs, pol._shapes
    hands = _decoded_hands()
    assert len(hands) > 200
    rng = np.random.default_rng(0)
    lb = np.zeros(34, np.int64)
    inu = np.zeros(34, np.int64)
    n_chow = n_useful = n_single = n_shape = 0
    for conc, nm, mk, mt in hands[::2]:
        n = int(conc.sum())
        k = H.keys_kernel(conc)
        R._bounds(conc, n, nm, mk, mt, lb)
        vals = [R.target_shanten(conc, k, n, nm, mk, mt, t, tabs, shapes) for t in range(R.NUM_TARGETS)]
        for t in range(R.NUM_TARGETS):
            if R.T_KIND[t] >= 2:  # a true lower bound (tile filters: a pruning key, see _bounds)
                assert lb[t] <= vals[t] + R.T_PEN[t], R.TARGET_NAMES[t]
            if R.T_KIND[t] == 3 and R.T_CHOWS[t, 0] != H.KNITTED_STRAIGHT:  # exact (from the tile masks)
                assert lb[t] == max(vals[t], -1) + R.T_PEN[t], R.TARGET_NAMES[t]
                n_shape += vals[t] < R.NO
            elif lb[t] >= R.NO:  # a filter the melds rule out
                assert vals[t] == R.NO
        held = np.flatnonzero(conc)
        t = int(held[rng.integers(len(held))])  # one discard per hand, then its useful tiles per target
        c1 = conc.copy()
        c1[t] -= 1
        k1 = H.keys_kernel(c1)
        unseen = rng.integers(0, 4, 34)
        for tgt in range(R.NUM_TARGETS):
            s = R.target_shanten(c1, k1, n - 1, nm, mk, mt, tgt, tabs, shapes)
            if R.T_KIND[tgt] == 2:
                rest, missing, r = R._chow_rest(conc, k, nm, mk, mt, tgt, inu)
                if rest >= 0:
                    m1, r1 = R._chow_less(conc, t, missing, r, inu)
                    sc = R._score(*r1, rest, tabs)
                    assert m1 + 2 * rest - sc == s
                    if R._res_single(conc, inu, t):  # the turn's shortcut: the residual score stays
                        assert m1 == missing and sc == R._score(*r, rest, tabs)
                        n_single += 1
                    u = R._chow_useful(c1, tgt, rest, r1, sc, unseen, inu, tabs)
                    n_chow += 1
                else:
                    assert s == R.NO
                    continue
            else:
                u = R._useful(c1, k1, n - 1, nm, mk, mt, tgt, s, unseen, tabs, shapes)
            brute = 0
            for x in range(34):
                if unseen[x] > 0 and c1[x] < 4:
                    c1[x] += 1
                    if R.target_shanten(c1, H.keys_kernel(c1), n, nm, mk, mt, tgt, tabs, shapes) < s:
                        brute += unseen[x]
                    c1[x] -= 1
            assert u == brute, (R.TARGET_NAMES[tgt], conc, t)
            n_useful += 1
    assert n_chow > 500 and n_useful > 1000 and n_single > 50 and n_shape > 300


def _knitted_hands(rng, count):
    """Random concealed hands of 14 and 11 tiles, most of them holding many tiles of one knitted combination."""
    from mjenv import hand as H

    out = []
    for j in range(count):
        n = 14 if j % 3 else 11
        wall = np.repeat(np.arange(34), 4)
        if j % 5:
            knit = [9 * g + int(H.KNITS[rng.integers(6), g]) + 3 * r for g in range(3) for r in range(3)]
            pick = rng.choice(knit, size=int(rng.integers(4, 9)), replace=False)
            for t in pick:
                wall = np.delete(wall, np.flatnonzero(wall == t)[0])
        else:
            pick = np.zeros(0, np.int64)
        rest = rng.choice(wall, size=n - len(pick), replace=False)
        out.append(np.bincount(np.concatenate([pick, rest]), minlength=34).astype(np.int8))
    return out


def test_rule_agent_knitted_straight_incremental_form():
    """The knitted straight's incremental form (per-combination residual keys, one changed by a tile in or
    out) gives exactly mjenv's knitted straight shanten for every discard and every draw; the turn's shortcut
    (after a discard: v0 when a combination at v0 keeps its value, else v0 + 1) and its useful-tile count
    (only combinations at the value, residual near-tiles only) match the kernel and a brute force."""
    from agents import rule as R
    from mjenv import hand as H

    pol = R.RulePolicy(1)
    tabs = pol._tabs
    suit, honor = tabs[0], tabs[1]

    def kernel(c, n):
        return H.knitted_straight_shanten_kernel(c, suit, honor, H.KNITS, H.POW5, n, R.NO, -1)

    rng = np.random.default_rng(5)
    st = np.zeros(34, np.int64)
    st1 = np.zeros(34, np.int64)
    st2 = np.zeros(34, np.int64)
    n_discards = n_useful = 0
    n_lone = [0, 0, 0]
    for conc in _knitted_hands(rng, 120):
        n = int(conc.sum())
        rest = 1 if n >= 12 else 0
        R._knit_base(conc, H.keys_kernel(conc), st, tabs)
        cv = [R._knit_comb(st, i, rest, H.KNITS, tabs) for i in range(6)]
        v0 = min(cv)
        assert v0 == kernel(conc, n)
        for t in np.flatnonzero(conc):
            R._knit_move(conc, st, st1, t, -1, tabs)
            c1 = conc.copy()
            c1[t] -= 1
            want = kernel(c1, n - 1)
            cv1 = [R._knit_comb(st1, i, rest, H.KNITS, tabs) for i in range(6)]
            assert min(cv1) == want
            assert all(a <= b <= a + 1 for a, b in zip(cv, cv1))
            for i in range(6):  # the turn's shortcuts per combination
                q = R._knit_lone(conc, t, int(H.KNITS[i, t // 9]) if t < 27 else -1)
                if q:
                    assert cv1[i] == cv[i] + (q == 2)
                    n_lone[q] += 1
            quick = v0 if any(cv[i] == v0 and cv1[i] == v0 for i in range(6)) else v0 + 1
            assert quick == want
            n_discards += 1
            if rng.random() < 0.3:  # useful tiles of some discards, against a brute force
                unseen = rng.integers(0, 4, 34)
                at = np.array([cv1[i] if cv[i] <= want else 10 * R.NO for i in range(6)], np.int64)
                u = R._knit_useful(c1, st1, rest, want, at, unseen, H.KNITS, tabs)
                brute = 0
                for x in range(34):
                    if c1[x] < 4:
                        R._knit_move(c1, st1, st2, x, 1, tabs)
                        c2 = c1.copy()
                        c2[x] += 1
                        v = kernel(c2, n)
                        assert min(R._knit_comb(st2, i, rest, H.KNITS, tabs) for i in range(6)) == v
                        if unseen[x] > 0 and v < want:
                            brute += unseen[x]
                assert u == brute, (conc, t)
                n_useful += 1
    assert n_discards > 1000 and n_useful > 300 and min(n_lone[1:]) > 100


@pytest.mark.parametrize(
    "tables, steps, seed, dtype, want",
    [
        (256, 150, 11, np.float32, "563ac4aad61fd2afd6bc6201a1f01e1f"),
        (128, 100, 2, np.uint8, "fb3dbe9755b2d6e9e76776333930dd05"),
    ],
)
def test_rule_agent_actions_pinned(tables, steps, seed, dtype, want):
    """The rule agent's speed work never changes a decision: the digest of every action it takes at every seat
    of a seeded VectorEnv (38,400 and 12,800 decisions, whole hands with auto-reset) equals the digest the
    agent gave before its incremental forms (main at 87404b8). A change of the engine's deal or rules also
    changes it; then recompute it with the agent of the commit before and update it here."""
    import hashlib

    env = VectorEnv(tables, seed=seed, threads=2, obs_dtype=dtype)
    policy = load_policy("agents.rule:make", tables, 0)
    obs, masks, seats = env.reset()
    h = hashlib.blake2b(digest_size=16)
    for _ in range(steps):
        a = policy(obs, masks, seats)
        h.update(a.astype(np.int64).tobytes())
        obs, masks, seats, _, _ = env.step(a)
    assert h.hexdigest() == want


def test_rule_agent_honors_knitted_incremental_form():
    """The honours-and-knitted counts (distinct honours, distinct knitted tiles per combination) give exactly
    mjenv's honours and knitted shanten after any discard and any new tile."""
    from agents import rule as R
    from mjenv import hand as H

    rng = np.random.default_rng(8)
    kc = np.zeros(6, np.int64)
    kc1 = np.zeros(6, np.int64)
    checked = 0
    hands = _knitted_hands(rng, 60)
    for conc in list(hands):  # also with honours: swap some suit tiles for honours
        suits = np.flatnonzero(conc[:27])
        if conc.sum() == 14 and len(suits) >= 3 and rng.random() < 0.7:
            c = conc.copy()
            for t in rng.choice(suits, size=3, replace=False):
                c[t] -= 1
                c[27 + int(rng.integers(7))] += 1
            if c.max() <= 4:
                hands.append(c)
    for conc in hands:
        if conc.sum() != 14:
            continue
        h = R._hk_counts(conc, kc, H.KNITS)
        assert R._hk_value(kc, h, -1, -1, H.KNITS) == H.honors_knitted_shanten_kernel(conc, H.KNITS)
        for t in np.flatnonzero(conc):
            c1 = conc.copy()
            c1[t] -= 1
            want = H.honors_knitted_shanten_kernel(c1, H.KNITS)
            assert R._hk_value(kc, h, t if conc[t] == 1 else -1, -1, H.KNITS) == want
            h1 = R._hk_counts(c1, kc1, H.KNITS)
            for x in np.flatnonzero(c1 == 0):
                c2 = c1.copy()
                c2[x] += 1
                assert R._hk_value(kc1, h1, x, 1, H.KNITS) == H.honors_knitted_shanten_kernel(c2, H.KNITS)
                checked += 1
    assert checked > 5000


def test_nn_ensemble_of_checkpoints(tmp_path):
    """``agents.nn:ensemble``: one member plays as that member greedily; two members play legally, agree with
    both where both agree, and pick by the summed log-probabilities floored at 1e-12; bad settings fail with a
    clear error."""
    from agents import nn as N

    obs, masks, _ = _rule_rollout(32, 12, seed=5)
    latest = N.zoo_path(N.LATEST)
    one = load_policy("agents.nn:ensemble", 32, 0, checkpoints=str(latest))
    base = load_policy("agents.nn:latest", 32, 0)  # the network alone, as an ensemble member plays
    np.testing.assert_array_equal(one(obs, masks), base(obs, masks))
    both = load_policy("agents.nn:ensemble", 32, 0, checkpoints=f"{latest},{N.zoo_path('mlp-2026-12-01')}")
    assert "ensemble of 2" in both.describe()
    mlp = load_policy("agents.nn:zoo", 32, 0, name="mlp-2026-12-01")
    a, b, e = base(obs, masks), mlp(obs, masks), both(obs, masks)
    assert masks[np.arange(e.size), e].all()
    assert (e[a == b] == a[a == b]).all()
    pa = base.act_with_info(obs, masks)[1]["probs"]
    pb = mlp.act_with_info(obs, masks)[1]["probs"]
    assert pa.dtype == np.float32 and N.PROB_FLOOR == 1e-12
    score = np.where(masks, np.log(np.maximum(pa, 1e-12)) + np.log(np.maximum(pb, 1e-12)), -np.inf)
    np.testing.assert_array_equal(e, score.argmax(axis=1))
    same = N.ensemble(32, 0, [latest, latest])
    np.testing.assert_array_equal(same(obs, masks), a)
    with pytest.raises(ValueError, match="non-empty path"):
        N.ensemble(4, 0, "")
    with pytest.raises(ValueError, match="at least one"):
        N.ensemble(4, 0, [])
    with pytest.raises(TypeError, match="checkpoints must be"):
        N.ensemble(4, 0, 3)
    with pytest.raises((FileNotFoundError, ValueError)):
        N.ensemble(4, 0, str(tmp_path / "missing.safetensors"))
    with pytest.raises(ValueError, match="observations"):
        one(None, masks)
