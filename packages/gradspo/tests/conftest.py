import pytest

# The first torch.optim step imports torch._dynamo (tens of seconds of CPU on a cold, loaded
# machine whose bytecode is not compiled yet): pay it once at collection, outside the 60 s limit
# of a bad-input case.
import torch._dynamo  # noqa: F401


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
