import pytest

from robin import make_bending_beam_dataset


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


@pytest.fixture(scope="session")
def beam():
    """Six 8-step trajectories on the 20 x 4 beam (seeded)."""
    return make_bending_beam_dataset(6, 8, nx=20, ny=4, seed=0)
