import pytest

# The first torch.optim step imports torch._dynamo (tens of CPU seconds on a cold, loaded machine):
# pay it once at collection, outside the time limit of a bad-input case.
import torch._dynamo  # noqa: F401

from commono.generator import make_synthetic_bench


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture(scope="session")
def bench_small():
    """40 Common-O and 20 Complex examples at 64 x 64 (shared by several tests)."""
    return make_synthetic_bench(40, "common-o", seed=3, image_size=64) + make_synthetic_bench(
        20, "complex", seed=3, image_size=64
    )
