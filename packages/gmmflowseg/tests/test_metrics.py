"""GED, HM-IoU, diversity, NMI and the latent diagnostics."""

import numpy as np
import pytest
import torch

from gmmflowseg.metrics import (
    component_mode_nmi,
    diversity,
    ged,
    hm_iou,
    iou,
    latent_diagnostics,
)
from gmmflowseg.models import GMMFlowSegNet


def _masks(n, seed, size=8):
    return np.random.default_rng(seed).random((n, size, size)) < 0.4


def test_iou_conventions():
    empty, full = np.zeros((4, 4), bool), np.ones((4, 4), bool)
    assert iou(empty, empty) == 1.0 and iou(empty, full) == 0.0 and iou(full, full) == 1.0


def test_ged_identities():
    a, b = _masks(5, 0), _masks(3, 1)
    assert ged(a, a) == 0.0  # within-set terms include i = j
    assert ged(a, b) == pytest.approx(ged(b, a), abs=1e-15)
    assert ged(a, b) > 0


def test_ged_hand_computed_2x2():
    # s = {[[1,1],[0,0]]}, g = {[[1,0],[0,0]], [[0,0],[0,1]]}:
    # d(s, g1) = 1 - 1/2, d(s, g2) = 1 - 0 = 1 -> cross mean 0.75; within s 0;
    # within g: pairs (1,2), (2,1) have d = 1, i = j pairs 0 -> mean 0.5; GED = 1.5 - 0 - 0.5
    s = np.array([[[1, 1], [0, 0]]], np.uint8)
    g = np.array([[[1, 0], [0, 0]], [[0, 0], [0, 1]]], np.uint8)
    assert ged(s, g) == pytest.approx(1.0, abs=1e-15)


def test_hm_iou():
    a = _masks(4, 2)
    assert hm_iou(a, a) == 1.0
    assert hm_iou(np.concatenate([a, a]), a) == 1.0  # repeated annotations matched twice
    # hand-computed: samples {x, x} vs gts {x, y} -> one pair IoU 1, one IoU(x, y)
    x, y = a[0], a[1]
    assert hm_iou(np.stack([x, x]), np.stack([x, y])) == pytest.approx((1 + iou(x, y)) / 2)


def test_diversity():
    a = _masks(1, 3)[0]
    assert diversity(np.stack([a, a, a])) == 0.0
    assert diversity(np.stack([a, ~a])) == 1.0
    assert diversity(a[None]) == 0.0


def test_metrics_refuse_non_binary_and_empty():
    bad = np.full((2, 4, 4), 2, np.uint8)
    with pytest.raises(ValueError, match="'samples'"):
        ged(bad, np.zeros((2, 4, 4), bool))
    with pytest.raises(ValueError, match="'gts'"):
        hm_iou(np.zeros((2, 4, 4), bool), np.zeros((0, 4, 4), bool))
    with pytest.raises(ValueError, match="'gts'"):
        ged(np.zeros((2, 4, 4), bool), np.zeros((2, 5, 4), bool))


def test_nmi_is_one_when_components_are_modes_and_low_when_random():
    rng = np.random.default_rng(0)
    n, size = 30, 8
    gts = np.zeros((n, 4, size, size), bool)
    for a in range(4):
        gts[:, a, a * 2 : a * 2 + 2] = True  # four disjoint annotation modes
    modes = np.tile(np.arange(4), (n, 1))
    comps = rng.integers(0, 4, (n, 16))
    samples = gts[np.arange(n)[:, None], (comps + 1) % 4]  # component c draws mode c + 1
    assert component_mode_nmi(comps, samples, gts, modes) == pytest.approx(1.0)
    shuffled = rng.integers(0, 4, (n, 16))
    assert component_mode_nmi(shuffled, samples, gts, modes) < 0.1


def test_latent_diagnostics_matches_closed_form_per_dim_kl():
    torch.manual_seed(0)
    net = GMMFlowSegNet(1, 2, base=4, depth=2, flow=None)
    x, y = torch.randn(4, 1, 8, 8), torch.randint(0, 2, (4, 8, 8))
    diag = latent_diagnostics(net, [(x[:2], y[:2]), (x[2:], y[2:])])
    with torch.no_grad():
        p, _ = net.prior_params(x)
        q, _ = net.posterior_params(x, y)
        pq = torch.softmax(q.logits, -1)
        manual = torch.zeros(6, dtype=torch.float64)
        for k in range(4):  # sum_c pi_q[c] KL(N(mu_qc, s_qc) || N(mu_pc, s_pc)) per dimension
            kl = torch.distributions.kl_divergence(
                torch.distributions.Normal(q.mu[:, k], q.sigma[:, k]),
                torch.distributions.Normal(p.mu[:, k], p.sigma[:, k]),
            )
            manual += (pq[:, k, None] * kl).double().mean(0)
    np.testing.assert_allclose(diag["kl_per_dim"], manual.numpy(), rtol=1e-5, atol=1e-7)
    assert diag["active_dims"] == int((manual > 0.01).sum())
    assert 0.05 <= diag["mean_sigma_prior"] <= 0.5
    with pytest.raises(ValueError, match="'loader'"):
        latent_diagnostics(net, [])
