import numpy as np
import pytest

from fairpareto.binning import GroupBins


def make_bins(n: int, m: int, seed: int) -> GroupBins:
    """A random binned instance: sorted uniform levels, Dirichlet(1) masses, alpha in [0.2, 0.8]."""
    rng = np.random.default_rng(seed)
    return GroupBins(
        np.sort(rng.uniform(size=n)),
        rng.dirichlet(np.ones(n)),
        np.sort(rng.uniform(size=m)),
        rng.dirichlet(np.ones(m)),
        float(rng.uniform(0.2, 0.8)),
    )


@pytest.fixture
def bins_factory():
    return make_bins
