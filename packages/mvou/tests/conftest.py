import pytest
import torch

F64 = torch.float64


def rotation(d: int, seed: int = 0) -> torch.Tensor:
    """A = -I + 3 J with J skew-symmetric of spectral norm 1 (the paper's non-equilibrium drift)."""
    g = torch.Generator().manual_seed(seed)
    G = torch.randn(d, d, generator=g, dtype=F64)
    J = (G - G.T) / torch.linalg.matrix_norm(G - G.T, ord=2)
    return -torch.eye(d, dtype=F64) + 3 * J


def randn(*shape, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
