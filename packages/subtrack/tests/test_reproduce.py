import pytest

import subtrack.bench
import subtrack.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from subtrack.bench import bench
from subtrack.paper import PAPER
from subtrack.reproduce import Settings, claims, reproduce, time_to_target

# the quick run's shape at the smallest sizes the default suite affords
TINY = Settings(
    steps=6,
    methods=("AdamW", "GaLore", "SubTrack++"),
    seeds=1,
    sizes=(64, 128),
    n_tokens=20_000,
    dim=64,
    timing_min_s=0.0,
)


def test_registration():
    assert PAPER.load_reproduce() is reproduce and PAPER.load_bench() is bench
    assert PAPER.gpu is False


def test_quick_reproduction_follows_the_schema(tmp_path, monkeypatch):
    monkeypatch.setattr(subtrack.reproduce, "QUICK", TINY)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert doc["quick"] is True and doc["settings"]["steps"] == 6
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["statement"].startswith("SubTrack++ reaches a lower evaluation loss")
    assert doc["claims"][-1]["verdict"] == "not testable here"  # no ablation arms in a quick run
    rows = {r["method"]: r for r in doc["tables"]["methods"]}
    assert list(rows) == ["AdamW", "GaLore", "SubTrack++"]
    assert rows["SubTrack++"]["state_bytes"] == rows["GaLore"]["state_bytes"]
    assert rows["SubTrack++"]["state_bytes"] < rows["AdamW"]["state_bytes"]
    assert rows["AdamW"]["subspace_s"] == 0.0
    # the target is the worst final loss, so every method reaches it within its run
    assert all(0 < r["s_to_target"] <= r["wall_s"] + 1e-9 for r in rows.values())
    assert (tmp_path / "loss_curves.png").stat().st_size > 0


def _row(method, loss, spread=0.0, state=100, subspace=1.0, wall=10.0):
    return {
        "method": method,
        "eval_loss": loss,
        "seed_spread": spread,
        "state_bytes": state,
        "subspace_s": subspace,
        "wall_s": wall,
    }


def test_verdict_rules():
    timing = [{"n": 256, "speedup": 7.0}, {"n": 512, "speedup": 20.0}]
    rows = [
        _row("AdamW", 0.60, 0.001, state=400, subspace=0.0),
        _row("GaLore", 0.76, 0.015, subspace=0.7, wall=72.0),
        _row("Fira", 0.74, 0.008),
        _row("SubTrack-Grad", 0.746, 0.031),
        _row("SubTrack-Grad+PA", 0.745, 0.032),
        _row("SubTrack++", 0.69, 0.010, subspace=0.2, wall=74.0),
    ]
    got = {c.statement.split(":")[0]: c.verdict for c in claims(rows, timing)}
    assert list(got.values()) == ["held", "not held", "held", "not held", "partly"]
    rows[2] = _row("Fira", 0.695, 0.008)  # within the seed spread of SubTrack++
    assert claims(rows, timing)[0].verdict == "partly"
    rows[2] = _row("Fira", 0.74, 0.008)
    assert claims(rows, timing)[0].verdict == "held"
    rows[1]["state_bytes"] = 50  # GaLore keeps less state: the claim needs equal memory
    assert claims(rows, timing)[0].verdict == "partly"


def test_time_to_target_is_the_first_crossing():
    curve = [(50, 1.0, 3.0), (100, 2.0, 2.4), (150, 3.0, 2.5), (200, 4.0, 2.1)]
    assert time_to_target(curve, 2.5) == 2.0
    assert time_to_target(curve, 2.1) == 4.0
    assert time_to_target(curve, 2.0) is None


def test_quick_bench_follows_the_schema(tmp_path, monkeypatch):
    monkeypatch.setattr(subtrack.bench, "QUICK_SIZES", (96, 128))
    monkeypatch.setattr(subtrack.bench, "RANKS", (16,))
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    impls = sorted({(m["case"], m["impl"]) for m in doc["measurements"]})
    assert impls == [
        ("step", "adamw"),
        ("step", "galore r=16"),
        ("step", "subtrack r=16"),
        ("update", "geodesic r=16"),
        ("update", "svd"),
    ]
    assert all(m["seconds"] > 0 and m["peak_bytes"] >= 0 for m in doc["measurements"])
    steps = {(r["n"], r["method"]): r["state_bytes"] for r in doc["tables"]["steps"]}
    assert steps[128, "subtrack"] == steps[128, "galore"] == 4 * (128 * 16 + 2 * 16 * 128)
    assert [c["verdict"] for c in doc["claims"]][1] == "held"
    assert (tmp_path / "update_time.png").exists()


def test_cli_refuses_cuda(capsys):
    from subtrack.cli import main

    assert main(["bench", "--device", "cuda"]) == 2


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the real quick run: 45 s on two quiet cores, minutes on loaded ones
def test_quick_reproduction_through_the_command(tmp_path):
    from subtrack.cli import main

    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    doc = check_results_file(tmp_path / "results.json")
    assert [r["method"] for r in doc["tables"]["methods"]] == ["AdamW", "GaLore", "SubTrack++"]
