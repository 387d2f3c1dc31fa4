"""Duplicate evaluation (mjenv.arena, `mjenv eval`): seatings, reproducibility, statistics, records, errors."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv.arena import (
    mean_ci,
    run_arena,
    seating_agents,
    seating_orders,
    t_ppf,
    t_sf2,
    wall_schedule,
)
from mjenv.observation import OBS_SIZE, observe_kernel
from mjenv.policy import RandomPolicy, random_legal_actions, takes_option
from mjenv.record import replay
from mjenv.rules import RuleConfig

RANDOM = "mjenv.policy:make_random"


# ------------------------------------------------------------------------------------------------ test agents
class Greedy:
    """Wins whenever the mask offers a win, otherwise a random legal action (masks only)."""

    needs_observations = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, masks, seats):
        a = random_legal_actions(masks, self.rng)
        a[masks[:, A.WIN]] = A.WIN
        return a


def make_greedy(num_envs, seed, **kwargs):
    return Greedy(seed)


class Recording:
    """Random legal actions; keeps a copy of everything it is given (and reads observations)."""

    needs_observations = True

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.calls: list[tuple] = []

    def __call__(self, *args, **kwargs):
        assert not kwargs
        obs, masks, seats = args
        self.calls.append((obs.copy(), masks.copy(), seats.copy()))
        return random_legal_actions(masks, self.rng)


class WithInfo:
    """Uniform over the legal actions, reporting its distribution and a value (``act_with_info``)."""

    needs_observations = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, masks, seats):
        return self.act_with_info(obs, masks, seats)[0]

    def act_with_info(self, obs, masks, seats):
        probs = masks / masks.sum(axis=1, keepdims=True)
        return random_legal_actions(masks, self.rng), {
            "probs": probs.astype(np.float32),
            "value": np.full(len(masks), 0.25, np.float32),
        }


class SometimesIllegal:
    """Random legal actions, but an illegal one on ~2% of rows: the first action not in the mask, or -1."""

    needs_observations = False

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def __call__(self, obs, masks, seats):
        a = random_legal_actions(masks, self.rng)
        u = self.rng.random(len(masks))
        a[u < 0.02] = np.argmin(masks[u < 0.02], axis=1)
        a[u < 0.003] = -1  # out of the action range
        return a


def make_sometimes_illegal(num_envs, seed, **kwargs):
    return SometimesIllegal(seed)


def make_always_illegal(num_envs, seed, **kwargs):  # repeats one illegal action (a discard of no tile)
    return lambda obs, masks, seats: np.full(len(masks), -1, np.int64)


def make_with_info(num_envs, seed, **kwargs):
    return WithInfo(seed)


class OtherInfo(WithInfo):
    """:class:`WithInfo` whose ``info`` holds neither ``probs`` nor ``value`` (as a wrapper's may)."""

    def act_with_info(self, obs, masks, seats):
        a, info = super().act_with_info(obs, masks, seats)
        return a, {"inner_probs": info["probs"], "action": a}


def make_other_info(num_envs, seed, **kwargs):
    return OtherInfo(seed)


def make_no_seed(num_envs):  # wrong signature
    return Greedy(0)


def make_wrong_shape(num_envs, seed, **kwargs):
    return lambda obs, masks, seats: np.zeros(len(masks) + 1, np.int64)


def _strip(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "timing"}


# ------------------------------------------------------------------------------------------------ seatings
@pytest.mark.parametrize("seating,orders", [("1v3", 4), ("2v2", 6), ("perm24", 24)])
def test_every_agent_sits_in_every_chair_equally_often(seating, orders):
    ag = seating_agents(seating)
    assert ag.shape == (orders, 4)
    assert len({tuple(r) for r in seating_orders(seating).tolist()}) == orders  # distinct orders
    n = ag.max() + 1
    for k in range(n):
        per_chair = (ag == k).sum(axis=0)
        assert (per_chair == per_chair[0]).all() and per_chair[0] > 0


def test_played_seatings_cover_every_chair_and_walls_vary():
    names = {"a": RANDOM, "b": make_greedy, "c": RANDOM, "d": make_greedy}
    rep = run_arena(names, "perm24", walls=2, seed=3, tables=16, records=48, progress=False)
    recs = rep["records"]
    assert len(recs) == 48  # every hand kept
    count = {(nm, c): 0 for nm in names for c in range(4)}
    for r in recs:
        for c, nm in enumerate(r["agents"]):
            count[nm, c] += 1
        seeds, dealers, prevalents = (np.array(rep["seeds"][k]) for k in ("walls", "dealers", "prevalents"))
        assert r["seed"] == seeds[r["wall_index"]] and r["dealer"] == dealers[r["wall_index"]]
        assert r["prevalent_wind"] == prevalents[r["wall_index"]]
    assert set(count.values()) == {12}  # 2 walls x 6 per chair
    s, d, p = wall_schedule(0, 16)
    assert len(set(s.tolist())) == 16 and set(zip(d.tolist(), p.tolist())) == {
        (x, y) for x in range(4) for y in range(4)
    }


# ------------------------------------------------------------------------------------------------ reproducibility
def test_report_is_reproducible_bit_for_bit_and_independent_of_threads():
    kw = {"seating": "1v3", "walls": 12, "seed": 11, "tables": 20, "records": 3, "progress": False}
    r1 = run_arena({"g": make_greedy, "r": RANDOM}, threads=1, **kw)
    r2 = run_arena({"g": make_greedy, "r": RANDOM}, **kw)
    assert json.dumps(_strip(r1)) == json.dumps(_strip(r2))
    r3 = run_arena({"g": make_greedy, "r": RANDOM}, **{**kw, "seed": 12})
    assert r3["seeds"]["walls"] != r1["seeds"]["walls"]
    assert (
        r1["settings"]["hands"] == 48
        and r1["agents"]["g"]["hands"] == 48
        and r1["agents"]["r"]["hands"] == 144
    )
    # zero-sum per hand: A's mean and B's mean (over three seats) balance
    pa, pb = (r1["agents"][k]["points_per_hand"]["mean"] for k in ("g", "r"))
    assert abs(pa + 3 * pb) < 1e-9


# ------------------------------------------------------------------------------------------------ what agents see
def test_agents_receive_only_observations_and_masks():
    rec = Recording(5)
    rep = run_arena(
        {"rec": lambda n, s, **k: rec, "r": RANDOM},
        "1v3",
        walls=2,
        seed=1,
        tables=8,
        records=8,
        progress=False,
    )
    assert rec.calls and rep["settings"]["observations"] is True
    seen = 0
    for obs, masks, seats in rec.calls:
        assert obs.dtype == np.float32 and obs.shape == (len(masks), OBS_SIZE)
        assert masks.dtype == np.bool_ and masks.shape[1] == A.NUM_ACTIONS and seats.dtype == np.int32
        assert masks.any(axis=1).all()
        seen += len(masks)
    # every (observation, mask) it got is the observation and mask of a decision of its seats in the replays
    truth = {}
    one = np.zeros(OBS_SIZE, np.float32)
    for r in rep["records"]:
        states = replay(r)
        for st, op in zip(states, r["ops"]):
            seat = op[1]
            if r["agents"][seat] != "rec":
                continue
            observe_kernel(st, seat, one)
            key = (one.tobytes(), G.legal_mask(st, seat).tobytes(), seat)
            truth[key] = truth.get(key, 0) + 1
    got = {}
    for obs, masks, seats in rec.calls:
        for o, m, s in zip(obs, masks, seats):
            key = (o.tobytes(), m.tobytes(), int(s))
            got[key] = got.get(key, 0) + 1
    assert got == truth and sum(got.values()) == seen


# ------------------------------------------------------------------------------------------------ statistics
def test_t_distribution_matches_reference_values():
    assert abs(t_ppf(0.975, 1) - 12.706204736) < 1e-6
    assert abs(t_ppf(0.975, 10) - 2.228138852) < 1e-8
    assert abs(t_ppf(0.975, 100) - 1.983971519) < 1e-8
    assert abs(t_sf2(2.0, 5) - 0.101939) < 1e-6
    scipy_stats = pytest.importorskip("scipy.stats")
    for df in (2, 3, 7, 31, 999):
        assert abs(t_ppf(0.975, df) - scipy_stats.t.ppf(0.975, df)) < 1e-9
        assert abs(t_sf2(1.3, df) - 2 * scipy_stats.t.sf(1.3, df)) < 1e-12
    st = mean_ci(np.array([1.0, 2.0, 3.0, 4.0]))
    half = t_ppf(0.975, 3) * np.std([1, 2, 3, 4], ddof=1) / 2
    assert st["mean"] == 2.5 and np.allclose(st["ci95"], [2.5 - half, 2.5 + half])
    assert mean_ci(np.zeros(5))["ci95"] == [0.0, 0.0] and mean_ci(np.zeros(5))["p"] == 1.0
    assert mean_ci(np.ones(1))["ci95"] is None


@pytest.fixture(scope="module")
def greedy_vs_random():
    """1v3 greedy vs random over 800 walls with the minimum fan at 0 (so that wins are common enough)."""
    return run_arena({"greedy": make_greedy, "random": RANDOM}, "1v3", walls=800, seed=4,
                     rules=RuleConfig(min_fan=0), records=0, progress=False, curve_points=9)  # fmt: skip


def test_same_agent_twice_is_not_significant():
    same = run_arena({"g1": make_greedy, "g2": make_greedy}, "1v3", walls=300, seed=2, progress=False)
    d = same["differences"][0]
    assert not d["significant"] and d["ci95"][0] < 0 < d["ci95"][1] and d["p"] > 0.05


def test_greedy_is_significantly_better_than_random(greedy_vs_random):
    vs = greedy_vs_random
    d = vs["differences"][0]
    assert (d["a"], d["b"]) == ("greedy", "random")
    assert d["significant"] and d["ci95"][0] > 0 and d["p"] < 0.05
    g, r = vs["agents"]["greedy"], vs["agents"]["random"]
    assert g["win_rate"] > 1.3 * r["win_rate"] and g["placement"] < r["placement"]
    assert g["points_per_hand"]["ci95"][0] > 0 and g["hands"] == 3200 and r["hands"] == 9600


def test_ci_covers_zero_for_identical_agents_in_about_95_percent_of_small_runs():
    """50 seeded runs of 2v2 greedy vs greedy at 50 walls (300 hands) each, with the minimum fan at 0 so that
    many hands are won. The difference's 95% CI must cover 0 in about 95% of them: at least 42 of 50 (an
    honest interval misses 9 or more with probability ~1e-3), and its half-width must match the spread of the
    runs' means (1.96 sd), which fails for intervals too narrow (hands taken as independent, no pairing over
    walls) and too wide (the sd itself as the half-width)."""
    covered, half, means = 0, [], []
    for run in range(50):
        rep = run_arena({"a": make_greedy, "b": make_greedy}, "2v2", walls=50, seed=1000 + run, tables=300,
                        records=0, illegal_records=0, rules=RuleConfig(min_fan=0), progress=False)  # fmt: skip
        d = rep["differences"][0]
        covered += d["ci95"][0] <= 0 <= d["ci95"][1]
        half.append((d["ci95"][1] - d["ci95"][0]) / 2)
        means.append(d["mean"])
    assert 42 <= covered <= 50, covered
    ratio = np.median(half) / (1.96 * np.std(means, ddof=1))
    assert 0.7 < ratio < 1.4, ratio


def test_ci_half_width_shrinks_as_one_over_sqrt_walls(greedy_vs_random):
    conv = greedy_vs_random["convergence"]
    walls = np.array(conv["walls"], np.float64)
    hw = np.array(conv["half_width"]["greedy - random"])
    assert conv["hands"] == [4 * w for w in conv["walls"]] and walls[-1] == 800
    sel = walls >= 25
    slope = np.polyfit(np.log(walls[sel]), np.log(hw[sel]), 1)[0]
    assert -0.75 < slope < -0.3, slope  # 1/sqrt: -0.5
    assert set(conv["half_width"]) == {"greedy", "random", "greedy - random"}


# ------------------------------------------------------------------------------------------------ illegal actions, errors
def test_illegal_actions_are_counted_named_and_recorded():
    rep = run_arena({"bad": make_sometimes_illegal, "r": RANDOM}, "1v3", walls=10, seed=0, tables=40,
                    progress=False)  # fmt: skip
    ill = rep["agents"]["bad"]["illegal_actions"]
    assert ill["count"] > 0 and sum(ill["by_action"].values()) == ill["count"]
    assert rep["agents"]["r"]["illegal_actions"]["count"] == 0
    assert "out of range (-1)" in ill["by_action"] and len(ill["by_action"]) > 1
    assert rep["illegal_actions"][0]["agent"] == "bad"
    assert rep["table"]["aborted_rate"] > 0  # terminate mode ended those hands
    bad_recs = [r for r in rep["records"] if "illegal" in r["reasons"]]
    assert len(bad_recs) == min(ill["count"], 100) or rep["records_dropped"] > 0
    for r in bad_recs:
        states = replay(r)  # a valid mjenv-hand-v1 record
        assert states[-1][G.PHASE] == G.PH_OVER and r["result"]["win_type"] == "aborted"
        assert len(r["info"]) == len(r["ops"])
        k = [i for i, op in enumerate(r["ops"]) if op[0] == "penalty"]
        assert len(k) == 1 and r["info"][k[0]]["illegal_name"] in ill["by_action"]
        assert r["agents"][r["ops"][k[0]][1]] == "bad"
        assert r["result"]["payments"][r["ops"][k[0]][1]] == -30
    # penalty mode: the hand goes on; raise mode: a ValueError naming the agent
    pen = run_arena({"bad": make_sometimes_illegal, "r": RANDOM}, "1v3", walls=4, seed=0, illegal="penalty",
                    progress=False)  # fmt: skip
    assert pen["agents"]["bad"]["illegal_actions"]["count"] > 0
    for r in pen["records"]:
        replay(r)
    with pytest.raises(ValueError, match="'bad'"):
        run_arena(
            {"bad": make_sometimes_illegal, "r": RANDOM}, "1v3", walls=4, illegal="raise", progress=False
        )


def test_a_repeated_illegal_action_stops_penalty_mode_instead_of_hanging():
    # penalty mode asks the offender again: an agent repeating an illegal action would loop forever
    with pytest.raises(
        ValueError, match=r"'bad' answered 1001 illegal actions in a row.*illegal='terminate'"
    ):
        run_arena(
            {"bad": make_always_illegal, "r": RANDOM}, "1v3", walls=1, illegal="penalty", progress=False
        )
    # terminate mode ends each hand at the first one: the streak starts again with every hand
    rep = run_arena({"bad": make_always_illegal, "r": RANDOM}, "1v3", walls=300, tables=4, progress=False)
    assert rep["agents"]["bad"]["illegal_actions"]["count"] >= 1200 and rep["table"]["aborted_rate"] > 0.9


def test_records_keep_largest_swings_with_policy_info():
    rep = run_arena({"info": make_with_info, "g": make_greedy}, "1v3", walls=30, seed=9, records=5,
                    rules=RuleConfig(min_fan=0), progress=False)  # fmt: skip
    recs = rep["records"]
    assert len(recs) == 5
    swings = [r["swing"] for r in recs]
    assert swings == sorted(swings, reverse=True) and swings[0] > 0
    for r in recs:
        states = replay(r)
        assert r["swing"] == max(r["result"]["payments"]) - min(r["result"]["payments"])
        assert len(r["info"]) == len(r["ops"]) == len(states) - 1
        for st, op, inf in zip(states, r["ops"], r["info"]):
            if r["agents"][op[1]] == "info":
                legal = [A.action_to_str(int(a)) for a in np.flatnonzero(G.legal_mask(st, op[1]))]
                assert sorted(inf["probs"]) == sorted(legal) and inf["value"] == 0.25
                assert math.isclose(sum(inf["probs"].values()), 1.0, rel_tol=1e-5)
            else:
                assert inf is None
    # an info without probs or value records nothing (never probabilities of 0)
    rep = run_arena({"other": make_other_info, "g": make_greedy}, "1v3", walls=4, seed=9, records=2,
                    rules=RuleConfig(min_fan=0), progress=False)  # fmt: skip
    assert rep["records"] and all(inf is None for r in rep["records"] for inf in r["info"])


def test_bad_inputs_give_clear_errors():
    with pytest.raises(ValueError, match="module:factory"):
        run_arena({"a": "no_colon", "b": RANDOM}, progress=False)
    with pytest.raises(ValueError, match="cannot import"):
        run_arena({"a": "no_such_module_xyz:make", "b": RANDOM}, progress=False)
    with pytest.raises(ValueError, match="no attribute"):
        run_arena({"a": "mjenv.policy:nope", "b": RANDOM}, progress=False)
    with pytest.raises(TypeError, match="num_envs, seed"):
        run_arena({"a": make_no_seed, "b": RANDOM}, progress=False)
    with pytest.raises(ValueError, match="takes 4 agents"):
        run_arena({"a": RANDOM, "b": RANDOM}, "perm24", progress=False)
    with pytest.raises(ValueError, match="seating"):
        run_arena({"a": RANDOM, "b": RANDOM}, "3v1", progress=False)
    with pytest.raises(ValueError, match="walls"):
        run_arena({"a": RANDOM, "b": RANDOM}, walls=0, progress=False)
    with pytest.raises(ValueError, match="illegal"):
        run_arena({"a": RANDOM, "b": RANDOM}, illegal="ignore", progress=False)
    with pytest.raises(ValueError, match="shape"):
        run_arena({"a": make_wrong_shape, "b": RANDOM}, walls=1, progress=False)
    with pytest.raises(TypeError, match="mapping"):
        run_arena([RANDOM, RANDOM], progress=False)


# ------------------------------------------------------------------------------------------------ CLI
def test_eval_cli_table_json_and_plot(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from mjenv.cli import main

    out, png = tmp_path / "r.json", tmp_path / "r.png"
    rc = main(["eval", "--agent", "greedy=tests.test_arena:make_greedy", "--agent", f"random={RANDOM}",
               "--seating", "1v3", "--walls", "20", "--seed", "3", "--threads", "1", "--json", str(out),
               "--plot", str(png), "--no-progress"])  # fmt: skip
    assert rc == 0
    text = capsys.readouterr().out
    assert "| greedy |" in text and "| greedy - random |" in text
    rec = json.loads(out.read_text())
    for k in ("versions", "settings", "seeds", "agents", "differences"):
        assert k in rec
    a = rec["agents"]["greedy"]
    assert set(a["points_per_hand"]) >= {"mean", "ci95"} and len(a["points_per_hand"]["ci95"]) == 2
    assert {"win_rate", "draw_rate", "hands"} <= set(a) and a["hands"] == 80
    assert png.stat().st_size > 10_000
    import copy
    import warnings

    from mjenv.arena.report import plot_report

    flat = copy.deepcopy(rec)  # no spread at all (identical agents): an empty log panel, not a warning
    flat["convergence"]["half_width"] = {
        k: [0.0] * len(v) for k, v in flat["convergence"]["half_width"].items()
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot_report(rec, str(tmp_path / "again.png"))
        plot_report(flat, str(tmp_path / "flat.png"))
    assert main(["eval", "--agent", "a", "--agent", f"b={RANDOM}", "--no-progress"]) == 2
    assert "NAME=module:factory" in capsys.readouterr().err
    assert main(["eval", "--agent", "a=nope:make", "--agent", f"b={RANDOM}", "--no-progress"]) == 2
    assert "cannot import" in capsys.readouterr().err


def _git(cwd, *args):
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip


def test_report_names_the_code_that_made_it(tmp_path):
    """``report["mjenv"]``: the version, the commit of the package's checkout and whether it was dirty; the
    markdown says it too. Outside a checkout (or without git) the commit and the flag are None."""
    import mjenv
    from mjenv.arena import format_markdown, provenance

    rep = run_arena({"a": RANDOM, "b": RANDOM}, walls=1, tables=4, records=0, progress=False)
    code = rep["mjenv"]
    assert set(code) == {"version", "commit", "dirty"}
    assert code["version"] == mjenv.__version__ == rep["versions"]["mjenv"]
    pkg = Path(mjenv.__file__).resolve().parent
    if shutil.which("git") and subprocess.run(["git", "ls-files", "--error-unmatch", "__init__.py"], cwd=pkg,
                                              capture_output=True).returncode == 0:  # fmt: skip
        assert code["commit"] == _git(pkg, "rev-parse", "HEAD") and isinstance(code["dirty"], bool)
        assert f"code: mjenv {code['version']}, commit {code['commit'][:12]}" in format_markdown(rep)
    else:
        assert code["commit"] is None and code["dirty"] is None
    # a checkout of its own: clean, then dirty (a tracked file changed; an untracked one does not count)
    if shutil.which("git") is None:
        return
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "__init__.py").write_text("x = 1\n")
    _git(repo, "init", "-q")
    _git(repo, "add", "pkg/__init__.py")
    _git(repo, "commit", "-q", "-m", "one")
    head = _git(repo, "rev-parse", "HEAD")
    (repo / "pkg" / "new.py").write_text("")
    assert provenance(repo / "pkg") == {"version": mjenv.__version__, "commit": head, "dirty": False}
    (repo / "pkg" / "__init__.py").write_text("x = 2\n")
    assert provenance(repo / "pkg")["dirty"] is True
    rep["mjenv"] = provenance(repo / "pkg")
    assert f"commit {head[:12]} with uncommitted changes" in format_markdown(rep)
    (tmp_path / "loose").mkdir()
    (tmp_path / "loose" / "__init__.py").write_text("")
    assert provenance(tmp_path / "loose") == {"version": mjenv.__version__, "commit": None, "dirty": None}
    rep["mjenv"] = provenance(tmp_path / "loose")
    assert "code: mjenv" in format_markdown(rep) and "no git commit known" in format_markdown(rep)
    with pytest.raises(ValueError, match="directory"):
        provenance(tmp_path / "missing")
    with pytest.raises(TypeError, match="path or None"):
        provenance(3)


# ------------------------------------------------------------------------------------------------ threads
#: the ``threads`` each call of a spy factory got, and torch's thread count inside each call of the nn spy
THREADS_SEEN: list = []
TORCH_SEEN: list = []


def make_threads_spy(num_envs, seed, threads=None):
    THREADS_SEEN.append(threads)
    return RandomPolicy(seed)


def make_nn_spy(num_envs, seed, threads=None):
    """A fresh ``agents.nn`` network whose forward pass notes torch's thread count."""
    import torch

    from agents import nn as NN

    pol = NN.make(num_envs, seed, arch="mlp", threads=threads)
    forward = pol.net.forward_features

    def spy(*args, **kwargs):
        TORCH_SEEN.append(torch.get_num_threads())
        return forward(*args, **kwargs)

    pol.net.forward_features = spy
    return pol


def test_the_thread_setting_reaches_the_factories_that_take_it():
    """``threads`` goes to a factory that names a ``threads`` option (not to one that takes only ``**kwargs``:
    the random agent, which refuses any option, plays on); an explicit option wins; the report is the same."""
    assert takes_option(make_threads_spy, "threads") and takes_option("agents.nn:baseline", "threads")
    assert not takes_option(RANDOM, "threads") and not takes_option("agents.rule:make", "threads")
    kw = dict(walls=2, tables=4, records=0, progress=False)
    agents = {"spy": make_threads_spy, "random": RANDOM}
    THREADS_SEEN.clear()
    one = run_arena(agents, threads=1, **kw)
    assert THREADS_SEEN == [1]
    THREADS_SEEN.clear()
    default = run_arena(agents, **kw)
    assert THREADS_SEEN == [None]
    THREADS_SEEN.clear()
    run_arena(agents, threads=1, shards=2, **kw)
    assert THREADS_SEEN == [1, 1]  # one policy per shard
    THREADS_SEEN.clear()
    run_arena(agents, threads=1, agent_kwargs={"spy": {"threads": 2}}, **kw)
    assert THREADS_SEEN == [2]
    assert _no_timing(one) == _no_timing(default)
    with pytest.raises(ValueError, match="threads"):
        run_arena(agents, threads=0, **kw)
    with pytest.raises(TypeError, match="threads"):
        run_arena(agents, threads="1", **kw)


def test_nn_agent_computes_with_the_eval_threads_and_restores_the_callers():
    """``mjenv eval --threads 1``: the network's forward passes run with one torch thread, and the caller's
    torch setting is as it was after the evaluation; without ``--threads`` the caller's setting is used."""
    torch = pytest.importorskip("torch")
    from agents import nn as NN
    from mjenv.cli import main

    prev = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        argv = ["eval", "--agent", "nn=tests.test_arena:make_nn_spy", "--agent", f"random={RANDOM}",
                "--walls", "1", "--tables", "4", "--records", "0", "--no-progress"]  # fmt: skip
        TORCH_SEEN.clear()
        assert main([*argv, "--threads", "1"]) == 0
        assert TORCH_SEEN and set(TORCH_SEEN) == {1}
        assert torch.get_num_threads() == 2
        TORCH_SEEN.clear()
        assert main(argv) == 0
        assert TORCH_SEEN and set(TORCH_SEEN) == {2}
        import numba

        nb = numba.get_num_threads()
        with NN.torch_threads(1):
            assert torch.get_num_threads() == 1 and numba.get_num_threads() == 1
        with NN.torch_threads(None):
            assert torch.get_num_threads() == 2
        assert torch.get_num_threads() == 2 and numba.get_num_threads() == nb
        assert NN.baseline(1, 0, threads=1).inner.threads == 1 and NN.latest(1, 0, threads=1).threads == 1
        assert NN.symmetric(1, 0, views=1, threads=1).threads == 1
    finally:
        torch.set_num_threads(prev)
    with pytest.raises(ValueError, match="threads"):
        NN.make(1, 0, arch="mlp", threads=0)
    with pytest.raises(TypeError, match="threads"):
        NN.baseline(1, 0, threads=1.5)


def test_cli_eval_agent_options(tmp_path, capsys):
    from mjenv.cli import main

    out = tmp_path / "e.json"
    pair = ["eval", "--agent", "a=mjenv.policy:make_random", "--agent", "b=mjenv.policy:make_random"]
    assert main([*pair, "--walls", "3", "--no-progress", "--json", str(out)]) == 0
    capsys.readouterr()
    for opt, msg in (
        ("c.x=1", "no agent named"),
        ("a.temperature=0.5", "no options"),
        ("a=1", "NAME.KEY=VALUE"),
    ):
        assert main([*pair, "--agent-opt", opt, "--walls", "1", "--no-progress"]) == 2
        assert msg in capsys.readouterr().err, opt


def test_cli_eval_bad_checkpoint_or_option_is_one_line(tmp_path, capsys):
    """Found 2026-12-03: a checkpoint path that does not exist ended in a 25-line traceback (exit 1) and a misspelled
    option key blamed the factory's signature; now one line naming the problem, exit 2, and for a wrong key
    the options the factory takes."""
    pytest.importorskip("torch")
    from mjenv.cli import main

    pair = [
        "eval",
        "--agent",
        "nn=agents.nn:make",
        "--agent",
        f"random={RANDOM}",
        "--walls",
        "1",
        "--no-progress",
    ]
    missing = tmp_path / "nope" / "policy.safetensors"
    assert main([*pair, "--agent-opt", f"nn.checkpoint={missing}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no checkpoint at" in err and str(missing) in err, err
    assert main([*pair, "--agent-opt", f"nn.chekpoint={missing}"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'chekpoint'" in err, err
    assert "options: checkpoint, device, greedy, channels, hidden" in err, err


# ------------------------------------------------------------------------------------------------ shards
class FirstLegalOrIllegal:
    """Deterministic row by row: the first legal action, but the first illegal one when 5 actions are legal."""

    needs_observations = False

    def __call__(self, obs, masks, seats):
        a = np.argmax(masks, axis=1)
        five = masks.sum(axis=1) == 5
        a[five] = np.argmin(masks[five], axis=1)
        return a


def make_first_legal_or_illegal(num_envs, seed, **kwargs):
    return FirstLegalOrIllegal()


def _no_timing(rep, shards=None):
    rep = dict(rep)
    rep.pop("timing")
    if shards is not None:
        rep["settings"] = {**rep["settings"], "shards": shards}
    return json.dumps(rep, sort_keys=True)


def test_shards_do_not_change_the_report_of_row_wise_agents():
    """Agents whose actions depend only on their rows: every split of the walls gives the same hands, records,
    kept illegal hands (the lowest hand indices) and listed illegal actions (first by hand, then decision)."""
    agents = {"bad": make_first_legal_or_illegal, "rule": "agents.rule:make"}
    kw = dict(seating="1v3", walls=12, seed=2, tables=16, records=4, illegal_records=3, progress=False)
    one = run_arena(agents, **kw)
    assert one["settings"]["shards"] == 1 and one["agents"]["bad"]["illegal_actions"]["count"] > 0
    assert one["records_dropped"] > 0 and any("illegal" in r["reasons"] for r in one["records"])
    for shards in (2, 5):
        assert _no_timing(run_arena(agents, shards=shards, **kw), shards=1) == _no_timing(one)


def test_shards_fix_the_report_of_stochastic_agents():
    kw = dict(seating="2v2", walls=6, seed=1, tables=8, records=2, progress=False)
    agents = {"g": make_greedy, "r": RANDOM}
    a = run_arena(agents, shards=3, **kw)
    assert a["settings"]["shards"] == 3
    assert _no_timing(run_arena(agents, shards=3, **kw)) == _no_timing(a)
    with pytest.raises(ValueError, match="shards"):
        run_arena(agents, shards=0, **kw)
    with pytest.raises(ValueError, match="workers"):
        run_arena(agents, workers=-1, **kw)


def _no_run_settings(rep):
    """The report without what only says how it was run: ``timing``, ``settings.shards`` and ``settings.tables``."""
    rep = dict(rep)
    rep.pop("timing")
    rep["settings"] = {k: v for k, v in rep["settings"].items() if k not in ("shards", "tables")}
    return json.dumps(rep, sort_keys=True)


@pytest.mark.parametrize("seating", ["1v3", "2v2"])
def test_stochastic_agents_with_row_streams_give_one_report_for_every_split(seating):
    """The random agent draws from per-table streams keyed by (seed, agent, wall, order): one report however
    the walls are split into shards and whatever the number of tables."""
    agents = {"random": RANDOM, "rule": "agents.rule:make"}
    kw = dict(seating=seating, walls=6, seed=9, records=3, progress=False)
    one = run_arena(agents, tables=16, **kw)
    assert one["settings"]["shards"] == 1
    for tables, shards in ((16, 2), (5, 3), (1, 1), (7, 6)):
        other = run_arena(agents, tables=tables, shards=shards, **kw)
        assert _no_run_settings(other) == _no_run_settings(one), (tables, shards)
    # the streams do depend on the seed
    assert run_arena(agents, tables=16, **{**kw, "seed": 10})["seeds"]["agents"] != one["seeds"]["agents"]


def test_sampling_network_plays_the_same_hands_for_every_split():
    """agents.nn sampling (not greedy) draws from the arena's per-table streams too: the same hands, hence the
    same statistics, for every split. The probabilities it records may differ in the last float32 bits with
    the batch size (the matmuls' blocking), so the records' ``info`` is compared to 1e-5, not bit for bit."""
    pytest.importorskip("torch")
    agents = {"nn": "agents.nn:make", "random": RANDOM}
    kw = dict(seating="1v3", walls=3, seed=4, records=2, progress=False)
    kw["agent_kwargs"] = {"nn": {"channels": 8, "hidden": 32}}

    def split(rep):
        info = [x["info"] for x in rep["records"]]
        rep = {**rep, "records": [{k: v for k, v in x.items() if k != "info"} for x in rep["records"]]}
        return _no_run_settings(rep), info

    one, one_info = split(run_arena(agents, tables=12, **kw))
    other, other_info = split(run_arena(agents, tables=5, shards=3, **kw))
    assert other == one
    probs = [
        (d["probs"][a], e["probs"][a])
        for r1, r2 in zip(one_info, other_info)
        for d, e in zip(r1, r2)
        if d and "probs" in d
        for a in d["probs"]
    ]
    assert probs and max(abs(p - q) for p, q in probs) < 1e-5
