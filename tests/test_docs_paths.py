"""The product's docs stay reference a newcomer can use: every file, folder and module they name exists, their
Python examples run, the README keeps its size and its generated tables, and no text of the product names
work periods, tracker numbers or one machine's absolute paths.

``lab/`` is exempt: it is history, keyed by date and commit, and names things as they were then.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "CHANGELOG.md"] + sorted((ROOT / "docs").glob("*.md"))
_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.DOTALL | re.MULTILINE)


def _named(text: str) -> tuple[set[str], set[str]]:
    """Repository paths (``benchmarks/x.py``, ``lab/probes/``...) and ``python -m`` modules a text names."""
    roots = "benchmarks|scripts|lab|agents|train|docs|tests"
    paths = set(re.findall(rf"(?<![\w/$.-])((?:{roots})/[\w/.-]*[\w/])", text))
    paths = {p for p in paths if p.endswith("/") or "." in p.rsplit("/", 1)[-1]}
    modules = set(re.findall(r"python -m ((?:benchmarks|train|agents|mjenv|lab)(?:\.\w+)*)", text))
    return paths, modules


def _find_spec(module: str):
    try:
        return importlib.util.find_spec(module)
    except ModuleNotFoundError:  # a parent package that does not exist
        return None


def test_paths_and_modules_named_in_the_docs_exist():
    missing = []
    for doc in DOCS:
        paths, modules = _named(doc.read_text(encoding="utf-8"))
        missing += [f"{doc.name}: {p}" for p in sorted(paths) if not (ROOT / p).exists()]
        missing += [f"{doc.name}: {m}" for m in sorted(modules) if _find_spec(m) is None]
    assert not missing, missing


def test_the_path_check_sees_a_wrong_path():
    paths, modules = _named(
        "`python -m benchmarks.vector_ab` and `benchmarks/ab_hand.py` and `$B/benchmarks/x.py`"
    )
    assert paths == {"benchmarks/ab_hand.py"} and modules == {"benchmarks.vector_ab"}
    assert not (ROOT / "benchmarks/ab_hand.py").exists()
    assert _find_spec("benchmarks.vector_ab") is None and _find_spec("benchmarks.lab.x") is None


# --- the docs' Python examples run -------------------------------------------------------------------------
#: docs whose Python blocks run here (docs/integrations.md has its own test, tests/test_docs_integrations.py)
RUNNABLE = [ROOT / "docs" / "search.md"]
EXAMPLES = [(p.name, i, m.group(2)) for p in RUNNABLE
            for i, m in enumerate(m for m in _FENCE.finditer(p.read_text(encoding="utf-8"))
                                  if m.group(1) == "python")]  # fmt: skip


@pytest.mark.parametrize("doc,index,code", EXAMPLES, ids=[f"{d}-{i}" for d, i, _ in EXAMPLES])
def test_docs_python_example_runs(doc, index, code, tmp_path, monkeypatch):
    for lib in ("torch", "stable_baselines3", "sb3_contrib", "torchrl", "tianshou"):
        if (
            re.search(rf"^\s*(import|from) {lib}\b", code, re.MULTILINE)
            and importlib.util.find_spec(lib) is None
        ):
            pytest.skip(f"{lib} is not installed (test extra)")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"docs/{doc} (block {index})", "exec"), {"__name__": "__docs__"})  # noqa: S102


# --- sizes and generated tables ------------------------------------------------------------------------------
def _outside_code(text: str) -> list[str]:
    return _FENCE.sub("", text).splitlines()


def test_readme_fits_a_newcomer():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    long = [line for line in _outside_code(text) if len(line) > 120]
    assert not long, long


@pytest.mark.parametrize("doc,limit", [("training.md", 300), ("performance.md", 150)])
def test_reference_docs_stay_short(doc, limit):
    assert len((ROOT / "docs" / doc).read_text(encoding="utf-8").splitlines()) <= limit


def _between(text: str, start: str, end: str) -> str:
    return text.split(start, 1)[1].split(end, 1)[0].strip() + "\n"


def test_readme_performance_table_is_the_suite_record():
    """The README's table is exactly ``python -m benchmarks.suite --readme-table benchmarks/results/readme.json``:
    each row carries the date, commit and host of the record it came from."""
    from benchmarks.suite import readme_table

    record = json.loads((ROOT / "benchmarks/results/readme.json").read_text(encoding="utf-8"))
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = _between(text, "<!-- performance table: generated -->", "<!-- end of performance table -->")
    assert table == readme_table(record)
    assert 3 <= len(table.splitlines()) - 2 <= 6
    assert record["machine"]["commit"] and "dirty" not in record["machine"]["commit"]


def test_readme_table_command_runs_as_written(capsys, monkeypatch):
    """The command the README gives for its table prints exactly the README's table."""
    from benchmarks.suite import main

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    monkeypatch.chdir(ROOT)
    assert main(["--readme-table", "benchmarks/results/readme.json"]) == 0
    table = _between(text, "<!-- performance table: generated -->", "<!-- end of performance table -->")
    assert capsys.readouterr().out == table


