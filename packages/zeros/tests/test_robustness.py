"""The seed and learning-rate check of the MQAR result runs every configured model."""

from paperkit.testing import assert_param_error
from zeros.robustness import RUNS, robustness


def test_robustness_runs_every_configuration(monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
    rows = robustness(steps=1)
    assert [(r["model"], r["seed"], r["lr"]) for r in rows] == list(RUNS)
    assert all(0.0 <= r["accuracy"] <= 1.0 and r["steps"] == 1 for r in rows)


def test_robustness_refuses_a_step_count_below_one():
    assert_param_error(lambda: robustness(steps=0), param="steps")
