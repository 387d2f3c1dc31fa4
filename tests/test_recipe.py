"""``python -m train.recipe``: every stage in a tiny version, resume after a kill at any point, settings checks."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from types import SimpleNamespace

import pytest

pytest.importorskip("torch")
pytest.importorskip("tyro")

from agents import nn as ann  # noqa: E402
from agents.zoo_meta import REQUIRED_KEYS, read_metadata, tensors_digest  # noqa: E402
from train import recipe  # noqa: E402
from train.recipe import RecipeConfig, Stop, check_config, run_recipe  # noqa: E402

TINY = dict(
    teacher_decisions=1500, blocks=1, channels=4, bc_epochs=1, bc_batch_size=256, num_envs=8, rollout_steps=8,
    ppo_updates=3, value_warmup=1, fine_updates=4, snapshot_every=1, average_skip=0.5, eval_every=0, final_walls=6,
    distil_rounds=2, distil_decisions=800, progress=False,
)  # fmt: skip


def _outcome(out: Path) -> tuple[str, dict]:
    """The agent's weights digest and the final report (what a resumed run must reproduce)."""
    return tensors_digest(out / "agent.safetensors"), json.loads((out / "report.json").read_text())


def test_every_stage_runs_and_a_kill_anywhere_resumes_to_the_same_agent(tmp_path, capsys):
    a = RecipeConfig(out_dir=str(tmp_path / "a"), **TINY)
    data = run_recipe(a)
    assert list(data["stages"]) == list(recipe.STAGES)
    assert data["stages"]["average"]["members"] == 2  # snapshots of updates 3 and 4 (the first half skipped)
    meta = read_metadata(tmp_path / "a" / "agent.safetensors")
    assert set(REQUIRED_KEYS) <= set(meta)
    strength = json.loads(meta["zoo_strength"])
    assert (
        strength["seed"] == a.final_seed
        and strength["walls"] == 6
        and strength["alone"].startswith(("+", "-"))
    )
    assert (
        meta["zoo_recipe"].startswith("python -m train.recipe --teacher-decisions 1500")
        and "--ppo-updates 3" in meta["zoo_recipe"]
    )
    assert set(json.loads(meta["recipe_seconds"])) == {*recipe.STAGES, "total"}
    assert "out_dir" not in json.loads(meta["recipe_config"]) and str(tmp_path) not in meta["zoo_recipe"]
    net = ann.load(tmp_path / "a" / "agent.safetensors")
    assert net.config.arch == "planes" and net.config.with_features and net.config.channels == 4
    assert net.config.wait_inputs and net.config.near_inputs  # the distil stage's network
    assert tensors_digest(tmp_path / "a" / "agent.safetensors") == tensors_digest(
        tmp_path / "a" / "distil" / "round2.safetensors"
    )
    dist = data["stages"]["distil"]
    assert (
        dist["walls_seeds"] == [3, 4] and dist["decisions"] == 1600 and len(dist["held_out_agreement"]) == 2
    )
    assert not list((tmp_path / "a" / "distil").glob("*.npz"))  # each round's data goes once it is cloned

    # killed inside the PPO stage, inside the fine stage, before the average, before each distil round: each rerun
    # picks up from there
    b = replace(a, out_dir=str(tmp_path / "b"))
    stops = [("bc", 0), ("ppo", 1), ("ppo", 1), ("fine", 2), ("average", 0), ("distil", 1), ("distil", 2)]
    for stop in stops:
        with pytest.raises(Stop):
            run_recipe(b, stop=stop)
    st = json.loads((tmp_path / "b" / "recipe.json").read_text())["stages"]
    assert list(st) == ["teacher", "bc", "ppo", "fine", "average"]
    assert (tmp_path / "b" / "distil" / "round1.safetensors").is_file()
    run_recipe(b)
    assert _outcome(tmp_path / "b") == _outcome(tmp_path / "a")
    # each rerun records where it resumed and on which code; one commit here, so the agent names one
    resumed = json.loads((tmp_path / "b" / "recipe.json").read_text())["resumed"]
    assert [r["at"] for r in resumed] == ["bc", "ppo", "ppo", "fine", "average", "distil", "distil"]
    assert json.loads(read_metadata(tmp_path / "b" / "agent.safetensors")["recipe_commits"]) == [
        {"from": "teacher", "commit": json.loads((tmp_path / "b" / "recipe.json").read_text())["commit"]}
    ]
    # a finished run reruns as a no-op
    before = (tmp_path / "b" / "recipe.json").read_text()
    run_recipe(b)
    assert (tmp_path / "b" / "recipe.json").read_text() == before


def test_the_code_of_each_resume_is_named():
    data = {"commit": "aaa", "resumed": [{"at": "ppo", "commit": "aaa"}, {"at": "fine", "commit": "bbb"},
                                         {"at": "distil", "commit": "bbb"}, {"at": "final", "commit": "ccc"}]}  # fmt: skip
    assert recipe.code_commits(data) == [
        {"from": "teacher", "commit": "aaa"},
        {"from": "fine", "commit": "bbb"},
        {"from": "final", "commit": "ccc"},
    ]
    assert recipe.code_commits({"commit": "aaa"}) == [{"from": "teacher", "commit": "aaa"}]


