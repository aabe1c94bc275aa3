import pytest

import gmpqte.bench
import gmpqte.reproduce
from gmpqte import digits16
from gmpqte.cli import main
from gmpqte.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file

TINY = {
    "train_epochs": 1,
    "modes": ["cubical"],
    "budgets": [3.0],
    "qat_epochs": 1,
    "qat_seeds": [0],
    "hawq_batches": 1,
    "n_probe": 2,
    "batch": 4,
    "max_channels": 2,
    "n_random": 2,
    "oracle_images": 40,
    "big_batch": None,
}


def _small_digits(seed=0):
    """A fifth of the digits split: 251 training and 108 test images (for speed)."""
    data = digits16(seed)
    return {k: (x[::5], y[::5]) for k, (x, y) in data.items()}


def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(gmpqte.reproduce.RUNS, True, TINY)
    monkeypatch.setattr(gmpqte.reproduce, "digits16", _small_digits)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert len(claims) == 5 and all(c["verdict"] in VERDICTS for c in claims)
    assert claims[0]["statement"].startswith("GMPQ-TE's policy is at least as accurate")
    rows = doc["tables"]["policies"]
    methods = {r["method"] for r in rows}
    assert set(gmpqte.reproduce.MAIN) <= methods and "GMPQ-TE reversed" in methods
    budget_bits = {r["method"]: r["avg bits"] for r in rows}
    assert all(b <= 3.0 + 1e-9 for b in budget_bits.values())
    assert all(0 <= r["PTQ acc"] <= 1 for r in rows)
    assert all(r["QAT acc"] is not None for r in rows if r["method"] in gmpqte.reproduce.MAIN)
    # the headline verdict follows from the table: GMPQ-TE vs uniform and random
    by = {r["method"]: r for r in rows}
    beats = by["GMPQ-TE"]["PTQ acc"] >= min(by["uniform"]["PTQ acc"], by["random"]["PTQ acc"])
    if not beats:
        assert claims[0]["verdict"] != "held"
    assert len(doc["tables"]["layers"]) == 5
    assert (tmp_path / "gmpqte.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"layers": [1, 2], "caps": [2, 4], "ilp": [5, 10], "repeats": 1}
    monkeypatch.setitem(gmpqte.bench.RUNS, True, tiny)
    monkeypatch.setattr(gmpqte.bench, "SEARCH_IMAGES", 4)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {r["case"] for r in doc["measurements"]}
    assert cases == {"policy search", "TE vs layers", "TE vs channel cap", "ILP vs layers"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "gmpqte" and len(doc["claims"]) == 5
