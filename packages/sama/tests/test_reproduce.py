import pytest

import sama.bench
import sama.reproduce
from paperkit import VERDICTS
from paperkit.cli import run_bench, run_reproduce
from paperkit.testing import check_results_file
from sama import jaccard_similarity
from sama.cli import main
from sama.paper import PAPER

TINY = {"seeds": [0], "n_videos": 6, "n_frames": 6, "size": 32}


class _R:
    def __init__(self, overall, filtered=0):
        self.overall = overall
        self.counts = {"filtered_turns": filtered}


def _results(noisy_miou=(0.8, 0.6, 0.4), null_miou=0.0, filtered=3, planted=3):
    perfect = dict.fromkeys(
        ("mIoU", "recall", "Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "ROUGE_L"), 1.0
    ) | {"CIDEr": 9.0}
    reports = {}
    for track in ("G", "C"):
        reports["Oracle", track] = _R(dict(perfect), filtered)
        for k, m in enumerate(noisy_miou, 1):
            reports[f"Noisy-{k}", track] = _R({"mIoU": m, "recall": m, "Bleu_4": m, "CIDEr": 9 * m})
        reports["Null", track] = _R({"mIoU": null_miou, "recall": 0.0, "Bleu_4": 0, "CIDEr": 0})
    return [{"reports": reports, "planted": planted, "turns": 100}]


def test_claim_verdicts_follow_the_numbers():
    ok = sama.reproduce.claims(_results(), cpu_s=10.0)
    assert [c.verdict for c in ok] == ["held"] * 5 + ["not testable here"]
    bad = sama.reproduce.claims(_results((0.8, 0.8, 0.4), 0.1, 2, 3), cpu_s=40.0)
    assert [c.verdict for c in bad[1:5]] == ["not held"] * 4


def test_tiny_reproduction_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(sama.reproduce.RUNS, True, TINY)
    monkeypatch.setattr(sama.reproduce, "resolve_text_sim", lambda x, owner: jaccard_similarity)
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert len(doc["claims"]) == 6 and all(c["verdict"] in VERDICTS for c in doc["claims"])
    assert doc["claims"][0]["verdict"] == "held"  # the oracle is perfect at any size
    assert [r["model"] for r in doc["tables"]["overall_G"]] == list(sama.reproduce.MODELS)
    assert doc["settings"]["text_sim"] == "jaccard"
    assert (tmp_path / "sama.png").read_bytes()[:4] == b"\x89PNG"


def test_tiny_bench_writes_valid_results(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    monkeypatch.setitem(
        sama.bench.RUNS,
        True,
        {
            "turns": 5,
            "shape": (2, 8, 8),
            "ks": [1, 2],
            "sweep_turns": 2,
            "min_time": 0.0,
            "min_repeats": 1,
        },
    )
    doc = check_results_file(run_bench(PAPER, quick=True, device="cpu", out=tmp_path))
    assert {r["impl"] for r in doc["measurements"]} == {"packed", "matmul", "loop"}
    assert all(r["seconds"] > 0 for r in doc["measurements"])
    assert len(doc["claims"]) == 4 and all(c["verdict"] in VERDICTS for c in doc["claims"])


def test_device_cuda_is_refused():
    assert main(["bench", "--device", "cuda"]) == 2  # registered without GPU code


@pytest.mark.slow  # the real quick run: about 15 s of CPU
def test_quick_reproduction_claims_hold(tmp_path, monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    doc = check_results_file(run_reproduce(PAPER, quick=True, out=tmp_path))
    assert [c["verdict"] for c in doc["claims"][:5]] == ["held"] * 5
