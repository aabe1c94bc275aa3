"""The second-order frontier law and its rigorous bounds (second-order expansion of the
Lagrangian optimum)."""

import numpy as np
import pytest

from ldafront import (
    FrontierLaw,
    chord_bound,
    dp_gap,
    fisher_term,
    frontier_law,
    postprocessed_frontier,
    shift_bound,
)


def _config(rng, n=20_000):
    p1 = rng.uniform(0.15, 0.6)
    A = (rng.random(n) < p1).astype(int)
    z = rng.normal(rng.uniform(-1, 1), rng.uniform(0.5, 2.0), n) + rng.uniform(0.2, 1.5) * A
    return 1 / (1 + np.exp(-z)), A


def test_law_is_second_order_exact():
    # check 4: |PF_exact - law| = O((Delta0 - delta)^3): the ratio to the cube stays bounded
    eta, A = _config(np.random.default_rng(0))
    law = FrontierLaw().fit(eta, eta, A)
    gaps = law.D0_ * (1 - np.array([0.4, 0.2, 0.1, 0.05, 0.025]))
    err = np.abs(postprocessed_frontier(eta, A, gaps) - law.predict(gaps))
    ratio = err / (law.D0_ - gaps) ** 3
    assert np.all(np.isfinite(ratio)) and ratio.max() < 10 * ratio[0] + 1e-12
    # and the error really shrinks at the cubic rate, not a quadratic one
    assert err[-1] < err[0] * (0.025 / 0.4) ** 2 / 4


def test_upper_bound_is_valid_on_random_configurations():
    # check 5: law.upper_bound >= PF_exact - 1e-9 on 20 random configurations
    rng = np.random.default_rng(1)
    for _ in range(20):
        eta, A = _config(rng, 5000)
        law = FrontierLaw().fit(eta, eta, A)
        deltas = law.D0_ * np.linspace(0, 1, 8)
        exact = postprocessed_frontier(eta, A, deltas)
        assert np.all(law.upper_bound(deltas) >= exact - 1e-9)


def test_chord_valid_upper_bound_is_min_and_shift_tighter_near_delta0():
    # check 6: the chord is valid; upper_bound = min(shift, chord); at delta = 0.95 Delta0 the
    # shift bound (quadratic in Delta0 - delta) is the tighter one
    rng = np.random.default_rng(2)
    for _ in range(10):
        eta, A = _config(rng, 5000)
        law = FrontierLaw().fit(eta, eta, A)
        deltas = law.D0_ * np.linspace(0, 1, 8)
        exact = postprocessed_frontier(eta, A, deltas)
        chord = chord_bound(law.L0_, law.D0_, law.H_, deltas)
        shift = shift_bound(law.L0_, law.D0_, law.V_, law.w_max_, deltas)
        assert np.all(chord >= exact - 1e-9)
        np.testing.assert_array_equal(law.upper_bound(deltas), np.minimum(shift, chord))
        near = np.array([0.95 * law.D0_])
        assert (
            shift_bound(law.L0_, law.D0_, law.V_, law.w_max_, near)[0]
            < chord_bound(law.L0_, law.D0_, law.H_, near)[0]
        )


def test_fisher_term_closed_form():
    # check 7: V = sum_a (1/p_a) E[eta (1 - eta) | A = a]
    eta, A = _config(np.random.default_rng(3), 3000)
    p1 = A.mean()
    closed = (1 / p1) * np.mean((eta * (1 - eta))[A == 1]) + (1 / (1 - p1)) * np.mean(
        (eta * (1 - eta))[A == 0]
    )
    assert abs(fisher_term(eta, A) - closed) < 1e-12
    assert abs(FrontierLaw().fit(eta, eta, A).V_ - closed) < 1e-12


def test_frontier_law_values_and_flat_above_delta0():
    # closed form by hand: 0.5 + 0.2^2 / 1 = 0.54 at 0; flat for delta >= Delta0
    np.testing.assert_allclose(frontier_law(0.5, 0.2, 0.5, [0.0, 0.2, 0.3]), [0.54, 0.5, 0.5])


def test_fit_attributes():
    eta, A = _config(np.random.default_rng(4), 2000)
    law = FrontierLaw().fit(eta, eta, A)
    assert pytest.approx(dp_gap(eta, A), abs=1e-12) == law.D0_
    assert law.w_max_ == pytest.approx(1 / min(A.mean(), 1 - A.mean()))
    with pytest.raises(ValueError, match="fitted"):
        FrontierLaw().predict([0.1])
