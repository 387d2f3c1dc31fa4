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
    "shanten",
    "fans",
    "game",
    "melds",
    "rules",
    "observation",
    "view",
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


def test_the_product_never_imports_the_lab():
    """``lab/`` (research probes, their tests, unshipped weights) sits beside the product: nothing in
    ``mjenv``, ``agents``, ``train``, ``benchmarks`` or ``scripts`` imports it."""
    offenders = {
        str(p.relative_to(ROOT)): sorted(imported_roots(p) & {"lab"})
        for pkg in ("mjenv", "agents", "train", "benchmarks", "scripts", "tests")
        for p in (ROOT / pkg).rglob("*.py")
    }
    assert not {k: v for k, v in offenders.items() if v}


def test_agents_never_import_train():
    agents = ROOT / "agents"
    if not agents.is_dir():
        pytest.skip("no agents/ package in this checkout yet")
    offenders = {
        str(p.relative_to(ROOT)): sorted(imported_roots(p) & {"train"}) for p in agents.rglob("*.py")
    }
    assert not {k: v for k, v in offenders.items() if v}


def private_names_used(path: Path, package_root: Path = ROOT) -> list[str]:
    """``mjenv`` private names (``_x``, not dunders) that ``path`` takes from another mjenv module: ``from
    mjenv.m import _x`` or ``m._x`` on an imported mjenv module ``m``. Private *modules* (``mjenv._jit``,
    ``mjenv._tables``) are infrastructure and may be imported; their private names may not."""

    def is_module(dotted: str) -> bool:
        rel = Path(*dotted.split("."))
        return (package_root / rel).with_suffix(".py").is_file() or (package_root / rel).is_dir()

    def private(name: str) -> bool:
        return name.startswith("_") and not name.startswith("__")

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    aliases, out = {}, []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").split(".")[0] == "mjenv"
        ):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if private(a.name) and not is_module(full):
                    out.append(f"line {node.lineno}: from {node.module} import {a.name}")
                aliases[a.asname or a.name] = full
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "mjenv":
                    aliases[a.asname or "mjenv"] = a.name if a.asname else "mjenv"
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            target = f"{aliases[node.value.id]}.{node.attr}"
            if private(node.attr) and is_module(aliases[node.value.id]) and not is_module(target):
                out.append(f"line {node.lineno}: {node.value.id}.{node.attr} ({target})")
    return out


def test_the_private_name_scanner_sees_both_forms(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "from mjenv.hand import _k_win_code, waits\nfrom mjenv import game as G, _jit\nimport mjenv.fans as F\n"
        "def f():\n    G._step(1)\n    F._score\n    _jit.njit\n    G.step_kernel\n    G.__name__\n"
    )
    found = private_names_used(p)
    assert sorted(s.split(": ", 1)[1] for s in found) == [
        "F._score (mjenv.fans._score)",
        "G._step (mjenv.game._step)",
        "from mjenv.hand import _k_win_code",
    ]


def test_mjenv_modules_use_no_private_names_of_other_mjenv_modules():
    """Shared kernels and tables have public names (``*_kernel``, ``load_tables``): no module of ``mjenv``
    reaches into another's private ``_names`` (a module's own privates are its business)."""
    offenders = {}
    for p in PKG.rglob("*.py"):
        found = private_names_used(p)
        if found:
            offenders[str(p.relative_to(ROOT))] = found
    assert not offenders


