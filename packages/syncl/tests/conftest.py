import pytest

# The first torch.optim step imports torch._dynamo (seconds of CPU on a cold machine): pay it
# once at collection rather than inside a timed bad-input case.
import torch._dynamo  # noqa: F401


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
