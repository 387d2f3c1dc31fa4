"""train.average: the uniform average of agents.nn checkpoints' weights."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from agents import nn as ann  # noqa: E402
from train.average import average_checkpoints  # noqa: E402


def _save(tmp_path, name, seed, **config):
    p = tmp_path / f"{name}.safetensors"
    ann.save(ann.make(1, seed, arch="planes", blocks=1, channels=8, with_features=True, **config).net, p)
    return p


def test_average_is_the_mean_of_every_weight(tmp_path):
    a, b, c = (_save(tmp_path, n, s) for n, s in (("a", 1), ("b", 2), ("c", 3)))
    avg = average_checkpoints([a, b, c])
    nets = [ann.load(p) for p in (a, b, c)]
    for k, v in avg.state_dict().items():
        want = sum(n.state_dict()[k].double() for n in nets) / 3
        torch.testing.assert_close(v.double(), want, rtol=0, atol=1e-6)
    one = average_checkpoints([a])
    for k, v in one.state_dict().items():
        assert torch.equal(v, nets[0].state_dict()[k])


def test_bad_inputs_fail_clearly(tmp_path):
    a = _save(tmp_path, "a", 1)
    other = tmp_path / "other.safetensors"
    ann.save(ann.make(1, 1, arch="planes", blocks=2, channels=8, with_features=True).net, other)
    with pytest.raises(ValueError, match="config"):
        average_checkpoints([a, other])
    with pytest.raises(ValueError, match="at least one"):
        average_checkpoints([])
    r = subprocess.run([sys.executable, "-m", "train.average", str(a), str(tmp_path / "missing.safetensors"),
                        "--out", str(tmp_path / "o.safetensors")], capture_output=True, text=True)  # fmt: skip
    assert r.returncode != 0 and "no checkpoint at" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o.safetensors").exists()


def test_command_writes_a_loadable_checkpoint(tmp_path):
    a, b = _save(tmp_path, "a", 1), _save(tmp_path, "b", 2)
    out = tmp_path / "avg" / "p.safetensors"
    r = subprocess.run([sys.executable, "-m", "train.average", str(a), str(b), "--out", str(out)],
                       capture_output=True, text=True, check=True)  # fmt: skip
    assert "the average of 2 checkpoints" in r.stdout
    loaded = ann.load(out)
    for k, v in average_checkpoints([a, b]).state_dict().items():
        assert torch.equal(loaded.state_dict()[k], v)
