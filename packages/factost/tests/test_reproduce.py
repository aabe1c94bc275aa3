"""The reproduction and the benchmark at their smallest settings, through the CLI runner."""

import pytest

import factost.bench
import factost.reproduce
from factost.cli import main
from factost.paper import PAPER
from factost.reproduce import claims
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def _rows(maes):
    return [
        {
            "held out": "air",
            "L->H": "12->12",
            "method": m,
            "MAE": v,
            "trainable": 10 if m.startswith("FactoST") else 20,
        }
        for m, v in maes.items()
    ]


def test_claim_verdicts_follow_the_rows():
    base = {
        "FactoST (frozen)": 1.0,
        "STExpert": 2.0,
        "BackboneOnly": 1.5,
        "BackboneFinetune": 0.9,
        "JointSTTransformer": 1.0,
        "FactoST -meta": 1.1,
        "FactoST -prune": 0.9,
        "FactoST -align": 1.2,
        "FactoST -replay": 1.3,
    }
    out = {c.statement.split(",")[0]: c.verdict for c in claims(_rows(base), ablations=True)}
    verdicts = [c.verdict for c in claims(_rows(base), ablations=True)]
    assert verdicts[0] == "held"  # beats STExpert
    assert verdicts[1] == "held"  # beats BackboneOnly
    assert verdicts[2] == "not held"  # loses to BackboneFinetune
    assert verdicts[3] == "held"  # equal to the joint model within 5 %
    assert verdicts[4] == "partly"  # -prune did not hurt
    assert verdicts[5] == "not testable here" and len(out) == 6


def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {
        "jobs": [("solar", 12, 12, False, ["frozen"], True)],
        "n_nodes": 8,
        "days": 10,
        "pre_epochs": 1,
        "max_windows": 200,
        "adapt_epochs": 1,
    }
    monkeypatch.setitem(factost.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    rows = doc["tables"]["errors"]
    assert {r["method"] for r in rows} == {
        "FactoST (frozen)",
        "BackboneOnly",
        "BackboneFinetune",
        "STExpert",
        "JointSTTransformer",
        "HistoricalAverage",
        "SeasonalNaive",
    }
    assert all(r["MAE"] > 0 and r["RMSE"] >= r["MAE"] for r in rows)
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    cost = doc["tables"]["pretraining"][0]
    assert cost["joint pretrain CPU s"] <= cost["backbone pretrain CPU s"] + 5.0  # the same budget
    assert (tmp_path / "factost.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(factost.bench.RUNS, True, {"sizes": [8, 16], "min_time": 0.0})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["impl"] for r in doc["measurements"]} == {"FactoST", "JointSTTransformer"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    params = doc["tables"]["parameters"]
    assert (
        params[1]["FactoST trainable (frozen)"] - params[0]["FactoST trainable (frozen)"] == 8 * 16
    )


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "factost" and len(doc["tables"]["errors"]) == 8


def test_plot_skips_methods_a_setting_did_not_run(tmp_path):
    rows = _rows({"FactoST (frozen)": 1.0, "FactoST -meta": 1.2, "SeasonalNaive": 2.0})
    rows += [
        {**r, "L->H": "24->24"} for r in _rows({"FactoST (frozen)": 1.5, "SeasonalNaive": 3.0})
    ]
    path = factost.reproduce._plot(rows, tmp_path / "p.png")
    assert path.read_bytes()[:4] == b"\x89PNG"
