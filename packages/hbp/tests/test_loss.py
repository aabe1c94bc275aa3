import numpy as np
import pytest
import torch

from hbp.dist import demo_problem, global_mean_gradient, step_gradient
from hbp.loss import ave_token_loss, mean_loss
from hbp.model import TinyCausalLM
from paperkit.testing import assert_close, assert_param_error


def _random_split(n, rng):
    """A random split of sample ids into ranks (1-3), each holding 1+ packs of 1+ samples."""
    ids = list(rng.permutation(n))
    R = int(rng.integers(1, 4))
    cuts = sorted(rng.choice(np.arange(1, n), size=R - 1, replace=False).tolist())
    per_rank = [ids[a:b] for a, b in zip([0, *cuts], [*cuts, n], strict=True)]
    split = []
    for chunk in per_rank:
        k = int(rng.integers(1, len(chunk) + 1))
        inner = sorted(rng.choice(np.arange(1, len(chunk)), size=k - 1, replace=False).tolist())
        split.append([chunk[a:b] for a, b in zip([0, *inner], [*inner, len(chunk)], strict=True)])
    return split


@pytest.fixture
def problem():
    torch.manual_seed(0)
    model = TinyCausalLM(vocab=32, dim=16, depth=1, heads=2, max_len=64).double()
    samples, _ = demo_problem(seed=0, n=10)
    return model, samples


def test_ave_token_gradient_invariant_to_the_split(problem):
    """Any packs/ranks/micro-steps give the global token-mean gradient (fp64)."""
    model, samples = problem
    reference = global_mean_gradient(model, samples)
    rng = np.random.default_rng(0)
    for _ in range(8):
        split = _random_split(len(samples), rng)
        grad = step_gradient(model, samples, split, "ave_token")
        assert_close(grad, reference, rtol=0, atol=1e-12)


def test_mean_loss_gradient_depends_on_the_split(problem):
    model, samples = problem
    reference = global_mean_gradient(model, samples)
    rng = np.random.default_rng(1)
    gaps = [
        float(
            (step_gradient(model, samples, _random_split(10, rng), "mean") - reference).abs().max()
        )
        for _ in range(4)
    ]
    assert min(gaps) > 1e-4


def test_ave_token_loss_value():
    token_loss = torch.tensor([[1.0, 2.0, 3.0]])
    mask = torch.tensor([[1, 1, 0]])
    # (1 + 2) / (N_glob / R) = 3 / (12 / 2)
    assert_close(ave_token_loss(token_loss, mask, 12, 2), 0.5, rtol=0, atol=1e-7)
    assert_close(mean_loss(token_loss, mask), 1.5, rtol=0, atol=1e-7)


def test_bad_inputs():
    x, m = torch.ones(1, 3), torch.ones(1, 3)
    assert_param_error(ave_token_loss, x, m, 0, 1, param="n_tokens_global")
    assert_param_error(ave_token_loss, x, m, 3, 0, param="dp_size")
    assert_param_error(ave_token_loss, torch.ones(3), m, 3, 1, param="token_loss")
    assert_param_error(mean_loss, x, torch.ones(1, 4), param="loss_mask")
