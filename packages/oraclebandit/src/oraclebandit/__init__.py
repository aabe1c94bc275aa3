"""Oracle-efficient combinatorial semi-bandits: AROQ and SROQ
(Kim, Vojnović, Oh, NeurIPS 2025, arXiv 2510.21431).

UCB algorithms for combinatorial semi-bandits (CUCB) call a combinatorial optimization oracle
every round. AROQ and SROQ refresh the confidence bounds only on doubly-exponential grids
(:math:`\\tau_k = T^{1 - 2^{-k}}`) and reuse the last oracle answer in between, keeping
:math:`\\tilde O(\\sqrt T)` regret with :math:`O(\\log\\log T)` query rounds.

>>> import numpy as np
>>> from oraclebandit import CUCB, TopMOracle
>>> from oraclebandit.envs import BernoulliSemiBandit, run
>>> res = run(BernoulliSemiBandit(np.linspace(0.1, 0.9, 5)), CUCB(5, 2, 256, TopMOracle(5, 2)), 256)
>>> res["n_queries"]
256

The public names are imported on first use (importing ``oraclebandit`` imports no networkx).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AROQ": "algorithms",
        "CUCB": "algorithms",
        "DoublingCUCB": "algorithms",
        "SROQ": "algorithms",
        "SemiBanditAlgorithm": "base",
        "BernoulliSemiBandit": "envs",
        "CorrelatedGaussianSemiBandit": "envs",
        "run": "envs",
        "CountingOracle": "oracles",
        "MatroidGreedyOracle": "oracles",
        "ShortestPathOracle": "oracles",
        "TopMOracle": "oracles",
        "grid_dag": "oracles",
        "coverage_reward": "rewards",
        "linear_reward": "rewards",
        "aroq_grid": "schedules",
        "n_levels": "schedules",
        "sroq_grid": "schedules",
        "SemiBanditStats": "stats",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from oraclebandit.algorithms import AROQ as AROQ
    from oraclebandit.algorithms import CUCB as CUCB
    from oraclebandit.algorithms import SROQ as SROQ
    from oraclebandit.algorithms import DoublingCUCB as DoublingCUCB
    from oraclebandit.base import SemiBanditAlgorithm as SemiBanditAlgorithm
    from oraclebandit.envs import BernoulliSemiBandit as BernoulliSemiBandit
    from oraclebandit.envs import CorrelatedGaussianSemiBandit as CorrelatedGaussianSemiBandit
    from oraclebandit.envs import run as run
    from oraclebandit.oracles import CountingOracle as CountingOracle
    from oraclebandit.oracles import MatroidGreedyOracle as MatroidGreedyOracle
    from oraclebandit.oracles import ShortestPathOracle as ShortestPathOracle
    from oraclebandit.oracles import TopMOracle as TopMOracle
    from oraclebandit.oracles import grid_dag as grid_dag
    from oraclebandit.rewards import coverage_reward as coverage_reward
    from oraclebandit.rewards import linear_reward as linear_reward
    from oraclebandit.schedules import aroq_grid as aroq_grid
    from oraclebandit.schedules import n_levels as n_levels
    from oraclebandit.schedules import sroq_grid as sroq_grid
    from oraclebandit.stats import SemiBanditStats as SemiBanditStats
