"""STaR-Bets: betting confidence intervals for the mean of bounded data (NeurIPS 2025,
arXiv 2505.22422).

>>> import numpy as np
>>> from bettingci import confidence_interval
>>> x = np.random.default_rng(0).beta(2, 5, 500)
>>> lo, hi = confidence_interval(x, delta=0.05, grid=1000, random_state=0)
>>> bool(lo < 2 / 7 < hi)
True
"""

from bettingci.baselines import clopper_pearson, hoeffding, maurer_pontil, t_test
from bettingci.betting import BETTING_METHODS
from bettingci.data import DISTRIBUTIONS, Distribution
from bettingci.intervals import (
    ALTERNATIVES,
    METHODS,
    BettingCI,
    bet_sequence,
    betting_ci,
    confidence_interval,
    log_wealth,
    lower_bound,
    lower_bound_batch,
    upper_bound,
)

__all__ = [
    "ALTERNATIVES",
    "BETTING_METHODS",
    "DISTRIBUTIONS",
    "METHODS",
    "BettingCI",
    "Distribution",
    "bet_sequence",
    "betting_ci",
    "clopper_pearson",
    "confidence_interval",
    "hoeffding",
    "log_wealth",
    "lower_bound",
    "lower_bound_batch",
    "maurer_pontil",
    "t_test",
    "upper_bound",
]
