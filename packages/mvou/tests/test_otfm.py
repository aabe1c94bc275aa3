"""mvOU-OTFM: determinism, the multi-snapshot time rescaling, drift estimation, learning."""

import pytest
import torch
from torch import nn

from conftest import F64, randn, rotation
from mvou import MvOU, MvOUOTFM, estimate_drift_matrix, fit_iterated, sample_w2
from paperkit.testing import assert_close, assert_param_error


def _pair(n=64, seed=0):
    ref = MvOU(rotation(2), None, 0.5)
    x0 = randn(n, 2, seed=seed) * 0.4 + torch.tensor([2.0, 0.0], dtype=F64)
    x1 = ref.simulate(
        x0, torch.tensor([0.0, 1.0], dtype=F64), generator=torch.Generator().manual_seed(seed + 1)
    )[:, 1]
    return ref, x0, x1


@pytest.mark.parametrize(
    "coupling,scope", [("ot", "global"), ("ot", "minibatch"), ("independent", "global")]
)
def test_fit_is_deterministic_under_its_seed(coupling, scope):
    ref, x0, x1 = _pair()
    runs = [
        MvOUOTFM(ref, hidden=16, coupling=coupling, coupling_scope=scope)
        .fit([x0, x1], [0.0, 1.0], steps=15, batch=32, seed=3, progress=False)
        .losses
        for _ in range(2)
    ]
    assert runs[0] == runs[1] and len(runs[0]) == 15
    other = (
        MvOUOTFM(ref, hidden=16, coupling=coupling, coupling_scope=scope)
        .fit([x0, x1], [0.0, 1.0], steps=15, batch=32, seed=4, progress=False)
        .losses
    )
    assert other != runs[0]


def test_interval_rescaling_matches_the_absolute_time_reference():
    # the reference over [t0, t0 + dt] seen in local time s is MvOU(dt A, m, sqrt(dt) sigma):
    # its Sigma_1 equals Sigma_dt of the original, and velocities scale by 1/dt
    ref = MvOU(rotation(3), randn(3, seed=1), 0.5)
    local = ref.scaled(0.25)
    assert_close(local.cov(1.0), ref.cov(0.25), rtol=1e-10, atol=1e-13)
    assert_close(local.phi(0.5), ref.phi(0.125), rtol=1e-10, atol=1e-13)


class _Affine(nn.Module):
    """Stand-in networks: velocity x W^T + c and score 0 (time ignored)."""

    def __init__(self, W, c):
        super().__init__()
        self.W, self.c = W.float(), c.float()

    def forward(self, t, x):
        return x @ self.W.T + self.c, torch.zeros_like(x)


def test_estimate_drift_matrix_recovers_an_affine_drift():
    ref, x0, _ = _pair(400)
    model = MvOUOTFM(ref, hidden=8)
    A = torch.tensor([[-0.5, 2.0], [-2.0, -0.5]], dtype=F64)
    m = torch.tensor([1.0, -1.0], dtype=F64)
    model.nets = _Affine(A, -A @ m)
    A_hat, m_hat = estimate_drift_matrix(model, x0, generator=torch.Generator().manual_seed(0))
    assert_close(A_hat, A, rtol=0, atol=1e-5)  # float32 networks
    assert_close(m_hat, m, rtol=0, atol=1e-4)


def test_estimate_drift_matrix_at_the_observed_cells():
    # the released code's choice: regress the drift at the snapshots, each at its own time
    ref, x0, x1 = _pair(300)
    model = MvOUOTFM(ref, hidden=8)
    A = torch.tensor([[-1.0, 1.5], [-1.5, -1.0]], dtype=F64)
    m = torch.tensor([0.5, 2.0], dtype=F64)
    model.nets = _Affine(A, -A @ m)
    A_hat, m_hat = estimate_drift_matrix(model, x0, snapshots=[x0, x1])
    assert_close(A_hat, A, rtol=0, atol=1e-5)
    assert_close(m_hat, m, rtol=0, atol=1e-4)
    assert_param_error(estimate_drift_matrix, model, x0, snapshots=[x0], param="snapshots")


def test_fit_iterated_starts_from_brownian_and_reports_each_estimate():
    ref, x0, x1 = _pair()
    model, history = fit_iterated(
        [x0, x1], [0.0, 1.0], 0.5, iterations=2, steps=5, batch=32, progress=False
    )
    assert len(history) == 2 and history[-1][0] is model
    assert float(history[0][0].ref.A.abs().max()) == 0.0  # iteration 1 is SF2M
    assert torch.equal(model.ref.A, history[0][1].to(model.ref.dtype))  # refit on the estimate
    _, on_data = fit_iterated(
        [x0, x1],
        [0.0, 1.0],
        0.5,
        iterations=1,
        steps=5,
        batch=32,
        progress=False,
        estimate_on="data",
    )
    A_data, _ = estimate_drift_matrix(on_data[0][0], x0, snapshots=[x0, x1])
    assert torch.equal(on_data[0][1], A_data)


def test_fit_refuses_bad_snapshot_times():
    ref, x0, x1 = _pair()
    model = MvOUOTFM(ref, hidden=8)
    assert_param_error(model.fit, [x0, x1], [1.0, 0.5], param="times")
    assert_param_error(model.fit, [x0, x1], [0.0, 0.5, 1.0], param="times")
    assert_param_error(model.fit, [x0, torch.zeros(5, 3)], [0.0, 1.0], param="snapshots")


@pytest.mark.slow
def test_learns_the_rotation_better_than_brownian_sf2m():
    # the data come from the reference: with it, mvOU-OTFM beats the Brownian reference
    ref, x0, x1 = _pair(600)
    grid = torch.tensor([0.0, 0.5], dtype=F64)
    test_x0 = randn(600, 2, seed=9) * 0.4 + torch.tensor([2.0, 0.0], dtype=F64)
    truth = ref.simulate(test_x0, grid, generator=torch.Generator().manual_seed(2))[:, 1]
    w = {}
    for name, r in (("mvou", ref), ("brownian", MvOU(torch.zeros(2, 2), None, 0.5))):
        model = MvOUOTFM(r).fit([x0, x1], [0.0, 1.0], steps=400, progress=False)
        gen = torch.Generator().manual_seed(3)
        w[name] = sample_w2(model.sample(test_x0, grid, generator=gen)[:, 1], truth)
    assert w["mvou"] * 3 < w["brownian"]
