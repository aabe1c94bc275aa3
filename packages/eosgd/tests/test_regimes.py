"""The three regimes (and the stable one) against their predicted rates, on the closed forms."""

import numpy as np
import pytest

from eosgd import (
    LeastSquaresProblem,
    classify_regime,
    critical_lr,
    fit_linear_rate,
    fit_power_law,
    gd,
    manifold_start,
    period_two_orbit,
    period_two_rate,
)


def test_stable_regime_is_monotone_at_rate_one_minus_eta_S(problems):
    """eta S(pi(w0)) < 2: the loss decreases at every step (until the rounding floor) and |r_t|
    decays at |1 - eta S| (5%)."""
    prob = problems["a"]
    w0 = manifold_start(prob, 2.6, offset=1e-3)
    eta = 0.5  # eta S = 1.3 < 2
    run = gd(prob, w0, eta, 400)
    live = run.loss > 1e-26
    assert (np.diff(run.loss[live]) < 0).all()
    window = (np.abs(run.r) > 1e-12) & (run.t > 0)
    rate = fit_linear_rate(run.t[window], np.abs(run.r[window]))
    assert rate == pytest.approx(abs(1 - eta * 2.6), rel=0.05)
    assert run.S_proj[-1] == pytest.approx(2.6, rel=1e-5)  # no transient: S barely moves


def test_subcritical_factorisation(problems):
    """(a), eta = 0.8 < eta_c = 1, S0 = 2.6 > 2/eta = 2.5: a transient, then linear convergence
    of r to the rounding level (1e-14) at |1 - eta S_inf|, with S* = 2 < S_inf < 2.5 and the
    imbalance frozen at |D_inf| > 0.5 (S = sqrt(D^2 + 4) on M)."""
    prob = problems["a"]
    eta = 0.8
    run = gd(prob, manifold_start(prob, 2.6), eta, 3000, "log")
    S_inf = run.S_proj[-1]
    assert 2.0 < S_inf < 2.5 and abs(run.D[-1, 0]) > 0.5
    assert np.abs(run.r).max() > 1e4 * abs(run.r[0])  # the transient instability
    assert abs(run.r[-1]) <= 1e-14
    window = (np.abs(run.r) < 1e-4) & (np.abs(run.r) > 1e-13)
    window &= run.t > np.flatnonzero(np.abs(run.r) > 1e-4).max()
    rate = fit_linear_rate(run.t[window], np.abs(run.r[window]))
    assert rate == pytest.approx(abs(1 - eta * S_inf), rel=0.05)
    assert np.sqrt(run.D[-1, 0] ** 2 + 4) == pytest.approx(S_inf, rel=1e-10)


@pytest.mark.parametrize("name", ["a", "b"])
def test_critical_power_laws(problems, name):
    """eta = eta_c: exponents on t in [1e3, 1e5] of |r| (-1/2 +- 0.03), the loss (-1 +- 0.05)
    and the imbalance |D| (-1/2 +- 0.03); r alternates in sign; S(pi(w)) -> S*."""
    prob = problems[name]
    S_star = prob.min_sharpness()[0]
    run = gd(prob, manifold_start(prob, 1.3 * S_star), critical_lr(prob), 100_000, "log")
    idx = np.unique(np.geomspace(1e3, 1e5, 300).astype(int))
    t = run.t[idx]
    assert fit_power_law(t, np.abs(run.r[idx]))[0] == pytest.approx(-0.5, abs=0.03)
    assert fit_power_law(t, run.loss[idx])[0] == pytest.approx(-1.0, abs=0.05)
    D = np.linalg.norm(run.D[idx], axis=-1)
    assert fit_power_law(t, D)[0] == pytest.approx(-0.5, abs=0.03)
    tail = run.r[-1000:]
    assert (np.sign(tail[1:]) != np.sign(tail[:-1])).all()
    assert 0 < run.S_proj[-1] - S_star < 1e-3 * S_star


def test_supercritical_factorisation(problems):
    """(a), eta = 1.1: D -> 0 geometrically at the orbit's rate until |D| < 1e-12 (then rounding,
    ~1e-15); the last two residuals are the orbit's (z_pm^2 - 1, z_pm from the closed form)."""
    prob = problems["a"]
    eta = 1.1
    run = gd(prob, manifold_start(prob, 2.6), eta, 3000, "log")
    D = np.abs(run.D[:, 0])
    assert D[-1] < 1e-12
    start = np.flatnonzero(D > 1e-3).max() + 1
    stop = np.flatnonzero(D > 1e-12).max()
    w_plus, w_minus = period_two_orbit(prob, eta)
    rate = fit_linear_rate(run.t[start:stop], D[start:stop])
    assert rate == pytest.approx(period_two_rate(prob, eta, w_plus), rel=1e-3)
    s, gap = np.sqrt((3 + eta) / eta), np.sqrt((eta - 1) / eta)
    z = np.array([(s + gap) / 2, (s - gap) / 2])
    assert np.allclose(prob.residual(np.stack([w_plus, w_minus])), z**2 - 1, atol=1e-12)
    assert np.allclose(np.sort(run.r[-2:]), np.sort(z**2 - 1), atol=1e-10)
    assert abs(run.S_proj[-1] - 2.0) < 1e-10 and run.dist_to_wstar[-1] < 1e-10


