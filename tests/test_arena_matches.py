"""Match scoring of the arena (``mjenv.arena.run_matches``, ``mjenv eval --match``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mjenv.arena import format_matches_markdown, run_matches, seating_agents, wall_schedule
from mjenv.cli import main
from mjenv.rules import RuleConfig, placements
from mjenv.vector import VectorEnv

RANDOM = "mjenv.policy:make_random"


def _stable(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k != "timing"}
    out["settings"] = {k: v for k, v in report["settings"].items() if k != "tables"}
    return out


def test_match_report_is_zero_sum_and_independent_of_tables():
    a = run_matches({"a": RANDOM, "b": RANDOM}, "1v3", walls=3, seed=1, tables=5, threads=1)
    b = run_matches({"a": RANDOM, "b": RANDOM}, "1v3", walls=3, seed=1, tables=12, threads=1)
    assert json.dumps(_stable(a)) == json.dumps(_stable(b))
    s, ag = a["settings"], a["agents"]
    assert s["matches"] == 12 and ag["a"]["matches"] == 12 and ag["b"]["matches"] == 36
    # every match is zero-sum and its places sum to 10: A holds one player slot in four, B three
    pa, pb = ag["a"]["match_points"]["mean"], ag["b"]["match_points"]["mean"]
    assert pa + 3 * pb == pytest.approx(0, abs=1e-9)
    la, lb = ag["a"]["placement"]["mean"], ag["b"]["placement"]["mean"]
    assert (la + 3 * lb) / 4 == pytest.approx(2.5)
    assert a["hands"] == 16 * 12 - 0 or a["matches_cut"] > 0
    md = format_matches_markdown(a)
    assert "match points" in md and "| a - b |" in md


class _Pick:
    """A deterministic policy: the lowest (or highest) legal action."""

    needs_observations = False

    def __init__(self, last: bool) -> None:
        self.last = last

    def __call__(self, obs, masks, seats):
        return (
            masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1) if self.last else np.argmax(masks, axis=1)
        )


def make_low(num_envs: int, seed: int) -> _Pick:
    return _Pick(False)


def make_high(num_envs: int, seed: int) -> _Pick:
    return _Pick(True)


def test_match_scores_are_the_vector_env_matches():
    """Match (wall w, order p) is the VectorEnv match from wall w's seed with the agent of player q being
    ``seating_agents[p, q]`` (a player keeps its agent when it changes chairs)."""
    rep = run_matches({"low": make_low, "high": make_high}, "1v3", walls=2, seed=4, tables=3, threads=1)
    seeds, _, _ = wall_schedule(4, 2)
    orders = seating_agents("1v3")
    pols = [make_low(1, 0), make_high(1, 0)]
    points = np.zeros((2, 2))  # [wall, agent] mean final score of the agent's players
    slots = np.zeros((2, 2))
    for w in range(2):
        for p in range(4):
            env = VectorEnv(1, seed=seeds[w : w + 1], rules=RuleConfig(match=True), observations=False,
                            threads=1, after_schedule="stop")  # fmt: skip
            env.reset()
            while env.active[0]:
                agent = orders[p, env.players[0, env.seats[0]]]
                env.step(np.asarray(pols[agent](None, env.masks, env.seats), np.int64))
            for q in range(4):
                points[w, orders[p, q]] += env.match_results.scores[0, q]
                slots[w, orders[p, q]] += 1
    x = points / slots
    assert rep["agents"]["low"]["match_points"]["mean"] == pytest.approx(x[:, 0].mean())
    assert rep["agents"]["high"]["match_points"]["mean"] == pytest.approx(x[:, 1].mean())


def test_bad_arguments():
    with pytest.raises(ValueError, match="takes 2 agents"):
        run_matches({"a": RANDOM}, "1v3")
    with pytest.raises(ValueError, match="walls"):
        run_matches({"a": RANDOM, "b": RANDOM}, walls=0)
    with pytest.raises(TypeError, match="seed"):
        run_matches({"a": RANDOM, "b": RANDOM}, seed="x")
    with pytest.raises(ValueError, match="illegal"):
        run_matches({"a": RANDOM, "b": RANDOM}, illegal="ignore")


def test_eval_match_cli(tmp_path, capsys):
    out = tmp_path / "m.json"
    argv = [
        "eval",
        "--match",
        "--agent",
        f"a={RANDOM}",
        "--agent",
        f"b={RANDOM}",
        "--walls",
        "2",
        "--tables",
        "8",
    ]
    assert main([*argv, "--threads", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mjenv arena, matches" in text and "placement" in text
    assert json.loads(out.read_text())["mode"] == "matches"
    assert main([*argv, "--workers", "2"]) == 2
    assert "--match" in capsys.readouterr().err


def test_placements_of_final_scores():
    assert placements(np.array([[3, 3, -3, -3]])).tolist() == [[1.5, 1.5, 3.5, 3.5]]
