import json
import math

from dartquant.bench import bench
from dartquant.paper import PAPER
from dartquant.reproduce import reproduce
from paperkit.cli import run_reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        out=tmp_path,
        train_steps=3,
        n_chars=20_000,
        methods=("none", "dartquant"),
        e2e_steps=1,
        sweep_dims=[16, 32],
        rotation_seeds=2,
    )
    names = [r["method"] for r in results["table"]]
    assert names == ["FP (no quantisation)", "no rotation (RTN)", "DartQuant (Whip + QR-Orth)"]
    assert all(math.isfinite(r["W4A4KV4_ppl"]) for r in results["table"])
    assert results["table"][2]["calib_peak_MB"] > results["table"][1]["calib_peak_MB"]
    assert [r["seeds"] for r in results["table"][1:]] == [1, 2]
    assert len(results["details"]["dartquant"]) == 2
    assert [r["d"] for r in results["d_sweep"]] == [16, 32]
    assert all(r["qr_s"] >= 0 and r["target"] <= r["start"] for r in results["d_sweep"])
    assert results["outliers"]["residual_X1_max_over_rms"] > 1
    assert (tmp_path / "ppl.png").stat().st_size > 0


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, dims=[16, 32], model_dims=[32, 64], e2e_steps=2)
    assert [r["d"] for r in results["steps"]] == [16, 32]
    assert all(r["qr_ms"] > 0 and r["cayley_ms"] > 0 for r in results["steps"])
    assert all(r["local_MB"] > 0 and r["e2e_MB"] > 0 for r in results["calibration"])
    assert set(results["slopes"]) >= {"qr_slope", "cayley_slope", "local_time_slope"}
    assert (tmp_path / "calibration_cost.png").exists()


def test_cli_registration_writes_json(tmp_path, monkeypatch):
    assert PAPER.load_reproduce() is reproduce and PAPER.load_bench() is bench
    monkeypatch.setattr("dartquant.reproduce.reproduce", lambda **kw: {"quick": kw["quick"]})
    path = run_reproduce(PAPER, quick=True, out=tmp_path)
    assert json.loads(path.read_text())["results"] == {"quick": True}
