import pytest
import torch

from vud import BayesOracleICL, LogisticPrior

# Building the first torch.optim.Adam imports torch._dynamo (tens of seconds of CPU on a cold,
# loaded machine); do it once at collection, not inside the 60 s limit of a bad-input case.
torch.optim.Adam([torch.zeros(1, requires_grad=True)])


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


def _logistic_context(n: int, seed: int, dtype=torch.float64):
    """One context (n, 1), (n,) and a query (1,) drawn from LogisticPrior(d=1)."""
    cx, cy, qx, _ = LogisticPrior().sample_tasks(1, n, 1, torch.Generator().manual_seed(seed))
    return cx[0].to(dtype), cy[0].to(dtype), qx[0, 0].to(dtype)


@pytest.fixture
def oracle():
    return BayesOracleICL(LogisticPrior())


@pytest.fixture
def logistic_context():
    return _logistic_context
