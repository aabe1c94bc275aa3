"""Submodular maximization under persistent noise: one meta-algorithm for greedy, measured
continuous greedy and double greedy (Bhawalkar, Cai, Feng, Liaw, Lin, NeurIPS 2025,
arXiv 2510.21128).

A persistent noisy oracle returns f~(S) = xi_S f(S), xi_S drawn once per set. The meta-algorithm
reserves a random smoothing pool P, averages the noisy oracle over L distinct padded sets
S cup H_l (H_l subset of P), and runs a robust exact-oracle algorithm on that smoothed oracle.

>>> from noisysubmod import NoisyOracle, meta_maximize
>>> from noisysubmod.functions import WeightedCoverage
>>> from noisysubmod.constraints import Cardinality
>>> f = WeightedCoverage.random(n=60, universe=200, density=0.03, seed=0)
>>> S, info = meta_maximize(NoisyOracle(f, "exponential", 1.0, seed=1), Cardinality(5))
>>> len(S)
5

The public names are imported on first use (importing ``noisysubmod`` imports no scipy).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BASES": "meta",
        "NOISES": "noise",
        "Cardinality": "constraints",
        "FacilityLocation": "functions",
        "GraphCut": "functions",
        "NoisyOracle": "noise",
        "PartitionMatroid": "constraints",
        "SmoothedOracle": "meta",
        "Unconstrained": "constraints",
        "WeightedCoverage": "functions",
        "brute_force": "algorithms",
        "double_greedy": "algorithms",
        "greedy": "algorithms",
        "measured_continuous_greedy": "algorithms",
        "meta_maximize": "meta",
        "noise_moments": "noise",
        "pipage_round": "algorithms",
        "random_feasible": "algorithms",
        "smoothed_oracle": "meta",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from noisysubmod.algorithms import brute_force as brute_force
    from noisysubmod.algorithms import double_greedy as double_greedy
    from noisysubmod.algorithms import greedy as greedy
    from noisysubmod.algorithms import measured_continuous_greedy as measured_continuous_greedy
    from noisysubmod.algorithms import pipage_round as pipage_round
    from noisysubmod.algorithms import random_feasible as random_feasible
    from noisysubmod.constraints import Cardinality as Cardinality
    from noisysubmod.constraints import PartitionMatroid as PartitionMatroid
    from noisysubmod.constraints import Unconstrained as Unconstrained
    from noisysubmod.functions import FacilityLocation as FacilityLocation
    from noisysubmod.functions import GraphCut as GraphCut
    from noisysubmod.functions import WeightedCoverage as WeightedCoverage
    from noisysubmod.meta import BASES as BASES
    from noisysubmod.meta import SmoothedOracle as SmoothedOracle
    from noisysubmod.meta import meta_maximize as meta_maximize
    from noisysubmod.meta import smoothed_oracle as smoothed_oracle
    from noisysubmod.noise import NOISES as NOISES
    from noisysubmod.noise import NoisyOracle as NoisyOracle
    from noisysubmod.noise import noise_moments as noise_moments
