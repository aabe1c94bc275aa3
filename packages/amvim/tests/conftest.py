import pytest
import torch


def make_scan_inputs(B=2, E=3, L=7, N=2, *, dtype=torch.float64, seed=0):
    """Random selective-scan inputs: u, delta, z (B, E, L), A (E, N) < 0, B, C (B, N, L), D and
    delta_bias (E,)."""
    g = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    u, delta, z = rand(B, E, L), rand(B, E, L), rand(B, E, L)
    A = -(0.5 + 2 * torch.rand(E, N, generator=g, dtype=dtype))
    return {
        "u": u,
        "delta": delta,
        "A": A,
        "B": rand(B, N, L),
        "C": rand(B, N, L),
        "D": rand(E),
        "z": z,
        "delta_bias": rand(E),
    }


@pytest.fixture
def scan_inputs():
    return make_scan_inputs


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
