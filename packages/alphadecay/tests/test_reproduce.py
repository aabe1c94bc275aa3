import json
import math

from alphadecay.bench import bench
from alphadecay.paper import PAPER
from alphadecay.reproduce import reproduce
from paperkit.cli import run_reproduce


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        out=tmp_path,
        steps=8,
        seeds=2,
        configs=((0.1, "Uniform"), (0.1, "AWD"), (0.1, "AlphaDecay")),
        n_tokens=30_000,
        d=32,
        n_layers=1,
        update_every=4,
    )
    rows = results["summary"]
    assert [r["scheme"] for r in rows] == ["Uniform", "AWD", "AlphaDecay"]
    assert all(math.isfinite(r["val_ppl"]) and r["seeds"] == 2 for r in rows)
    assert all(r["alpha_std"] > 0 for r in rows)
    assert len(results["runs"]) == 6
    (claim,) = results["claims"]
    assert claim["base_wd"] == 0.1 and "awd_not_better_than_uniform" in claim
    assert (tmp_path / "curves.png").stat().st_size > 0


def test_bench_smoke(tmp_path):
    results = bench(out=tmp_path, quick=True, widths=[64, 96], route_n=96)
    assert len(results["rows"]) == 4
    assert all(r["refresh_ms"] > 0 and r["step_ms"] > 0 for r in results["rows"])
    assert {r["what"] for r in results["routes"]} >= {"esd: svdvals(W)^2", "fit: median (Hill)"}
    assert (tmp_path / "refresh_cost.png").exists()


def test_cli_registration_writes_json(tmp_path, monkeypatch):
    assert PAPER.load_reproduce() is reproduce and PAPER.load_bench() is bench
    monkeypatch.setattr("alphadecay.reproduce.reproduce", lambda **kw: {"quick": kw["quick"]})
    path = run_reproduce(PAPER, quick=True, out=tmp_path)
    assert json.loads(path.read_text())["results"] == {"quick": True}
