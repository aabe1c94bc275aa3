"""The tiny SwinV2-style model whose learned bias the reproduction factorises."""

import pytest
import torch

from flashbias.decompose import svd_factors
from flashbias.swin import CPB, ORIENTATIONS, TinySwin, oriented_bars, train_tiny_swin
from paperkit.testing import assert_param_error


def test_every_image_holds_one_bar_of_its_class():
    x, y = oriented_bars(200, window=8, noise=0.0, seed=3)
    assert x.shape == (200, 64, 1) and set(y.tolist()) == set(range(len(ORIENTATIONS)))
    for image, label in zip(x.reshape(200, 8, 8), y, strict=True):
        dy, dx = ORIENTATIONS[int(label)]
        bright = image >= 1.0
        # some pixel starts a run of 3 bright pixels along the class's direction
        found = any(
            all(
                0 <= r + s * dy < 8 and 0 <= c + s * dx < 8 and bright[r + s * dy, c + s * dx]
                for s in range(3)
            )
            for r in range(8)
            for c in range(8)
        )
        assert found


def test_cpb_is_a_function_of_the_relative_offset_only():
    bias = CPB(window=4, heads=2)().detach()
    assert bias.shape == (2, 16, 16) and bool(((bias > 0) & (bias < 16)).all())
    # positions (0,0)->(1,1) and (2,2)->(3,3) have the same offset, hence the same bias
    assert torch.equal(bias[:, 0, 5], bias[:, 10, 15])


def test_full_rank_factors_reproduce_the_dense_model():
    torch.manual_seed(0)
    model = TinySwin(window=4, heads=2).eval()
    x, _ = oriented_bars(8, window=4)
    factors = [tuple(t.float() for t in svd_factors(b, rank=16)[:2]) for b in model.biases()]
    with torch.no_grad():
        torch.testing.assert_close(model(x, factors), model(x), atol=1e-4, rtol=1e-4)


@pytest.mark.slow  # 60 Adam steps
def test_training_learns_the_orientation_task():
    trained = train_tiny_swin(steps=60, window=5, seed=1)
    assert trained.accuracy > 0.4  # chance is 0.25
    assert [b.dtype for b in trained.model.biases()] == [torch.float64] * 2


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [({"steps": 0}, "steps"), ({"window": 2}, "window"), ({"lr": -1.0}, "lr")],
)
def test_train_tiny_swin_refuses_bad_arguments(kwargs, param):
    assert_param_error(lambda: train_tiny_swin(**kwargs), param=param)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [({"n": 0}, "n"), ({"window": 2}, "window"), ({"noise": float("nan")}, "noise")],
)
def test_oriented_bars_refuses_bad_arguments(kwargs, param):
    assert_param_error(lambda: oriented_bars(**{"n": 4, **kwargs}), param=param)
