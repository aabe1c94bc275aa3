"""The reproduction and the benchmark through the command's machinery at tiny sizes, their
results files against paperkit's schema, and the verdict rules of the claims."""

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from portrouter.paper import PAPER
from portrouter.reproduce import ONLINE, claims

_HASH = HashingVectorizer(n_features=128, alternate_sign=False)
HEADLINE = "PORT has the highest performance of the online routing methods"


def _embed(texts):
    return _HASH.transform(texts).toarray().astype(np.float32)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_reproduce_writes_a_valid_results_file(tmp_path):
    path = run_reproduce(
        PAPER, quick=True, out=tmp_path, overrides=dict(n_history=400, n_test=200, embedder=_embed)
    )
    doc = check_results_file(path)
    assert doc["claims"][0]["statement"] == HEADLINE
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert doc["claims"][3]["verdict"] == "held"  # one optimisation
    methods = {r["method"]: r for r in doc["tables"]["methods"]}
    assert {"PORT", "PORT+skip", "PORT (LP prices)", "Random", "Offline-Opt"} <= set(methods)
    solvers = doc["tables"]["price solvers"]
    assert [r["seed"] for r in solvers] == list(range(10))
    assert all(r["F LP"] <= r["F L-BFGS-B"] + 1e-9 for r in solvers)  # the LP is exact
    assert all(0 <= r["decisions changed"] <= 1 for r in solvers)
    assert len({r["F LP"] for r in solvers}) == 10  # each seed's order learns from other queries
    bound = doc["data"]["main"]["Offline-Opt LP value"]
    assert all(r["Perf"] <= bound + 1e-9 for r in methods.values())
    assert [r["N"] for r in doc["tables"]["volume sweep"]] == [50, 100, 200]
    assert (tmp_path / doc["figures"][0]).read_bytes()[:4] == b"\x89PNG"


def _solvers(wins, seeds=4):
    return [
        {
            "Perf L-BFGS-B": 100.0 if s < wins else 90.0,
            "Perf LP": 95.0,
            "F L-BFGS-B": 1.0,
            "F LP": 0.9,
            "decisions changed": 0.02,
        }
        for s in range(seeds)
    ]


def _main(port, skip=None, offline=100.0, others=None):
    others = others or {}
    rows = {m: {"Perf": others.get(m, 10.0)} for m in ONLINE}
    rows["PORT"] = {"Perf": port}
    rows["PORT+skip"] = {"Perf": skip or port}
    rows["Offline-Approx-Opt"] = {"Perf": offline}
    return {"rows": rows, "n_learn": 25, "budgets": np.ones(11)}


@pytest.mark.parametrize(("batch_split", "verdict"), [(50.0, "held"), (95.0, "partly")])
def test_headline_verdict_follows_its_rule(batch_split, verdict):
    gains = {"PORT": {"Perf": 4.0, "PPC": 2.0, "Throughput": 5.0}}
    found = claims(
        _main(92.0, others={"BatchSplit": batch_split}), gains, n_optim=1, solvers=_solvers(2)
    )
    assert found[0].statement == HEADLINE and found[0].verdict == verdict
    assert found[1].verdict == "held" and found[2].verdict == "held"
    assert found[4].verdict == "held"  # L-BFGS-B at least the LP's Perf in 2 of 4 seeds


def test_gain_and_optimum_verdicts_fail_when_the_numbers_do():
    gains = {"PORT": {"Perf": 1.7, "PPC": 0.9, "Throughput": 1.8}}
    found = claims(_main(60.0), gains, n_optim=2, solvers=_solvers(1))
    assert found[1].verdict == "not held"  # PPC below 1
    assert found[2].verdict == "not held"  # 60 % of the offline optimum
    assert found[3].verdict == "not held"
    assert found[4].verdict == "not held" and "1 of 4 seeds" in found[4].measured


def test_bench_writes_a_valid_bench_file(tmp_path):
    path = run_bench(
        PAPER, quick=True, device="cpu", out=tmp_path, overrides=dict(sizes=[300, 600], dim=16)
    )
    doc = check_results_file(path)
    cases = {m["case"] for m in doc["measurements"]}
    assert cases == {"build", "search", "optimisation", "end to end"}
    search = doc["tables"]["neighbour search"]
    assert [r["history"] for r in search] == [300, 600]
    assert all(0.9 <= r["HNSW recall@5"] <= 1.0 for r in search)
    assert all(r["F(lp)"] <= r["F(lbfgsb)"] + 1e-9 for r in doc["tables"]["one-time optimisation"])
    assert {c["verdict"] for c in doc["claims"]} <= set(VERDICTS)
    assert doc["claims"][2]["verdict"] == "held"  # the LP is exact
