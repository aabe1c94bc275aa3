import pytest
import torch


def make_inputs(B=2, T=7, H=3, d=4, *, dtype=torch.float64, scale=3.0, seed=0, gate0=False):
    """Random q, k, v (B, T, H, d), logits s, gates; gate0 in [-1, 1] when asked for."""
    g = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    q, k, v = rand(B, T, H, d), rand(B, T, H, d), rand(B, T, H, d)
    s = scale * rand(B, T, H)
    gate1 = torch.rand(B, T, H, generator=g, dtype=dtype)
    gateh = torch.rand(B, T, H, generator=g, dtype=dtype)
    g0 = 2 * torch.rand(B, T, H, generator=g, dtype=dtype) - 1 if gate0 else None
    return q, k, v, s, gate1, gateh, g0


@pytest.fixture
def inputs():
    return make_inputs


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
