"""The README can't rot: its Python blocks run as shown, its ``mjenv`` commands run, its test command is the
one ``.ci/run`` runs, and the files and modules it names exist."""

from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _blocks(lang: str) -> list[tuple[str, str]]:
    """``(heading, code)`` of every fenced block of ``lang``, the heading being the last ``##`` line above it."""
    out = []
    for m in _FENCE.finditer(README):
        if m.group(1) == lang:
            heads = re.findall(r"^## (.+)$", README[: m.start()], re.MULTILINE)
            out.append((heads[-1] if heads else "top", m.group(2)))
    return out


PYTHON = _blocks("python")
BASH = _blocks("bash")


def _commands(code: str) -> list[str]:
    """Shell lines of a block, continuations joined and comments dropped."""
    joined = code.replace("\\\n", " ")
    lines = (line.split("#", 1)[0].strip() for line in joined.splitlines())
    return [line for line in lines if line]


def test_readme_has_the_blocks_it_promises():
    heads = [h for h, _ in PYTHON]
    assert len(PYTHON) >= 4 and any("AEC" in h for h in heads) and any("MaskablePPO" in h for h in heads)
    assert any("VectorEnv" in h for h in heads) and any("Rule options" in h for h in heads)
    assert BASH[0][1].strip() == "pip install -e . && mjenv selfplay"


def test_test_command_is_the_ci_command():
    ci = [line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line.startswith("pip install")]
    assert len(ci) == 1
    assert ci[0] in [code.strip() for _, code in BASH]


@pytest.mark.parametrize("index", range(len(PYTHON)), ids=[f"{i}-{h}" for i, (h, _) in enumerate(PYTHON)])
def test_python_block_runs(index, tmp_path, monkeypatch):
    heading, code = PYTHON[index]
    if "sb3_contrib" in code and importlib.util.find_spec("sb3_contrib") is None:
        pytest.skip("sb3-contrib is not installed (test extra)")
    if "import torch" in code and importlib.util.find_spec("torch") is None:
        pytest.skip("torch is not installed (test extra)")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"README.md ({heading})", "exec"), {"__name__": "__readme__"})  # noqa: S102 (the README's own code)


MJENV_COMMANDS = [cmd for _, code in BASH if "pip install" not in code for cmd in _commands(code)
                  if cmd.startswith("mjenv ")]  # fmt: skip


@pytest.mark.parametrize("command", MJENV_COMMANDS)
def test_mjenv_command_runs(command, tmp_path, monkeypatch):
    from mjenv.cli import main

    if "--plot" in command and importlib.util.find_spec("matplotlib") is None:
        pytest.skip("--plot needs matplotlib")
    monkeypatch.chdir(tmp_path)
    earlier_commands = MJENV_COMMANDS[: MJENV_COMMANDS.index(command)]
    for earlier in earlier_commands:  # e.g. `view` reads the record that `play --log` wrote
        if "--log" in earlier:
            assert main(shlex.split(earlier)[1:]) == 0
    assert main(shlex.split(command)[1:]) == 0
    for word in shlex.split(command):
        if word.endswith((".json", ".html", ".png")):
            assert (tmp_path / word).stat().st_size > 0, word


def test_named_files_and_modules_exist():
    named = re.findall(r"`((?:docs|mjenv|benchmarks|scripts|tests)/[\w./-]*)", README)
    paths = {
        p for p in named if p.endswith("/") or "." in p.rsplit("/", 1)[-1]
    }  # not env ids (mjenv/Mahjong-v0)
    assert "docs/rules.md" in paths
    missing = [p for p in sorted(paths) if not (ROOT / p).exists()]
    modules = set(re.findall(r"python -m ([\w.]+)", README))
    missing += [m for m in sorted(modules) if importlib.util.find_spec(m) is None]
    assert not missing, missing


def _section(heading: str) -> str:
    return README.split(f"## {heading}", 1)[1].split("\n## ", 1)[0]


def test_readme_states_what_a_new_user_hit():
    """What new users hit (reported 2026-12-03): the compile time on a loaded machine, that the browser tests skip without Chromium, and what
    a winner of -1 means in quick-start 3."""
    setup = " ".join(_section("Set-up").split())
    assert "up to ~2 minutes on a loaded one" in setup
    assert "tests/test_viewer_browser.py" in setup and "skip unless" in setup and "chromium-driver" in setup
    assert "-1: a draw" in _section("Quick-start 3: VectorEnv and a torch policy")


def test_browser_tests_skip_without_chromium(tmp_path):
    """What the README says: without chromium and chromedriver on PATH every browser test is skipped (a PATH
    holding only the Python interpreter), none fails."""
    import os
    import subprocess
    import sys

    (tmp_path / "python").symlink_to(sys.executable)
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-n", "0", "-rs",
         "tests/test_viewer_browser.py"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0 and "skipped" in proc.stdout and "passed" not in proc.stdout, proc.stdout[
        -2000:
    ]


def test_viewer_example_is_a_won_hand_and_prints_one_line(tmp_path, monkeypatch, capsys):
    """The README's viewer example (fixed 2026-12-03) used a seed whose hand ends in a draw, and ``--html`` printed the
    whole text replay; its seed now gives a won hand and the command prints one line."""
    import json

    from mjenv.cli import main

    (cmd,) = [c for c in MJENV_COMMANDS if c.startswith("mjenv play") and "--html" in c]
    monkeypatch.chdir(tmp_path)
    assert main(shlex.split(cmd)[1:]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1 and " wins: " in lines[0], lines
    seed = shlex.split(cmd)[shlex.split(cmd).index("--seed") + 1]
    assert main(["play", "--seed", seed, "--quiet", "--log", "hand.json"]) == 0
    assert json.loads((tmp_path / "hand.json").read_text())["result"]["winner"] is not None
