r"""The fly olfactory circuit ORN -> PN -> KC (+APL, +SFA) as a ``torch.nn.Module``.

Per trial: ``pre_steps`` of spontaneous input (every ORN at 8 Hz), then ``steps`` of the odor. PN
spikes are Bernoulli draws at the normalised PN rates (:func:`flyolf.pn.pn_rates`); each KC sums
the spikes of its ``pn_per_kc`` PNs through an exponential synapse,

.. math:: \tau_s \dot I_k = -I_k + w_{pk} \sum_p J_{kp} s_p(t),

so each PN spike raises :math:`I_k` by :math:`w_{pk}/\tau_s` (mean current :math:`w_{pk}` times the
summed PN rate), and :func:`flyolf.kc.run_kc` integrates the KCs. KC spike counts are taken over
the odor window.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from flyolf.config import CircuitConfig, check_config, decay
from flyolf.kc import run_kc
from flyolf.odors import SPONTANEOUS_HZ
from flyolf.pn import check_rates, pn_rates
from paperkit import check_bool, check_memory, param_error

__all__ = ["CircuitOutput", "FlyCircuit", "connectivity"]


class CircuitOutput(NamedTuple):
    """KC spike counts (B, n_kc) over the odor window; with ``record``: KC spikes
    (B, steps, n_kc) and the APL trace (B, steps) over the window; PN spike counts (B, n_orn)."""

    kc_counts: torch.Tensor
    kc_spikes: torch.Tensor | None
    apl: torch.Tensor | None
    pn_counts: torch.Tensor


def connectivity(cfg: CircuitConfig) -> torch.Tensor:
    """The binary PN -> KC matrix J (n_kc, n_orn): each KC gets ``pn_per_kc`` distinct PNs drawn
    uniformly without replacement, from a generator seeded with ``cfg.seed``.

    NaN policy: no tensor input.

    >>> J = connectivity(CircuitConfig(n_kc=5))
    >>> J.sum(dim=1).tolist()
    [7.0, 7.0, 7.0, 7.0, 7.0]
    """
    check_config(cfg, "connectivity")
    g = torch.Generator().manual_seed(cfg.seed)
    picks = torch.rand(cfg.n_kc, cfg.n_orn, generator=g).argsort(dim=1)[:, : cfg.pn_per_kc]
    J = torch.zeros(cfg.n_kc, cfg.n_orn)
    J.scatter_(1, picks, 1.0)
    return J


def pn_spikes(
    orn_rates: torch.Tensor, cfg: CircuitConfig, generator: torch.Generator
) -> torch.Tensor:
    """PN spikes (B, pre_steps + steps, n_orn): spontaneous, then the odor (no checks)."""
    B = orn_rates.shape[0]
    spont = torch.full((1, cfg.n_orn), SPONTANEOUS_HZ, dtype=orn_rates.dtype)
    p_spont = (pn_rates(spont, cfg.pn_normalization) * cfg.dt).clamp(0, 1)
    p_odor = (pn_rates(orn_rates.cpu(), cfg.pn_normalization) * cfg.dt).clamp(0, 1)
    u = torch.rand(B, cfg.pre_steps + cfg.steps, cfg.n_orn, generator=generator)
    p = torch.cat(
        [
            p_spont.expand(B, cfg.pre_steps, -1).reshape(B, cfg.pre_steps, -1),
            p_odor[:, None].expand(B, cfg.steps, -1),
        ],
        dim=1,
    )
    return (u < p).to(orn_rates.dtype).to(orn_rates.device)


def synaptic_current(spikes: torch.Tensor, J: torch.Tensor, cfg: CircuitConfig) -> torch.Tensor:
    """The KC current (B, T, n_kc) from PN spikes (B, T, n_orn): exact exponential synapse."""
    alpha = decay(cfg.dt, cfg.tau_s)
    jumps = (cfg.w_pk / cfg.tau_s) * (spikes @ J.T)
    current = torch.empty_like(jumps)
    state = torch.zeros_like(jumps[:, 0])
    for t in range(jumps.shape[1]):
        state = alpha * state + jumps[:, t]
        current[:, t] = state
    return current


class FlyCircuit(nn.Module):
    r"""The spiking fly olfactory circuit of the paper (Sec. 2): ORN rates in, KC spike counts out.

    Args:
        cfg: the constants (:class:`flyolf.CircuitConfig`). ``cfg.w_pk=None`` is resolved by
            :func:`flyolf.calibrate` (``mechanism="w_pk"``) to a 25% control coding level on 64
            clean odors; the resolved config is ``self.cfg``.
        sparse: event-driven PN -> KC input (the step's PN spikes as a ``torch.sparse`` COO
            tensor times J^T) instead of a dense matmul; the same spikes (see the benchmark).

    ``forward(orn_rates, generator=None, record=False)``: ORN rates (B, n_orn) in Hz ->
    :class:`CircuitOutput`. ``generator`` draws the PN spikes; None: a fresh one seeded with
    ``cfg.seed + 1`` (so repeated calls are identical). NaN policy: NaN, inf and negative rates
    are refused (ValueError).

    >>> circuit = FlyCircuit(CircuitConfig(n_kc=200, w_pk=0.01))
    >>> out = circuit(torch.full((3, 50), 40.0))
    >>> tuple(out.kc_counts.shape), tuple(out.pn_counts.shape)
    ((3, 200), (3, 50))
    """

    def __init__(self, cfg: CircuitConfig, sparse: bool = False) -> None:
        super().__init__()
        check_config(cfg, "FlyCircuit")
        self.sparse = check_bool("sparse", "FlyCircuit", sparse)
        if cfg.w_pk is None:
            from flyolf.calibration import calibrate

            cfg = cfg.replace(w_pk=calibrate(cfg, None, mechanism="w_pk", target_coding=0.25))
        self.cfg = cfg
        self.register_buffer("J", connectivity(cfg))

    def forward(
        self,
        orn_rates: torch.Tensor,
        generator: torch.Generator | None = None,
        record: bool = False,
    ) -> CircuitOutput:
        cfg = check_config(self.cfg, "FlyCircuit", name="self.cfg")
        check_rates("orn_rates", "FlyCircuit", orn_rates, cfg.n_orn)
        record = check_bool("record", "FlyCircuit", record)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise param_error(
                "generator",
                "FlyCircuit",
                "a torch.Generator or None",
                type(generator).__name__,
                cls=TypeError,
            )
        B, T = orn_rates.shape[0], cfg.pre_steps + cfg.steps
        check_memory(
            "orn_rates",
            "FlyCircuit",
            orn_rates,
            4.0 * B * (8 * cfg.n_kc + T * cfg.n_orn + record * cfg.steps * cfg.n_kc),
        )
        if generator is None:
            generator = torch.Generator().manual_seed(cfg.seed + 1)
        with torch.no_grad():
            return self._simulate(orn_rates, generator, record)

    def _simulate(
        self, orn_rates: torch.Tensor, generator: torch.Generator, record: bool
    ) -> CircuitOutput:
        cfg = self.cfg
        dtype, device = orn_rates.dtype, orn_rates.device
        s_pn = pn_spikes(orn_rates, cfg, generator)
        J = self.J.to(dtype=dtype, device=device)
        alpha, jump = decay(cfg.dt, cfg.tau_s), cfg.w_pk / cfg.tau_s
        current = torch.zeros(orn_rates.shape[0], cfg.n_kc, dtype=dtype, device=device)
        if self.sparse:  # event-driven: only the PN spikes of this step (a few %) are summed
            JT = J.T.contiguous()

            def drive(t: int) -> torch.Tensor:
                events = s_pn[:, t].to_sparse()
                return current.mul_(alpha).add_(torch.sparse.mm(events, JT), alpha=jump)
        else:

            def drive(t: int) -> torch.Tensor:
                return current.mul_(alpha).addmm_(s_pn[:, t], J.T, alpha=jump)

        run = run_kc(
            drive,
            cfg.pre_steps + cfg.steps,
            (orn_rates.shape[0], cfg.n_kc),
            cfg,
            g_li=cfg.g_li,
            g_sfa=cfg.g_sfa,
            count_from=cfg.pre_steps,
            record=record,
            dtype=dtype,
            device=device,
        )
        pn_counts = s_pn[:, cfg.pre_steps :].sum(dim=1)
        return CircuitOutput(run.counts, run.spikes, run.apl, pn_counts)
