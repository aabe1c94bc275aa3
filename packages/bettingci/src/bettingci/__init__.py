"""STaR-Bets: betting confidence intervals for the mean of bounded data (NeurIPS 2025,
arXiv 2505.22422).

>>> import numpy as np
>>> from bettingci import confidence_interval
>>> x = np.random.default_rng(0).beta(2, 5, 500)
>>> lo, hi = confidence_interval(x, delta=0.05, grid=1000, random_state=0)
>>> bool(lo < 2 / 7 < hi)
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "ALTERNATIVES": "intervals",
        "BETTING_METHODS": "betting",
        "DISTRIBUTIONS": "data",
        "METHODS": "intervals",
        "BettingCI": "intervals",
        "Distribution": "data",
        "bet_sequence": "intervals",
        "betting_ci": "intervals",
        "clopper_pearson": "baselines",
        "confidence_interval": "intervals",
        "hoeffding": "baselines",
        "log_wealth": "intervals",
        "lower_bound": "intervals",
        "lower_bound_batch": "intervals",
        "maurer_pontil": "baselines",
        "t_test": "baselines",
        "upper_bound": "intervals",
    },
)

if TYPE_CHECKING:  # the names for static tools; at run time they load lazily
    from bettingci.baselines import (  # noqa: F401
        clopper_pearson,
        hoeffding,
        maurer_pontil,
        t_test,
    )
    from bettingci.betting import (  # noqa: F401
        BETTING_METHODS,
    )
    from bettingci.data import (  # noqa: F401
        DISTRIBUTIONS,
        Distribution,
    )
    from bettingci.intervals import (  # noqa: F401
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
