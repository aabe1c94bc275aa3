import json
import math

from paperkit.cli import run_reproduce
from subtrack.bench import bench
from subtrack.paper import PAPER
from subtrack.reproduce import reproduce, time_to_target


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        out=tmp_path,
        steps=6,
        methods=("AdamW", "SubTrack++"),
        seeds=1,
        sizes=[64, 128],
        n_tokens=20_000,
        dim=64,
    )
    assert [r["method"] for r in results["summary"]] == ["AdamW", "SubTrack++"]
    assert all(math.isfinite(r["eval_loss"]) for r in results["summary"])
    assert results["summary"][1]["state_MB"] < results["summary"][0]["state_MB"]
    assert results["summary"][0]["subspace_s"] == 0.0
    assert (tmp_path / "loss_curves.png").stat().st_size > 0
    # the target is the worst final loss, so every method reaches it within its run
    assert all(0 < r["s_to_target"] <= r["wall_s"] + 1e-9 for r in results["summary"])


def test_time_to_target_is_the_first_crossing():
    curve = [(50, 1.0, 3.0), (100, 2.0, 2.4), (150, 3.0, 2.5), (200, 4.0, 2.1)]
    assert time_to_target(curve, 2.5) == 2.0
    assert time_to_target(curve, 2.1) == 4.0
    assert time_to_target(curve, 2.0) is None


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, sizes=[96, 128], ranks=(16,))
    assert len(results["updates"]) == 2 and len(results["steps"]) == 6
    assert all(r["geodesic_ms"] > 0 for r in results["updates"])
    assert (tmp_path / "update_time.png").exists()


def test_cli_registration_writes_json(tmp_path, monkeypatch):
    assert PAPER.load_reproduce() is reproduce and PAPER.load_bench() is bench
    assert PAPER.gpu is False
    monkeypatch.setattr(
        "subtrack.reproduce.reproduce",
        lambda **kw: {"quick": kw["quick"]},
    )
    path = run_reproduce(PAPER, quick=True, out=tmp_path)
    assert json.loads(path.read_text())["results"] == {"quick": True}
