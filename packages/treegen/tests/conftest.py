import numpy as np
import pytest

from treegen import GinkgoLike


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture(scope="session")
def model():
    return GinkgoLike()


@pytest.fixture(scope="session")
def jets(model):
    """40 simulator jets with 3-7 leaves (seeded)."""
    return model.sample_jets(40, seed=7, n_min=3, n_max=7)


def jet_with(model, n: int, seed: int = 0) -> np.ndarray:
    return model.sample_jets(1, seed=seed, n_min=n, n_max=n)[0][0]
