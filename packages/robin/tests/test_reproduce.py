import pytest

import robin.bench
import robin.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from robin.paper import PAPER

TINY = {
    "nx": 10, "ny": 3, "train": 3, "test": 1, "steps": 4, "latent": 8, "blocks_per_level": 1,
    "levels": 2, "batch": 2, "train_steps": 2, "K": 3, "lr": 1e-3,
}  # fmt: skip


@pytest.mark.slow  # trains four tiny networks, rolls out five models (~4 s CPU; more when busy)
def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(robin.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[0]["verdict"] == "held"  # T + K - 1 vs T K calls is exact
    rows = {r["model"]: r for r in doc["tables"]["rollouts"]}
    assert set(rows) == {"MGNNextStep", "AMPNNextStep", "MGNDiffusion",
                         "ROBIN (sequential DDPM)", "ROBIN (ROBI)"}  # fmt: skip
    assert rows["ROBIN (ROBI)"]["sequential_calls"] == 4 + 3 - 1
    assert rows["MGNDiffusion"]["sequential_calls"] == 4 * 3
    assert rows["MGNNextStep"]["sequential_calls"] == 4
    assert (tmp_path / "robin.png").stat().st_size > 0


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"nx": 10, "ny": 3, "T": 3, "K": 2, "latent": 8, "amg_sizes": [200, 400],
            "min_time": 0.0, "gpu_nx": 50}  # fmt: skip
    monkeypatch.setitem(robin.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["verdict"] == "held"
    assert [r["calls"] for r in doc["tables"]["window"]] == [3, 4]  # T + W - 1 for W = 1, 2
    assert all((tmp_path / f).is_file() for f in doc["figures"])
