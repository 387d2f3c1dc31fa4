"""Every benchmark script and module the docs name exists where they say (``benchmarks/`` or ``benchmarks/lab/``).

``docs/performance-log.md`` is exempt: it is history, kept verbatim, and names scripts by the paths they had then
(its header says where they are now).
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", ROOT / "benchmarks" / "lab" / "README.md"] + sorted(
    p for p in (ROOT / "docs").glob("*.md") if p.name != "performance-log.md"
)


def _named(text: str) -> tuple[set[str], set[str]]:
    paths = set(re.findall(r"(?<![\w/$.])(benchmarks/[\w/]+\.(?:py|sh|md))", text))
    modules = set(re.findall(r"python -m (benchmarks(?:\.\w+)+)", text))
    return paths, modules


def test_benchmark_paths_named_in_the_docs_exist():
    missing = []
    for doc in DOCS:
        paths, modules = _named(doc.read_text(encoding="utf-8"))
        missing += [f"{doc.name}: {p}" for p in sorted(paths) if not (ROOT / p).is_file()]
        missing += [f"{doc.name}: {m}" for m in sorted(modules) if importlib.util.find_spec(m) is None]
    assert not missing, missing


def test_the_check_sees_a_wrong_path():
    paths, modules = _named(
        "`python -m benchmarks.vector_ab` and `benchmarks/ab_hand.py` and `$B/benchmarks/x.py`"
    )
    assert paths == {"benchmarks/ab_hand.py"} and modules == {"benchmarks.vector_ab"}
    assert (
        not (ROOT / "benchmarks/ab_hand.py").exists()
        and importlib.util.find_spec("benchmarks.vector_ab") is None
    )
