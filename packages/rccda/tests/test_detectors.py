"""The detectors written here and the budget gate of DetectorPolicy."""

import numpy as np
import pytest

from rccda import DetectorPolicy, make_detector


@pytest.mark.parametrize("name", ["adwin", "ddm", "kswin"])
def test_detects_a_mean_shift_not_noise(name):
    rng = np.random.default_rng(0)
    det = make_detector(name)
    before = [det.update(x) for x in rng.normal(0.3, 0.05, 300)]
    after = [det.update(x) for x in rng.normal(1.0, 0.05, 100)]
    assert sum(before) <= 1  # false alarms on stationary noise are rare
    assert any(after[:40])  # the shift is found within 40 steps


@pytest.mark.parametrize("name", ["adwin", "ddm", "kswin"])
def test_gate_keeps_the_budget(name):
    rng = np.random.default_rng(1)
    losses = np.concatenate([rng.normal(m, 0.05, 200) for m in [0.3, 1.0, 0.3, 1.2] * 3])
    gated = DetectorPolicy(name, budget=0.1, burst=50)
    free = DetectorPolicy(name, budget=0.1, burst=50, gated=False)
    for x in losses:
        gated.step(abs(x))
        free.step(abs(x))
    assert gated.spent_ <= 0.1 * len(losses) + 1e-9
    # prefix sums stay within the budget at every step
    d = np.cumsum([h[3] for h in gated.history_])
    assert np.all(d <= 0.1 * np.arange(1, len(d) + 1) + 1e-9)
    assert free.n_updates_ >= gated.n_updates_ and len(free.detections_) >= 3
