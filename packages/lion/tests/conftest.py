import pytest
import torch
import torch.nn.functional as F


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


def make_qkv(B=2, H=3, N=37, d=4, *, dtype=torch.float64, seed=0, decay="s"):
    """Positive q, k (after a feature map), v, and log-decays for ``decay`` ("lit": None,
    "d": one lambda per head, "s": one per token)."""
    g = torch.Generator().manual_seed(seed)
    q = F.elu(torch.randn(B, H, N, d, generator=g, dtype=dtype)) + 1
    k = F.elu(torch.randn(B, H, N, d, generator=g, dtype=dtype)) + 1
    v = torch.randn(B, H, N, d, generator=g, dtype=dtype)
    if decay == "lit":
        ll = None
    elif decay == "d":
        ll = F.logsigmoid(torch.randn(1, H, 1, generator=g, dtype=dtype)).expand(B, H, N)
    else:
        ll = F.logsigmoid(2 * torch.randn(B, H, N, generator=g, dtype=dtype) + 1)
    return q, k, v, ll


@pytest.fixture
def qkv():
    return make_qkv
