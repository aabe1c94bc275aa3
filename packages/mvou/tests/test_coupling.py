"""The static SB on samples: the cost matrix and log-domain Sinkhorn."""

import torch

from conftest import randn, rotation
from mvou import MvOU, entropic_plan, sb_cost_matrix
from paperkit.testing import assert_close


def _data(n=60, k=45):
    ref = MvOU(rotation(2), randn(2, seed=5), 0.5)
    return ref, randn(n, 2, seed=1), 0.7 * randn(k, 2, seed=2) + 1


def test_plan_marginals_and_determinism():
    ref, x0, x1 = _data()
    plan = entropic_plan(x0, x1, ref)
    n, k = plan.shape
    assert float((plan.sum(1) - 1 / n).abs().sum()) < 1e-6
    assert float((plan.sum(0) - 1 / k).abs().sum()) < 1e-6
    assert torch.equal(plan, entropic_plan(x0, x1, ref))


def test_plan_is_the_gibbs_kernel_scaled():
    # pi_ij = exp(f_i + g_j - c_ij): log pi + c has rank one in the (i, j) sense
    ref, x0, x1 = _data()
    plan = entropic_plan(x0, x1, ref, reg=1.0)
    R = plan.log() + sb_cost_matrix(x0, x1, ref)
    resid = R - R[:, :1] - R[:1, :] + R[0, 0]
    assert float(resid.abs().max()) < 1e-10


def test_matches_pot_sinkhorn_log():
    ref, x0, x1 = _data()
    ours = entropic_plan(x0, x1, ref, reg=0.5, tol=1e-10, max_iter=5000)
    pot = entropic_plan(x0, x1, ref, reg=0.5, method="pot", tol=1e-10, max_iter=5000)
    assert_close(ours, pot, rtol=1e-6, atol=1e-9)


def test_cost_matrix_whitens_by_sigma_1():
    ref, x0, x1 = _data(4, 3)
    C = sb_cost_matrix(x0, x1, ref)
    for i in range(4):
        for j in range(3):
            r = x1[j] - (ref.m + ref.phi1 @ (x0[i] - ref.m))
            assert abs(float(C[i, j]) - 0.5 * float(r @ torch.linalg.solve(ref.cov1, r))) < 1e-12
