"""The reproduction and the benchmark at the smallest sizes, through paperkit's runner: the
results follow the schema and carry every claim with a verdict."""

import json

import pytest

from paperkit.cli import run_bench, run_reproduce
from paperkit.registry import get_paper
from paperkit.results import validate


def test_reproduce_smoke_writes_results_and_plot(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    path = run_reproduce(
        get_paper("zrdetr"),
        quick=True,
        seed=0,
        out=tmp_path / "r",
        overrides={"steps": 2, "n_train": 40, "n_test": 12, "n_boot": 3, "uda": True},
    )
    doc = json.loads(path.read_text())
    validate(doc)
    assert [c["verdict"] for c in doc["claims"]]
    assert len(doc["claims"]) == 5  # with the UDA claim
    assert (tmp_path / "r" / "zrdetr.png").exists()
    methods = [r["method"] for r in doc["tables"]["results"]]
    assert methods == ["DETR-lite", "ZR-DETR", "ZR-DETR + UDA"]
    assert set(doc["settings"]["uda"]) >= {"var", "relation", "score"}


@pytest.mark.slow
def test_bench_smoke(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    path = run_bench(get_paper("zrdetr"), quick=True, device="cpu", out=tmp_path / "b")
    doc = json.loads(path.read_text())
    validate(doc)
    ratios = [r["GP / MLP"] for r in doc["tables"]["heads"]]
    assert all(r > 0 for r in ratios)
