import json
import math

from gora.bench import bench
from gora.paper import PAPER
from gora.reproduce import reproduce
from paperkit.cli import run_reproduce


def test_reproduce_smoke(tmp_path):
    methods = ("LoRA", "GoRA")
    results = reproduce(out=tmp_path, seeds=1, epochs=1, pretrain_epochs=1, methods=methods)
    assert [r["method"] for r in results["summary"]] == list(methods)
    assert all(0.0 <= r["test_acc"] <= 1.0 for r in results["summary"])
    lora, gora = results["summary"]
    assert gora["grad_pass_s"] > 0 and lora["grad_pass_s"] == 0
    # Both within the rank-4 budget (+ head); GoRA's clamps can move it off by a little.
    assert lora["trainable"] == 4 * 4 * (4 * 128 + 2 * 320) + 65 * 5
    assert abs(gora["trainable"] - lora["trainable"]) < 0.25 * lora["trainable"]
    assert len(results["gora_ranks"]) == 4 and all(2 <= r["q"] <= 16 for r in results["gora_ranks"])
    assert (tmp_path / "accuracy.png").stat().st_size > 0
    assert (tmp_path / "pretrained.pt").exists()
    assert math.isfinite(results["pretrain"]["time_s"])


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, dims=[16], repeats=1)
    (row,) = results["rows"]
    assert row["setup/epoch1797"] < row["setup/epoch300"]  # same set-up, a longer epoch
    assert row["lora_params"] > 0 and row["gora_params"] > 0 and row["step_ratio"] > 0
    assert (tmp_path / "overhead.png").exists()


def test_cli_registration_writes_json(tmp_path, monkeypatch):
    assert PAPER.load_reproduce() is reproduce and PAPER.load_bench() is bench
    assert PAPER.gpu is False
    monkeypatch.setattr("gora.reproduce.reproduce", lambda **kw: {"quick": kw["quick"]})
    path = run_reproduce(PAPER, quick=True, out=tmp_path)
    assert json.loads(path.read_text())["results"] == {"quick": True}
