"""lab/probes/nn_sizes.py (network sizes, speed and imitation accuracy) at a tiny scale."""

import pytest

pytest.importorskip("torch")


def test_nn_sizes_benchmark_runs_tiny(capsys):
    """lab/probes/nn_sizes.py at a tiny scale: a row per size, the mlp's projection is its base rate."""
    from lab.probes import nn_sizes

    out = nn_sizes.main(["--repeats", "1", "--threads", "1", "--sizes", "mlp", "planes:1x4+f",
                         "--train-batch", "64", "--infer-batch", "16", "--base", "1000"])  # fmt: skip
    assert [r["size"] for r in out["rows"]] == ["mlp", "planes:1x4+f"]
    assert out["rows"][0]["projected_cpu"] == pytest.approx(1000)
    assert "planes(blocks=1, channels=4" in capsys.readouterr().out
    with pytest.raises(ValueError, match="bad size"):
        nn_sizes.parse_size("planes")
