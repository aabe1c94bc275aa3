# Building the first torch.optim optimiser imports torch._dynamo (tens of seconds of CPU in a fresh
# environment on a loaded machine): import it at collection, outside every test's timeout.
import pytest
import torch
import torch._dynamo  # noqa: F401

from adtp.data import needle_task
from adtp.model import PrunableEncoder


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture
def tiny():
    """A small float64 encoder (4 layers, prune layers 1-3) and 6 needle sequences."""
    torch.manual_seed(0)
    model = PrunableEncoder(200, 16, 4, 2, 32, 32, 2, [1, 2, 3]).double().eval()
    return model, needle_task(6, min_len=12, max_len=32, max_signals=3, seed=3)
