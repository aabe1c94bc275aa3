import pytest

import shadowopacity.bench
import shadowopacity.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from shadowopacity.cli import main
from shadowopacity.paper import PAPER
from shadowopacity.reproduce import claims

TINY = {
    "methods": ["BinaryShadowNet", "DirectOpacityNet", "ours"],
    "steps": 2,
    "n_train": 32,
    "n_test": 16,
    "size": 16,
    "batch_size": 4,
    "base": 2,
}


def _row(mae, soft, mid, kendall, psnr, ber):
    return {
        "MAE": mae,
        "MAE soft": soft,
        "MAE mid": mid,
        "Kendall": kendall,
        "removal PSNR": psnr,
        "BER": ber,
    }


def test_claim_verdicts_follow_the_numbers():
    rows = {
        "BinaryShadowNet": _row(0.1, 0.2, 0.3, 0.5, 20.0, 10.0),
        "DirectOpacityNet": _row(0.05, 0.1, 0.1, 0.6, 25.0, 12.0),
        "ours": _row(0.04, 0.09, 0.12, 0.7, 26.0, 9.0),
    }
    got = [c.verdict for c in claims(rows)]
    assert got == ["held", "partly", "held", "held", "held", "not testable here"]
    rows["ours"] = _row(0.2, 0.3, 0.4, 0.1, 10.0, 30.0)
    assert [c.verdict for c in claims(rows)][:5] == ["not held"] * 5


@pytest.mark.slow  # about 5 s: every step of the experiment at toy size
def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(shadowopacity.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert len(doc["claims"]) == 6 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert [r["method"] for r in doc["tables"]["methods"]] == TINY["methods"]
    assert (tmp_path / "shadowopacity.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # about 10 s of timing
def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(shadowopacity.bench.RUNS, True, {"scenes": 4, "min_time": 0.0})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {r["case"] for r in doc["measurements"]}
    assert cases == {"generator", "train step", "inference"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code
