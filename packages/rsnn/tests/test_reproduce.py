import json

import networkx as nx
import numpy as np
import torch

from paperkit import VERDICTS, Claim, Report
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from rsnn import RSNN
from rsnn.bench import bench
from rsnn.cli import main
from rsnn.data import graph_data
from rsnn.paper import PAPER
from rsnn.reproduce import coverage_table, reproduce
from rsnn.training import fit


def test_coverage_table_counts_and_tokens():
    rows, slopes = coverage_table([20, 40], repeats=2, families=("regular3",))
    assert [r["|V|"] for r in rows] == [20, 40]
    for r in rows:
        assert r["searches"] >= 2  # one search covers N - 1 < |E| = 1.5 N edges
        assert r["search tokens"] == r["searches"] * (2 * r["|V|"] - 1)
        assert r["walk tokens"] == r["walks (len |V|)"] * (r["|V|"] + 1)
    assert set(slopes["regular3"]) == {"searches per unit log|V|", "walks log-log slope vs |V|"}


def _relabelled(graph, count, seed, label):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        perm = dict(enumerate(rng.permutation(graph.number_of_nodes()).tolist()))
        out.append(graph_data(nx.relabel_nodes(graph, perm), y=torch.tensor([label])))
    return out


def test_rsnn_learns_structure_from_tokens():
    # a cycle against a path of 12 nodes, identical features: only the traversal tells them apart
    # (a DFS of the cycle descends 11 times in a row; a DFS of the path from inside turns back)
    cycles = _relabelled(nx.cycle_graph(12), 16, 0, 0)
    paths = _relabelled(nx.path_graph(12), 16, 1, 1)
    train, test = cycles[:8] + paths[:8], cycles[8:] + paths[8:]
    torch.manual_seed(0)
    model = RSNN(1, hidden=16, out_dim=2, seq_model="cnn")
    res = fit(model, train, test, task="classification", epochs=20, m=2, batch_size=8, lr=1e-2)
    assert res.metric >= 0.8 and res.losses[-1] < 0.5 * res.losses[0]
    assert res.train_tokens == 20 * 16 * 2 * 23  # epochs x graphs x m x (2N - 1) tokens


def test_reproduce_writes_a_valid_results_file(tmp_path, monkeypatch):
    # the quick run at the smallest settings (the real quick run takes minutes on 2 cores)
    def small(**kw):
        settings = {"sizes": [20, 30], "repeats": 1, "epochs": 1, "ms": (1, 2), "folds": 1}
        return reproduce(**kw, **settings, csl_per_class=5, cycle_rank=False)

    monkeypatch.setattr("rsnn.reproduce.reproduce", small)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    claims = doc["claims"]
    assert claims[0]["statement"] == "O(log|V|) random searches cover every edge of a sparse graph"
    assert all(c["verdict"] in VERDICTS for c in claims)
    ring = [c for c in claims if "ring count" in c["statement"] or "cycle rank" in c["statement"]]
    assert [c["verdict"] for c in ring] == ["not testable here"] * 2  # skipped by the quick run
    assert {r["method"] for r in doc["tables"]["csl"]} == {"RSNN", "RWNN", "GIN"}
    assert all(0.0 <= r["test accuracy"] <= 1.0 for r in doc["tables"]["csl"])
    assert doc["settings"]["csl_per_class"] == 5 and doc["figures"] == ["rsnn.png"]
    assert (tmp_path / "rsnn.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_reports_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr(
        "rsnn.reproduce.reproduce",
        lambda **kw: Report(claims=[Claim("c", 1, 1, "held")], settings={"quick": kw["quick"]}),
    )
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["package"] == "rsnn" and saved["settings"] == {"quick": True}


def test_bench_writes_a_valid_bench_file(tmp_path, monkeypatch):
    def small(**kw):
        return bench(**kw, sizes=[200, 400], train_runs=[("RSNN", 1), ("RWNN", 2)], min_time=0.0)

    monkeypatch.setattr("rsnn.bench.bench", small)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    rows = doc["measurements"]
    assert {(r["impl"], r["case"]) for r in rows} >= {("search", "scaling"), ("RWNN", "train step")}
    assert all(r["seconds"] > 0 and r["device"] == "cpu" for r in rows)
    assert all(isinstance(r["peak_bytes"], int) for r in rows)
    assert [r["|V|"] for r in doc["tables"]["scaling"]] == [200, 400]
    verdicts = {c["statement"]: c["verdict"] for c in doc["claims"]}
    assert verdicts["RSNN with 4 searches trains cheaper per step than RWNN with 16 walks"] == (
        "not testable here"  # neither count was measured here
    )
    assert (tmp_path / "bench.png").exists() and (tmp_path / "scaling.png").exists()
