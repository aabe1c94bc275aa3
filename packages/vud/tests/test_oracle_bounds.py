"""The paper's bound (§3) on an exact Bayesian predictor: V_a(z) >= U_a, V_e(z) in [0, U_e], and the
martingale q(y*|x*,D) = sum_u q(u|z,D) q(y*|x*,D,(z,u)). The oracle's grid posterior is exact Bayes
for its (discretised) prior, so these hold to float64 round-off."""

import numpy as np
import torch

from vud import LogisticPrior, probe_bound

PRIOR = LogisticPrior()


def _bounds(oracle, logistic_context, n, seed, m=50):
    cx, cy, xs = logistic_context(n, seed)
    Z = (
        torch.rand(m, 1, 1, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 8
        - 4
    )
    bound = probe_bound(oracle, cx, cy, xs, Z, 1)
    U, Ua, Ue = PRIOR.true_decomposition(cx[None], cy[None], xs[None, None])
    return bound, float(U), float(Ua), float(Ue)


def test_oracle_bound_validity_martingale_and_sandwich(oracle, logistic_context):
    for ctx in range(20):
        bound, U, Ua, Ue = _bounds(oracle, logistic_context, n=2 + ctx, seed=ctx)
        assert abs(bound.total - U) < 1e-10
        assert (bound.va >= Ua - 1e-6).all(), f"context {ctx}: V_a below U_a"
        assert (bound.kl < 1e-8).all(), f"context {ctx}: martingale violated"
        ve = bound.total - bound.va
        assert (ve >= -1e-9).all() and (ve <= Ue + 1e-6).all()
        assert (bound.va <= U + 1e-9).all()


def test_two_probes_tighten_and_stay_valid(oracle, logistic_context):
    cx, cy, xs = logistic_context(6, seed=3)
    U, Ua, Ue = PRIOR.true_decomposition(cx[None], cy[None], xs[None, None])
    z = xs[None, None]
    one = probe_bound(oracle, cx, cy, xs, z, 1)
    two = probe_bound(oracle, cx, cy, xs, torch.cat([z, z], dim=1), 1)
    assert float(two.kl[0]) < 1e-8
    assert float(Ua) - 1e-9 <= float(two.va[0]) <= float(one.va[0]) + 1e-12


def test_oracle_epistemic_shrinks_with_data(oracle, logistic_context):
    def mean_parts(n):
        ve, va = [], []
        for seed in range(100):
            cx, cy, xs = logistic_context(n, seed=1000 * n + seed)
            b = probe_bound(oracle, cx, cy, xs, xs[None, None], 1)  # the probe z = x*
            ve.append(b.total - float(b.va[0]))
            va.append(float(b.va[0]))
        return np.mean(ve), np.mean(va)

    ve2, va2 = mean_parts(2)
    ve30, va30 = mean_parts(30)
    assert ve30 < ve2
    assert va30 > 0.5 * va2  # aleatoric does not collapse with data
