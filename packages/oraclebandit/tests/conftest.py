import numpy as np
import pytest

from oraclebandit import BernoulliSemiBandit, run


@pytest.fixture
def mean_regret():
    """Mean final regret of ``make(seed)`` on independent Bernoulli arms over ``seeds``."""

    def compute(make, mu, T, seeds):
        return float(
            np.mean([run(BernoulliSemiBandit(mu, seed=s), make(s), T)["regret"][-1] for s in seeds])
        )

    return compute
