"""The reproduction's claims are computed from its summaries (on hand-made summaries), and the
quick run follows paperkit's results schema (slow)."""

import pytest

from commono.reproduce import SPLITS, claims


def _summary(acc_common, acc_perc):
    metrics = {"accuracy": 0.0, "hallucination_rate": 0.0, "f1": 0.5}
    out = {}
    for sp in SPLITS:
        out[sp] = {}
        for a in ("Oracle", "Random", "Union", "PerceptionIntersect"):
            out[sp][a] = {"common": dict(metrics), "perception": dict(metrics)}
        out[sp]["Oracle"] = {
            "common": {"accuracy": 1.0, "hallucination_rate": 0.0},
            "perception": {"accuracy": 1.0, "hallucination_rate": 0.0},
        }
        out[sp]["PerceptionIntersect"]["common"]["accuracy"] = acc_common[sp]
        out[sp]["PerceptionIntersect"]["perception"]["accuracy"] = acc_perc[sp]
        for a in ("Random", "Union"):
            out[sp][a]["common"]["accuracy"] = 0.05 if sp == "common-o" else 0.0
    return out


def _records(h_with, h_without):
    rec = []
    for k in range(20):
        rec.append(
            {
                "similar_distractor": True,
                "gt_size": 1,
                "hallucination": k < 20 * h_with,
                "one_scene_candidates": 1,
            }
        )
        rec.append(
            {
                "similar_distractor": False,
                "gt_size": 1,
                "hallucination": k < 20 * h_without,
                "one_scene_candidates": 1,
            }
        )
    return rec


def test_claims_follow_the_numbers():
    res = {
        "summary": _summary({"common-o": 0.3, "complex": 0.1}, {"common-o": 0.6, "complex": 0.3}),
        "records": {
            sp: {a: _records(1.0, 0.9) for a in ("Union", "PerceptionIntersect")} for sp in SPLITS
        },
    }
    verdicts = [c.verdict for c in claims(res)]
    assert verdicts == ["not testable here", "held", "held", "held", "held", "held"]
    res["summary"] = _summary({"common-o": 0.3, "complex": 0.1}, {"common-o": 0.35, "complex": 0.3})
    res["records"] = {
        sp: {a: _records(0.5, 0.6) for a in ("Union", "PerceptionIntersect")} for sp in SPLITS
    }
    verdicts = [c.verdict for c in claims(res)]
    assert verdicts[1] == "partly" and verdicts[3] == "not held" and verdicts[4] == "not held"


@pytest.mark.slow
def test_quick_run_writes_a_valid_results_file(tmp_path):
    from commono.paper import PAPER
    from paperkit.cli import run_reproduce
    from paperkit.testing import check_results_file

    path = run_reproduce(PAPER, quick=True, out=tmp_path)
    doc = check_results_file(path)
    assert doc["claims"] and (tmp_path / "commono.png").is_file()
