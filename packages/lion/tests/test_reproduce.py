import json

import pytest

from lion.bench import bench
from lion.cli import main
from lion.reproduce import reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(quick=True, seed=0, out=tmp_path, epochs=1, lengths=[16, 64], n_train=32)
    names = [r["model"] for r in results["digits"]["summary"]]
    assert names == ["LION-LIT", "LION-D", "LION-S", "SoftmaxViT", "CausalLinearViT"]
    assert len(results["digits"]["runs"]) == 10  # two seeds
    # the three forms give the same logits on the trained weights
    for row in results["form_agreement"]:
        assert row["rnn"] < 1e-4 and row["chunk"] < 1e-4
    memory = results["memory"]["rows"]
    assert memory[1]["attention_MiB"] > memory[1]["rnn_MiB"]
    assert (tmp_path / "lion.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(device="cpu", out=tmp_path, lengths=[32, 64])
    assert {r["form"] for r in results["rows"]} == {"attention", "rnn", "chunk", "softmax"}
    assert all(r["ms"] > 0 for r in results["rows"])
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "lion"
    slopes = doc["results"]["memory"]["slopes"]
    assert slopes["attention"] > 1.7 and slopes["rnn"] < 1.2
