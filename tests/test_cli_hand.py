"""The ``mjenv shanten`` and ``mjenv waits`` commands."""

from __future__ import annotations

from mjenv.cli import main


def test_shanten_command(capsys):
    assert main(["shanten", "[567m,2][EEE,1] 123m45p99s"]) == 0
    out = capsys.readouterr().out
    assert "shanten  0 (ready)" in out
    assert "useful 36p" in out


def test_shanten_command_all_shapes(capsys):
    assert main(["shanten", "147m258s369pESWN"]) == 0
    out = capsys.readouterr().out
    for name in ("regular", "seven_pairs", "thirteen_orphans", "honors_knitted", "knitted_straight"):
        assert name in out
    assert "*honors_knitted      0  useful CFP" in out


def test_waits_command(capsys):
    assert main(["waits", "1112345678999m"]) == 0
    assert "waits    123456789m (9 kinds, 23 tiles left)" in capsys.readouterr().out
    assert main(["waits", "11223344556677m"]) == 0
    assert "win      regular, seven_pairs" in capsys.readouterr().out
    assert main(["waits", "123m456m789m123s5p9s"[:-2]]) == 0
    assert "5p" in capsys.readouterr().out


def test_bad_input_is_a_clear_error(capsys):
    assert main(["waits", "12x"]) == 2
    assert "cannot parse" in capsys.readouterr().err
    assert main(["shanten", "11111m2345678999m"]) == 2
    assert "more than 4 copies" in capsys.readouterr().err
    assert main(["shanten", "123456m"]) == 2
    assert "needs 13 or 14 standing tiles, got 6" in capsys.readouterr().err
