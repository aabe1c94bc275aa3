"""clt_experiment: the table's shape, and the W1 decay of spec check 7 (slow)."""

import numpy as np
import pytest

from gnnclt import clt_experiment
from gnnclt.experiment import COLUMNS


def test_table_shape_and_determinism(csbm):
    kw = {"seeds": 1, "n_points": 100, "n_train": 300}
    a = clt_experiment(csbm, 2000, [10, 20], [1, 2], **kw)
    b = clt_experiment(csbm, 2000, [10, 20], [1, 2], **kw)
    assert list(a.columns) == list(COLUMNS) and len(a) == 4
    assert a.equals(b)
    assert (a.acc_bayes > 0.5).all() and np.isfinite(a.drop(columns="weight_gap").to_numpy()).all()


@pytest.mark.slow
def test_w1_decreases_with_nu(csbm):
    """Spec check 7: n = 50k, k = 1: W1(nu=200) < W1(nu=10), and near the floor at nu = 200."""
    t = clt_experiment(csbm, 50_000, [10, 200], [1], seeds=1, n_points=2000).set_index("nu")
    assert t.w1_centered[200.0] < t.w1_centered[10.0]
    assert t.w1_centered[200.0] - t.w1_floor[200.0] <= 0.15 * t.w1_floor[200.0]
