"""The verdict rules of rsnn.claims, on the README's tables (full run) and on counter-examples."""

import pytest

from rsnn.claims import (
    beats_gin_claim,
    fewer_samples_claim,
    fewer_tokens_claim,
    log_coverage_claim,
    rsnn_vs_rwnn_claim,
)


def cov(family, rows):
    return [
        {
            "family": family,
            "|V|": n,
            "searches": s,
            "walks (len |V|)": w,
            "search tokens": s * (2 * n - 1),
            "walk tokens": w * (n + 1),
        }
        for n, s, w in rows
    ]


# the README's coverage table, smallest and largest sizes (full run, seed 0)
COVERAGE = (
    cov("regular3", [(50, 5.0, 12.0), (800, 6.6, 22.9)])
    + cov("er3", [(48, 10.9, 14.8), (754, 18.1, 29.9)])
    + cov("molecule", [(50, 3.9, 16.9), (800, 8.5, 67.5)])
)


def test_coverage_claims_on_the_full_run():
    assert log_coverage_claim(COVERAGE).verdict == "held"
    assert fewer_samples_claim(COVERAGE).verdict == "held"
    claim = fewer_tokens_claim(COVERAGE)
    assert claim.verdict == "partly" and "er3: fewer at 0 of 2" in claim.measured


def test_coverage_rules_can_fail():
    linear = cov("regular3", [(50, 5.0, 12.0), (800, 80.0, 22.9)])  # searches grow like |V|
    assert log_coverage_claim(linear).verdict == "not held"
    assert log_coverage_claim(linear + COVERAGE[2:]).verdict == "partly"
    assert fewer_samples_claim(linear).verdict == "partly"


def table(key, values, gin=None):
    rows = [
        {"method": method, "m": m, key: v}
        for method, series in values.items()
        for m, v in zip((1, 4, 16), series, strict=False)
    ]
    if gin is not None:
        rows.append({"method": "GIN", "m": "-", key: gin})
    return rows


@pytest.mark.parametrize(
    ("task", "values", "mean", "verdict"),
    [
        # README (c): RSNN with 4 searches beats RWNN with 16 walks: a 4x gain, not 16x
        ("cycle", {"RSNN": (0.845, 0.764, 0.620), "RWNN": (0.876, 0.878, 0.817)}, 0.921, "partly"),
        # README (d): RSNN better at every equal count, never with fewer sequences
        ("nci", {"RSNN": (0.681, 0.614, 0.489), "RWNN": (0.749, 0.664, 0.564)}, 1.013, "partly"),
        # a 16x gain: RSNN with one search beats RWNN with 16 walks
        ("16x", {"RSNN": (0.5, 0.4, 0.3), "RWNN": (0.9, 0.8, 0.6)}, 1.0, "held"),
        # RSNN worse at equal counts and never ahead
        ("worse", {"RSNN": (0.9, 0.85, 0.8), "RWNN": (0.7, 0.6, 0.5)}, 1.0, "not held"),
        # RSNN ahead of RWNN but no better than predicting the mean: nothing learned
        ("mean", {"RSNN": (1.1, 1.05, 1.01), "RWNN": (1.2, 1.2, 1.2)}, 1.0, "not held"),
    ],
)
def test_ring_count_rule(task, values, mean, verdict):
    rows = table("test MAE", values)
    claim = rsnn_vs_rwnn_claim(
        rows, task=task, key="test MAE", higher_is_better=False, learned=mean
    )
    assert claim.verdict == verdict


def test_csl_claims_of_the_readme_runs():
    # full run (2 folds of 30 test graphs): RSNN ahead only at m = 16; all above GIN
    full = table(
        "test accuracy",
        {"RSNN": (0.167, 0.217, 0.300), "RWNN": (0.200, 0.233, 0.250)},
        gin=0.100,
    )
    kw = {"task": "CSL", "key": "test accuracy", "higher_is_better": True, "learned": 0.1 + 1 / 30}
    assert rsnn_vs_rwnn_claim(full, **kw).verdict == "not held"
    assert beats_gin_claim(full, test_size=30).verdict == "held"
    # quick run (m = 1, 4): RSNN never more than one test graph above chance
    quick = table("test accuracy", {"RSNN": (0.100, 0.133), "RWNN": (0.367, 0.100)}, gin=0.100)
    assert rsnn_vs_rwnn_claim(quick, **kw).verdict == "not held"
    assert beats_gin_claim(quick, test_size=30).verdict == "not held"
