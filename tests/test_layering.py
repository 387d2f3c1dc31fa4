"""Import layering, read from the sources with ``ast`` (imports inside functions count too):
``mjenv`` <- ``agents`` <- ``train``; the rules modules import no front or learning framework."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "mjenv"
#: the rules core and engine: pure numpy/numba
RULES_MODULES = (
    "tiles",
    "hand",
    "fans",
    "game",
    "melds",
    "rules",
    "observation",
    "actions",
    "record",
    "_jit",
    "policy",
)
FRAMEWORKS = {"pettingzoo", "gymnasium", "gym", "torch", "ray", "tensorflow", "jax"}
UPPER = {"agents", "train"}


def imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            out.add(str(node.args[0].value).split(".")[0])
    return out


def test_the_scanner_sees_imports_in_functions(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "def f():\n    import torch.nn\n    from ray import get\n    importlib.import_module('agents.rule')\n"
    )
    assert imported_roots(p) == {"torch", "ray", "agents"}


@pytest.mark.parametrize("name", RULES_MODULES)
def test_rules_modules_import_no_framework(name):
    path = PKG / f"{name}.py"
    assert path.is_file(), path
    bad = imported_roots(path) & (FRAMEWORKS | UPPER)
    assert not bad, f"mjenv/{name}.py imports {sorted(bad)}"


def test_mjenv_never_imports_agents_or_train():
    offenders = {str(p.relative_to(ROOT)): sorted(imported_roots(p) & UPPER) for p in PKG.rglob("*.py")}
    assert not {k: v for k, v in offenders.items() if v}


def test_agents_never_import_train():
    agents = ROOT / "agents"
    if not agents.is_dir():
        pytest.skip("no agents/ package in this checkout yet")
    offenders = {
        str(p.relative_to(ROOT)): sorted(imported_roots(p) & {"train"}) for p in agents.rglob("*.py")
    }
    assert not {k: v for k, v in offenders.items() if v}
