import pytest

import rccda.bench
import rccda.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from rccda.cli import main
from rccda.paper import PAPER


def _row(policy, budget, acc, rate, rec, stream="s"):
    return {
        "stream": stream,
        "model": "logreg",
        "budget": budget,
        "policy": policy,
        "acc": acc,
        "acc s.e.": 0.0,
        "rate": rate,
        "recovery": rec,
        "over budget+Qmax/T": "",
        "per-seed acc": [acc, acc + 0.01, acc - 0.01],
    }


def test_claims_follow_the_rows():
    rows = [
        _row(p, 0.2, a, 0.2, r)
        for p, a, r in [
            ("RCCDA", 0.7, 10),
            ("RCCDA-acc", 0.7, 10),
            ("Periodic", 0.6, 20),
            ("Random", 0.6, 20),
            ("ADWIN", 0.5, 5),
            ("DDM", 0.4, 30),
        ]
    ]
    c = rccda.reproduce.claims(rows)
    assert [x.verdict for x in c] == ["held", "held", "held", "held"]
    rows[2]["acc"] = 0.8
    rows[2]["per-seed acc"] = [0.8, 0.81, 0.79]
    rows[0]["over budget+Qmax/T"] = "FLAG"
    c = rccda.reproduce.claims(rows)
    assert c[0].verdict == "not held" and c[1].verdict == "not held"


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setattr(rccda.reproduce, "T", 500)
    monkeypatch.setitem(
        rccda.reproduce.RUNS,
        True,
        {"streams": ["digits-abrupt"], "budgets": [0.2], "seeds": 2, "mlp": False},
    )
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    rows = doc["tables"]["policies"]
    assert len(rows) == len(rccda.reproduce.BUDGETED) + 2
    by = {r["policy"]: r for r in rows}
    assert by["Always"]["rate"] == 1.0 and by["Never"]["rate"] == 0.0
    assert by["Periodic"]["rate"] == pytest.approx(0.2)
    assert by["RCCDA"]["rate"] <= 0.2 + 0.05
    assert (tmp_path / "rccda.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(
        rccda.bench.RUNS, True, {"steps": 400, "T": [200, 400, 800], "repeats": 1, "stream_T": 100}
    )
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"overhead", "overhead vs T", "stream run"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2
