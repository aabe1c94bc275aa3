import json

import pytest

from flashbias.bench import bench
from flashbias.reproduce import reproduce


@pytest.mark.slow  # fits the NeuralFactorizer: torch.optim imports torch._dynamo
def test_reproduce_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    res = reproduce(
        quick=True,
        out=tmp_path,
        lengths=[64, 128],
        neural_steps=5,
        neural_ranks=(4,),
        min_run_time=0.01,
    )
    assert max(r["max_abs_dO"] for r in res["exactness"] if r["dtype"] == "float64") < 1e-10
    assert (tmp_path / "flashbias.png").stat().st_size > 0
    assert {r["N"] for r in res["speed_memory"]} == {64, 128}
    json.dumps(res)


def test_bench_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    res = bench(out=tmp_path, lengths=[64, 128], ranks=[2], min_run_time=0.01)
    assert len(res["ratios"]) == 4 and all(r["speedup"] > 0 for r in res["ratios"])
    assert (tmp_path / "bench.png").exists()
