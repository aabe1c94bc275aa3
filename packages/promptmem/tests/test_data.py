import pytest
import torch

from promptmem import memorization_dataset


def test_tokens_are_distinct_and_seeded():
    X, Y = memorization_dataset(60, 2, vocab=8, seed=4)
    assert X.dtype == Y.dtype == torch.int64 and X.shape == Y.shape == (60, 2)
    assert len({tuple(r) for r in X.tolist()}) == 60  # n = 60 of the 64 sequences
    assert int(X.max()) < 8 and int(Y.max()) < 8
    X2, Y2 = memorization_dataset(60, 2, vocab=8, seed=4)
    assert torch.equal(X, X2) and torch.equal(Y, Y2)
    Xi, _ = memorization_dataset(32, 1, vocab=8, input_vocab=64)
    assert len(set(Xi.reshape(-1).tolist())) == 32


@pytest.mark.parametrize("r", [1, 3, 10])
def test_lowrank_inputs_have_rank_r(r):
    X, Y = memorization_dataset(50, 4, vocab=8, kind="lowrank", rank=r, d0=10, seed=1)
    assert X.shape == (50, 4, 10) and Y.shape == (50, 4)
    assert torch.linalg.matrix_rank(X.reshape(-1, 10).double(), rtol=1e-5) == r  # float32 noise
    assert 0.3 < X.var() < 3.0  # E[x^2] = 1 whatever r (one draw of U: chi-square spread)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"n": 0, "N": 2},
        {"n": 2, "N": 0},
        {"n": 2, "N": 2, "vocab": 1},
        {"n": 2, "N": 2, "kind": "lowrank", "rank": 33, "d0": 32},
        {"n": 65, "N": 2, "vocab": 8},  # more pairs than distinct inputs
    ],
)
def test_errors(kwargs):
    # check 10: n < 1, N < 1, vocab < 2, rank > d0 -> ValueError
    with pytest.raises(ValueError):
        memorization_dataset(**kwargs)
