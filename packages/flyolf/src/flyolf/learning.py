r"""Which module does the circuit engage? The gains learned jointly with the readout (Sec. 3).

The gains are parameterised as :math:`g_{LI} = \mathrm{softplus}(\rho_{LI})` and
:math:`g_{SFA} = \mathrm{softplus}(\rho_{SFA})` and trained together with a linear MBON readout
:math:`z = W c + b` of the KC spike counts :math:`c` by back-propagation through time, the spike's
derivative replaced by the fast-sigmoid surrogate (:func:`flyolf.spike_fn`). Loss: mean softmax
cross-entropy plus :math:`\frac{\lambda}{2}\lVert W\rVert^2`. The PN -> KC current does not
depend on the gains, so it is drawn and filtered once, without gradient (full-batch training).
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F

from flyolf.circuit import FlyCircuit, pn_spikes, synaptic_current
from flyolf.config import CircuitConfig, check_config
from flyolf.kc import run_kc
from flyolf.odors import OdorTask
from flyolf.pn import check_rates
from paperkit import check_int, check_memory, check_real, check_tensor, param_error

__all__ = ["learn_gains"]

#: Gains start at least here (softplus cannot reach 0).
MIN_GAIN = 1e-4


def _inv_softplus(g: float) -> float:
    return g + math.log(-math.expm1(-g))


def _check_task(task: Any, owner: str, n_orn: int) -> OdorTask:
    if not isinstance(task, OdorTask):
        raise param_error(
            "task", owner, "an OdorTask (make_odor_task)", type(task).__name__, cls=TypeError
        )
    dims: dict = {}
    check_rates("task.X_train", owner, task.X_train, n_orn)
    check_rates("task.X_test", owner, task.X_test, n_orn)
    check_tensor(
        "task.y_train", owner, task.y_train, shape=(task.X_train.shape[0],), dtype="int", dims=dims
    )
    check_tensor("task.y_test", owner, task.y_test, shape=(task.X_test.shape[0],), dtype="int")
    return task


def learn_gains(
    task: OdorTask,
    cfg: CircuitConfig,
    epochs: int = 30,
    lr: float = 0.05,
    l2: float = 1e-3,
    seed: int = 0,
) -> dict[str, Any]:
    r"""Learn :math:`g_{LI}`, :math:`g_{SFA}` and the readout jointly by BPTT on ``task``'s
    training trials; report the gains and the test accuracy of the learned readout.

    Args:
        task: an :class:`flyolf.OdorTask` (its noise level is the environment).
        cfg: the circuit; its ``g_li``/``g_sfa`` are the starting gains (at least 1e-4);
            ``w_pk=None`` is calibrated first (:class:`flyolf.FlyCircuit`).
        epochs: full-batch Adam steps.
        lr: Adam learning rate (for :math:`\rho` and the readout).
        l2: :math:`\lambda` of the readout's L2 penalty.
        seed: seed of the PN spikes of the training and test trials.

    Returns:
        ``{"g_li", "g_sfa", "acc", "g_li_init", "g_sfa_init", "loss"}``: learned gains, test
        accuracy, starting gains and the loss per epoch.

    NaN policy: NaN, inf and negative rates in ``task`` are refused (ValueError).

    >>> from flyolf import make_odor_task
    >>> task = make_odor_task(n_classes=3, n_train=4, n_test=4, noise=0.5)
    >>> cfg = CircuitConfig(n_kc=50, w_pk=0.01, g_li=0.003, g_sfa=0.05, steps=20, pre_steps=2)
    >>> out = learn_gains(task, cfg, epochs=1)
    >>> sorted(out)
    ['acc', 'g_li', 'g_li_init', 'g_sfa', 'g_sfa_init', 'loss']
    """
    owner = "learn_gains"
    check_config(cfg, owner)
    _check_task(task, owner, cfg.n_orn)
    epochs = check_int("epochs", owner, epochs, low=1, high=100_000)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=10)
    l2 = check_real("l2", owner, l2, low=0)
    seed = check_int("seed", owner, seed, low=0)
    T = cfg.pre_steps + cfg.steps
    n = task.X_train.shape[0]
    check_memory("task", owner, task, 4.0 * 16 * n * T * cfg.n_kc)
    circuit = FlyCircuit(cfg)
    cfg = circuit.cfg
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        currents = [
            synaptic_current(pn_spikes(x.float(), cfg, generator), circuit.J, cfg)
            for x in (task.X_train, task.X_test)
        ]
    classes = int(max(task.y_train.max(), task.y_test.max())) + 1
    g0 = (max(cfg.g_li, MIN_GAIN), max(cfg.g_sfa, MIN_GAIN))
    rho = torch.tensor([_inv_softplus(g) for g in g0], dtype=torch.float64, requires_grad=True)
    W = torch.zeros(classes, cfg.n_kc, requires_grad=True)
    b = torch.zeros(classes, requires_grad=True)
    optimizer = torch.optim.Adam([rho, W, b], lr=lr)

    def counts(current: torch.Tensor) -> torch.Tensor:
        g = F.softplus(rho).float()
        run = run_kc(
            lambda t: current[:, t],
            T,
            (current.shape[0], cfg.n_kc),
            cfg,
            g_li=g[0],
            g_sfa=g[1],
            count_from=cfg.pre_steps,
        )
        return run.counts

    losses = []
    with torch.enable_grad():
        for _ in range(epochs):
            optimizer.zero_grad()
            logits = counts(currents[0]) @ W.T + b
            loss = F.cross_entropy(logits, task.y_train) + 0.5 * l2 * W.pow(2).sum()
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
    with torch.no_grad():
        pred = (counts(currents[1]) @ W.T + b).argmax(dim=1)
    gains = F.softplus(rho).tolist()
    return {
        "g_li": gains[0],
        "g_sfa": gains[1],
        "acc": float((pred == task.y_test).float().mean()),
        "g_li_init": g0[0],
        "g_sfa_init": g0[1],
        "loss": losses,
    }
