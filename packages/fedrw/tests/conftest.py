import pytest
import torch

# torch.optim imports torch._dynamo on first use (tens of seconds in a fresh environment whose
# bytecode is not compiled yet): pay it once at collection, outside every test's timeout
torch.optim.Adam([torch.nn.Parameter(torch.zeros(1))])


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture(autouse=True)
def _no_progress(monkeypatch):
    monkeypatch.setenv("PAPERKIT_NO_PROGRESS", "1")
