"""The covariance-adaptive index (Section 4 of the paper) against the plain one, both indices."""

import numpy as np
import pytest

from oraclebandit import AROQ, SROQ, CorrelatedGaussianSemiBandit, TopMOracle, run

MU = np.linspace(0.2, 0.8, 10)


def _mean_regret(rho, covariance, kind, T=2**12, seeds=range(10)):
    cov = 0.09 * ((1 - rho) * np.eye(10) + rho)
    total = []
    for s in seeds:
        alg = AROQ(
            10, 3, T, TopMOracle(10, 3), covariance=covariance, oracle_kind=kind, random_state=s
        )
        total.append(run(CorrelatedGaussianSemiBandit(MU, cov, seed=s), alg, T)["regret"][-1])
    return float(np.mean(total))


@pytest.mark.parametrize("rho,factor", [(0.8, 1.0), (0.0, 1.2)])
def test_covariance_variant_not_worse(rho, factor):
    """Equicorrelation 0.8: covariance <= plain; rho = 0: covariance <= 1.2 x plain
    (AROQ schedule, exact enumeration, sigma = 0.3, clipped, T = 2^12, 10 seeds)."""
    adaptive = _mean_regret(rho, True, "enumerate")
    plain = _mean_regret(rho, False, "enumerate")
    assert adaptive <= factor * plain, (adaptive, plain)


def test_perturbation_index_beats_the_plain_index_too():
    """The linear-oracle-compatible index (Gaussian perturbation) also adapts to sigma = 0.3."""
    perturbed = _mean_regret(0.8, True, "perturb", seeds=range(5))
    plain = _mean_regret(0.8, False, "linear", seeds=range(5))
    assert perturbed < plain, (perturbed, plain)


def test_sroq_runs_every_index_with_its_query_budget():
    T = 2**11
    env = CorrelatedGaussianSemiBandit(MU, 0.09 * np.eye(10))
    for kind in ("enumerate", "perturb"):
        alg = SROQ(10, 3, T, TopMOracle(10, 3), covariance=True, oracle_kind=kind, random_state=0)
        res = run(env, alg, T)
        assert alg.n_queries_ == 12 * len(alg.grid_) and res["regret"][-1] < 0.25 * T