def face_imports(path: Path, package_root: Path = ROOT) -> list[str]:
    """Imports of the package face (``mjenv/__init__.py``) in ``path``: ``import mjenv``, ``from mjenv import X``
    where ``X`` is not a submodule (``__version__``, ``warmup``, ``env``, ...), ``import_module("mjenv")``.
    ``import mjenv.hand`` and ``from mjenv import hand`` import a submodule and are fine."""

    def is_module(dotted: str) -> bool:
        rel = Path(*dotted.split("."))
        return (package_root / rel).with_suffix(".py").is_file() or (package_root / rel).is_dir()

    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [f"line {node.lineno}: import mjenv" for a in node.names if a.name == "mjenv"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "mjenv":
            out += [
                f"line {node.lineno}: from mjenv import {a.name}"
                for a in node.names
                if not is_module(f"mjenv.{a.name}")
            ]
        elif (
            isinstance(node, ast.Call)
            and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value == "mjenv"
        ):
            out.append(f"line {node.lineno}: import_module('mjenv')")
    return out


def test_the_face_import_scanner_sees_every_form(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "import mjenv\nimport mjenv.hand as H\nfrom mjenv import game, _jit, warmup\n"
        "def f():\n    from mjenv import __version__\n    importlib.import_module('mjenv')\n"
        "    importlib.import_module('mjenv.fans')\n"
    )
    assert [s.split(": ", 1)[1] for s in face_imports(p)] == [
        "import mjenv",
        "from mjenv import warmup",
        "from mjenv import __version__",
        "import_module('mjenv')",
    ]


def test_no_mjenv_module_imports_the_package_face():
    """The package face (``mjenv/__init__.py``: public names, lazy fronts) sits above every module of the
    package; they import what they need from its submodules (``mjenv._compile.warmup``,
    ``mjenv._version.__version__``), so the face is never a dependency of a lower layer."""
    offenders = {}
    for p in PKG.rglob("*.py"):
        if p == PKG / "__init__.py":
            continue
        found = face_imports(p)
        if found:
            offenders[str(p.relative_to(ROOT))] = found
    assert not offenders


# --- no import cycles ------------------------------------------------------------------------------------
# The rule: module A depends on module B when A's source imports B anywhere, at module level or inside a
# function (a function-level import only defers the cycle to run time), except under ``if TYPE_CHECKING:``.
# ``import a.b.c`` and ``from a.b import c`` name the deepest project module they reach (``from mjenv import
# hand``: mjenv.hand, ``from mjenv.hand import waits``: mjenv.hand); relative imports are resolved. That a
# package's ``__init__`` runs before its submodules is Python's machinery, not an edge.
CYCLE_PACKAGES = ("mjenv", "agents", "train", "benchmarks")


def project_modules(root: Path = ROOT, packages=CYCLE_PACKAGES) -> dict[str, Path]:
    out = {}
    for pkg in packages:
        for p in sorted((root / pkg).rglob("*.py")):
            parts = p.relative_to(root).with_suffix("").parts
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return out


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def import_edges(name: str, path: Path, modules) -> set[str]:
    """The project modules that module ``name`` (source ``path``) imports (the rule above)."""

    def deepest(dotted: str) -> str | None:
        while dotted and dotted not in modules:
            dotted = dotted.rpartition(".")[0]
        return dotted or None

    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    todo = [ast.parse(path.read_text(encoding="utf-8"), filename=str(path))]
    while todo:
        node = todo.pop()
        for child in ast.iter_child_nodes(node):
            if _type_checking_only(child):
                todo.extend(child.orelse)  # only the else branch runs
                continue
            todo.append(child)
            if isinstance(child, ast.Import):
                out.update(deepest(a.name) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                base = child.module or ""
                if child.level:
                    up = package.split(".")[: len(package.split(".")) - (child.level - 1)]
                    base = ".".join([*up, base] if base else up)
                for a in child.names:
                    out.add(deepest(f"{base}.{a.name}") if f"{base}.{a.name}" in modules else deepest(base))
    out.discard(None)
    out.discard(name)
    return out


def import_cycles(modules) -> list[list[str]]:
    """The strongly connected components of the import graph that hold more than one module (Tarjan)."""
    graph = {m: sorted(import_edges(m, p, modules)) for m, p in modules.items()}
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):  # recursion depth <= number of modules
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return sorted(comps)


def test_the_cycle_finder_sees_function_level_and_relative_imports(tmp_path):
    (tmp_path / "mjenv").mkdir()
    (tmp_path / "mjenv" / "__init__.py").write_text("")
    (tmp_path / "mjenv" / "a.py").write_text("from mjenv import b\n")
    (tmp_path / "mjenv" / "b.py").write_text("def f():\n    from .c import x\n")
    (tmp_path / "mjenv" / "c.py").write_text("import mjenv.a.nothing\n")
    (tmp_path / "mjenv" / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mjenv import a\nimport mjenv\n"
    )
    modules = project_modules(tmp_path, ("mjenv",))
    assert import_edges("mjenv.b", modules["mjenv.b"], modules) == {"mjenv.c"}
    assert import_edges("mjenv.d", modules["mjenv.d"], modules) == {"mjenv"}
    assert import_cycles(modules) == [["mjenv.a", "mjenv.b", "mjenv.c"]]


#: Cycles left on purpose, each with the reason; the test fails when one is gone (drop its entry then) or when
#: any other appears.
KNOWN_CYCLES: dict[tuple[str, ...], str] = {}


def test_no_import_cycles():
    """``mjenv``, ``agents`` and ``train`` import each other in one direction only (the rule above)."""
    assert import_cycles(project_modules()) == [list(c) for c in sorted(KNOWN_CYCLES)]


# ------------------------------------------------------------------------------------------------ the numba decorator
#: where the project's kernels live (tests/ is left out: its kernels exercise numba's own decorator on purpose)
KERNEL_TREES = ("mjenv", "agents", "train", "benchmarks", "scripts", "lab")
_JIT_NAMES = ("njit", "jit")


def jit_bypasses(path: Path) -> list[str]:
    """Lines of ``path`` that compile a kernel past :func:`mjenv._jit.njit` or its cache switch
    (``MJENV_NO_CACHE``): numba's ``njit`` / ``jit`` imported or named directly, or a ``cache=`` other than
    ``False`` passed to a decorator (``cache=True`` caches with the switch off; the project's decorator already
    caches when the switch is on)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "numba":
            out += [
                f"{node.lineno}: from {node.module} import {a.name}"
                for a in node.names
                if a.name in _JIT_NAMES
            ]
        elif (
            isinstance(node, ast.Attribute)
            and node.attr in _JIT_NAMES
            and isinstance(node.value, ast.Name)
            and node.value.id == "numba"
        ):
            out.append(f"{node.lineno}: numba.{node.attr}")
        elif isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            for kw in node.keywords:
                if (
                    name in _JIT_NAMES
                    and kw.arg == "cache"
                    and not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
                ):
                    out.append(f"{node.lineno}: {name}(cache={ast.unparse(kw.value)})")
    return sorted(set(out), key=lambda s: int(s.split(":")[0]))


def test_the_jit_scanner_sees_every_bypass(tmp_path):
    p = tmp_path / "m.py"
    p.write_text(
        "import numba\nfrom numba import njit, prange\nfrom mjenv._jit import CACHE\n\n"
        "@numba.njit(parallel=True)\ndef a(): pass\n\n@njit(cache=True)\ndef b(): pass\n\n"
        "@njit(parallel=True, cache=CACHE)\ndef c(): pass\n\n@njit(cache=False)\ndef d(): pass\n\n"
        "@njit\ndef e(): pass\n\nf = numba.jit(nopython=True)(e)\n"
    )
    assert jit_bypasses(p) == [
        "2: from numba import njit",
        "5: numba.njit",
        "8: njit(cache=True)",
        "11: njit(cache=CACHE)",
        "20: numba.jit",
    ]


def test_every_kernel_uses_the_projects_decorator_and_cache_switch():
    """Every kernel is compiled by ``mjenv._jit.njit`` (its cache switch ``MJENV_NO_CACHE``, its locked cache and
    its patches), never by ``numba.njit`` directly nor with ``cache=True``, which would cache with the switch
    off; ``mjenv/_jit.py`` alone wraps numba's decorator."""
    offenders = {
        str(p.relative_to(ROOT)): bad
        for tree in KERNEL_TREES
        if (ROOT / tree).is_dir()
        for p in sorted((ROOT / tree).rglob("*.py"))
        if p != PKG / "_jit.py" and (bad := jit_bypasses(p))
    }
    assert not offenders
