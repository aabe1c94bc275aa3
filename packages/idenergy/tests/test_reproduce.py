import pytest

import idenergy.bench
import idenergy.reproduce
from idenergy.cli import main
from idenergy.data import load_digits_images
from idenergy.paper import PAPER
from idenergy.reproduce import claims
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {
    "datasets": ["digits"],
    "ssl_steps": {"digits": 2},
    "ssl_momentum": 0.98,
    "n_gen": 20,
    "vae_steps": 3,
    "sup_steps": 3,
    "head_steps": 3,
    "gmm_iter": {"digits": 3},
    "ablations": ["digits"],
}


def _result(dend, sup, energy, msp, sup_own=0.999, tnr=0.95):
    def row(unseen, own=0.5):
        return {"auroc": {"PCAGaussian": own, "PixelGMM": unseen, "mean unseen": unseen}}

    return {
        "rows": {
            "DEnD": row(dend),
            "Supervised": row(sup, sup_own),
            "Energy": row(energy),
            "MSP": row(msp),
        },
        "tnr": {"DEnD": tnr},
    }


def test_claim_verdicts_follow_the_numbers():
    won = claims({"a": _result(0.9, 0.8, 0.7, 0.7)})
    assert [c.verdict for c in won] == ["held", "held", "held", "not testable here"]
    lost = claims({"a": _result(0.4, 0.95, 0.5, 0.5, tnr=0.90)})
    assert [c.verdict for c in lost[:3]] == ["not held", "not held", "not held"]
    training_free_only = claims({"a": _result(0.6, 0.95, 0.5, 0.5)})
    assert training_free_only[0].verdict == "partly"  # beats energy and MSP, not supervised
    mixed = claims({"a": _result(0.9, 0.8, 0.7, 0.7), "b": _result(0.3, 0.9, 0.5, 0.7)})
    assert mixed[0].verdict == "partly"


@pytest.mark.slow  # about 10 s: every step of the experiment (torch, sklearn, matplotlib)
def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(idenergy.reproduce.RUNS, True, TINY)
    # 160 digits: 100 train, 40 calibration, 20 test (the whole experiment, at toy size)
    monkeypatch.setattr(
        idenergy.reproduce, "_natural", lambda name, seed: load_digits_images(16)[:280]
    )
    monkeypatch.setitem(idenergy.reproduce.SPLITS, "digits", {"cal": 40, "test": 500})
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    table = doc["tables"]["auroc_digits"]
    assert [r["detector"] for r in table][0] == "DEnD" and table[-1]["detector"] == "Supervised"
    assert all(0.0 <= r["mean unseen"] <= 1.0 for r in table)
    assert "DEnD + ID head" in [r["detector"] for r in table]  # the ablation rows
    balances = [r["balance"] for r in doc["tables"]["backbone_digits"]]
    assert balances[:2] == ["random init (reference)", "center"]
    assert (tmp_path / "idenergy.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(idenergy.bench.RUNS, True, {"images": 16, "ns": [1, 3], "min_time": 0.0})
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"stacked vs looped", "vs n"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert {r["impl"] for r in doc["measurements"]} == {"stacked", "stacked x16", "looped"}
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code
