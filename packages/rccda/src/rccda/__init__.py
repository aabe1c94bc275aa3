"""RCCDA: adaptive model updates under concept drift with a constrained resource budget
(Piaseczny, Shisher, Wang, Brinton, NeurIPS 2025, arXiv 2505.24149).

A virtual queue Q_{t+1} = max(Q_t + c_t pi_t - lambda_bar, 0) tracks overspending, and the
drift-plus-penalty rule updates the model iff V (l_t - l* - tau) > Q_t c_t.

>>> from rccda import RCCDAPolicy
>>> pol = RCCDAPolicy(budget=0.5, V=2.0, drift_threshold=0.0, loss_floor=0.0)
>>> [pol.step(1.0) for _ in range(5)]
[True, True, True, True, False]

The public names are imported on first use (importing ``rccda`` imports no scikit-learn).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AlwaysPolicy": "policies",
        "DetectorPolicy": "detectors",
        "DriftingDigitsStream": "stream",
        "GaussianDriftStream": "stream",
        "LogisticModel": "models",
        "MLPModel": "models",
        "NeverPolicy": "policies",
        "PeriodicPolicy": "policies",
        "RCCDAPolicy": "policies",
        "RandomPolicy": "policies",
        "budget_bound": "policies",
        "calibrate_threshold": "stream",
        "make_detector": "detectors",
        "queue_bound": "policies",
        "recovery_times": "stream",
        "run_stream": "stream",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from rccda.detectors import DetectorPolicy as DetectorPolicy
    from rccda.detectors import make_detector as make_detector
    from rccda.models import LogisticModel as LogisticModel
    from rccda.models import MLPModel as MLPModel
    from rccda.policies import AlwaysPolicy as AlwaysPolicy
    from rccda.policies import NeverPolicy as NeverPolicy
    from rccda.policies import PeriodicPolicy as PeriodicPolicy
    from rccda.policies import RandomPolicy as RandomPolicy
    from rccda.policies import RCCDAPolicy as RCCDAPolicy
    from rccda.policies import budget_bound as budget_bound
    from rccda.policies import queue_bound as queue_bound
    from rccda.stream import DriftingDigitsStream as DriftingDigitsStream
    from rccda.stream import GaussianDriftStream as GaussianDriftStream
    from rccda.stream import calibrate_threshold as calibrate_threshold
    from rccda.stream import recovery_times as recovery_times
    from rccda.stream import run_stream as run_stream
