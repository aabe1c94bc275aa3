import pytest

import syncl.bench
import syncl.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from syncl.cli import main
from syncl.paper import PAPER
from syncl.reproduce import claims


def _runs(amota, ap, ms=2.0):
    return [
        {"AMOTA": a, "AP": p, "ms_per_frame": ms, "boxes_per_frame": 3.0}
        for a, p in zip(amota, ap, strict=True)
    ]


def test_claim_verdicts_follow_the_numbers():
    won = claims(
        {
            "baseline": _runs([0.1, 0.12], [0.3, 0.31]),
            "+hybrid": _runs([0.2, 0.21], [0.4, 0.4]),
            "+hybrid+filter": _runs([0.3, 0.31], [0.4, 0.4]),
            "SynCL": _runs([0.4, 0.41], [0.5, 0.52]),
        }
    )
    assert [c.verdict for c in won] == ["held", "held", "held", "not testable here"]
    within_spread = claims(
        {
            "baseline": _runs([0.1, 0.3], [0.3, 0.31]),
            "SynCL": _runs([0.25, 0.26], [0.5, 0.52], ms=2.5),
        }
    )
    assert within_spread[0].verdict == "partly" and within_spread[1].verdict == "partly"
    assert within_spread[2].verdict == "not testable here"
    lost = claims({"baseline": _runs([0.3], [0.5]), "SynCL": _runs([0.2], [0.4])})
    assert lost[0].verdict == "not held"
    one_seed = claims({"baseline": _runs([0.1], [0.3]), "SynCL": _runs([0.2], [0.4])})
    assert one_seed[0].verdict == "partly"  # no spread from one seed


@pytest.mark.slow  # about 15 s: the whole experiment at toy size
def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(
        syncl.reproduce.RUNS,
        True,
        {
            "variants": list(syncl.reproduce.VARIANTS),
            "seeds": 2,
            "steps": 2,
            "n_train": 10,
            "n_test": 3,
        },
    )
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    table = doc["tables"]["tracking"]
    assert [r["method"] for r in table] == list(syncl.reproduce.VARIANTS)
    assert all(0.0 <= r["AMOTA"] <= 1.0 and 0.0 <= r["det AP"] <= 1.0 for r in table)
    assert (tmp_path / "syncl.png").read_bytes()[:4] == b"\x89PNG"


@pytest.mark.slow  # about 20 s of timing rounds
def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(
        syncl.bench.RUNS,
        True,
        {"steps": 1, "track_seqs": 1, "amota_seqs": 3, "min_time": 0.0, "min_repeats": 2},
    )
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["case"] for r in doc["measurements"]} == {"train step", "inference", "AMOTA"}
    assert len(doc["claims"]) == 3 and all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


def test_ablation_refuses_unknown_configs_before_any_work():
    from syncl.ablation import ablation

    with pytest.raises(ValueError, match="'configs'"):
        ablation(["k=3"])
    with pytest.raises(ValueError, match="'steps'"):
        ablation(["baseline"], steps=0)
