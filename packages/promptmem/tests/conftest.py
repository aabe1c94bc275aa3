import pytest

# Adam.step imports torch._dynamo lazily, which takes seconds (tens of seconds on a loaded machine
# with a fresh bytecode cache); import it at collection, outside the bad-input suite's per-case
# time limit.
import torch._dynamo  # noqa: F401


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
