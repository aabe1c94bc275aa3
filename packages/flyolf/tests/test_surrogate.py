"""spike_fn: Heaviside forward, fast-sigmoid surrogate backward; BPTT reaches the gains."""

import torch
import torch.nn.functional as F

from flyolf import CircuitConfig, connectivity, fast_sigmoid, make_odor_task, spike_fn
from flyolf.circuit import pn_spikes, synaptic_current
from flyolf.kc import run_kc
from paperkit.testing import gradcheck64


def test_forward_is_the_heaviside_step():
    x = torch.tensor([-2.0, -1e-6, 0.0, 1e-6, 3.0])
    assert spike_fn(x).tolist() == [0.0, 0.0, 1.0, 1.0, 1.0]


def test_surrogate_backward_is_the_fast_sigmoid_derivative():
    # value of the fast sigmoid, gradient of spike_fn: gradcheck compares the surrogate backward
    # with finite differences of x / (1 + 10|x|) (points away from the kink at 0)
    def straight_through(x):
        return spike_fn(x) + (fast_sigmoid(x) - spike_fn(x)).detach()

    g = torch.Generator().manual_seed(0)
    x = (torch.rand(20, generator=g, dtype=torch.float64) + 0.05) * torch.tensor(
        [-1.0, 1.0]
    ).repeat(10)
    assert gradcheck64(straight_through, x)
    x = torch.tensor([0.3], dtype=torch.float64, requires_grad=True)
    spike_fn(x).backward()
    assert x.grad.item() == 1.0 / (1.0 + 10 * 0.3) ** 2  # closed form (1 + k|x|)^-2


def test_bptt_gradients_reach_both_gains():
    cfg = CircuitConfig(n_kc=200, w_pk=0.0019, steps=40, pre_steps=5)
    task = make_odor_task(n_classes=3, n_train=4, n_test=1, noise=0.5)
    J = connectivity(cfg)
    current = synaptic_current(
        pn_spikes(task.X_train, cfg, torch.Generator().manual_seed(0)), J, cfg
    )
    rho = torch.tensor([-6.0, -3.0], dtype=torch.float64, requires_grad=True)
    W = torch.randn(3, cfg.n_kc, generator=torch.Generator().manual_seed(1)) * 0.1
    g = F.softplus(rho).float()
    run = run_kc(
        lambda t: current[:, t], 45, (12, cfg.n_kc), cfg, g_li=g[0], g_sfa=g[1], count_from=5
    )
    loss = F.cross_entropy(run.counts @ W.T, task.y_train)
    loss.backward()
    assert torch.isfinite(rho.grad).all()
    assert (rho.grad != 0).all(), rho.grad
