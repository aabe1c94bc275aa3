import pytest
import torch

from dartquant import QROrth, hadamard, whip_loss
from paperkit.testing import assert_param_error, check_state_dict_roundtrip, gradcheck64


@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, 1e-5), (torch.float64, 1e-12)])
@pytest.mark.parametrize("n_mats", [1, 3])
def test_rotation_stays_orthogonal_after_100_sgd_steps(dtype, tol, n_mats):
    torch.manual_seed(0)
    d = 32
    module = QROrth(d, n_mats, init="random").to(dtype)
    opt = torch.optim.SGD(module.parameters(), lr=0.05, momentum=0.9)
    x = torch.randn(256, n_mats, d, dtype=dtype) * 3
    start = module.Z.detach().clone()
    for _ in range(100):
        opt.zero_grad()
        whip_loss(module(x if n_mats > 1 else x[:, 0])).backward()
        opt.step()
    assert (module.Z.detach() - start).abs().max() > 1e-2  # Z really moved off the manifold
    R = module.rotation().reshape(n_mats, d, d)
    err = torch.linalg.matrix_norm(R.mT @ R - torch.eye(d, dtype=dtype), ord=2).max().item()
    assert err < tol


def test_hadamard_start_is_a_sign_flipped_hadamard():
    R = QROrth(16).rotation()
    assert torch.allclose(R.abs(), hadamard(16).abs(), atol=1e-6)


def test_gradcheck_through_qr():
    module = QROrth(4, init="random").double()
    x = torch.randn(5, 4, dtype=torch.float64)

    def f(Z, x):  # the module's own forward with Z as the input
        return torch.func.functional_call(module, {"Z": Z}, (x,))

    assert gradcheck64(f, module.Z.detach(), x)


def test_forward_shapes_and_state_dict():
    module = QROrth(8, 2)
    assert module(torch.randn(3, 5, 2, 8)).shape == (3, 5, 2, 8)
    assert module.rotation().shape == (2, 8, 8)
    assert QROrth(8).rotation().shape == (8, 8)
    check_state_dict_roundtrip(
        lambda: QROrth(8, 2, init="random", seed=int(torch.randint(9, ()))), torch.randn(4, 2, 8)
    )


def test_bad_arguments():
    assert_param_error(QROrth, 0, param="d")
    assert_param_error(QROrth, 8, 0, param="n_mats")
    assert_param_error(QROrth, 8, init="cayley", param="init")
    assert_param_error(QROrth(8), torch.randn(3, 7), param="x")
    assert_param_error(QROrth(8, 2), torch.randn(3, 3, 8), param="x")
