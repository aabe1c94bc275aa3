import functools
import json

import networkx as nx
import numpy as np
import torch

from rsnn import RSNN
from rsnn.bench import bench
from rsnn.cli import main
from rsnn.data import graph_data
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


def test_reproduce_smoke(tmp_path):
    results = reproduce(
        quick=True, out=tmp_path, sizes=[20, 30], repeats=1, epochs=1, ms=(1,), cycle_rank=True
    )
    assert {r["method"] for r in results["csl"]} == {"RSNN", "RWNN", "GIN"}
    assert all(0.0 <= r["test accuracy"] <= 1.0 for r in results["csl"])
    assert results["cycle_rank"]["table"][0]["test MAE"] >= 0
    assert results["cycle_rank"]["mean_predictor_mae"] > 0
    assert (tmp_path / "rsnn.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_writes_results(tmp_path, monkeypatch):
    small = functools.partial(
        reproduce, sizes=[20, 30], repeats=1, epochs=1, ms=(1,), folds=1, cycle_rank=False
    )
    monkeypatch.setattr("rsnn.reproduce.reproduce", small)
    assert main(["reproduce", "--quick", "--out", str(tmp_path)]) == 0
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["package"] == "rsnn" and "coverage" in saved["results"]


def test_bench_smoke(tmp_path):
    results = bench(quick=True, out=tmp_path, sizes=[200, 400])
    assert results["throughput"]["searches/s"] > 0
    assert [r["|V|"] for r in results["scaling"]] == [200, 400]
    assert (tmp_path / "bench.png").exists()
