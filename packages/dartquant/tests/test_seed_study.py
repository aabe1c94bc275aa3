"""The paired-seed study behind the README's "What we tried" paragraph, at toy size."""

import numpy as np
import pytest

from dartquant.seed_study import VARIANTS, seed_study


@pytest.mark.slow
def test_paired_differences_are_per_seed_differences():
    rows, extra = seed_study(seeds=2, train_steps=5, n_chars=20_000, val_chars=2_000)
    assert [r["variant"] for r in rows] == list(VARIANTS)
    per_seed = extra["per_seed"]
    for row in rows:
        paired = VARIANTS[row["variant"]][1]
        if paired is None:
            assert "minus paired QuaRot" not in row
            continue
        diff = np.array(per_seed[row["variant"]]) - np.array(per_seed[paired])
        assert row["minus paired QuaRot"] == pytest.approx(diff.mean())
        assert row["seeds better"] == f"{int((diff < 0).sum())}/2"
    assert len(extra["r1_whip_final"]) == 2


def test_study_arguments_are_checked_before_any_training():
    with pytest.raises(ValueError, match="seeds"):
        seed_study(seeds=0)
    with pytest.raises(ValueError, match="train_steps"):
        seed_study(train_steps=0)
