"""Simulator invariants (momentum conservation, the mass cut, kinematic limits)."""

import numpy as np
import pytest

from treegen import GinkgoLike
from treegen.ginkgo import _trunc_exp
from treegen.physics import mass2


def test_every_split_conserves_momentum_and_respects_masses(model, jets):
    for leaves, tree in jets:
        n = tree.n
        mom = tree.internal_momenta(leaves)
        t_int, t_leaf = mass2(mom), mass2(leaves)
        assert (t_int > model.t_cut).all() and (t_leaf <= model.t_cut).all()
        # the root carries the jet momentum (the sum of every leaf) exactly
        np.testing.assert_allclose(mom[0], model.p_root, atol=1e-9)
        for j in range(n - 1):
            kids = [i for i in range(n) if tree.parents[i] == j]
            kid_mom = [leaves[i] for i in kids]
            kids_int = [k for k in range(1, n - 1) if tree.parents[n + k] == j]
            kid_mom += [mom[k] for k in kids_int]
            assert len(kid_mom) == 2
            np.testing.assert_allclose(kid_mom[0] + kid_mom[1], mom[j], atol=1e-9)
            ta, tb = (max(mass2(p), 0.0) for p in kid_mom)
            assert np.sqrt(ta) + np.sqrt(tb) <= np.sqrt(t_int[j]) + 1e-9


def test_two_body_decay_gives_the_requested_masses_and_conserves_momentum():
    from treegen.physics import two_body_decay

    parent = GinkgoLike().p_root
    c1, c2 = two_body_decay(parent, 90.0, 30.0, np.random.default_rng(0))
    np.testing.assert_allclose(c1 + c2, parent, atol=1e-9)
    np.testing.assert_allclose([mass2(c1), mass2(c2)], [90.0, 30.0], rtol=1e-9)


def test_truncated_exponential_matches_its_cdf():
    # KS test of the inverse-CDF sampler against F(s) = (1 - e^{-lam s}) / (1 - e^{-lam u})
    from scipy import stats

    rng = np.random.default_rng(0)
    lam, upper = 1.5, 0.6
    draws = np.array([_trunc_exp(lam, upper, rng) for _ in range(4000)])
    cdf = lambda s: -np.expm1(-lam * np.clip(s, 0, upper)) / -np.expm1(-lam * upper)  # noqa: E731
    assert stats.kstest(draws, cdf).pvalue > 1e-3
    assert draws.max() <= upper


def test_leaf_count_distribution_at_t_root_400(model):
    # ~80% of jets have 4-7 leaves at t_root = 400 (lambda = 1.5, t_cut = 16)
    ns = [model.sample(seed=s)[0].shape[0] for s in range(400)]
    frac = np.mean([(4 <= n <= 7) for n in ns])
    assert 0.72 < frac < 0.88


def test_bad_p_root_refused():
    with pytest.raises(ValueError, match="'p_root'"):
        GinkgoLike(p_root=np.array([10.0, 0.0, 0.0, 0.0]))
