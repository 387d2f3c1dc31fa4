"""The benchmark harness and suite: figures, files, skips (fake entries only here; real ones smoke-run)."""

from __future__ import annotations

import json
import statistics
import sys

import pytest

from benchmarks import harness, others, suite


def _fake_work(decisions_per_hand: int):
    """A fake 'environment' doing a little work per decision; a hand has n decisions and n // 2 steps."""

    def work(budget_s: float) -> harness.Counts:
        done = harness.until(budget_s)
        c = harness.Counts()
        while not done():
            for _ in range(decisions_per_hand):
                sum(range(50))  # a little work per decision
            c.decisions += decisions_per_hand
            c.steps += decisions_per_hand // 2
            c.hands += 1
        return c

    return work


def _fake_vector(seconds: float, repeats: int) -> list[dict]:
    rows = []
    for batch in (1, 16, 256):
        timing = harness.measure(_fake_work(10 * batch), seconds=seconds, repeats=repeats)
        rows.append(
            harness.result(
                f"fake vector b={batch}",
                "0",
                timing,
                "fake batched entry",
                batch_size=batch,
                series="fake vector",
                threads=1,
            )
        )
    return rows


def _fake_single(seconds: float, repeats: int) -> dict:
    return harness.result(
        "fake single",
        "0",
        harness.measure(_fake_work(10), seconds=seconds, repeats=repeats),
        "fake single-table entry",
    )


def _fake_missing(seconds: float, repeats: int) -> dict:
    return harness.skipped("fake missing", "package not installed")


def _fake_broken(seconds: float, repeats: int) -> dict:
    raise RuntimeError("boom")


FAKE_REGISTRY = [
    ("fake vector", _fake_vector),
    ("fake single", _fake_single),
    ("fake missing", _fake_missing),
    ("fake broken", _fake_broken),
]


def test_measure_reports_medians_of_repeats():
    timing = harness.measure(_fake_work(8), seconds=0.01, repeats=3, warmup_s=0.001)
    assert timing["repeats"] == 3 and len(timing["per_repeat"]) == 3
    for unit in ("decisions", "steps", "hands"):
        rates = [r[f"{unit}_per_s"] for r in timing["per_repeat"]]
        assert timing[f"{unit}_per_s"] == pytest.approx(statistics.median(rates))
        assert timing[f"{unit}_per_s"] > 0
    assert timing["calls_per_s"] is None  # a unit the entry never counted is not a figure
    assert timing["calls_per_cpu_s"] is None and timing["decisions_per_cpu_s"] > 0
    assert timing["n"]["decisions"] == 2 * timing["n"]["steps"] == 8 * timing["n"]["hands"]
    assert timing["seconds"] == pytest.approx(sum(r["seconds"] for r in timing["per_repeat"]))
    assert all(r["seconds"] >= 0.01 for r in timing["per_repeat"])
    # a busy single thread uses at most about one CPU second per wall second
    assert 0 < timing["cpu_per_wall"] < 1.5 and all(r["cpu_s"] > 0 for r in timing["per_repeat"])


@pytest.mark.parametrize("kwargs", [{"seconds": 0, "repeats": 1}, {"seconds": 0.1, "repeats": 0}])
def test_measure_rejects_bad_settings(kwargs):
    with pytest.raises(ValueError):
        harness.measure(_fake_work(1), **kwargs)


def test_measure_rejects_work_without_counts():
    with pytest.raises(TypeError):
        harness.measure(lambda budget: 5, seconds=0.001, repeats=1, warmup_s=0.0)


