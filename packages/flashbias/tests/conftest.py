import pytest
import torch


def make_qkv(B=2, N=13, M=None, H=3, d=8, R=4, *, dtype=torch.float64, seed=0):
    """Random q (B,N,H,d), k, v (B,M,H,d) and bias factors (1,N,H,R), (1,M,H,R)."""
    M = N if M is None else M
    g = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    return rand(B, N, H, d), rand(B, M, H, d), rand(B, M, H, d), rand(1, N, H, R), rand(1, M, H, R)


@pytest.fixture
def qkv():
    return make_qkv


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