def test_readme_agents_table_has_at_most_five_rows_on_one_seed():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    table = _between(text, "<!-- agents table -->", "<!-- end of agents table -->").splitlines()
    assert 3 <= len(table) - 2 <= 5
    assert "10,000 walls of seed" in text.split("<!-- agents table -->")[0].rsplit("## Agents", 1)[1]


# --- the product speaks of versions, dates and commits --------------------------------------------------------
PRODUCT = ["README.md", "CHANGELOG.md", "docs", "agents", "mjenv", "train", "benchmarks", "scripts", "tests"]
WORK_PERIODS = re.compile(
    r"session [0-9]|sessions [0-9]|this session|issues? [0-9]|issues? #[0-9]", re.IGNORECASE
)
#: technical uses of the words, allowed where they stand: (file, text on the line)
ALLOWED = [
    ("mjenv/botzone/runner.py", "process group"),  # a POSIX session of processes
]
MACHINE_PATHS = re.compile(r"(?<![\w.])/(?:work|root|home|Users|opt/pypi|mnt/data)/")


def _product_files():
    for entry in PRODUCT:
        path = ROOT / entry
        files = [path] if path.is_file() else sorted(path.rglob("*"))
        for f in files:
            if (
                f.is_file()
                and f.suffix in (".py", ".md", ".sh", ".toml", ".txt", ".cfg")
                and "__pycache__" not in f.parts
            ):
                yield f


def _offending(pattern: re.Pattern, allowed=()) -> list[str]:
    out = []
    for f in _product_files():
        rel = str(f.relative_to(ROOT))
        if rel == "tests/test_docs_paths.py":
            continue
        for n, line in enumerate(f.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if pattern.search(line) and not any(rel == a and s in line for a, s in allowed):
                out.append(f"{rel}:{n}: {line.strip()[:100]}")
    return out


def test_no_work_periods_or_tracker_numbers_in_the_product():
    assert not _offending(WORK_PERIODS, ALLOWED), _offending(WORK_PERIODS, ALLOWED)


def test_no_absolute_machine_paths_in_the_product():
    assert not _offending(MACHINE_PATHS), _offending(MACHINE_PATHS)


def test_the_text_checks_see_what_they_look_for():
    assert WORK_PERIODS.search("as in Session 35") and WORK_PERIODS.search("(issue 25)")
    assert WORK_PERIODS.search("sessions 15-20") and not WORK_PERIODS.search("a Ray session starts")
    assert MACHINE_PATHS.search("git clone /work/main x") and not MACHINE_PATHS.search("runs/work/x")


def test_the_recipe_curve_draws_from_the_zoo(tmp_path):
    """``scripts/plot_recipe_curve.py`` (the curve in docs/training.md) draws from the zoo files' metadata."""
    pytest.importorskip("matplotlib")
    import runpy

    main = runpy.run_path(str(ROOT / "scripts" / "plot_recipe_curve.py"))["main"]
    out = main(tmp_path / "curve.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
