import numpy as np
import pytest

from gnnclt import CSBMParams


@pytest.fixture(scope="session")
def csbm():
    """The reproduction's CSBM (README: K = 3, d = 2, |lambda2|/lambda1 = 0.4)."""
    from gnnclt.reproduce import params

    return params()


@pytest.fixture(scope="session")
def two():
    """A small 2-community CSBM."""
    return CSBMParams(
        [0.6, 0.4], [[3.0, 1.0], [1.0, 2.0]], [[1.0, 0.5], [-1.0, 0.0]], 0.3 * np.eye(2)
    )
