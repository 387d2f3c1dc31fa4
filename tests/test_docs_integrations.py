"""docs/integrations.md can't rot: its Python blocks run as shown."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
BLOCKS = [
    (m.group(2), re.findall(r"^## (.+)$", DOC.read_text(encoding="utf-8")[: m.start()], re.MULTILINE)[-1])
    for m in re.finditer(r"^```(\w*)\n(.*?)^```", DOC.read_text(encoding="utf-8"), re.DOTALL | re.MULTILINE)
    if m.group(1) == "python"
]


def test_the_doc_has_an_example_per_library():
    heads = [h for _, h in BLOCKS]
    wanted = ["Gymnasium", "MaskablePPO", "TorchRL", "TorchRL PettingZooWrapper", "Tianshou"]
    assert len(heads) == len(wanted) and all(w in h for h, w in zip(heads, wanted))


@pytest.mark.parametrize("index", range(len(BLOCKS)), ids=[h for _, h in BLOCKS])
def test_python_block_runs(index, tmp_path, monkeypatch):
    code, heading = BLOCKS[index]
    for module, extra in (("sb3_contrib", "sb3"), ("torchrl", "torchrl"), ("tianshou", "tianshou")):
        if module in code and importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} is not installed ({extra} extra)")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"docs/integrations.md ({heading})", "exec"), {"__name__": "__doc_example__"})  # noqa: S102
