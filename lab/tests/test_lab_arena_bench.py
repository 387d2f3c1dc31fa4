"""lab/probes/arena_bench.py (the whole run_arena call timed) at a tiny scale."""


def test_arena_benchmark_smoke(capsys):
    from lab.probes import arena_bench as bench

    rows = bench.bench(walls=2, repeats=1, threads=1, tables=8, warm=False)
    assert rows[0]["entry"] == "arena 1v3 random vs random" and rows[0]["hands"] == 8
    assert rows[0]["hands_per_s"] > 0
    assert "hands/s" in capsys.readouterr().out
