import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    """Small tensors on a shared machine: one intra-op thread is many times faster."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
