import pytest

import fedrw.bench
import fedrw.reproduce
from fedrw.cli import main
from fedrw.paper import PAPER
from fedrw.reproduce import LABELS, claims
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file


@pytest.mark.slow  # about 10 s of CPU, but minutes of wall time on a loaded 2-core machine
def test_quick_reproduction_writes_valid_results(tmp_path, monkeypatch):
    """The quick reproduction at the smallest settings: 1 round, 40 chunks, K in {2, 3}."""
    tiny = {"rhos": [0.3], "seeds": 1, "rounds": 1, "ks": [2, 3], "n_chunks": 40, "ablation": None}
    monkeypatch.setitem(fedrw.reproduce.RUNS, True, tiny)
    monkeypatch.setattr(fedrw.reproduce, "CHUNKS_PER_CLIENT", 10)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["statement"].startswith("Global frequency-aware methods")
    exact = next(c for c in doc["claims"] if "exact global frequency" in c["statement"])
    assert exact["verdict"] == "held"
    assert len(doc["tables"]["perplexity"]) == 4
    assert all(r["same F"] for r in doc["tables"]["preprocessing"])
    assert (
        doc["settings"]["corpus"]["python"]
        and len(doc["settings"]["corpus"]["corpus_sha256"]) == 64
    )
    assert (tmp_path / "fedrw.png").read_bytes()[:4] == b"\x89PNG"


def _summary(ppl, sd=0.0):
    return [
        {"rho": rho, "method": LABELS[m], "test ppl": v, "sd": sd}
        for rho, row in ppl.items()
        for m, v in row.items()
    ]


TIMING = [
    {
        "K": k,
        "parallel path s": 0.1 * (k - 1),
        "sequential path s": 0.05 * k * (k - 1),
        "parallel s": 1.0 * k,
        "sequential s": 1.5 * k,
        "TTP s": 0.01,
        "speed-up": 1.5,
        "parallel rounds": k - 1,
        "sequential rounds": k * (k - 1) // 2,
        "same F": True,
    }
    for k in (2, 4, 8)
]


@pytest.mark.parametrize(
    ("ppl", "headline", "gap"),
    [
        (
            {
                0.1: {"none": 10, "local_dedup": 10, "global_dedup": 9, "fedrw": 9},
                0.3: {"none": 12, "local_dedup": 12, "global_dedup": 9, "fedrw": 9},
            },
            "held",
            "held",
        ),
        (
            {
                0.1: {"none": 10, "local_dedup": 10, "global_dedup": 11, "fedrw": 11},
                0.3: {"none": 12, "local_dedup": 12, "global_dedup": 13, "fedrw": 13},
            },
            "not held",
            "not held",
        ),
    ],
)
def test_claim_verdicts_follow_the_numbers(ppl, headline, gap):
    out = claims(_summary(ppl, sd=0.1), TIMING, exact=True, seeds=2)
    assert out[0].verdict == headline
    assert out[2].verdict == gap
    assert next(c for c in out if "scales linearly" in c.statement).verdict == "held"


@pytest.mark.slow  # a few seconds of CPU; wall time grows with the machine's load
def test_quick_bench_writes_valid_results(tmp_path, monkeypatch):
    tiny = {"items": 5, "sizes": [10, 20], "ks": [2, 3], "per_client": 6, "repeats": 1}
    monkeypatch.setitem(fedrw.bench.RUNS, True, tiny)
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    cases = {r["case"] for r in doc["measurements"]}
    assert cases >= {"oprf", "psi vs n", "preprocessing vs K", "critical path vs K"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    same = next(c for c in doc["claims"] if "same bytes" in c["statement"])
    assert same["verdict"] == "held"


def test_cli_refuses_a_gpu():
    assert main(["bench", "--device", "cuda"]) == 2
