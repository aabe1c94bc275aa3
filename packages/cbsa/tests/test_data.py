"""Data: tokens on their subspaces, balanced labels, digits images; the synthetic demo."""

import torch

from cbsa import digits_images, union_of_subspaces
from cbsa.synthetic import unrolled_compression
from paperkit.testing import assert_close


def test_noiseless_tokens_lie_on_their_subspace():
    Z, y, U = union_of_subspaces(n=60, D=12, K=3, p=2, noise=0.0, seed=3)
    bases = torch.stack(U)[y]  # (n, D, p)
    proj = (bases @ bases.transpose(1, 2) @ Z.unsqueeze(-1)).squeeze(-1)
    assert_close(proj, Z, rtol=1e-12, atol=1e-12)
    assert torch.bincount(y).tolist() == [20, 20, 20]
    for k in range(3):
        assert_close(U[k].T @ U[k], torch.eye(2, dtype=Z.dtype), rtol=0, atol=1e-12)


def test_digits():
    X, y = digits_images(16)
    assert X.shape == (1797, 1, 16, 16) and X.dtype == torch.float32
    assert abs(float(X.mean())) < 1e-5 and abs(float(X.std()) - 1) < 1e-5
    assert sorted(y.unique().tolist()) == list(range(10))


def test_gradient_form_lowers_the_representatives_rate_every_step():
    Z, y, U = union_of_subspaces(n=64, D=16, K=2, p=3, noise=0.05, seed=0)
    rows = unrolled_compression(Z, y, U, form="gradient", steps=4, num_reps=6)
    reps = [r["reps_rate"] for r in rows]
    assert all(b < a for a, b in zip(reps, reps[1:], strict=False)), reps
    assert rows[-1]["rate"] < rows[0]["rate"]
