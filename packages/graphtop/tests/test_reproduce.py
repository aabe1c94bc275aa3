import json

import pytest

import graphtop.bench
import graphtop.reproduce
from graphtop.bench import bench
from graphtop.cli import main
from graphtop.paper import PAPER
from graphtop.reproduce import METHODS, reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

HEADLINE = "GraphTOP beats graph-prompt and fine-tuning baselines in few-shot node classification"


def tiny_reproduce(*, quick, seed, out):
    """The real reproduction at its smallest settings (the quick run takes minutes)."""
    return reproduce(
        quick=quick, seed=seed, out=out, seeds=1, epochs=2, graphs=["KarateClub"], pretrain_steps=2
    )


def tiny_bench(*, quick, device, out):
    """The real benchmark on small graphs and few targets."""
    return bench(
        quick=quick, device=device, out=out, sizes=[200, 400], targets=[5, 10], degrees=[2.0, 4.0]
    )


def test_reproduce_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setattr(graphtop.reproduce, "reproduce", tiny_reproduce)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"] == HEADLINE
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert claims[-1]["verdict"] == "not testable here"
    (cell,) = doc["data"]["cells"]
    assert cell["graph"] == "KarateClub" and set(cell["acc"]) == set(METHODS)
    assert all(0 <= a[0] <= 1 for a in cell["acc"].values())
    assert set(cell["graphtop"]) == {"GraphTOP", "GraphTOP rho*=0.1"}
    assert all(0 <= st["density"] <= 1 for st in cell["graphtop"].values())
    # the verdicts follow the rules of graphtop.reproduce on the run's own numbers
    entropy = cell["graphtop"]["GraphTOP"]["mean_entropy"]
    assert claims[1]["verdict"] == ("held" if entropy < 0.1 else "not held")
    assert [r["method"] for r in doc["tables"]["accuracy"]] == list(METHODS)
    assert doc["settings"]["graphs"]["KarateClub"]["num_test"] == 22
    assert doc["figures"] == ["graphtop.png"]
    assert (tmp_path / "graphtop.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_writes_valid_measurements(tmp_path, monkeypatch):
    monkeypatch.setattr(graphtop.bench, "bench", tiny_bench)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    rows = doc["measurements"]
    assert {r["case"] for r in rows} == {
        "construction",
        "epoch_vs_targets",
        "epoch_vs_degree",
        "step_50_targets",
    }
    assert all(r["seconds"] > 0 for r in rows)
    step = [r for r in rows if r["case"] == "step_50_targets"]
    assert all(isinstance(r["peak_bytes"], int) for r in step)  # bytes, not MB
    assert [r["nodes"] for r in doc["tables"]["construction"]] == [200, 400]
    assert [r["targets"] for r in doc["tables"]["epoch"]] == [5, 10]
    mem = doc["tables"]["memory"]
    assert mem[1]["candidate_bytes"] > mem[0]["candidate_bytes"]
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert (tmp_path / "bench.png").is_file() and (tmp_path / "epoch_scaling.png").is_file()


def test_registration():
    assert PAPER.load_reproduce() is reproduce and PAPER.load_bench() is bench
    assert PAPER.gpu is False


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "graphtop" and len(doc["data"]["cells"]) == 3
    assert json.loads((tmp_path / "results.json").read_text())["claims"][0]["statement"] == HEADLINE
