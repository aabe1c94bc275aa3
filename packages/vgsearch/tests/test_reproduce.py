import pytest

import vgsearch.bench
import vgsearch.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from vgsearch.cli import main
from vgsearch.paper import PAPER


def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The reproduction at the smallest settings: 3 problems per level, n = 4, one sweep point."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"per_level": 3, "ns": [4], "sweep_n": 4, "sweep": [(2.0, 0.5, 0.9)]}
    monkeypatch.setitem(vgsearch.reproduce.RUNS, True, tiny)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("Adaptive VG-Search matches or beats Beam Search")
    assert len(claims) == 6 and all(c["verdict"] in VERDICTS for c in claims)
    rows = doc["tables"]["grid"]
    assert len(rows) == 2 * 10  # two PRMs, ten methods
    assert all(0 <= r["acc"] <= 1 for r in rows)
    bs = [r for r in rows if r["method"] == "beam search"]
    assert all(r["FLOPs vs BS"] == 1 and r["acc - BS"] == 0 for r in bs)
    # Best-of-N makes n calls per problem; VG-Search g=2 fewer than beam search
    for prm in ("strong", "weak"):
        get = {r["method"]: r for r in rows if r["PRM"] == prm}
        assert get["Best-of-N (PRM-best)"]["calls"] == 4
        assert get["VG-Search g=2"]["calls"] < get["beam search"]["calls"]
    assert (tmp_path / "vgsearch.png").read_bytes()[:4] == b"\x89PNG"


def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"L": 13, "gs": [1, 2, 3, 4, 6, 12], "ns": [4, 8], "per_level": 2, "min_time": 0.0}
    monkeypatch.setitem(vgsearch.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    calls = doc["tables"]["calls_vs_g"]
    assert all(r["calls"] == r["expected calls"] for r in calls)
    official = next(s for s in doc["tables"]["slopes"] if s["schedule"] == "official")
    assert official["slope calls after step 1"] == pytest.approx(-1.0, abs=1e-9)
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "vgsearch" and len(doc["claims"]) == 6


def test_trend_verdicts():
    from vgsearch.reproduce import _trend

    assert _trend([(3, 1), (2, 2)]) == "held"  # one as claimed, one equal, none opposite
    assert _trend([(2, 2), (2, 2), (3, 1)]) == "partly"  # as claimed in fewer than half
    assert _trend([(3, 1), (3, 1), (1, 2)]) == "partly"  # one setting goes the other way
    assert _trend([(1, 1), (1, 2)]) == "not held"
