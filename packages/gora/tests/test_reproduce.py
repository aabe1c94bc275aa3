import gora.bench
import gora.reproduce
from gora.bench import bench
from gora.paper import PAPER
from gora.reproduce import reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

HEADLINE = "GoRA beats LoRA and AdaLoRA at the same trainable-parameter budget"


def tiny_reproduce(*, quick, seed, out):
    """The real reproduction at its smallest settings (the quick run takes minutes)."""
    return reproduce(
        quick=quick,
        seed=seed,
        out=out,
        seeds=1,
        epochs=1,
        pretrain_epochs=1,
        methods=("LoRA", "GoRA"),
    )


def tiny_bench(*, quick, device, out):
    """The real benchmark at one small width, one timed call per measurement."""
    return bench(quick=quick, device=device, out=out, dims=[16], repeats=1)


def test_reproduce_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setattr(gora.reproduce, "reproduce", tiny_reproduce)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"] == HEADLINE
    assert all(c["verdict"] in VERDICTS for c in claims)
    # LoRA and GoRA ran, so the headline is decided; the ablations and full FT did not run.
    assert claims[0]["verdict"] in ("held", "not held")
    assert [c["verdict"] for c in claims[1:]] == ["not testable here"] * 3
    lora, gora_row = doc["tables"]["accuracy"]
    assert (lora["method"], gora_row["method"]) == ("LoRA", "GoRA")
    assert all(0.0 <= r["test_acc"] <= 1.0 for r in doc["tables"]["accuracy"])
    assert gora_row["grad_pass_s"] > 0 and lora["grad_pass_s"] == 0
    # Both within the rank-4 budget (+ head); GoRA's clamps can move it off by a little.
    assert lora["trainable"] == 4 * 4 * (4 * 128 + 2 * 320) + 65 * 5
    assert abs(gora_row["trainable"] - lora["trainable"]) < 0.25 * lora["trainable"]
    ranks = doc["tables"]["gora_ranks"]
    assert len(ranks) == 4 and all(2 <= r["q"] <= 16 for r in ranks)
    folder = tmp_path
    assert doc["figures"] == ["accuracy.png"] and (folder / "accuracy.png").stat().st_size > 0
    assert doc["settings"]["epochs"] == 1 and doc["settings"]["seeds"] == [0]


def test_bench_writes_valid_measurements(tmp_path, monkeypatch):
    monkeypatch.setattr(gora.bench, "bench", tiny_bench)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {(m["impl"], m["case"]) for m in doc["measurements"]}
    assert cases == {
        ("gora", "setup"),
        ("gora", "grad_pass"),
        ("gora", "epoch300"),
        ("gora", "epoch1797"),
        ("gora", "step"),
        ("lora", "step"),
    }
    assert all(m["seconds"] > 0 and m["size"] == 16 for m in doc["measurements"])
    (row,) = doc["tables"]["overhead"]
    assert row["setup/epoch1797"] < row["setup/epoch300"]  # same set-up, a longer epoch
    (cost,) = doc["tables"]["cost"]
    assert cost["lora_params"] > 0 and cost["gora_params"] > 0 and cost["step_ratio"] > 0
    assert [c["verdict"] in VERDICTS for c in doc["claims"]] == [True, True]
    assert (tmp_path / "overhead.png").exists()


def test_registration():
    assert PAPER.load_reproduce() is reproduce
    assert PAPER.load_bench() is bench
    assert PAPER.gpu is False
