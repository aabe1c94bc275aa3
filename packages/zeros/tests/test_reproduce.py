import json

import pytest
import torch

from zeros.bench import bench
from zeros.cli import main
from zeros.reproduce import ContrastModel, Setting, reproduce, train_contrast, train_mqar


def test_zeros_subtracts_where_softmax_cannot():
    """The claim of experiment (a), at 150 steps: ZeroS learns v_a - v_b, softmax plateaus."""
    zeros = train_contrast(Setting("ZeroS", "zeros"), steps=150, seed=0)
    softmax = train_contrast(Setting("softmax", "softmax"), steps=150, seed=0)
    assert zeros["test_mse"] < 0.25 * softmax["test_mse"]
    assert softmax["test_mse"] > 0.5  # E|v_a - v_b|^2 / dim = 2; a convex mix cannot get near 0


def test_contrast_model_reads_the_last_position():
    model = ContrastModel("softmax", 5, 3)
    assert model(torch.randn(2, 7, 5)).shape == (2, 3)


def test_mqar_training_reports_accuracy():
    r = train_mqar(Setting("softmax", "softmax"), steps=3, seed=0, seq_len=16, num_kv=2, vocab=16)
    assert 0.0 <= r["accuracy"] <= 1.0 and r["curve"][0][0] == 0


def test_reproduce_smoke(tmp_path):
    results = reproduce(quick=True, seed=0, out=tmp_path, steps=2)
    assert [r["model"] for r in results["mqar"]["rows"]] == ["ZeroS", "softmax", "linear elu+1"]
    assert len(results["contrast"]["rows"]) == 5
    assert (tmp_path / "zeros.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(device="cpu", out=tmp_path, lengths=[32, 64])
    assert {r["backend"] for r in results["rows"]} == {"naive", "scan", "chunk", "softmax"}
    assert all(r["ms"] > 0 for r in results["rows"])
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "zeros" and doc["results"]["mqar"]["seq_len"] == 32
