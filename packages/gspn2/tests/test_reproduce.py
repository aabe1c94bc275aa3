import json

import pytest

import gspn2.bench
import gspn2.reproduce
from gspn2.cli import main
from gspn2.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

# The smallest runs the reproduction and the benchmark allow: one epoch on 48 images, two sizes.
TINY = gspn2.reproduce.Settings(
    epochs=1, seeds=2, sides=(8, 16), attention_max=16, dense_max=16, subset=48
)
TINY_BENCH = gspn2.bench.BenchSettings(
    reference_sides=(4,), scan_sides=(8, 16), gpu_configs=((16, 8),)
)


def test_reproduce_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setattr(gspn2.reproduce, "QUICK", TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Channel-shared, compact propagation (GSPN-2)")
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert claims[-1]["verdict"] == "not testable here"  # the GPU kernel claim, on the CPU
    summary = {r["mixer"]: r for r in doc["tables"]["accuracy"]}
    assert set(summary) == {"gspn2", "gspn1", "softmax"}
    assert all(0 <= r["accuracy_mean"] <= 1 and r["accuracy_std"] >= 0 for r in summary.values())
    # channel-shared propagation: fewer weight-head parameters than per-channel GSPN-1
    assert 0 < summary["gspn2"]["propagation_params"] < summary["gspn1"]["propagation_params"]
    assert summary["softmax"]["propagation_params"] == 0
    assert [r["N"] for r in doc["tables"]["cost"]] == [64, 256]
    assert {m["impl"] for m in doc["measurements"]} == {"scan", "attention", "dense"}
    assert doc["settings"]["epochs"] == 1 and doc["settings"]["seeds_used"] == [0, 1]
    assert (tmp_path / "gspn2.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_writes_valid_record(tmp_path, monkeypatch):
    monkeypatch.setattr(gspn2.bench, "QUICK", TINY_BENCH)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert [c["verdict"] for c in doc["claims"]][0] == "not testable here"
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    cases = {(m["impl"], m["case"]) for m in doc["measurements"]}
    assert ("reference", "one → scan forward, C=4") in cases
    assert ("scan", "4-dir forward+backward") in cases
    assert all(m["seconds"] > 0 and m["device"] == "cpu" for m in doc["measurements"])
    assert all(r["reference / scan"] > 1 for r in doc["tables"]["reference_vs_scan"])
    assert [r["N"] for r in doc["tables"]["scan_scaling"]] == [64, 256]
    assert (tmp_path / "bench.png").is_file()


def test_paper_record():
    assert PAPER.name == "gspn2" and PAPER.gpu and PAPER.arxiv == "2512.07884"


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "gspn2" and doc["settings"]["epochs"] == 5
