import math

import numpy as np
import torch
from torch import nn

from gora import apply_gora, init_factors, lora_scaling
from paperkit.testing import assert_close, assert_param_error


def _xi(n, r, alpha, gamma, rslora=True):
    return gamma * math.sqrt(n / r) / lora_scaling(alpha, r, rslora)


def test_b_is_the_least_squares_solution():
    gen = torch.Generator().manual_seed(0)
    G = torch.randn(24, 40, dtype=torch.float64, generator=gen)
    for rslora in (True, False):
        A, B = init_factors(G, 6, alpha=16, gamma=0.05, rslora=rslora, generator=gen)
        B_ls = -B / _xi(40, 6, 16, 0.05, rslora)
        # Normal equations of min ||G - B A||_F: the residual is orthogonal to the rows of A.
        assert_close((G - B_ls @ A) @ A.T, torch.zeros(24, 6), rtol=0, atol=1e-10)


def test_full_rank_gives_an_exact_gradient_step():
    gen = torch.Generator().manual_seed(1)
    G = torch.randn(10, 12, dtype=torch.float64, generator=gen)
    A, B = init_factors(G, 12, alpha=16, gamma=0.05, generator=gen)
    s = lora_scaling(16, 12)
    assert_close(s * B @ A, -0.05 * G, rtol=1e-10, atol=1e-12)


def test_b_matches_numpy_lstsq():
    gen = torch.Generator().manual_seed(2)
    G = torch.randn(30, 50, dtype=torch.float64, generator=gen)
    A, B = init_factors(G, 5, alpha=8, gamma=0.02, generator=gen)
    ref = np.linalg.lstsq(A.numpy().T, G.numpy().T, rcond=None)[0].T  # argmin ||A^T X - G^T||
    assert_close(-B / _xi(50, 5, 8, 0.02), ref, rtol=1e-9, atol=1e-12)


def test_initial_update_has_the_gradient_step_magnitude():
    # ||G A^+ A||_F ~ sqrt(r/n) ||G||_F for a random A; the sqrt(n/r) factor undoes it.
    gen = torch.Generator().manual_seed(3)
    G = torch.randn(128, 256, generator=gen)
    ratios = []
    for _ in range(5):
        A, B = init_factors(G, 8, alpha=16, gamma=0.05, generator=gen)
        ratios.append(float(torch.linalg.norm(lora_scaling(16, 8) * B @ A) / torch.linalg.norm(G)))
    assert all(abs(r / 0.05 - 1) < 0.25 for r in ratios), ratios


def test_rank_above_in_features_uses_the_minimum_norm_solution():
    G = torch.randn(6, 3, dtype=torch.float64)
    A, B = init_factors(G, 5, alpha=4, gamma=0.1)
    assert_close(lora_scaling(4, 5) * B @ A, -0.1 * math.sqrt(3 / 5) * G, rtol=1e-9, atol=1e-12)


def test_gora_init_is_a_descent_step():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    x, y = torch.randn(64, 16), torch.randn(64, 4)

    def loss_fn(m, batch):
        return nn.functional.mse_loss(m(batch[0]), batch[1])

    before = loss_fn(model, (x, y)).item()
    adapted = apply_gora(
        model, [(x, y)], loss_fn, ["0", "2"], base_rank=4, gamma=1e-3, backend="native"
    )
    after = loss_fn(adapted, (x, y)).item()
    assert after < before
    # The opposite sign would be an ascent step: the descent is not an accident.
    for layer in (adapted[0], adapted[2]):
        with torch.no_grad():
            layer.B.neg_()
    assert loss_fn(adapted, (x, y)).item() > before


def test_init_is_deterministic_under_a_generator():
    G = torch.randn(8, 9)
    a = init_factors(G, 3, 16, generator=torch.Generator().manual_seed(5))
    b = init_factors(G, 3, 16, generator=torch.Generator().manual_seed(5))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_init_errors():
    G = torch.randn(4, 5)
    assert_param_error(init_factors, G, 2, 16, param="gamma", gamma=-0.1)
    assert_param_error(init_factors, G, 0, 16, param="rank")
    assert_param_error(init_factors, G, 2, 0.0, param="alpha")
    assert_param_error(init_factors, torch.randn(4), 2, 16, param="G")
    assert_param_error(init_factors, torch.full((2, 2), float("nan")), 1, 16, param="G")
    # alpha = inf once gave NaN factors (s = inf, xi = 0 * ...); now it is refused.
    assert_param_error(init_factors, G, 2, math.inf, param="alpha")
    assert_param_error(init_factors, G, 2, 16, param="gamma", gamma=math.inf)
    assert_param_error(lora_scaling, math.inf, 4, param="alpha")
    assert_param_error(init_factors, G.long(), 2, 16, param="G", exc=TypeError)