def test_suite_writes_table_json_and_plot(tmp_path, capsys):
    rc = suite.main(
        [
            "--seconds",
            "0.01",
            "--repeats",
            "2",
            "--out",
            str(tmp_path),
            "--date",
            "2000-01-02",
            "--no-progress",
        ],
        registry=FAKE_REGISTRY,
    )
    assert rc == 0
    md = (tmp_path / "2000-01-02.md").read_text()
    record = json.loads((tmp_path / "2000-01-02.json").read_text())
    png = (tmp_path / "2000-01-02.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000

    # the header defines the units; the table has one row per figure; skips and errors are listed, not lost
    assert "**decision**: one action chosen by one seat, claim-window passes included" in md
    assert "**step**" in md and "**hand**" in md and "| per CPU-s | cpu/wall |" in md
    names = [r["name"] for r in record["results"]]
    assert names == [
        "fake vector b=1",
        "fake vector b=16",
        "fake vector b=256",
        "fake single",
        "fake missing",
        "fake broken",
    ]
    for r in record["results"][:4]:
        assert f"| {r['name']} | 0 |" in md
        assert f"{r['decisions_per_s']:,.0f}" in md
    assert "- fake missing: package not installed" in md
    broken = record["results"][-1]
    assert broken["skipped"].startswith("error: RuntimeError: boom") and "RuntimeError" in broken["traceback"]

    # the JSON record carries the machine, the versions and the settings
    m = record["machine"]
    assert m["cpu_count"] >= 1 and m["cpu_model"] and m["python"] == ".".join(map(str, sys.version_info[:3]))
    assert m["packages"]["numpy"] and m["packages"]["numba"]
    assert record["settings"]["seconds"] == 0.01 and record["settings"]["repeats"] == 2
    assert record["settings"]["quick"] is False
    assert record["results"][0]["batch_size"] == 1 and len(record["results"][0]["per_repeat"]) == 2


def test_suite_quick_and_only(tmp_path, capsys):
    rc = suite.main(
        [
            "--quick",
            "--seconds",
            "0.01",
            "--only",
            "single",
            "--out",
            str(tmp_path),
            "--date",
            "2000-01-03",
            "--no-progress",
        ],
        registry=FAKE_REGISTRY,
    )
    assert rc == 0
    record = json.loads((tmp_path / "2000-01-03-quick.json").read_text())
    assert [r["name"] for r in record["results"]] == ["fake single"]
    assert record["settings"]["quick"] is True and record["settings"]["repeats"] == 2
    assert (tmp_path / "2000-01-03-quick.png").exists()  # a reference line alone is still drawn


def test_suite_rejects_unknown_entry(tmp_path, capsys):
    with pytest.raises(SystemExit):
        suite.main(
            ["--only", "nothing-like-this", "--out", str(tmp_path), "--no-progress"], registry=FAKE_REGISTRY
        )


def test_nothing_drawable_writes_no_plot(tmp_path):
    rows = suite.run_suite([("fake missing", _fake_missing)], seconds=0.01, repeats=1, progress=False)
    settings = {"date": "2000-01-04", "quick": False, "seconds": 0.01, "repeats": 1, "command": "x"}
    paths = suite.write_results(rows, suite.machine_info(), settings, tmp_path)
    assert "png" not in paths and paths["md"].exists() and not (tmp_path / "2000-01-04.png").exists()


# ------------------------------------------------------------------------------------- third-party entries
@pytest.mark.parametrize("name,fn", others.ALL)
def test_third_party_entries_run_or_skip(name, fn):
    out = fn(seconds=0.02, repeats=1)
    rows = out if isinstance(out, list) else [out]
    for r in rows:
        assert set(harness.RESULT_KEYS) <= set(r)
        if r["skipped"]:
            assert r["name"] == name and r["decisions_per_s"] is None and r["calls_per_s"] is None
            continue
        assert r["version"] and r["notes"] and r["repeats"] == 1
        figures = [r[k] for k in ("decisions_per_s", "steps_per_s", "hands_per_s", "calls_per_s") if r[k]]
        assert figures and all(f > 0 for f in figures)
        if r["decisions_per_s"]:
            assert r["steps_per_s"] >= r["hands_per_s"] > 0 and r["n"]["decisions"] >= r["n"]["hands"]


def test_pettingzoo_wrapper_reference_rows():
    rows = others.measure_pettingzoo_wrappers(seconds=0.02, repeats=1)
    if rows[0]["skipped"]:
        pytest.skip(rows[0]["skipped"])
    names = [r["name"] for r in rows]
    assert names == [
        "PettingZoo connect_four_v3 raw_env()",
        "PettingZoo connect_four_v3 env()",
        "PettingZoo tictactoe_v3 raw_env()",
        "PettingZoo tictactoe_v3 env()",
    ]
    for raw, wrapped in (rows[0:2], rows[2:4]):
        assert "wrapper_overhead_us" not in raw
        expect = 1e6 / wrapped["decisions_per_s"] - 1e6 / raw["decisions_per_s"]
        assert wrapped["wrapper_overhead_us"] == pytest.approx(expect)
        # every AEC hand ends with one None step per agent (2 agents) after the decisions
        assert raw["n"]["steps"] == raw["n"]["decisions"] + 2 * raw["n"]["hands"]


def test_missing_package_is_skipped_cleanly(monkeypatch):
    monkeypatch.setitem(sys.modules, "rlcard", None)  # makes `import rlcard` raise ImportError
    monkeypatch.setitem(sys.modules, "riichienv", None)
    for fn in (others.measure_rlcard, others.measure_riichienv):
        r = fn(seconds=0.01, repeats=1)
        assert "not installed" in r["skipped"] and r["decisions_per_s"] is None


def test_scorer_hands_are_fixed_complete_hands():
    MahjongGB = pytest.importorskip("MahjongGB")
    hands, _ = others.winning_hands(50, seed=3)
    again, _ = others.winning_hands(50, seed=3)
    assert hands == again and hands != others.winning_hands(50, seed=4)[0]
    for packs, hand, win, *_ in hands:
        assert len(hand) + 3 * len(packs) + 1 == 14
        tiles = list(hand) + [win]
        for kind, tile, _offer in packs:
            if kind == "CHI":
                s, r = tile[0], int(tile[1])
                tiles += [f"{s}{r - 1}", tile, f"{s}{r + 1}"]
            else:
                tiles += [tile] * (4 if kind == "GANG" else 3)
        assert max(tiles.count(t) for t in set(tiles)) <= 4
    fans = MahjongGB.MahjongFanCalculator(*hands[0])
    assert fans and all(f[0] >= 1 for f in fans)
    shanten = others.random_hands_13(20, seed=1)
    assert all(len(h) == 13 for h in shanten) and shanten == others.random_hands_13(20, seed=1)


# ------------------------------------------------------- PKU/Botzone course env adapter (fake course files)
_FAKE_COURSE = {
    "agent.py": "class MahjongGBAgent:\n    pass\n",
    "feature.py": "from agent import MahjongGBAgent\n\nclass FeatureAgent(MahjongGBAgent):\n    pass\n",
    # each hand: one seat chooses among 2 actions, then 3 seats are asked with Pass as their only action
    "env.py": (
        "import numpy as np\n"
        "from agent import MahjongGBAgent\n\n"
        "class MahjongGBEnv:\n"
        "    def __init__(self, config):\n"
        "        assert issubclass(config['agent_clz'], MahjongGBAgent)\n"
        "    def reset(self):\n"
        "        self.t = 0\n"
        "        return {'player_1': {'action_mask': np.array([0.0, 1.0, 1.0])}}\n"
        "    def step(self, actions):\n"
        "        self.t += 1\n"
        "        if self.t == 1:\n"
        "            assert set(actions) == {'player_1'} and actions['player_1'] in (1, 2)\n"
        "            mask = np.array([1.0, 0.0, 0.0])\n"
        "            return {f'player_{i}': {'action_mask': mask} for i in (2, 3, 4)}, {}, False\n"
        "        assert actions == {'player_2': 0, 'player_3': 0, 'player_4': 0}\n"
        "        return {}, {}, True\n"
    ),
}


def test_course_env_adapter_counts_decisions_steps_hands(tmp_path):
    for fname, text in _FAKE_COURSE.items():
        (tmp_path / fname).write_text(text)
    r = others.measure_botzone_course_env(seconds=0.01, repeats=2, folder=str(tmp_path))
    assert r["skipped"] is None, r["skipped"]
    n = r["n"]
    assert n["hands"] > 0 and n["decisions"] == 2 * n["steps"] == 4 * n["hands"]
    assert r["n_extra"]["forced_decisions"] == 3 * n["hands"]
    assert r["decisions_per_s"] > r["steps_per_s"] > r["hands_per_s"] > 0
    assert str(tmp_path) not in sys.path


def test_course_env_skips_without_a_copy(tmp_path, monkeypatch):
    monkeypatch.delenv(others.BOTZONE_ENV_VAR, raising=False)
    r = others.measure_botzone_course_env(seconds=0.01, repeats=1)
    assert others.BOTZONE_ENV_VAR in r["skipped"] and r["decisions_per_s"] is None
    monkeypatch.setenv(others.BOTZONE_ENV_VAR, str(tmp_path))  # an empty folder
    r = others.measure_botzone_course_env(seconds=0.01, repeats=1)
    assert "lacks" in r["skipped"]


def test_suite_command_quick_smoke(tmp_path):
    """`python -m benchmarks.suite --quick` runs as a command (real third-party entries, tiny budget)."""
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    cmd = [
        sys.executable,
        "-m",
        "benchmarks.suite",
        "--quick",
        "--seconds",
        "0.05",
        "--repeats",
        "1",
        "--only",
        "PyMahjongGB",
        "riichienv",
        "--out",
        str(tmp_path),
        "--date",
        "2000-01-05",
        "--no-progress",
    ]
    proc = subprocess.run(cmd, check=False, cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "2000-01-05-quick.json").read_text())
    assert {r["name"] for r in record["results"]} == {
        "riichienv",
        "PyMahjongGB MahjongFanCalculator",
        "PyMahjongGB MahjongShanten",
    }
    assert "| PyMahjongGB MahjongShanten |" in proc.stdout or "- PyMahjongGB MahjongShanten:" in proc.stdout
