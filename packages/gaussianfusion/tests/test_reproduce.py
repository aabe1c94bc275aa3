"""The reproduction's claim rule, and the reproduction end to end at a tiny number of steps
(slow: it builds 1,300-2,300 scenes)."""

import pytest

from gaussianfusion.reproduce import ABLATIONS, ablation_gain, reproduce
from paperkit import VERDICTS


def test_ablation_gain_is_paired_mean_and_seed_std():
    mean, spread = ablation_gain([0.80, 0.70, 0.75], [0.70, 0.68, 0.72])
    assert mean == pytest.approx(0.05)
    assert spread == pytest.approx(
        ((0.05**2 + 0.03**2 + 0.02**2) / 2) ** 0.5
    )  # gains 0.10, 0.02, 0.03
    assert ablation_gain([0.5], [0.4]) == pytest.approx((0.1, 0.0))
    with pytest.raises(ValueError, match="other"):
        ablation_gain([0.5, 0.6], [0.4])


@pytest.mark.slow
def test_reproduce_smoke(tmp_path):
    report = reproduce(quick=True, seed=0, out=tmp_path, steps=2)
    assert [row["method"] for row in report.tables["planners"]] == [
        "GaussianFusion",
        "BEV fusion (dense)",
        "Flatten fusion (TransFuser-lite)",
    ]
    assert report.settings["train_scenes"] == 1000
    assert all(c.verdict in VERDICTS for c in report.claims)
    assert report.claims[1].verdict == "not testable here"  # no ablations in --quick
    assert (tmp_path / "gaussianfusion.png").is_file()


@pytest.mark.slow
def test_reproduce_ablations_over_seeds(tmp_path):
    report = reproduce(quick=False, seed=3, out=tmp_path, steps=2, ablation_seeds=2)
    rows = report.tables["ablations"]
    assert [r["variant"] for r in rows] == list(ABLATIONS)
    assert all(len(r["mini-PDMS per seed"].split(" / ")) == 2 for r in rows)
    assert report.settings["ablation_seeds"] == [3, 4]
    assert report.claims[1].verdict in ("held", "partly", "not held")
    assert "2 seeds" in report.claims[2].why
