import json

import pytest

from trussreg.bench import bench, clique_enumeration_seconds
from trussreg.cli import main
from trussreg.paper import PAPER
from trussreg.reproduce import reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        quick=True,
        out=tmp_path,
        n_corr=200,
        n_pairs=2,
        ratios=[0.8],
        methods=["TrussReg", "spectral"],
    )
    assert {(r["method"], r["clustered"]) for r in results["rows"]} == {
        ("TrussReg", 0.0),
        ("TrussReg", 0.1),
        ("spectral", 0.0),
        ("spectral", 0.1),
    }
    plain = [r for r in results["rows"] if r["clustered"] == 0.0]
    assert all(r["recall"] == 1.0 and r["ms"] > 0 for r in plain)
    assert (tmp_path / "trussreg.png").read_bytes()[:4] == b"\x89PNG"


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, sizes=[200, 300], skeletons=[50, 100], budget_s=2.0)
    assert [r["N"] for r in results["full"]] == [200, 300]
    assert [r["M"] for r in results["skeleton"]] == [50, 100]
    assert all(r["truss ms"] > 0 for r in results["full"] + results["skeleton"])
    assert results["pipeline"][0]["sampling speed-up"] > 0
    assert (tmp_path / "bench.png").is_file()


def test_clique_enumeration_counts_and_budget():
    import numpy as np

    triangle_and_edge = np.array([[0, 1], [1, 2], [0, 2], [2, 3]])
    seconds, count, finished = clique_enumeration_seconds(triangle_and_edge, 10.0)
    assert finished and count == 2 and seconds >= 0


def test_paper_record():
    assert PAPER.name == "trussreg" and PAPER.gpu
    assert PAPER.url.startswith("https://")


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["package"] == "trussreg" and doc["results"]["n_corr"] == 1000
