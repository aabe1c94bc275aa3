r"""The binary-concrete relaxation of the edge choice, its temperature schedule and the penalties.

Relaxed sample (logistic noise, the difference of two Gumbels), for :math:`U_0, U_1 \sim U(0,1)`:

.. math::
    \varepsilon = \log(-\log U_0) - \log(-\log U_1), \qquad
    m = \sigma\!\left(\frac{\log p - \log(1-p) + \varepsilon}{\tau}\right),

so that :math:`P(m > 1/2) = p` for every :math:`\tau`, and :math:`m \to \mathrm{Bernoulli}(p)` as
:math:`\tau \to 0`. Per epoch :math:`e \in \{1..E\}`: :math:`\tau_e = 0.97(1 - e/E) + 0.03`.

Tight relaxation (entropy): :math:`L_{ent} = \mathrm{mean}_{vu}\,
-[p_{vu}\log p_{vu} + (1-p_{vu})\log(1-p_{vu})]`. Sparsity:
:math:`L_{sp} = \mathrm{mean}_v (\rho_v - \rho^*)^2`, :math:`\rho_v = \sum_u p_{vu}/(|S_v|-1)`.
"""

from __future__ import annotations

import torch
from torch_geometric.utils import scatter

from graphtop._checks import check_positive_float, check_positive_int
from paperkit import Described, param_error

__all__ = ["entropy_loss", "relax_edges", "sparsity_loss", "tau_schedule"]

EPS = 1e-10


def relax_edges(
    p: torch.Tensor, tau: float, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A relaxed Bernoulli(``p``) sample at temperature ``tau``: same shape as ``p``, in (0, 1).

    Differentiable in ``p``; the noise comes from ``generator`` (torch's global one if None).
    """
    if not isinstance(p, torch.Tensor) or not p.is_floating_point():
        raise param_error("p", "relax_edges", "a float tensor", Described(repr(p)), cls=TypeError)
    if p.numel() and (float(p.detach().min()) < 0 or float(p.detach().max()) > 1):
        raise param_error(
            "p",
            "relax_edges",
            "probabilities in [0, 1]",
            Described(f"values in [{float(p.detach().min())}, {float(p.detach().max())}]"),
        )
    check_positive_float(tau, "tau", "relax_edges")
    u0 = torch.rand(p.shape, generator=generator, dtype=p.dtype, device=p.device)
    u1 = torch.rand(p.shape, generator=generator, dtype=p.dtype, device=p.device)
    noise = torch.log(-torch.log(u0 + EPS) + EPS) - torch.log(-torch.log(u1 + EPS) + EPS)
    logit = torch.log(p + EPS) - torch.log(1.0 - p + EPS)
    return torch.sigmoid((logit + noise) / tau)


def tau_schedule(epoch: int, epochs: int, start: float = 0.97, end: float = 0.03) -> float:
    """Linear annealing :math:`\\tau_e = start\\,(1 - e/E) + end` for ``epoch`` in 1..``epochs``."""
    check_positive_int(epochs, "epochs", "tau_schedule")
    if isinstance(epoch, bool) or not isinstance(epoch, int) or not 1 <= epoch <= epochs:
        raise param_error("epoch", "tau_schedule", f"an integer in [1, {epochs}]", epoch)
    return start * (1.0 - epoch / epochs) + end


def entropy_loss(p: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """Mean binary entropy of the keep-probabilities (log 2 at p = 1/2, 0 at p in {0, 1})."""
    if p.numel() == 0:
        return p.new_zeros(())
    return -(p * torch.log(p + eps) + (1.0 - p) * torch.log(1.0 - p + eps)).mean()


def sparsity_loss(
    p: torch.Tensor,
    index: torch.Tensor,
    target_density: float = 0.5,
    num_subgraphs: int | None = None,
) -> torch.Tensor:
    """:math:`\\mathrm{mean}_v(\\rho_v - \\rho^*)^2` over the subgraphs that have candidates.

    ``index[i]`` is the subgraph of candidate ``i``; ``rho_v`` the mean ``p`` of its candidates.
    """
    if not 0.0 <= target_density <= 1.0:
        raise param_error("target_density", "sparsity_loss", "in [0, 1]", target_density)
    if p.numel() == 0:
        return p.new_zeros(())
    size = int(index.max()) + 1 if num_subgraphs is None else num_subgraphs
    count = scatter(torch.ones_like(p), index, dim=0, dim_size=size, reduce="sum")
    rho = scatter(p, index, dim=0, dim_size=size, reduce="sum") / count.clamp_min(1.0)
    return ((rho - target_density) ** 2)[count > 0].mean()
