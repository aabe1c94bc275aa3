"""The reproduction and the benchmark write valid results files (at tiny sizes)."""

import gmmflowseg.bench
import gmmflowseg.reproduce
from gmmflowseg.cli import main
from gmmflowseg.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {"size": 8, "depth": 2, "base": 4, "steps": 2, "n_train": 8, "n_test": 3}


def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(gmmflowseg.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("GMM+NF beats the PU-Net")
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    rows = {r["method"]: r for r in doc["tables"]["lesions"]}
    assert set(rows) == set(gmmflowseg.reproduce.METHODS)
    for r in rows.values():
        assert 0 <= r["HM-IoU"] <= 1 and r["GED"] >= -1e-12 and 0 <= r["diversity"] <= 1
    assert rows["U-Net"]["diversity"] == 0  # a deterministic model has no spread
    assert 0.05 <= rows["GMM+NF"]["mean_sigma_p"] <= 0.5  # the constrained head's range
    assert doc["settings"]["claim_supported"] in (True, False)
    assert all((tmp_path / f).stat().st_size > 0 for f in doc["figures"])


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"size": 16, "samples": [2, 8], "min_time": 0.0, "base": 4, "depth": 2}
    monkeypatch.setitem(gmmflowseg.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    impls = {r["impl"] for r in doc["measurements"]}
    assert impls == {"backbone", "sample M=2", "sample M=8"}
    row = doc["tables"]["sampling"][0]
    assert row["backbone_ms"] > 0 and doc["claims"][0]["verdict"] in VERDICTS
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_cli_refuses_cuda_and_knows_cracks(capsys):
    assert main(["bench", "--device", "cuda"]) == 2
    try:
        main(["reproduce", "--cracks", "--help"])
    except SystemExit as exc:
        assert exc.code == 0
    assert "--quick" in capsys.readouterr().out
