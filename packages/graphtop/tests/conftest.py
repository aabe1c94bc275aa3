import pytest
import torch


@pytest.fixture(autouse=True, scope="session")
def one_thread():
    """The tests' graphs are tiny: torch's intra-op threads only add contention."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
