import json

import numpy as np
import pytest

import trussreg.bench
import trussreg.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from trussreg.bench import clique_enumeration
from trussreg.cli import main
from trussreg.paper import PAPER

# The smallest runs the reproduction and the benchmark allow.
TINY = trussreg.reproduce.Settings(
    n_corr=200, n_pairs=2, ratios=(0.8, 0.9), methods=("TrussReg", "TrussReg, no SDS", "spectral")
)
TINY_BENCH = trussreg.bench.BenchSettings(
    sizes=(200, 300), skeletons=(50, 100), pipeline_sizes=(300,), budget_s=2.0, repeats=1
)


def test_reproduce_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setattr(trussreg.reproduce, "QUICK", TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("k-truss outlier rejection registers")
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert claims[2]["verdict"] == "not testable here"  # no unsampled pipeline in this run
    plain = doc["tables"]["uniform outliers"]
    assert {(r["method"], r["outlier ratio"]) for r in plain} == {
        (m, r) for m in TINY.methods for r in TINY.ratios
    }
    assert all(r["recall"] == 1.0 and r["ms"] > 0 for r in plain)
    assert len(doc["tables"]["clustered outliers"]) == len(plain)
    assert doc["settings"]["n_corr"] == 200 and doc["settings"]["seed"] == 0
    assert (tmp_path / "trussreg.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_writes_valid_record(tmp_path, monkeypatch):
    monkeypatch.setattr(trussreg.bench, "QUICK", TINY_BENCH)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert [r["N"] for r in doc["tables"]["full graphs"]] == [200, 300]
    assert [r["M"] for r in doc["tables"]["skeletons"]] == [50, 100]
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    truss = [m for m in doc["measurements"] if m["impl"] == "truss"]
    assert len(truss) == 4 and all(m["seconds"] > 0 and m["peak_bytes"] >= 0 for m in truss)
    assert doc["tables"]["pipeline"][0]["sampling speed-up"] > 0
    assert (tmp_path / "bench.png").is_file()


def test_clique_enumeration_counts_and_budget():
    triangle_and_edge = np.array([[0, 1], [1, 2], [0, 2], [2, 3]])
    assert clique_enumeration(triangle_and_edge, 10.0) == {"cliques": 2, "finished": True}


def test_paper_record():
    assert PAPER.name == "trussreg" and PAPER.gpu
    assert PAPER.url.startswith("https://")


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "trussreg" and doc["settings"]["n_corr"] == 1000
