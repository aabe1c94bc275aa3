"""The reproduction and the benchmark through the command's machinery at tiny sizes, their
results files against paperkit's schema, and the verdict rules of the claims."""

import pytest

from lion.paper import PAPER
from lion.reproduce import claims
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

HEADLINE = "LION-S and LION-D come within a few points of softmax attention"
MODELS = ["LION-LIT", "LION-D", "LION-S", "SoftmaxViT", "CausalLinearViT"]


def test_reproduce_writes_a_valid_results_file(tmp_path):
    path = run_reproduce(
        PAPER, quick=True, out=tmp_path, overrides=dict(epochs=1, lengths=[16, 64], n_train=32)
    )
    doc = check_results_file(path)
    assert doc["claims"][0]["statement"].startswith(HEADLINE)
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert [r["model"] for r in doc["tables"]["digits"]] == MODELS
    assert len(doc["data"]["runs"]) == 10  # two seeds
    # the three forms give the same logits on the trained weights
    assert doc["claims"][1]["verdict"] == "held"
    for row in doc["tables"]["form agreement"]:
        assert row["rnn"] < 1e-4 and row["chunk"] < 1e-4
    assert all(r["reference bytes"] >= 0 for r in doc["data"]["memory"])
    assert (tmp_path / "lion.png").read_bytes()[:4] == b"\x89PNG"


def _summary(**acc):
    return [{"model": m, "accuracy_mean": acc[m], "cpu_s_per_epoch": 1.0} for m in MODELS]


AGREE = [{"model": "LION-S", "rnn": 1e-6, "chunk": 2e-6}]


@pytest.mark.parametrize(
    ("accuracy", "verdict"),
    [
        ((0.80, 0.91, 0.93, 0.92, 0.85), "held"),  # S, D within 3 points; LIT, causal below
        ((0.918, 0.909, 0.940, 0.927, 0.917), "partly"),  # the full run: D not above LIT
        ((0.57, 0.43, 0.60, 0.74, 0.63), "not held"),  # the quick run: S 14 points below
    ],
)
def test_headline_verdict_follows_its_rule(accuracy, verdict):
    found = claims(
        _summary(**dict(zip(MODELS, accuracy, strict=True))),
        AGREE,
        {"reference": 2.0, "rnn": 1.0},
        None,
    )
    assert found[0].statement.startswith(HEADLINE) and found[0].verdict == verdict
    assert found[2].verdict == "held"  # memory slopes 2.0 and 1.0


def test_other_verdicts_follow_their_rules():
    summary = _summary(**dict(zip(MODELS, (0.5,) * 5, strict=True)))
    bad = [{"model": "LION-S", "rnn": 1e-3, "chunk": 0.0}]
    copy = [{"model": "LION-S", "accuracy": 1.0}, {"model": "Causal linear (S)", "accuracy": 0.6}]
    found = claims(summary, bad, {"reference": 2.0, "rnn": None}, copy)
    assert found[1].verdict == "not held"  # forms differ by 1e-3
    assert found[2].verdict == "not testable here"  # no RNN memory measured
    assert found[3].verdict == "not testable here"  # no SSM baseline
    assert found[4].verdict == "not held"  # the causal model solved the copy task


def test_bench_writes_a_valid_bench_file(tmp_path):
    path = run_bench(
        PAPER, quick=True, device="cpu", out=tmp_path, overrides=dict(lengths=[32, 64])
    )
    doc = check_results_file(path)
    assert {m["impl"] for m in doc["measurements"]} == {"reference", "rnn", "chunk", "softmax"}
    assert all(m["seconds"] > 0 and m["peak_bytes"] >= 0 for m in doc["measurements"])
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert (tmp_path / "scaling.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    from lion.cli import main

    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["claims"][1]["verdict"] == "held"
