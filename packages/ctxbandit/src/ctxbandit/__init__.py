"""Adversarial linear contextual bandits via reduction (van Erven, Mayo, Olkhovskaya, Wei,
NeurIPS 2025, arXiv 2508.11931).

With i.i.d. action sets A_t ∼ D and an oblivious adversary, a policy's expected loss is linear in
its mean action E_{A∼D}[π(A)]; the contextual problem is a linear bandit over Ω = E[conv A],
estimated per epoch from past contexts and accessed only through a linear-optimization oracle on
each A_t, so nothing depends on the number of actions K.

>>> from ctxbandit import ReductionBandit
>>> from ctxbandit.envs import CombinatorialAvailabilityEnv, play, pseudo_regret
>>> env = CombinatorialAvailabilityEnv(d=6, k=2, T=200, seed=0)
>>> alg = play(env, ReductionBandit(d=6, oracle="topk", n_policies=64, random_state=0))
>>> alg.history_actions_.shape
(200, 6)

The public names are imported on first use.
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CombinatorialAvailabilityEnv": "envs",
        "Exp4Baseline": "baselines",
        "FiniteActionEnv": "envs",
        "FullInfoHedge": "baselines",
        "LinUCBBaseline": "baselines",
        "Oracle": "oracles",
        "ReductionBandit": "bandit",
        "UniformPolicy": "baselines",
        "finite_oracle": "oracles",
        "g": "envs",
        "g_optimal_design": "design",
        "max_leverage": "design",
        "play": "envs",
        "pseudo_regret": "envs",
        "topk_oracle": "oracles",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from ctxbandit.bandit import ReductionBandit as ReductionBandit
    from ctxbandit.baselines import Exp4Baseline as Exp4Baseline
    from ctxbandit.baselines import FullInfoHedge as FullInfoHedge
    from ctxbandit.baselines import LinUCBBaseline as LinUCBBaseline
    from ctxbandit.baselines import UniformPolicy as UniformPolicy
    from ctxbandit.design import g_optimal_design as g_optimal_design
    from ctxbandit.design import max_leverage as max_leverage
    from ctxbandit.envs import CombinatorialAvailabilityEnv as CombinatorialAvailabilityEnv
    from ctxbandit.envs import FiniteActionEnv as FiniteActionEnv
    from ctxbandit.envs import g as g
    from ctxbandit.envs import play as play
    from ctxbandit.envs import pseudo_regret as pseudo_regret
    from ctxbandit.oracles import Oracle as Oracle
    from ctxbandit.oracles import finite_oracle as finite_oracle
    from ctxbandit.oracles import topk_oracle as topk_oracle
