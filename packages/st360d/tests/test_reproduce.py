import pytest

import st360d.bench
import st360d.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from st360d.cli import main
from st360d.paper import PAPER
from st360d.reproduce import METHODS, claims

TINY = {
    "rooms": 1,
    "erp_hw": (32, 64),
    "frame_size": 24,
    "sigma": 0.2,
    "fov": 90.0,
    "drift_draws": 1,
}


def _mean(values, frames=None):
    frames = frames or {}
    return {
        m: {"abs_rel": v, "delta1": 1.0, "frames": frames.get(m, 22), "coverage": 1.0}
        for m, v in zip(METHODS, values, strict=True)
    }


def test_claim_verdicts_follow_the_numbers():
    #       cube  patch pp+al ov-l  ov-r  ov-x  sq-l  sq-r   sq-x  sq-grid orc   orc-grid
    good = [0.2, 0.06, 1e-3, 0.03, 0.05, 0.08, 4e-4, 4.5e-4, 0.07, 4e-4, 4e-4, 4e-4]
    frames = {METHODS[9]: 26, METHODS[11]: 26}
    c = claims(_mean(good, frames), worst_oracle=5e-4)
    assert [x.verdict for x in c] == ["held", "held", "held", "held", "not testable here"]
    assert "tie" in c[1].measured  # 4e-4 vs 4.5e-4 is reported as a tie
    bad = list(good)
    bad[3] = 0.1  # the overlap emulator loses to per-patch; SequentialAlign still wins
    bad[8] = 1e-4  # random beats LGS under SequentialAlign
    bad[10] = 2e-3  # the oracle misses 1e-3 on average
    c = claims(_mean(bad, frames), worst_oracle=3e-3)
    assert c[0].verdict == "partly" and c[1].verdict == "not held" and c[3].verdict == "not held"
    bad_grid = list(good)
    bad_grid[6] = 0.01  # SUS much worse than the grid
    assert claims(_mean(bad_grid, frames), 5e-4)[2].verdict == "not held"


@pytest.mark.slow  # about 5 s: every method on one small room
def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(st360d.reproduce.RUNS, True, TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert len(doc["claims"]) == 5 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert [r["method"] for r in doc["tables"]["depth"]] == list(METHODS)
    assert (tmp_path / "st360d.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(
        st360d.bench.RUNS,
        True,
        {"heights": [16, 32], "compare_h": 16, "frame": 16, "min_time": 0.0},
    )
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"merge vs ERP", "SUS vs grid"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["verdict"] == "not testable here"  # no 4K in this run


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code
