"""BFN algebra (Graves et al. 2023, sec. 6): updates, flow distribution, loss."""

import numpy as np
import pytest
import torch
from scipy import stats

from paperkit.testing import gradcheck64
from treegen import CategoricalBFN, EntropyScheduler, QuadraticScheduler
from treegen.bfn import class_mask


@pytest.fixture(scope="module")
def bfn():
    return CategoricalBFN(QuadraticScheduler(6, beta1=3.0))


def onehot(idx, K):
    return torch.nn.functional.one_hot(torch.as_tensor(idx), K).double()


def test_repeated_updates_drive_theta_to_the_data_class(bfn):
    g = torch.Generator().manual_seed(0)
    K, x = 5, onehot([2, 0, 4], 5)
    theta = torch.full((3, K), 1.0 / K, dtype=torch.float64)
    for _ in range(200):
        y = bfn.sender_sample(x, torch.tensor(0.5, dtype=torch.float64), K, generator=g)
        theta = bfn.update(theta, y)
    assert torch.allclose(theta, x, atol=1e-6)


def test_one_update_from_the_prior_is_the_flow_distribution(bfn):
    # theta after one update with accuracy alpha ~ p_F(. | x; beta = alpha): KS on theta_x
    K, B, alpha = 4, 3000, 0.7
    x = onehot([1] * B, K)
    g1, g2 = torch.Generator().manual_seed(1), torch.Generator().manual_seed(2)
    prior = torch.full((B, K), 1.0 / K, dtype=torch.float64)
    updated = bfn.update(
        prior, bfn.sender_sample(x, torch.tensor(alpha, dtype=torch.float64), K, g1)
    )
    # quadratic schedule: beta(t) = 3 t^2 = alpha at t = sqrt(alpha / 3)
    t = torch.full((B,), (alpha / 3) ** 0.5, dtype=torch.float64)
    flow = bfn.flow_sample(x, t, K, generator=g2)
    assert stats.ks_2samp(updated[:, 1].numpy(), flow[:, 1].numpy()).pvalue > 1e-3


def test_updates_commute(bfn):
    g = torch.Generator().manual_seed(3)
    theta = torch.softmax(torch.randn(5, 6, generator=g, dtype=torch.float64), -1)
    y1, y2 = (torch.randn(5, 6, generator=g, dtype=torch.float64) for _ in range(2))
    a = bfn.update(bfn.update(theta, y1), y2)
    b = bfn.update(bfn.update(theta, y2), y1)
    torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-14)


def test_inadmissible_classes_stay_zero(bfn):
    g = torch.Generator().manual_seed(4)
    x = onehot([0, 1, 2], 4)
    K = torch.tensor([1, 2, 4])
    theta = bfn.flow_sample(x, torch.full((3,), 0.5, dtype=torch.float64), K, generator=g)
    assert (theta[~class_mask(K, 4)] == 0).all()
    assert theta[0, 0] == 1.0  # K = 1 is deterministic
    torch.testing.assert_close(theta.sum(-1), torch.ones(3, dtype=torch.float64))


def test_loss_non_negative_and_zero_for_perfect_output():
    bfn = CategoricalBFN(EntropyScheduler(5, n_mc=512))
    g = torch.Generator().manual_seed(5)
    x = onehot(torch.randint(0, 5, (8, 3), generator=g), 5)
    t = torch.rand(8, generator=g, dtype=torch.float64)
    perfect = lambda theta, tt: torch.where(x > 0, 0.0, -1e4).double()  # noqa: E731
    assert bfn.loss(perfect, x, t) == pytest.approx(0.0, abs=1e-12)
    for seed in range(5):
        noisy = torch.randn(
            8, 3, 5, generator=torch.Generator().manual_seed(seed), dtype=torch.float64
        )
        assert bfn.loss(lambda th, tt, noisy=noisy: noisy, x, t) > 0


def test_loss_matches_the_graves_closed_form_for_quadratic(bfn):
    # beta = beta1 t^2: (K/2) beta'(t) = K beta1 t (Graves et al., eq. 185)
    g = torch.Generator().manual_seed(6)
    x = onehot(torch.randint(0, 6, (4,), generator=g), 6)[:, None]
    t = torch.tensor([0.1, 0.4, 0.7, 0.95], dtype=torch.float64)
    logits = torch.randn(4, 1, 6, generator=g, dtype=torch.float64)
    got = bfn.loss(lambda th, tt: logits, x, t)
    e_hat = logits.softmax(-1)
    want = (6 * 3.0 * t * ((x - e_hat) ** 2).sum(-1)[:, 0]).mean()
    assert float(got) == pytest.approx(float(want), rel=2e-3)  # beta' tabulated on 2049 points


def test_loss_gradcheck_wrt_logits(bfn):
    x = onehot([[1, 0], [3, 2]], 5)
    t = torch.tensor([0.3, 0.8], dtype=torch.float64)
    K = torch.tensor([4, 5])
    logits = torch.randn(2, 2, 5, dtype=torch.float64, requires_grad=True)

    def f(lg):
        return bfn.loss(lambda th, tt: lg, x, t, K, generator=torch.Generator().manual_seed(0))

    assert gradcheck64(f, logits)


def test_sampler_recovers_a_fixed_target():
    # an oracle network that always outputs the data class: the sampler returns it
    bfn = CategoricalBFN(EntropyScheduler(4, n_mc=512))
    target = torch.tensor([3, 0, 1, 2])

    def oracle(theta, t):
        return torch.nn.functional.one_hot(target, 4).float().expand(theta.shape[0], -1, -1) * 50

    out = bfn.sample(
        oracle, [4, 4, 2, 3], steps=10, num=6, generator=torch.Generator().manual_seed(0)
    )
    assert (out == target).all()


def test_sampler_matches_a_factorised_target_distribution():
    # a network that ignores theta, p_O = q: BFN sampling then draws from q (Graves et al.)
    bfn = CategoricalBFN(EntropyScheduler(3, n_mc=512))
    q = torch.tensor([0.6, 0.3, 0.1])
    net = lambda theta, t: q.log().expand(theta.shape[0], 1, 3)  # noqa: E731
    out = bfn.sample(net, [3], steps=5, num=4000, generator=torch.Generator().manual_seed(1))
    freq = np.bincount(out[:, 0].numpy(), minlength=3) / 4000
    assert np.abs(freq - q.numpy()).max() < 0.03
