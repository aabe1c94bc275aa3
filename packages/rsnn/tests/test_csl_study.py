"""The CSL study behind the README's "What we tried" paragraph, at toy size."""

import pytest

from rsnn.csl_study import csl_window_study


@pytest.mark.slow  # trains four models on CSL: about 10 s
def test_study_rows_cover_both_formats_and_both_models():
    rows = csl_window_study(folds=1, epochs=1, window=3, ms=(1,), hidden=8)
    assert [(r["method"], r["window s"], r["m"]) for r in rows] == [
        ("RSNN", 0, 1),
        ("RWNN", 0, 1),
        ("RSNN", 3, 1),
        ("RWNN", 3, 1),
    ]
    for r in rows:
        assert r["runs"] == 1 and r["std"] == 0.0
        assert 0.0 <= r["accuracy"] <= 1.0 and r["final train loss"] > 0


def test_study_arguments_are_checked_before_any_training():
    with pytest.raises(ValueError, match="folds"):
        csl_window_study(folds=6)
    with pytest.raises(ValueError, match="window"):
        csl_window_study(window=0)
