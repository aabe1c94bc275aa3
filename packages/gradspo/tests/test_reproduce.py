import pytest

import gradspo.bench
import gradspo.reproduce
from gradspo.cli import main
from gradspo.paper import PAPER
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at the smallest settings (the real sizes are in RUNS)."""
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"base_steps": 20, "seeds": 2, "batches": 1, "methods": ("gradspo", "spo", "dpo")}
    monkeypatch.setitem(gradspo.reproduce.RUNS, True, tiny)
    monkeypatch.setitem(gradspo.reproduce.COMMON, "eval_samples", 40)
    monkeypatch.setitem(gradspo.reproduce.COMMON, "batch_size", 4)
    monkeypatch.setitem(gradspo.reproduce.COMMON, "hidden", 16)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"].startswith("GradSPO reaches a higher mean reward")
    assert all(c["verdict"] in VERDICTS for c in claims)
    assert claims[3]["verdict"] == "not testable here"  # the quick run has no ablations
    rows = doc["tables"]["methods"]
    assert [r["method"] for r in rows][1:] == ["gradspo", "spo", "dpo"]
    # the headline verdict is the 2-s.e. rule applied to the per-seed rewards
    from gradspo.reproduce import _compare, _verdict

    rw = {m: doc["data"][m]["reward"] for m in ("gradspo", "spo", "dpo")}
    assert all(len(v) == 2 for v in rw.values())
    diffs = [_compare(rw["gradspo"], rw[m]) for m in ("spo", "dpo")]
    assert claims[0]["verdict"] == _verdict(diffs)[0]
    assert (tmp_path / "gradspo.png").read_bytes()[:4] == b"\x89PNG"


def test_verdict_rule():
    from gradspo.reproduce import _compare, _verdict

    d = _compare([1.0, 1.1, 0.9], [0.0, 0.1, -0.1])
    assert abs(d[0] - 1.0) < 1e-12 and d[1] > 0
    assert _verdict([d, d])[0] == "held"
    assert _verdict([d, (0.01, 1.0)])[0] == "partly"
    assert _verdict([(0.01, 1.0)])[0] == "not held"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    tiny = {"Ks": [2, 4], "min_time": 0.0, "min_repeats": 2, "batch": 4}
    monkeypatch.setitem(gradspo.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"collect", "update", "vs K"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert all((tmp_path / f).is_file() for f in doc["figures"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow
def test_cli_quick_reproduction(tmp_path):
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert doc["package"] == "gradspo" and len(doc["claims"]) == 6
