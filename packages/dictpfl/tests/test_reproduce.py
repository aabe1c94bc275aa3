import json

import numpy as np
import pytest

from dictpfl.bench import bench
from dictpfl.cli import main
from dictpfl.reproduce import _plot, compare, summary_rows


def test_compare_table_and_plot(federation, tmp_path):
    runs = compare(
        ("plaintext", "fedhe_full", "dictpfl"), rounds=1, federation=federation, pretrain_epochs=2
    )
    rows = {r["method"]: r for r in summary_rows(runs)}
    assert rows["FedHE-Full"]["x comm vs FedHE-Full"] == 1
    # 21 ciphertexts per client against DictPFL's 2 (round 0 sends all 5130 coordinates)
    assert rows["DictPFL"]["x comm vs FedHE-Full"] > 5
    assert rows["Plaintext FedAvg"]["x time vs plaintext"] == 1
    assert rows["Plaintext FedAvg"]["plaintext-exposed %"] == pytest.approx(100)
    assert rows["DictPFL"]["plaintext-exposed %"] == 0
    assert all(np.isfinite(r["s/round"]) and r["s/round"] > 0 for r in rows.values())
    _plot({"case": runs}, tmp_path / "x.png")
    assert (tmp_path / "x.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, sizes=[4096, 8192], widths=[128, 256])
    assert [r["ciphertexts"] for r in results["he_costs"]] == [1, 2]
    assert abs(results["slopes"]["upload MB"] - 1) < 0.05  # bytes ∝ #ciphertexts
    assert all(r["max abs err"] < 1e-4 for r in results["he_costs"])
    assert [r["FedHE-Full ct"] for r in results["width_sweep"]] == [7, 21]
    assert results["slopes"]["x comm vs width"] > 1  # the reduction grows with the model
    assert (tmp_path / "bench.png").is_file()


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    (case,) = doc["results"]["cases"].values()
    assert len(case["table"]) == 6
    assert (tmp_path / "dictpfl.png").is_file()
