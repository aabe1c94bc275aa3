import json

import numpy as np
import pytest
from sklearn.feature_extraction.text import HashingVectorizer

from portrouter.bench import bench
from portrouter.reproduce import reproduce

_HASH = HashingVectorizer(n_features=128, alternate_sign=False)


def _embed(texts):
    return _HASH.transform(texts).toarray().astype(np.float32)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_reproduce_smoke(tmp_path):
    res = reproduce(quick=True, out=tmp_path, n_history=400, n_test=200, embedder=_embed)
    rows = res["main"]["rows"]
    assert {"PORT", "PORT+skip", "Random", "BatchSplit", "Offline-Opt"} <= set(rows)
    assert all(r["Perf"] <= res["main"]["Offline-Opt LP value"] + 1e-9 for r in rows.values())
    assert [v["N"] for v in res["volume"]] == [50, 100, 200]
    assert (tmp_path / "portrouter.png").read_bytes()[:4] == b"\x89PNG"
    json.dumps(res, default=lambda o: o.tolist())  # serialisable after numpy conversion


def test_bench_smoke(tmp_path):
    res = bench(out=tmp_path, quick=True, sizes=[300, 600], dim=16)
    assert [r["history"] for r in res["search"]] == [300, 600]
    assert all(0.9 <= r["HNSW recall@5"] <= 1.0 for r in res["search"])
    assert all(r["F(lp)"] <= r["F(lbfgsb)"] + 1e-9 for r in res["optimisation"])
    assert res["end_to_end"]["queries/s"] > 0
