"""GD itself: the exact identities of the factorisation, divergence, batching, records."""

import numpy as np
import pytest

from eosgd import DIVERGENCE_FACTOR, LeastSquaresProblem, gd, manifold_start


@pytest.mark.parametrize("eta", [0.3, 0.8, 1.0, 1.1])  # stable, subcritical, critical, super
def test_factorisation_identities_hold_along_gd(problems, eta):
    """(a): r_{t+1} = r_t (1 - eta S_t + eta^2 r_t (1 + r_t)) and D_{t+1} = D_t (1 - eta^2 r_t^2)
    (expand one step of w - eta r (v, u)), over 1000 steps, to 1e-12 |lhs| + 1e-14 (u^2 + v^2):
    r = uv - 1 and D = u^2 - v^2 are computed with cancellation, so a purely relative bound
    cannot hold once r or D is tiny."""
    prob = problems["a"]
    run = gd(prob, manifold_start(prob, 2.6, offset=1e-6), eta, 1000, 1, project=False)
    u, v = run.w[:, 0], run.w[:, 1]
    S, r, D = u**2 + v**2, run.r, run.D[:, 0]
    floor = 1e-14 * S[1:]
    r_next = r[:-1] * (1 - eta * S[:-1] + eta**2 * r[:-1] * (1 + r[:-1]))
    D_next = D[:-1] * (1 - eta**2 * r[:-1] ** 2)
    assert (np.abs(r[1:] - r_next) <= 1e-12 * np.abs(r[1:]) + floor).all()
    assert (np.abs(D[1:] - D_next) <= 1e-12 * np.abs(D[1:]) + floor).all()


def test_divergence_is_reported_without_nan(problems):
    """eta S far above 2 far from M: the run is frozen below the bound, nothing is NaN."""
    prob = problems["b"]
    w0 = np.array([[2.0, 1.5, 0.2], [1.1, 1.0, 0.9]])
    run = gd(prob, w0, np.array([2.0, 0.2]), 500, "log")
    assert run.diverged.tolist() == [True, False] and run.diverged_at[1] == -1
    assert 0 < run.diverged_at[0] < 500
    for field in ("r", "loss", "D", "defect", "w", "S_proj", "dist_to_wstar"):
        assert np.isfinite(getattr(run, field)).all(), field
    t = run.diverged_at[0]
    bound = DIVERGENCE_FACTOR * max(1.0, abs(run.r[0, 0]))
    assert np.abs(run.r[:, 0]).max() <= bound and (run.r[t:, 0] == run.r[t - 1, 0]).all()
    assert np.abs(run.r[-1, 1]) < 1e-12  # the other run carried on and converged


def test_a_single_diverging_run_stops_early(problems):
    run = gd(problems["a"], np.array([3.0, 0.1]), 3.0, 10_000)
    assert run.diverged is True and run.steps < 100 and len(run.r) == run.steps + 1
    assert run.t_rec[-1] == run.steps and np.isfinite(run.w).all()


def test_the_batch_equals_runs_one_by_one(problems):
    """The vectorised loop computes each row as a run of its own (to rounding: numpy's sums
    may group the terms differently for another batch size)."""
    prob = problems["c"]
    S_star = prob.min_sharpness()[0]
    w0 = manifold_start(prob, S_star * np.array([1.1, 1.2, 1.3]), seed=1)
    etas = np.array([1.6, 2.0, 2.1])
    batch = gd(prob, w0, etas, 300, 7)
    for i in range(3):
        one = gd(prob, w0[i], float(etas[i]), 300, 7)
        assert np.allclose(batch.r[:, i], one.r, rtol=1e-9, atol=1e-14)
        assert np.allclose(batch.w[:, i], one.w, rtol=1e-12)
        assert np.allclose(batch.S_proj[:, i], one.S_proj, rtol=1e-12)


def test_broadcasting_and_shapes(problems):
    prob = problems["b"]
    w0 = np.array([1.2, 0.9, 1.0])
    many = gd(prob, w0, np.array([0.3, 0.5]), 20, 5)  # one start, two step sizes
    assert many.r.shape == (21, 2) and many.w.shape == (5, 2, 3) and many.D.shape == (21, 2, 2)
    assert many.t_rec.tolist() == [0, 5, 10, 15, 20]
    both = gd(prob, np.stack([w0, w0 + 0.1]), 0.3, 20)  # two starts, one step size
    assert both.eta.tolist() == [0.3, 0.3] and both.defect.shape == (21, 2)
    one = gd(prob, w0, 0.3, 20)
    assert one.r.shape == (21,) and one.w.shape == (21, 3) and isinstance(one.eta, float)
    assert one.defect[0] == 0 and one.defect[2] == pytest.approx(
        np.linalg.norm(one.w[2] - one.w[0])
    )
    assert gd(prob, w0, 0.3, 10, project=False).S_proj is None


def test_determinism(problems):
    prob = problems["c"]
    a = gd(prob, manifold_start(prob, 1.5, seed=7), 1.9, 400, "log")
    b = gd(prob, manifold_start(prob, 1.5, seed=7), 1.9, 400, "log")
    assert np.array_equal(a.r, b.r) and np.array_equal(a.S_proj, b.S_proj)
    other = manifold_start(prob, 1.5, seed=8)
    assert not np.allclose(other, manifold_start(prob, 1.5, seed=7))


def test_multi_output_gd_decreases_the_loss():
    rng = np.random.default_rng(0)
    prob = LeastSquaresProblem.tanh_net(rng.standard_normal((3, 2)), rng.uniform(-1, 1, 3), 4)
    run = gd(prob, 0.5 * rng.standard_normal(prob.dim), 0.4, 3000, "log")
    assert run.r.shape == (3001, 3) and run.loss[-1] < 1e-12 * run.loss[0]
    assert run.S_proj[-1] < 2 / 0.4 and run.projection_failures == 0