@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_orbit_amplitude_grows_like_a_square_root(problems, name):
    """Residual amplitude (r+ - r-)/2 against eta - eta_c on [1.005, 1.05] eta_c: slope 1/2 +- 0.05;
    the orbit closes (Phi^2 = id), is centred on the flattest minimiser and attracts GD."""
    prob = problems[name]
    eta_c = critical_lr(prob)
    etas = eta_c * np.geomspace(1.005, 1.05, 6)
    amplitudes = []
    for eta in etas:
        w_plus, w_minus = period_two_orbit(prob, eta)
        r = prob.residual(np.stack([w_plus, w_minus]))
        assert r[0] > 0 > r[1]
        assert prob.distance_to_minimisers(prob.project(np.stack([w_plus, w_minus]))).max() < 1e-9
        assert period_two_rate(prob, eta, w_plus) < 1
        amplitudes.append((r[0] - r[1]) / 2)
    slope = fit_power_law(etas - eta_c, np.array(amplitudes))[0]
    assert slope == pytest.approx(0.5, abs=0.05)


def test_generic_orbit_search_finds_the_closed_form_orbit():
    """f(u, v) = u v as a custom model (no closed form known to the package): the orbit found
    from the normal line equals the closed-form 2-cycle z_pm (1, 1)."""
    custom = LeastSquaresProblem(lambda w: w[..., 0] * w[..., 1], lambda w: w[..., ::-1], 1.0, 2)
    eta = 1.1
    w_plus, w_minus = period_two_orbit(custom, eta)
    s, gap = np.sqrt((3 + eta) / eta), np.sqrt((eta - 1) / eta)
    assert np.allclose(w_plus, (s + gap) / 2, atol=1e-9)
    assert np.allclose(w_minus, (s - gap) / 2, atol=1e-9)


def test_diagonal_net_orbit_loses_stability_at_the_closed_form_eta():
    """x = (1, 0.5, 2): on the orbit the sharp coordinate's d-mode multiplies by
    (1 + k e r+)(1 + k e r-) = 1 + k (k + 1)(1 - e) per two steps (k = 4, e = eta/eta_c, from
    r+ + r- = (1 - e)/e and r+ r- = (1 - e)/e^2); it reaches -1 at e = 1.1."""
    prob = LeastSquaresProblem.diagonal_net(np.array([1.0, 0.5, 2.0]))
    eta_c = critical_lr(prob)
    for e in (1.05, 1.1, 1.15):
        w_plus, _ = period_two_orbit(prob, e * eta_c)
        predicted = np.sqrt(abs(1 + 20 * (1 - e)))
        if e > 1.1:
            predicted = max(predicted, np.sqrt(abs(1 + 12 * (1 - e))))  # the s-mode too
        rate = period_two_rate(prob, e * eta_c, w_plus)
        assert rate >= predicted - 1e-6
        assert (rate < 1) == (e < 1.1 - 1e-9) or e == 1.1


def test_classify_regime_and_critical_lr(problems):
    assert critical_lr(problems["a"]) == 1.0
    assert critical_lr(problems["b"]) == pytest.approx(2 / 3, rel=1e-15)
    assert critical_lr(problems["c"]) == 2.0  # 1 / min|x_i|
    prob = problems["b"]
    eta_c = critical_lr(prob)
    assert classify_regime(prob, eta_c) == "critical"
    assert classify_regime(prob, eta_c * (1 + 5e-10)) == "critical"
    assert classify_regime(prob, eta_c * (1 - 5e-10)) == "critical"
    assert classify_regime(prob, eta_c * (1 + 2e-9)) == "supercritical"
    assert classify_regime(prob, eta_c * (1 - 2e-9)) == "subcritical"
    assert classify_regime(prob, eta_c * 1.01, rtol=0.02) == "critical"


def test_period_two_orbit_is_refused_at_or_below_eta_c(problems):
    with pytest.raises(ValueError, match="above the critical step size 1"):
        period_two_orbit(problems["a"], 1.0)


def test_manifold_start(problems):
    prob = problems["b"]
    targets = np.array([3.0, 3.3, 5.4])
    w0 = manifold_start(prob, targets, offset=0.0, seed=2)
    assert np.allclose(prob.sharpness(w0), targets, rtol=1e-12)
    assert np.abs(prob.residual(w0)).max() < 1e-13
    pushed = manifold_start(prob, targets, offset=1e-6, seed=2)
    assert np.allclose(np.linalg.norm(pushed - w0, axis=-1), 1e-6, rtol=1e-9)
    assert (prob.residual(pushed) > 0).all()
