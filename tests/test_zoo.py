"""The model zoo (``agents/zoo/``, :mod:`agents.zoo_meta`): every file loads and carries its metadata, the table of
docs/agents.md lists exactly the zoo's files, a metadata rewrite leaves the tensors untouched, and the factories
(``agents.nn:zoo``, the aliases ``latest`` and ``baseline``, the deprecated names) load what they say."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from agents import zoo_meta as Z

ROOT = Path(__file__).resolve().parents[1]


def test_every_zoo_file_carries_its_metadata():
    files = sorted(p.name for p in Z.ZOO_DIR.iterdir())
    assert files == sorted(f"{name}.safetensors" for name in Z.ZOO)
    for name, e in Z.ZOO.items():
        meta = Z.read_metadata(e.path)
        assert all(meta.get(k) for k in Z.REQUIRED_KEYS), name
        assert Z.differences(e) == [], name  # python -m agents.zoo_meta writes them
        assert meta["zoo_name"] == name and re.fullmatch(r"\d{4}-\d{2}-\d{2}", meta["zoo_date"])
        assert name.endswith(meta["zoo_date"]) and re.fullmatch(r"[0-9a-f]{7,40}", meta["zoo_commit"])
        strength = json.loads(meta["zoo_strength"])
        assert strength["seed"] == Z.STRENGTH_SEED and strength["walls"] == Z.STRENGTH_WALLS
        assert meta["format"] == "mjenv-agents-nn/1"  # the agents.nn checkpoint's own keys kept
    assert (
        Z.LATEST == list(Z.ZOO)[-1]
        and Z.BASELINE in Z.ZOO
        and [e.date for e in Z.ZOO.values()] == sorted(e.date for e in Z.ZOO.values())
    )
    with pytest.raises(ValueError, match="no zoo entry"):
        Z.zoo_path("baseline")


def test_the_docs_table_lists_exactly_the_zoo():
    text = (ROOT / "docs" / "agents.md").read_text()
    section = text.split("## Model zoo", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| `") and "agents/zoo/" in line]
    listed = [re.search(r"agents/zoo/([\w.-]+)\.safetensors", r).group(1) for r in rows]
    assert listed == list(Z.ZOO)
    for row, e in zip(rows, Z.ZOO.values(), strict=True):
        assert f"`{e.name}`" in row and e.commit in row and f"{e.parameters:,}" in row


def test_a_metadata_rewrite_leaves_the_tensors(tmp_path):
    src = Z.ZOO[Z.LATEST].path
    path = tmp_path / "copy.safetensors"
    shutil.copy(src, path)
    before, meta = Z.tensors_digest(path), Z.read_metadata(path)
    assert Z.write_metadata(path, {"zoo_strength": '{"alone": "+9.99"}', "extra": "x" * 13})
    assert Z.tensors_digest(path) == before and path.read_bytes() != src.read_bytes()
    assert Z.read_metadata(path) == {**meta, "zoo_strength": '{"alone": "+9.99"}', "extra": "x" * 13}
    assert not Z.write_metadata(path, {"extra": "x" * 13})  # nothing to change
    assert (path.stat().st_size - 8) % 8 == src.stat().st_size % 8 == 0
    with pytest.raises(TypeError):
        Z.write_metadata(path, {"n": 1})
    (tmp_path / "bad").write_bytes(b"\xff" * 12)
    with pytest.raises(ValueError, match="not a safetensors file"):
        Z.read_metadata(tmp_path / "bad")
    torch = pytest.importorskip("torch")
    import agents.nn as ann

    a, b = ann.load(src), ann.load(path)  # the weights' SHA-256 still checks
    assert all(
        torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    )


def test_the_zoo_factories_and_aliases():
    pytest.importorskip("torch")
    import torch

    import agents.nn as ann
    from agents import waits as W
    from mjenv.policy import load_policy

    def same(p, q) -> bool:
        sp, sq = p.net.state_dict(), q.net.state_dict()
        return sp.keys() == sq.keys() and all(torch.equal(sp[k], sq[k]) for k in sp)

    nets = {name: load_policy("agents.nn:zoo", 4, 0, name=name) for name in Z.ZOO}
    for name, p in nets.items():
        assert isinstance(p, ann.NNPolicy) and p.greedy and p.net.num_parameters == Z.ZOO[name].parameters
    latest = load_policy("agents.nn:latest", 4, 0)
    assert same(latest, nets[Z.LATEST])
    # the aliases' docstrings name the entries they load today (help() and the docs read them)
    doc = {f: " ".join(f.__doc__.split()) for f in (ann.latest, ann.baseline)}
    assert f"today ``{Z.LATEST}``" in doc[ann.latest] and f"today ``{Z.BASELINE}``" in doc[ann.baseline]
    base = load_policy("agents.nn:baseline", 4, 0)
    assert isinstance(base, W.CheckedPolicy) and same(base.inner, nets[Z.BASELINE])
    assert same(load_policy("agents.nn:baseline", 4, 0, waits=False), nets[Z.BASELINE])
    for name, e in Z.ZOO.items():
        if e.old not in (None, "baseline"):
            with pytest.warns(DeprecationWarning, match=name):
                old = load_policy(f"agents.nn:{e.old}", 4, 0)
            assert same(old, nets[name])
    assert isinstance(load_policy("agents.nn:zoo", 4, 0, name=Z.LATEST, waits=True), W.CheckedPolicy)
    with pytest.raises(TypeError, match="needs name"):
        load_policy("agents.nn:zoo", 4, 0)
    with pytest.raises(ValueError, match="no zoo entry"):
        load_policy("agents.nn:zoo", 4, 0, name="baseline")
