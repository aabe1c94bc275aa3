import pytest
import torch

from paperkit.testing import assert_close
from symgfm import ridge_loo_errors, ridge_ls


def _data(n=12, p=4, q=3, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, p, generator=g, dtype=torch.float64), torch.randn(
        n, q, generator=g, dtype=torch.float64
    )


def _augmented_lstsq(A, B, lam):
    """The same ridge fit as least squares on [A 1; lam I] -> [B; 0] (the paper code's
    construction), stable in float64 where the normal equations square the condition number."""
    aug = torch.cat([A, torch.ones(len(A), 1, dtype=A.dtype)], 1)
    rows = torch.cat([aug, lam * torch.eye(aug.shape[1], dtype=A.dtype)])
    coef = torch.linalg.lstsq(
        rows, torch.cat([B, torch.zeros(aug.shape[1], B.shape[1], dtype=B.dtype)]), driver="gelsd"
    ).solution
    return coef[:-1], coef[-1]


def _normal_equations(A, B, lam):
    """[W; b] = ([A 1]^T [A 1] + lam^2 I)^-1 [A 1]^T B (closed form of the ridge problem)."""
    aug = torch.cat([A, torch.ones(len(A), 1, dtype=A.dtype)], 1)
    coef = torch.linalg.solve(
        aug.T @ aug + lam**2 * torch.eye(aug.shape[1], dtype=A.dtype), aug.T @ B
    )
    return coef[:-1], coef[-1]


@pytest.mark.parametrize("lam", [1e-15, 1e-4, 1e-2, 0.5])
def test_ridge_equals_normal_equations(lam):
    A, B = _data()
    W, b = ridge_ls(A, B, lambdas=(lam,))
    W_ref, b_ref = _normal_equations(A, B, lam)
    assert_close(W, W_ref, rtol=1e-9, atol=1e-10)
    assert_close(b, b_ref, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("n,p", [(12, 4), (5, 8)])  # over- and under-determined
def test_loo_formula_equals_brute_force(n, p):
    A, B = _data(n, p)
    lambdas = (1e-8, 1e-2, 0.3)
    brute = []
    for lam in lambdas:
        errs = []
        for i in range(n):  # refit without row i, predict it
            keep = torch.arange(n) != i
            W, b = _augmented_lstsq(A[keep], B[keep], lam)
            errs.append(((A[i] @ W + b - B[i]) ** 2).mean())
        brute.append(torch.stack(errs).mean())
    assert_close(ridge_loo_errors(A, B, lambdas), torch.stack(brute), rtol=1e-6, atol=1e-10)


def test_lambda_is_the_least_loo_error():
    A, B = _data(8, 6, seed=3)
    lambdas = (1e-15, 1e-8, 1e-6, 1e-4, 1e-2)
    best = lambdas[int(ridge_loo_errors(A, B, lambdas).argmin())]
    for got, want in zip(ridge_ls(A, B, lambdas), ridge_ls(A, B, (best,)), strict=True):
        assert torch.equal(got, want)


def test_row_permutation_invariance_and_column_equivariance():
    A, B = _data(10, 5, 3, seed=4)
    W, b = ridge_ls(A, B)
    rows, cols_a, cols_b = torch.randperm(10), torch.randperm(5), torch.randperm(3)
    W2, b2 = ridge_ls(A[rows][:, cols_a], B[rows][:, cols_b])
    assert_close(W2, W[cols_a][:, cols_b], rtol=1e-8, atol=1e-10)
    assert_close(b2, b[cols_b], rtol=1e-8, atol=1e-10)


def test_round_off_directions_get_no_weight():
    # mean_C of one-hot rows is 1/C on every row: collinear with the bias column. Without the
    # round-off cut the fit gives weights ~1e13 that blow up on a zero row (a non-context node).
    y = torch.eye(3, dtype=torch.float64).repeat(4, 1)
    x = torch.randn(12, 5, dtype=torch.float64)
    W, b = ridge_ls(y.mean(1, keepdim=True), x)
    assert W.abs().max() < 10 and b.abs().max() < 10
    x_hat = y.mean(1, keepdim=True) @ W + b
    # the best constant fit, up to the ridge shrinkage lambda^2 / s^2 <= 1e-4 / 12
    assert_close(x_hat, x.mean(0).expand(12, 5), rtol=1e-4, atol=1e-6)


def test_float32_in_float32_out():
    A, B = _data()
    W, b = ridge_ls(A.float(), B.float(), lambdas=(1e-2,))
    assert W.dtype == b.dtype == torch.float32
    assert_close(W, _normal_equations(A, B, 1e-2)[0].float(), rtol=1e-4, atol=1e-5)
