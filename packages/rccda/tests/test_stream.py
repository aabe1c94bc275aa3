"""Streams, the prequential runner and the end-to-end comparison (paper Sec. 6, at small scale)."""

import numpy as np
import pytest

from rccda import (
    DriftingDigitsStream,
    GaussianDriftStream,
    PeriodicPolicy,
    RCCDAPolicy,
    queue_bound,
    run_stream,
)
from rccda.policies import Policy
from rccda.stream import ORDER, RECURRENT, calibrate_threshold, recovery_times


def test_abrupt_schedule():
    s = DriftingDigitsStream("abrupt", T=2000, batch=8)
    assert [s.domain(t)[1] for t in (0, 399, 400, 800, 1200, 1600, 1999)] == [
        ORDER[0],
        ORDER[0],
        ORDER[1],
        ORDER[2],
        ORDER[3],
        ORDER[4],
        ORDER[4],
    ]
    assert all(s.domain(t)[2] == 1.0 for t in range(0, 2000, 37))
    assert s.drift_points == [400, 800, 1200, 1600]


def test_gradual_schedule_mixes_linearly():
    s = DriftingDigitsStream("gradual", T=2000, batch=8)
    assert s.domain(400) == (ORDER[0], ORDER[1], 1 / 200)
    assert s.domain(499) == (ORDER[0], ORDER[1], 0.5)
    assert s.domain(599)[2] == 1.0 and s.domain(700)[2] == 1.0
    w = [s.domain(t)[2] for t in range(400, 600)]
    np.testing.assert_allclose(np.diff(w), 1 / 200)
    # the share of new-domain examples follows w: at t = 1299 (w = 0.5) half the batch comes
    # from "permute" (plain, dark images) and half from "invert" (bright images)
    big = DriftingDigitsStream("gradual", T=2000, batch=4000)
    assert big.domain(1299) == ("invert", "permute", 0.5)
    bright = big.batch_at(1299)[0].mean(axis=1) > 0.5
    assert abs(bright.mean() - 0.5) < 0.04


def test_recurrent_schedule():
    s = DriftingDigitsStream("recurrent", T=2000, batch=8)
    assert [s.domain(t)[1] for t in (0, 400, 800, 1200)] == [*RECURRENT, *RECURRENT]


def test_domains_transform_the_data():
    a = DriftingDigitsStream("abrupt", T=2000, batch=64, seed=5)
    X0, y0 = a.batch_at(10)
    X_inv, y_inv = a.batch_at(810)  # invert
    X_perm, y_perm = a.batch_at(1210)  # label permutation
    assert X0.shape == (64, 64) and y0.dtype.kind == "i"
    assert X_inv.mean() > 0.5 > X0.mean()  # 1 - x on mostly dark pixels
    # the permuted segment uses identity images with labels y + 1 mod 10: same x-to-y map shifted
    rng = np.random.default_rng([5, 1210])
    idx = rng.integers(0, 1797, 64)
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    np.testing.assert_allclose(X_perm, X[idx] / 16.0)
    np.testing.assert_array_equal(y_perm, (y[idx] + 1) % 10)


@pytest.mark.parametrize(
    "make",
    [
        lambda seed: DriftingDigitsStream("gradual", T=600, batch=16, seed=seed),
        lambda seed: GaussianDriftStream(T=600, batch=16, seed=seed),
    ],
)
def test_same_seed_same_batches(make):
    a, b, c = make(3), make(3), make(4)
    for t in (0, 450, 599):
        for u, v in zip(a.batch_at(t), b.batch_at(t), strict=True):
            np.testing.assert_array_equal(u, v)
    assert not np.array_equal(a.batch_at(450)[0], c.batch_at(450)[0])


def test_gaussian_means_rotate_and_jump():
    s = GaussianDriftStream(T=1000, batch=10000, speed=0.001, jump_every=500, jump_angle=2.0)
    assert s.angle(499) == pytest.approx(0.499) and s.angle(500) == pytest.approx(2.5)
    X, y = s.batch_at(600)
    mu = X[y == 1].mean(0) - X[y == 0].mean(0)
    np.testing.assert_allclose(mu[:2] / 2, 1.5 * np.array([np.cos(2.6), np.sin(2.6)]), atol=0.05)


class CountingPolicy(Policy):
    """Updates at the steps listed; counts the calls."""

    def __init__(self, at):
        self.at = set(at)
        super().__init__()

    def _decide(self, loss, c):
        return self.t_ in self.at


@pytest.mark.parametrize("model", ["logreg", "mlp"])
def test_parameters_change_only_on_updates(model, monkeypatch):
    import rccda.models as models

    calls = []
    cls = models.LogisticModel if model == "logreg" else models.MLPModel
    orig = cls.sgd_step
    monkeypatch.setattr(
        cls, "sgd_step", lambda self, X, y, lr: (calls.append(1), orig(self, X, y, lr))
    )
    s = DriftingDigitsStream("abrupt", T=30, batch=8)
    res = run_stream(s, model, CountingPolicy([0, 5, 6, 20]), lr=0.5, local_steps=2)
    assert len(calls) == 8 and res["updates"].nonzero()[0].tolist() == [0, 5, 6, 20]
    # between updates the loss of the same batch would be unchanged: losses at t with no
    # update in between are evaluated by identical parameters
    never = run_stream(s, model, CountingPolicy([]), lr=0.5)
    s2 = DriftingDigitsStream("abrupt", T=30, batch=8)
    again = run_stream(s2, model, CountingPolicy([]), lr=0.5)
    np.testing.assert_array_equal(never["loss"], again["loss"])
    np.testing.assert_array_equal(res["loss"][:1], never["loss"][:1])
    assert not np.allclose(res["loss"][1:], never["loss"][1:])


def test_recovery_times():
    acc = np.r_[np.full(100, 0.8), np.zeros(30), np.full(70, 0.8)]
    # 10-step running mean reaches 0.72 after 9 recovered steps at t = 130 + 8
    assert recovery_times(acc, [100]).tolist() == [39]
    assert recovery_times(np.r_[np.ones(100), np.zeros(50)], [100]).tolist() == [50]


def test_end_to_end_rccda_not_worse_than_periodic():
    """digits-abrupt, logistic model, budget 0.2, 5 seeds: paired difference >= -2 s.e., and the
    realised rate <= 0.2 + Q_max / T."""
    diffs = []
    for seed in range(5):
        tau = calibrate_threshold(DriftingDigitsStream("abrupt", seed=seed), lr=0.5, seed=seed)
        r = run_stream(
            DriftingDigitsStream("abrupt", seed=seed),
            "logreg",
            RCCDAPolicy(0.2, V=10.0, drift_threshold=tau),
            lr=0.5,
            seed=seed,
        )
        p = run_stream(
            DriftingDigitsStream("abrupt", seed=seed),
            "logreg",
            PeriodicPolicy(0.2),
            lr=0.5,
            seed=seed,
        )
        assert r["avg_cost"] <= 0.2 + queue_bound(10.0, r["loss"].max()) / 2000
        diffs.append(r["mean_acc"] - p["mean_acc"])
    d = np.array(diffs)
    assert d.mean() >= -2 * d.std(ddof=1) / np.sqrt(len(d))
