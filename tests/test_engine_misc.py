"""RuleConfig, payments, the action layout, `mjenv play` and the benchmark smoke run."""

import os
import subprocess
import sys

import numpy as np
import pytest

from mjenv import actions as A
from mjenv import game as G
from mjenv.cli import main
from mjenv.rules import SEATING, RuleConfig, chair_of_player, payments


def test_action_layout_round_trips():
    names = [A.action_to_str(a) for a in range(A.NUM_ACTIONS)]
    assert len(set(names)) == A.NUM_ACTIONS == 109
    assert all(A.str_to_action(n) == a for a, n in enumerate(names))
    assert (A.CHOW, A.PUNG, A.KONG, A.CONCEALED_KONG, A.ADDED_KONG, A.WIN, A.PASS) == (
        34,
        37,
        38,
        39,
        73,
        107,
        108,
    )
    with pytest.raises(ValueError):
        A.action_to_str(109)
    with pytest.raises(TypeError):
        A.action_to_str("1")


def test_rule_config_validation_and_schedule():
    assert RuleConfig().hand_setup(0) == (0, 0)
    assert RuleConfig(prevalent_wind=2, dealer=3).hand_setup(0) == (2, 3)
    m = RuleConfig(match=True)
    assert m.num_hands == 16 and m.hand_setup(5) == (1, 1) and m.hand_setup(15) == (3, 3)
    for bad in ({"dealer": 4}, {"prevalent_wind": -1}, {"illegal": "x"}, {"min_fan": -1}, {"match": 1}):
        with pytest.raises((ValueError, TypeError)):
            RuleConfig(**bad)
    for p in range(4):  # every player sits once at every chair over the four rounds
        assert sorted(chair_of_player(r, p) for r in range(4)) == [0, 1, 2, 3]
    assert all(sorted(row) == [0, 1, 2, 3] for row in SEATING.tolist())


def test_payments():
    assert payments(0, -1, 10).tolist() == [54, -18, -18, -18]
    assert payments(2, 3, 8).tolist() == [-8, -8, 32, -16]
    assert payments(-1, -1, 0).tolist() == [0, 0, 0, 0]
    assert all(
        payments(w, l, f).sum() == 0 for w in range(4) for l in range(-1, 4) if l != w for f in (8, 88)
    )


def test_cli_play(capsys, tmp_path):
    log = tmp_path / "hand.json"
    assert main(["play", "--seed", "4", "--quiet", "--style", "compact", "--log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "hand over" in out and "payments" in out and log.exists()
    assert main(["play", "--seed", "4", "--style", "nope"]) == 2


def test_cli_help_texts_show_percent_signs_once():
    """Found 2026-12-03: ``mjenv eval --help`` printed ``95%%`` (argparse %-formats help= strings, not description=)."""
    import argparse

    from mjenv.cli import build_parser

    parser = build_parser()
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    texts = [parser.format_help()] + [p.format_help() for p in sub.choices.values()]
    assert "95% CIs" in sub.choices["eval"].format_help()
    assert not [t for t in texts if "%%" in t]


def test_benchmark_quick_runs():
    r = subprocess.run(
        # every measurement runs at least one hand: 0.05 s each (--quick: 0.5 s) checks the same code, 5 CPU-s less
        [sys.executable, "benchmarks/bench_env.py", "--seconds", "0.05"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, PYTHONPATH="."),
    )
    assert r.returncode == 0, r.stderr
    assert "mjenv raw_env" in r.stdout and "agent steps/s" in r.stdout


def test_package_warmup_compiles_every_module():
    import mjenv

    times = mjenv.warmup()
    times = {k: v for k, v in times.items() if not k.startswith("compile (")}  # a cold start's parallel part
    assert set(times) == {"mjenv.hand", "mjenv.fans", "mjenv.game", "mjenv.vector"}
    assert all(isinstance(t, float) and t > 0 for t in times.values())
    # every module's entry kernels are compiled (or loaded) now
    from mjenv import fans, hand, shanten, vector

    for kernel in (
        shanten._batch_shanten,
        hand._batch_is_win,
        fans._score_batch_kernel,
        G.step_kernel,
        G.reset_kernel,
        G.legal_mask_kernel,
        vector._step_batch,
    ):
        assert kernel.signatures, f"{kernel.__name__} was not compiled by warmup()"


def test_warmup_imports_only_import(monkeypatch):
    """``imports`` are imported (a bar step each) without their own warmup: ``mjenv selfplay`` does not wait for
    kernels the vector env never calls (the batch scorer, the single-table fronts' kernels)."""
    import mjenv
    from mjenv import fans, vector

    def fail(*a, **k):
        raise AssertionError("fans.warmup must not run for an import-only module")

    monkeypatch.setattr(fans, "warmup", fail)
    calls = []
    monkeypatch.setattr(vector, "warmup", lambda observations=True: calls.append(observations) or 0.0)
    times = mjenv.warmup(imports=("mjenv.fans",), modules=("mjenv.vector",), observations=False, jobs=1)
    assert list(times) == ["mjenv.fans", "mjenv.vector"] and calls == [False]
    # a module in both lists gets its full warmup once
    times = mjenv.warmup(imports=("mjenv.vector",), modules=("mjenv.vector",), jobs=1)
    assert list(times) == ["mjenv.vector"] and calls == [False, True]


def test_engine_win_tables_are_the_rules_core_tables():
    """The engine plays with mjenv.hand's win tables (game.win_tables reads only those two members)."""
    from mjenv import hand

    suit_win, honor_win = G.win_tables()
    _suit, _honor, ref_suit_win, ref_honor_win = hand.load_tables()
    assert np.array_equal(suit_win, ref_suit_win) and np.array_equal(honor_win, ref_honor_win)
    assert suit_win.flags.c_contiguous and honor_win.flags.c_contiguous
