import pytest
import torch

# Module-scoped fixtures (the calibration's) run outside the per-test `one_thread` fixture; one
# thread throughout keeps the small per-step tensor ops from spinning idle OpenMP workers.
torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield
