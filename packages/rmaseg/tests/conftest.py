import numpy as np
import pytest
import torch


def _random_probs(*shape, seed=0, power=3.0, softmax=False, dtype=torch.float64):
    """Uniform^power probabilities (no ties with probability 1), or softmax over dim 1."""
    g = torch.Generator().manual_seed(seed)
    if softmax:
        return torch.softmax(3 * torch.randn(*shape, generator=g, dtype=dtype), dim=1)
    return torch.rand(*shape, generator=g, dtype=dtype) ** power


@pytest.fixture
def random_probs():
    return _random_probs


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