def test_a_rerun_may_change_only_the_settings_of_stages_not_started(tmp_path):
    assert set(recipe.SETTING_STAGE) | recipe.MAY_CHANGE == {f.name for f in fields(RecipeConfig)}
    assert set(recipe.SETTING_STAGE.values()) == set(recipe.STAGES)
    a = RecipeConfig(out_dir=str(tmp_path / "r"), **TINY)
    with pytest.raises(Stop):
        run_recipe(a, stop=("ppo", 1))  # teacher and bc finished, ppo started
    with pytest.raises(ValueError, match="other settings.*ppo_updates.*stages that have started"):
        run_recipe(replace(a, ppo_updates=5))
    with pytest.raises(ValueError, match="teacher_decisions"):
        run_recipe(replace(a, teacher_decisions=1600, distil_rounds=1))
    state = tmp_path / "r" / "recipe.json"  # a run started by code before ppo_epochs existed ...
    data = json.loads(state.read_text())
    del data["config"]["ppo_epochs"], data["config"]["distil_near_inputs"]  # (and distil_near_inputs)
    state.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="ppo_epochs': \\[3, 1\\]"):
        run_recipe(replace(a, ppo_epochs=1))  # ... ran with 3, which BEFORE_ADDED says
    data["config"]["ppo_epochs"] = a.ppo_epochs
    state.write_text(json.dumps(data))
    with pytest.raises(Stop):  # progress and device may change
        run_recipe(replace(a, progress=True, device="cpu"), stop=("fine", 1))
    b = replace(a, distil_rounds=1, fine_lr=1e-4)  # the fine stage has started: its rate is fixed now
    with pytest.raises(ValueError, match="fine_lr"):
        run_recipe(b)
    b = replace(a, distil_rounds=1, final_walls=4)  # not started: the run goes on with them and records it
    data = run_recipe(b)
    assert data["changed"] == [
        # a run from before distil_near_inputs (BEFORE_ADDED: off) goes on with it: its distil stage had not started
        {"before": "fine", "settings": {"distil_near_inputs": [False, True]}},
        {"before": "average", "settings": {"distil_rounds": [2, 1], "final_walls": [6, 4]}},
    ]
    assert "--distil-rounds 1" in data["command"] and data["stages"]["distil"]["rounds"] == 1
    assert json.loads(read_metadata(tmp_path / "r" / "agent.safetensors")["zoo_strength"])["walls"] == 4


def test_each_ppo_stage_is_estimated_from_a_measured_rate_scaled_by_its_epochs(tmp_path):
    cfg = RecipeConfig(out_dir=str(tmp_path), ppo_epochs=1, ppo_updates=100, fine_updates=50)
    state = SimpleNamespace(stages={"teacher": {"seconds": 1.0}, "bc": {}})
    default = recipe.DEFAULT_RATES["ppo_s_per_decision"] * cfg.num_envs * cfg.rollout_steps  # at 3 epochs
    est = recipe.estimate_seconds(cfg, state)
    assert est["ppo"] == pytest.approx(100 * default * 2 / 4) and est["fine"] == pytest.approx(50 * default)
    (tmp_path / "ppo").mkdir()
    rows = ["update,decisions,seconds", "1,32768,10.0", "2,65536,12.0"]  # 2 s per update at one epoch
    (tmp_path / "ppo" / "progress.csv").write_text("\n".join(rows) + "\n")
    est = recipe.estimate_seconds(cfg, state)
    assert est["ppo"] == pytest.approx(100 * 2.0) and est["fine"] == pytest.approx(50 * 2.0 * 4 / 2)


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"final_seed": 12345}, "final_seed must be in 8,000,000"),
        ({"seed": 7_999_999}, "reaches the final evaluation's seeds"),
        ({"seed": 7_999_995, "distil_rounds": 3}, "reaches the final evaluation's seeds"),
        ({"distil_lr": -1.0}, "distil_lr"),
        ({"fine_updates": 5, "snapshot_every": 10}, "no fine-stage snapshot"),
        ({"average_skip": 1.0}, "average_skip"),
        ({"value_warmup": 3}, "value_warmup"),
        ({"fine_lr": 0.0}, "fine_lr"),
        ({"name": "a/b"}, "name"),
        ({"blocks": 0}, "blocks"),
    ],
)
def test_bad_settings_fail_before_any_work(tmp_path, kw, match):
    cfg = RecipeConfig(out_dir=str(tmp_path / "x"), **{**TINY, **kw})
    with pytest.raises(ValueError, match=match):
        check_config(cfg)
    with pytest.raises(TypeError, match="ppo_updates must be an int"):
        check_config(RecipeConfig(ppo_updates=2.5))
    assert not (tmp_path / "x").exists()


def test_the_command_line_prints_the_strength_and_the_time(tmp_path, capsys):
    args = [f"--out-dir={tmp_path / 'c'}"]
    for k, v in TINY.items():
        args += [f"--{k.replace('_', '-')}", str(v)] if not isinstance(v, bool) else ["--no-progress"]
    recipe.main(args)
    out = capsys.readouterr()
    assert "agent.safetensors: against the rule agent, 1v3, 6 walls of seed 8000000: alone" in out.out
    assert "stage 3/7 ppo" in out.err and "stage 6/7 distil" in out.err and "left in all" in out.err
    # the recorded command gives the settings back (booleans as tyro's --x / --no-x flags)
    import tyro

    cfg = RecipeConfig(fine_rollout_check=False, distil_rounds=1, fine_lr=1e-4)
    assert recipe._cli_args(cfg) == ["--fine-lr", "0.0001", "--no-fine-rollout-check", "--distil-rounds", "1"]
    assert tyro.cli(RecipeConfig, args=recipe._cli_args(cfg)) == cfg
    with pytest.raises(SystemExit, match="train.recipe: error: .*final_seed"):
        recipe.main([f"--out-dir={tmp_path / 'd'}", "--final-seed", "3"])
