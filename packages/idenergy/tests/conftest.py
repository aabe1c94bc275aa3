import pytest

# The first torch.optim step imports torch._dynamo (tens of seconds of CPU on a cold, loaded
# machine whose bytecode is not compiled yet): pay it once at collection, outside the 60 s limit
# of a bad-input case.
import torch._dynamo  # noqa: F401

from idenergy.ssl import DinoLite


class Counting:
    """Wraps a backbone and counts its logits/features calls (and the rows they saw)."""

    def __init__(self, base):
        self.base, self.calls, self.rows = base, 0, []

    def logits(self, x):
        self.calls += 1
        self.rows.append(x.shape[0])
        return self.base.logits(x)

    def features(self, x):
        self.calls += 1
        self.rows.append(x.shape[0])
        return self.base.features(x)


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture
def backbone():
    torch.manual_seed(0)
    return DinoLite(1, n_prototypes=32).eval()
