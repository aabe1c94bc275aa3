import pytest
import torch


def rand(*shape, seed=0, dtype=torch.float64):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
