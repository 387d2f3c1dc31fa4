"""Ray-distributed PPO collection and evaluation: a local Ray of 2 CPUs shared by the tests."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("tyro")
pytest.importorskip("tensorboard")

from mjenv.arena import run_arena  # noqa: E402 (after the importorskip)


def _tiny(run_dir, **kw):
    from train.ppo import PPOConfig

    base = dict(
        run_dir=str(run_dir), num_envs=32, rollout_steps=8, updates=4, eval_every=0, progress=False,
        minibatch_size=256, channels=8, hidden=32, pool_every=2, workers=2,
        # the small settings these tests were written for (not PPOConfig's 2-thread, rule-only defaults)
        threads=1, torch_threads=1, epochs=2, opponents=("rule", "pool"), opponent_prob=0.5, value_warmup=0,
    )  # fmt: skip
    base.update(kw)
    return PPOConfig(**base)


@pytest.fixture(scope="module")
def ray_session():
    ray = pytest.importorskip("ray")
    from mjenv._ray import ensure_ray

    started = not ray.is_initialized()
    ensure_ray(None, 2)
    yield ray
    if started:
        ray.shutdown()


def _strip(rep):
    rep = dict(rep)
    rep.pop("timing")
    rep["settings"] = {k: v for k, v in rep["settings"].items() if k != "shards"}
    return json.dumps(rep, sort_keys=True)


def test_distributed_eval_equals_single_process(ray_session):
    """Ray workers give the single-process report bit for bit, whatever the shards (a stochastic agent: its
    random streams are keyed per hand, not per shard)."""
    kw = dict(seating="1v3", walls=24, seed=5, tables=32, records=3, progress=False, adjust=True)
    agents = {"rule": "agents.rule:make", "rnd": "agents.random:make"}
    single = run_arena(agents, **kw)
    assert (
        "adjusted" in single["agents"]["rule"]
    )  # the luck-adjusted figures merge over shards and workers too
    assert single["settings"]["shards"] == 1
    for shards in (None, 3):
        dist = run_arena(agents, workers=2, shards=shards, **kw)
        assert dist["settings"]["shards"] == (2 if shards is None else 3) and len(dist["records"]) == 3
        assert _strip(dist) == _strip(single)


def test_cli_eval_workers_gives_the_single_process_json(ray_session, tmp_path, capsys):
    from mjenv.cli import main

    base = ["eval", "--agent", "rule=agents.rule:make", "--agent", "rnd=agents.random:make", "--walls", "8",
            "--tables", "16", "--no-progress", "--json"]  # fmt: skip
    assert main([*base, str(tmp_path / "a.json")]) == 0
    assert main([*base, str(tmp_path / "b.json"), "--workers", "2"]) == 0
    a, b = (json.loads((tmp_path / f"{k}.json").read_text()) for k in "ab")
    assert _strip(a) == _strip(b)
    assert "rule - rnd" in capsys.readouterr().out


def test_distributed_ppo_run_survives_a_killed_worker(ray_session, tmp_path):
    """A short run on 2 workers: one actor is killed after the first update; it is restarted, the run finishes,
    losses are finite, and the worker count, restarts and staleness are in the CSV."""
    from train.ppo import Trainer

    tr = Trainer(_tiny(tmp_path / "run"))
    step = tr.step
    killed = []

    def step_and_kill(timers):
        out = step(timers)
        if not killed:
            ray_session.kill(tr.dist.actors[0])  # dies while collecting the next rollout
            killed.append(True)
        return out

    tr.step = step_and_kill
    out = tr.run()
    assert out["counters"]["update"] == 4 and killed
    with open(tmp_path / "run" / "progress.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["update"]) for r in rows] == [1, 2, 3, 4]
    for r in rows:
        for k in ("pg_loss", "v_loss", "entropy", "approx_kl"):
            assert math.isfinite(float(r[k])), (k, r[k])
    assert [float(r["staleness"]) for r in rows] == [0.0, 1.0, 1.0, 1.0]
    assert float(rows[-1]["restarts"]) == 1.0 and float(rows[-1]["workers"]) == 2.0
    assert min(float(r["rollouts"]) for r in rows) == 1.0  # the update with the dead worker had one rollout
    assert (tmp_path / "run" / "checkpoint.safetensors").is_file()
    assert not tr.dist.actors  # the workers were shut down at the end


def test_rollout_workers_are_reproducible_and_pack_exactly():
    """Without Ray: two workers with the same seed give the same packed rollout; unpacking restores the batch."""
    from agents import nn as ann
    from train.distributed import RolloutWorker, merge_batches, worker_seed
    from train.ppo import Collector

    cfg = _tiny("unused", workers=0, opponents=("rule", "random"))
    from dataclasses import asdict

    net = ann.PolicyValueNet(ann.NNConfig(8, 32))
    w = {k: v.detach().numpy().copy() for k, v in net.state_dict().items()}
    seed = worker_seed(0, 1)
    assert seed != worker_seed(0, 0) and seed != worker_seed(0, 1, generation=1)
    a = RolloutWorker(cfg, asdict(net.config), 1, seed, Collector).collect(w, None, [])
    b = RolloutWorker(cfg, asdict(net.config), 1, seed, Collector).collect(w, None, [])
    for k, v in a.items():
        if isinstance(v, np.ndarray):
            assert np.array_equal(v, b[k]), k
    # the packed batch is the Collector's batch, losslessly
    cfg.seed = seed
    col = Collector(cfg)
    gen = torch.Generator()
    gen.manual_seed(seed)
    timers = {k: 0.0 for k in ("env_s", "inference_s", "gae_s", "update_s", "other_s")}
    ref = col.collect(net, [], gen, torch.device("cpu"), timers)
    got = merge_batches([a])
    for k in ("obs", "tile", "glob", "masks", "actions", "logp", "values", "advantages", "returns"):
        assert got[k].dtype == ref[k].dtype and np.array_equal(got[k], ref[k]), k
    assert a["obs"].dtype == np.uint8 and a["masks"].shape[1] == 14 and a["actions"].dtype == np.uint8


def test_bad_distributed_settings_fail_early(tmp_path):
    from train.ppo import check_config

    with pytest.raises(ValueError, match="workers"):
        check_config(_tiny(tmp_path, workers=-1))
    with pytest.raises(ValueError, match="ray_num_cpus"):
        check_config(_tiny(tmp_path, ray_num_cpus=0))


@pytest.mark.slow
def test_distributed_run_is_reproducible_for_a_given_worker_count(ray_session, tmp_path):
    """Two runs with the same seed and 2 workers end with the same parameters (no worker failed)."""
    from train.ppo import Trainer

    params = []
    for k in range(2):
        tr = Trainer(_tiny(tmp_path / f"r{k}", updates=3))
        tr.run()
        params.append({n: p.detach().clone() for n, p in tr.net.state_dict().items()})
    for n in params[0]:
        assert torch.equal(params[0][n], params[1][n]), n


def test_an_agents_error_in_a_worker_is_the_single_process_error(ray_session):
    """An error raised in a Ray worker (here an agent's illegal action with illegal='raise') reaches the caller
    as the single-process run raises it: its own type and one-line message, not Ray's remote traceback."""
    kw = dict(seating="1v3", walls=4, tables=16, illegal="raise", progress=False)
    agents = {"bad": "tests.test_arena:make_sometimes_illegal", "rnd": "agents.random:make"}
    with pytest.raises(ValueError) as single:
        run_arena(agents, **kw)
    with pytest.raises(ValueError) as dist:
        run_arena(agents, workers=2, **kw)
    assert type(dist.value) is ValueError and "\n" not in str(dist.value)
    head = "agent(s) 'bad' played an illegal action: 1 illegal action(s), nothing was applied: table "
    assert str(single.value).startswith(head) and str(dist.value).startswith(head)  # (the shard's own table)
