"""Smooth Quadratic Prediction Markets (Nueve and Waggoner, NeurIPS 2025, arXiv 2505.02959).

The price is the market's state. A trade r costs :math:`\\langle p, r\\rangle + \\|r\\|^2/(2b)`
and moves the price by a projected steepest-descent step, :math:`p' = \\Pi_\\Delta(p + r/b)`, so
traders collectively run online gradient descent; the baselines are the duality-based cost-function
market makers LMSR and the quadratic DCFMM (QMSR).

>>> import numpy as np
>>> from sqmarket import SQPM, MyopicTrader
>>> m = SQPM(n_outcomes=4, b=10.0)
>>> cost = m.trade(MyopicTrader([0.4, 0.3, 0.2, 0.1]).best_trade(m))
>>> m.price_.round(12).tolist()                      # incentive compatible: price = belief
[0.4, 0.3, 0.2, 0.1]

The public names are imported on first use (importing ``sqmarket`` imports no scipy).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "NORMS": "sqpm",
        "SQPM": "sqpm",
        "LMSR": "dcfmm",
        "QuadraticDCFMM": "dcfmm",
        "Market": "ledger",
        "project_simplex": "simplex",
        "MyopicTrader": "traders",
        "BudgetTrader": "traders",
        "BuyOnlyTrader": "traders",
        "GreedyAdversary": "traders",
        "TRADERS": "simulation",
        "simulate": "simulation",
        "simulate_batch": "simulation",
        "replay_batch": "simulation",
        "dirichlet_world": "simulation",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from sqmarket.dcfmm import LMSR as LMSR
    from sqmarket.dcfmm import QuadraticDCFMM as QuadraticDCFMM
    from sqmarket.ledger import Market as Market
    from sqmarket.simplex import project_simplex as project_simplex
    from sqmarket.simulation import TRADERS as TRADERS
    from sqmarket.simulation import dirichlet_world as dirichlet_world
    from sqmarket.simulation import replay_batch as replay_batch
    from sqmarket.simulation import simulate as simulate
    from sqmarket.simulation import simulate_batch as simulate_batch
    from sqmarket.sqpm import NORMS as NORMS
    from sqmarket.sqpm import SQPM as SQPM
    from sqmarket.traders import BudgetTrader as BudgetTrader
    from sqmarket.traders import BuyOnlyTrader as BuyOnlyTrader
    from sqmarket.traders import GreedyAdversary as GreedyAdversary
    from sqmarket.traders import MyopicTrader as MyopicTrader
