import numpy as np
import pytest

from eosgd import LeastSquaresProblem

X_DIAG = np.array([1.0, 0.5, 2.0])


@pytest.fixture(scope="session")
def problems():
    """The closed-form instances: (a) uv = 1, (b) the depth-3 product, (c) the diagonal net."""
    return {
        "a": LeastSquaresProblem.factorization(),
        "b": LeastSquaresProblem.product(3),
        "c": LeastSquaresProblem.diagonal_net(X_DIAG),
    }
