"""The vector env: shapes, equivalence with the single-table engine, determinism, invariants, errors, CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv.fans import NUM_FANS
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.rules import RuleConfig
from mjenv.vector import (
    NUM_ACTIONS,
    RandomPolicy,
    VectorEnv,
    bytes_per_table,
    random_legal_actions,
    table_seeds,
)


def _play(env: VectorEnv, steps: int, seed: int = 0):
    pol = RandomPolicy(seed)
    obs, masks, seats = env.reset()
    for _ in range(steps):
        obs, masks, seats, _rewards, _terminated = env.step(pol(obs, masks, seats))
    return env


def test_shapes_and_dtypes():
    for observations in (False, True):
        env = VectorEnv(5, seed=1, observations=observations, threads=1)
        obs, masks, seats = env.reset()
        assert masks.shape == (5, NUM_ACTIONS) and masks.dtype == np.bool_ and masks.flags.c_contiguous
        assert seats.shape == (5,) and seats.dtype == np.int32
        if observations:
            assert obs.shape == (5, OBS_SIZE) and obs.dtype == np.float32 and obs.flags.c_contiguous
        else:
            assert obs is None
        out = env.step(random_legal_actions(masks, np.random.default_rng(0)))
        _obs2, masks2, seats2, rewards, terminated = out
        assert masks2 is masks and seats2 is seats  # preallocated, reused
        assert rewards.shape == (5, 4) and rewards.dtype == np.float32
        assert terminated.shape == (5,) and terminated.dtype == np.bool_
        assert env.results.fan_counts.shape == (5, NUM_FANS)
        assert env.states.shape == (5, G.STATE_SIZE) and env.states.dtype == np.int32
        assert env.nbytes == 5 * bytes_per_table(observations)


def test_memory_per_table_and_10k_tables():
    assert bytes_per_table(False) < 4_000 and bytes_per_table(True) < 10_000
    env = VectorEnv(10_000, seed=0, observations=True)
    assert env.nbytes < 100 * 2**20
    _obs, masks, _seats = env.reset()
    assert masks.any(axis=1).all()


def _engine_trajectory_check(env: VectorEnv, steps: int, pol_seed: int) -> int:
    """Step ``env`` and, beside it, one single-table engine state per table driven from Python; compare all."""
    n = env.num_envs
    singles = [G.new_state() for _ in range(n)]
    for i in range(n):
        G.reset(singles[i], int(env.table_seeds[i]), rules=env.rules)
    obs, masks, seats = env.reset()
    rng = np.random.default_rng(pol_seed)
    one_obs = np.zeros(OBS_SIZE, np.float32)
    finished = 0
    for _ in range(steps):
        for i in range(n):
            np.testing.assert_array_equal(env.states[i], singles[i])
            seat = int(singles[i][G.CUR])
            assert seats[i] == seat
            np.testing.assert_array_equal(masks[i], G.legal_mask(singles[i], seat))
            if obs is not None:
                observe_kernel(singles[i], seat, one_obs)
                np.testing.assert_array_equal(obs[i], one_obs)
        actions = random_legal_actions(masks, rng)
        obs, masks, seats, rewards, terminated = env.step(actions)
        for i in range(n):
            r = G.step(singles[i], int(actions[i]))
            np.testing.assert_array_equal(rewards[i], r)
            over = singles[i][G.PHASE] == G.PH_OVER
            assert terminated[i] == over
            if over:
                finished += 1
                res = G.result(singles[i])
                assert env.results.winner[i] == (-1 if res["winner"] is None else res["winner"])
                assert env.results.fan_total[i] == res["fan_total"]
                assert env.results.scores[i].tolist() == res["payments"]
                assert env.results.hand_steps[i] == singles[i][G.N_STEPS]
                np.testing.assert_array_equal(
                    env.results.fan_counts[i], singles[i][G.FANS : G.FANS + NUM_FANS]
                )
                G.reset(singles[i], int(G.next_seed_kernel(singles[i])), rules=env.rules)
    return finished


def test_equivalence_with_single_table_engine():
    """Every table of the vector env follows exactly the trajectory of the single-table engine (auto-reset too)."""
    env = VectorEnv(3, seed=11, observations=True, threads=2)
    finished = _engine_trajectory_check(env, 260, pol_seed=5)
    assert finished >= 3  # hands ended and were auto-reset on the way


def test_equivalence_masks_only_and_batch_size_one():
    env = VectorEnv(1, seed=np.array([123456789]), observations=False, threads=1)
    assert _engine_trajectory_check(env, 150, pol_seed=1) >= 1


def test_equivalence_with_aec_env():
    """A table of the vector env plays exactly as the PettingZoo AEC env (raw_env) given the same seed and actions.

    The AEC env deals hand k+1 from ``reset(seed)``; the vector env auto-resets from the table's own RNG
    (``next_seed_kernel`` of the finished state), so the AEC env is reset with that seed, computed from its own
    finished state.
    """
    from mjenv.pettingzoo_env import raw_env

    env = VectorEnv(2, seed=21, observations=True)
    aecs = [raw_env(rules=env.rules) for _ in range(2)]
    for i, aec in enumerate(aecs):
        aec.reset(seed=int(env.table_seeds[i]))
    obs, masks, seats = env.reset()
    rng = np.random.default_rng(4)
    finished = 0
    for _ in range(250):
        for i, aec in enumerate(aecs):
            agent = aec.agent_selection
            assert agent == f"player_{seats[i]}"  # single hands: player_i sits at chair i
            o = aec.observe(agent)
            np.testing.assert_array_equal(o["observation"], obs[i])
            np.testing.assert_array_equal(o["action_mask"].astype(bool), masks[i])
        actions = random_legal_actions(masks, rng)
        obs, masks, seats, rewards, terminated = env.step(actions)
        for i, aec in enumerate(aecs):
            aec.step(int(actions[i]))
            np.testing.assert_array_equal([aec.rewards[f"player_{p}"] for p in range(4)], rewards[i])
            assert all(aec.terminations.values()) == bool(terminated[i])
            if terminated[i]:
                finished += 1
                res = aec.infos["player_0"]["result"]
                w = env.results.winner[i]
                assert res["winner"] == (None if w < 0 else f"player_{w}")
                assert res["fan_total"] == env.results.fan_total[i]
                assert [res["payments"][f"player_{p}"] for p in range(4)] == env.results.scores[i].tolist()
                aec.reset(seed=int(G.next_seed_kernel(aec.state_array.copy())))
            np.testing.assert_array_equal(aec.state_array, env.states[i])
    assert finished >= 2


def test_tables_are_independent_of_batch():
    """Table i of a batch plays as the same table alone, given its seed and the same actions."""
    big = VectorEnv(6, seed=3, observations=False)
    small = VectorEnv(1, seed=big.table_seeds[4:5], observations=False)
    _, masks, _ = big.reset()
    small.reset()
    rng = np.random.default_rng(9)
    for _ in range(200):
        a = random_legal_actions(masks, rng)
        _, masks, _, rewards, _ = big.step(a)
        _, _, _, r_small, _ = small.step(a[4:5])
        np.testing.assert_array_equal(big.states[4], small.states[0])
        np.testing.assert_array_equal(rewards[4], r_small[0])


def test_determinism_per_seed():
    a = _play(VectorEnv(4, seed=42, observations=False), 150)
    b = _play(VectorEnv(4, seed=42, observations=False, threads=1), 150)
    c = _play(VectorEnv(4, seed=43, observations=False), 150)
    np.testing.assert_array_equal(a.states, b.states)
    assert not np.array_equal(a.states, c.states)
    assert len(set(table_seeds(42, 64).tolist())) == 64
    assert not set(table_seeds(42, 8).tolist()) & set(table_seeds(43, 8).tolist())
    # reset() without a seed replays the same deals; reset(seed) changes them
    a.reset()
    fresh = VectorEnv(4, seed=42, observations=False)
    fresh.reset()
    np.testing.assert_array_equal(a.states, fresh.states)
    first = a.states.copy()
    a.reset(seed=7)
    assert not np.array_equal(first[:, G.WALL : G.WALL + 144], a.states[:, G.WALL : G.WALL + 144])


def test_auto_reset_new_walls_and_results():
    env = VectorEnv(8, seed=5, observations=False)
    obs, masks, seats = env.reset()
    first_walls = env.states[:, G.WALL : G.WALL + 144].copy()
    pol = RandomPolicy(2)
    seen = np.zeros(8, bool)
    for _ in range(400):
        obs, masks, seats, _rewards, terminated = env.step(pol(obs, masks, seats))
        for i in np.flatnonzero(terminated & ~seen):
            seen[i] = True
            assert env.results.seed[i] == env.table_seeds[i]  # the finished hand was the first one
            assert env.states[i, G.N_STEPS] == 0 and env.states[i, G.PHASE] == G.PH_TURN
            assert not np.array_equal(env.states[i, G.WALL : G.WALL + 144], first_walls[i])
            assert env.results.scores[i].sum() == 0
    assert seen.all()
    assert (env.hands_done >= 1).all()


def test_invariants_over_random_batches():
    from mjenv.testing.table import validate_state

    env = VectorEnv(16, seed=8, observations=True)
    obs, masks, seats = env.reset()
    pol = RandomPolicy(3)
    wins = 0
    for k in range(300):
        assert (masks.sum(axis=1) == env.n_legal).all() and (env.n_legal >= 1).all()
        assert ((seats >= 0) & (seats <= 3)).all()
        obs, masks, seats, rewards, terminated = env.step(pol(obs, masks, seats))
        assert (rewards.sum(axis=1) == 0).all()
        assert np.abs(rewards).max() <= 8 * 3 + 3 * 400  # bounded by the largest possible payment
        wins += int((env.results.winner[terminated] >= 0).sum())
        if k % 10 == 0:
            for i in range(env.num_envs):
                validate_state(env.states[i])
    assert env.hands_done.sum() >= 16


def test_random_legal_actions_is_legal_and_uniform():
    rng = np.random.default_rng(0)
    masks = np.zeros((20000, NUM_ACTIONS), bool)
    masks[:, [3, 40, 108]] = True
    masks[::2, 0] = True
    a = random_legal_actions(masks, rng)
    assert masks[np.arange(len(a)), a].all()
    odd = np.bincount(a[1::2], minlength=NUM_ACTIONS)[[3, 40, 108]] / 10000
    assert np.allclose(odd, 1 / 3, atol=0.02)
    np.testing.assert_array_equal(
        random_legal_actions(masks, np.random.default_rng(5)),
        random_legal_actions(masks, np.random.default_rng(5), masks.sum(axis=1)),
    )
    with pytest.raises(ValueError):
        random_legal_actions(masks.astype(np.int8), rng)
    masks[7] = False
    with pytest.raises(ValueError, match="row 7"):
        random_legal_actions(masks, rng)


def test_legal_action_lists_match_masks_and_fast_policy_matches_slow():
    env = VectorEnv(64, seed=11, observations=False, threads=1)
    _, masks, _ = env.reset()
    bound, free = RandomPolicy(4, env=env), RandomPolicy(4)
    for _ in range(300):
        for i in range(env.num_envs):
            k = int(env.n_legal[i])
            np.testing.assert_array_equal(env.legal_actions[i, :k], np.flatnonzero(masks[i]))
        a = bound(None, masks, env.seats)
        np.testing.assert_array_equal(a, free(None, masks.copy(), env.seats))  # same draws, slow path
        assert masks[np.arange(env.num_envs), a].all()
        _, masks, _, _, _ = env.step(a)
    with pytest.raises(ValueError, match="needs n_legal"):
        random_legal_actions(masks, np.random.default_rng(0), legal_actions=env.legal_actions)
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match="legal_actions must have shape"):
        random_legal_actions(masks, rng, env.n_legal, env.legal_actions[:, :5])
    assert rng.random() == np.random.default_rng(0).random()  # nothing drawn before the error
    rng = np.random.default_rng(0)
    for k, match in ((0, "row 3 of masks has no legal action"), (NUM_ACTIONS + 1, r"n_legal\[3\] = 110")):
        n_legal = env.n_legal.copy()
        n_legal[3] = k
        with pytest.raises(ValueError, match=match):
            random_legal_actions(masks, rng, n_legal, env.legal_actions)
    assert rng.random() == np.random.default_rng(0).random()  # nothing drawn before the errors
    with pytest.raises(TypeError):
        RandomPolicy(0, env="table")


def test_bad_inputs():
    with pytest.raises(ValueError):
        VectorEnv(0)
    with pytest.raises(TypeError):
        VectorEnv(2.0)
    with pytest.raises(ValueError):
        VectorEnv(2, seed=-1)
    with pytest.raises(ValueError):
        VectorEnv(2, seed=np.array([1, 2, 3]))
    with pytest.raises(TypeError):
        VectorEnv(2, seed="x")
    with pytest.raises(ValueError):
        VectorEnv(2, threads=0)
    with pytest.raises(ValueError):
        VectorEnv(2, illegal="ignore")
    env = VectorEnv(3, seed=0, observations=False)
    with pytest.raises(RuntimeError):
        env.step(np.zeros(3, np.int64))
    _, masks, _ = env.reset()
    with pytest.raises(ValueError, match="shape"):
        env.step(np.zeros(4, np.int64))
    with pytest.raises(TypeError, match="integer"):
        env.step(np.zeros(3, np.float32))
    before = env.states.copy()
    good = random_legal_actions(masks, np.random.default_rng(0))
    bad = good.copy()
    bad[1] = NUM_ACTIONS + 5
    with pytest.raises(ValueError, match="table 1"):
        env.step(bad)
    illegal = good.copy()
    illegal[2] = int(np.flatnonzero(~masks[2])[0])
    with pytest.raises(ValueError, match="illegal"):
        env.step(illegal)
    np.testing.assert_array_equal(env.states, before)  # nothing moved
    env.step(good.astype(np.int32))  # any integer dtype is accepted


def test_illegal_terminate_and_penalty():
    env = VectorEnv(2, seed=1, observations=False, illegal="terminate")
    _, masks, seats = env.reset()
    seat = int(seats[0])
    a = random_legal_actions(masks, np.random.default_rng(0))
    a[0] = int(np.flatnonzero(~masks[0])[0])
    _, masks, _, rewards, terminated = env.step(a)
    assert env.illegal.tolist() == [True, False]
    assert terminated[0] and not terminated[1]
    assert rewards[0, seat] == -30 and rewards[0].sum() == 0
    assert env.results.aborted[0] and env.results.winner[0] == -1

    env = VectorEnv(1, seed=1, observations=False, illegal="penalty")
    _, masks, seats = env.reset()
    seat = int(seats[0])
    act = np.array([A.WIN if not masks[0, A.WIN] else A.PASS])
    _, masks, seats2, rewards, terminated = env.step(act)
    assert env.illegal[0] and not terminated[0] and seats2[0] == seat  # same chair chooses again
    assert env.states[0, G.NO_WIN + seat] == 1
    if act[0] == A.WIN:
        assert rewards[0, seat] == -30 and rewards[0].sum() == 0


def test_torch_zero_copy():
    torch = pytest.importorskip("torch")
    env = VectorEnv(4, seed=0, observations=True)
    obs, masks, _seats = env.reset()
    t_masks, t_obs = torch.from_numpy(masks), torch.from_numpy(obs)
    env.step(random_legal_actions(masks, np.random.default_rng(0)))
    assert torch.equal(t_masks, torch.from_numpy(env.masks)) and t_masks.data_ptr() == masks.ctypes.data
    assert t_obs.data_ptr() == obs.ctypes.data


def test_selfplay_cli_smoke(capsys):
    from mjenv.cli import main

    assert main(["selfplay", "--tables", "8", "--hands", "12", "--seed", "3", "--json", "--no-progress"]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert rec["throughput"]["hands"] >= 12 and rec["throughput"]["decisions"] > 0
    o = rec["outcomes"]
    assert abs(o["win_rate"] + o["draw_rate"] + o["aborted_rate"] - 1) < 1e-9
    assert sum(rec["points"]["total"]) == 0
    assert main(["selfplay", "--tables", "4", "--seconds", "0.2", "--no-progress", "--observations"]) == 0
    text = capsys.readouterr().out
    assert "decisions/s" in text and "points per chair" in text
    assert (
        main(["selfplay", "--tables", "4", "--hands", "1", "--policy", "nosuchmodule:f", "--no-progress"])
        == 2
    )


def test_benchmark_entries_smoke():
    """Our suite entries run with a tiny budget and report consistent units (decisions = steps = tables x steps)."""
    from benchmarks import ours, suite

    assert [n for n, _ in suite.REGISTRY[: len(ours.ALL)]] == [n for n, _ in ours.ALL]
    for observations in (False, True):
        rows = ours.measure_vector(0.05, 1, observations=observations, batches=(1, 8), threads=(1,))
        assert [r["batch_size"] for r in rows] == [1, 8]
        for r in rows:
            assert r["decisions_per_s"] > 0 and r["n"]["decisions"] == r["n"]["steps"]
            assert r["n"]["decisions"] % r["batch_size"] == 0 and r["bytes_per_table"] > 0
    aec = ours.measure_aec(0.05, 1)
    assert aec["decisions_per_s"] > 0 and aec["hands_per_s"] > 0


def test_package_exports():
    import mjenv

    assert mjenv.VectorEnv is VectorEnv and mjenv.RandomPolicy is RandomPolicy


def test_selfplay_policy_hook_gets_observations():
    """A policy object without ``needs_observations = False`` is given observations; its actions are applied."""
    from mjenv.selfplay import run_selfplay

    class FirstLegal:
        calls = 0

        def __call__(self, obs, masks, seats):
            assert obs is not None and obs.shape == (masks.shape[0], OBS_SIZE)
            type(self).calls += 1
            return np.argmax(masks, axis=1)

    rec = run_selfplay(tables=4, hands=4, seconds=None, seed=1, policy=FirstLegal(), progress=False)
    assert (
        FirstLegal.calls > 0 and rec["settings"]["observations"] and rec["settings"]["policy"] == "FirstLegal"
    )
    assert rec["throughput"]["hands"] >= 4
    with pytest.raises(ValueError):
        run_selfplay(tables=4, hands=None, seconds=None)


def test_legal_lists_and_bits_of_any_mask():
    """``_list_legal`` (the kernel's list/bits writer) on arbitrary masks, kong ranges included."""
    from mjenv.vector import _is_legal, _list_legal

    rng = np.random.default_rng(3)
    for density in (0.01, 0.05, 0.3, 0.9):
        masks = rng.random((300, NUM_ACTIONS)) < density
        masks[:, A.PASS] |= ~masks.any(axis=1)  # at least one legal action per row
        bits = np.zeros((300, 2), np.uint64)
        rows = np.zeros((300, NUM_ACTIONS), np.uint8)
        for i in range(300):
            n = int(masks[i].sum())
            _list_legal(masks[i], rows[i], bits[i], n)
            np.testing.assert_array_equal(rows[i, :n], np.flatnonzero(masks[i]))
            for a in (-1, 0, 38, 39, 63, 64, 106, A.WIN, A.PASS, NUM_ACTIONS):
                assert _is_legal(bits, i, a) == (0 <= a < NUM_ACTIONS and bool(masks[i, a]))


def test_state_layout_hot_prefix():
    """Every field sits in the state row exactly once; the prefetched prefix ends where the discards start."""
    spans = sorted((off, name) for name, off in G.OFFSETS.items())
    assert spans[0][0] == 0 and G.HOT_WORDS == G.DISC
    assert max(G.HAND + 4 * 34, G.VIS + 34, G.CUR + 1, G.WAITS + 8) <= G.HOT_WORDS < G.STATE_SIZE
    assert G.FANS + NUM_FANS == G.STATE_SIZE and "SCRATCH" not in G.OFFSETS


def test_copy_tables_continue_exactly_as_their_sources():
    rng = np.random.default_rng(4)
    src = VectorEnv(8, seed=11, threads=1, obs_dtype=np.uint8)
    obs, masks, seats = src.reset()
    for _ in range(23):
        obs, masks, seats, _, _ = src.step(random_legal_actions(masks, rng))
    dst = VectorEnv(6, seed=99, threads=1, obs_dtype=np.uint8, after_schedule="stop")
    dst.reset()
    s, d = np.array([1, 3, 5]), np.array([4, 0, 2])
    dst.copy_tables(src, s, d)
    for name in ("states", "masks", "obs", "seats", "n_legal", "legal_actions"):
        assert np.array_equal(getattr(dst, name)[d], getattr(src, name)[s]), name
    done = np.zeros(3, bool)
    totals_src, totals_dst = np.zeros((3, 4)), np.zeros((3, 4))
    while not done.all():
        a = random_legal_actions(src.masks, rng)
        b = np.zeros(6, np.int64)  # the stopped tables' actions are ignored
        act = dst.n_legal > 0
        b[act] = random_legal_actions(dst.masks[act], rng)
        b[d] = a[s]
        src.step(a)
        dst.step(b)
        live = ~done
        totals_src[live] += src.rewards[s][live]
        totals_dst[live] += dst.rewards[d][live]
        assert np.array_equal(dst.terminated[d][live], src.terminated[s][live])
        fin = live & src.terminated[s]
        on = live & ~fin  # a finished source deals its next hand; its stopped copy does not
        for name in ("masks", "obs", "seats"):
            assert np.array_equal(getattr(dst, name)[d][on], getattr(src, name)[s][on]), name
        assert np.array_equal(dst.results.scores[d][fin], src.results.scores[s][fin])
        done |= fin
    assert np.array_equal(totals_dst, totals_src) and not dst.active[d].any()  # stopped after their hand
    with pytest.raises(ValueError, match="repeated"):
        dst.copy_tables(src, s, np.array([1, 1, 2]))
    with pytest.raises(ValueError, match="differ in length"):
        dst.copy_tables(src, s, d[:2])
    other = VectorEnv(2, seed=0, rules=RuleConfig(min_fan=1, illegal="raise"), obs_dtype=np.uint8)
    other.reset()
    with pytest.raises(ValueError, match="same rules"):
        dst.copy_tables(other, s[:1], d[:1])
    with pytest.raises(RuntimeError, match="reset"):
        VectorEnv(6, seed=0, obs_dtype=np.uint8).copy_tables(src, s, d)


def _same_state(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_restore_continues_exactly_as_the_snapshotted_env():
    """A snapshot restored into a fresh env (other seed, other thread count, a seed schedule of another
    capacity) plays on exactly as the env it was taken from: every output of every step, the hands that
    follow, and the state itself."""
    import numba

    rng = np.random.default_rng(5)
    src = VectorEnv(8, seed=3, threads=1, obs_dtype=np.uint8, oracle=True)
    _, masks, _ = src.reset()
    for _ in range(30):
        _, masks, _, _, _ = src.step(random_legal_actions(masks, rng))
    src.schedule(np.arange(24).reshape(8, 3) + 1000)  # queued hands: the schedule grows past its capacity 1
    snap = src.snapshot()
    dst = VectorEnv(
        8, seed=77, threads=min(2, numba.config.NUMBA_NUM_THREADS), obs_dtype=np.uint8, oracle=True
    )
    assert dst._sq_seed.shape != snap["_sq_seed"].shape
    dst.restore(snap)
    snap["states"][:] = 0  # the env holds copies
    assert _same_state(dst.snapshot(), src.snapshot())
    finished = 0
    for _ in range(400):
        a = random_legal_actions(src.masks, rng)
        out_s, out_d = src.step(a), dst.step(a)
        for x, y in zip(out_s, out_d, strict=True):
            assert np.array_equal(x, y)
        assert np.array_equal(src.oracle, dst.oracle) and np.array_equal(src.scheduled, dst.scheduled)
        for name in vars(src.results):
            assert np.array_equal(getattr(src.results, name), getattr(dst.results, name)), name
        finished += int(src.terminated.sum())
    assert finished > 8 * 3 and not src.scheduled.any()  # past the queued hands, into the tables' own RNGs
    assert _same_state(dst.snapshot(), src.snapshot())


def test_restore_refuses_a_bad_snapshot_and_changes_nothing():
    rng = np.random.default_rng(6)
    kw = {"threads": 1, "obs_dtype": np.uint8}

    def played(n=4, seed=2, **more):
        env = VectorEnv(n, seed=seed, **{**kw, **more})
        _, masks, _ = env.reset()
        for _ in range(12):
            _, masks, _, _, _ = env.step(random_legal_actions(masks, rng))
        return env

    env, fresh = played(seed=1), VectorEnv(4, seed=1, **kw)
    good = played().snapshot()
    grown = played()
    grown.schedule(np.arange(8).reshape(4, 2))
    grown = grown.snapshot()
    bad = [
        (TypeError, "mapping", [good]),
        (ValueError, r"missing \['states'\]", {k: v for k, v in good.items() if k != "states"}),
        (ValueError, r"unknown \['bogus'\]", {**good, "bogus": np.zeros(4)}),
        (ValueError, r"is int64\(5,\), this env's is int64\(4,\)", played(n=5).snapshot()),
        (ValueError, r"'obs' is float32", played(obs_dtype=np.float32).snapshot()),
        (ValueError, r"unknown \['oracle'\]", played(oracle=True).snapshot()),
        (ValueError, "other rules", played(rules=RuleConfig(min_fan=1, illegal="raise")).snapshot()),
        (ValueError, "same capacity", {**good, "_sq_seed": np.zeros((4, 3), np.int64)}),
        (ValueError, "disagree", {**good, "seats": (good["seats"] + 1) % 4}),
        (ValueError, "disagree", {**grown, "seats": (grown["seats"] + 1) % 4}),  # and new queues
    ]
    for target in (env, fresh):
        before = target.snapshot()
        for exc, match, arrays in bad:
            with pytest.raises(exc, match=match):
                target.restore(arrays)
            assert _same_state(target.snapshot(), before), match
    with pytest.raises(RuntimeError, match="reset"):  # still not started
        fresh.step(np.zeros(4, np.int64))
    fresh.restore(good)
    fresh.step(random_legal_actions(fresh.masks, rng))


def test_restore_takes_a_snapshot_of_mjenv_0_1_0():
    """A training checkpoint written by mjenv 0.1.0 holds packed buffers without the match rows and no match
    fields: it restores (the rows as a fresh env of single hands has them) and plays on exactly."""
    from mjenv.policy import random_legal_actions

    env = VectorEnv(8, seed=3, observations=True)
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(30):
        env.step(random_legal_actions(env.masks, rng))
    snap = env.snapshot()
    old = {k: v for k, v in snap.items() if "match" not in k}
    old.update(_i32=snap["_i32"][:10], _i64=snap["_i64"][:4], _b8=snap["_b8"][:3])
    twin = VectorEnv(8, seed=99, observations=True)
    twin.restore(old)
    assert (twin.match_hand == -1).all() and not twin.match_over.any()
    for _ in range(60):
        a = random_legal_actions(env.masks, rng)
        env.step(a)
        twin.step(a)
        assert (twin.obs == env.obs).all() and (twin.rewards == env.rewards).all()
    with pytest.raises(ValueError):  # rows of neither version
        VectorEnv(8, seed=1, observations=True).restore({**old, "_i32": snap["_i32"][:9]})
