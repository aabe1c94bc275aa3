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

The public functions check their inputs (probabilities finite and in [0, 1]: NaN and inf are
refused with a ``ValueError``); the model calls the unchecked cores (``relax``, ``entropy``,
``sparsity``) on probabilities it computed itself.
"""

from __future__ import annotations

from typing import Any

import torch
from torch_geometric.utils import scatter

from paperkit import Described, check_int, check_real, check_tensor, describe, param_error

__all__ = ["entropy_loss", "relax_edges", "sparsity_loss", "tau_schedule"]

EPS = 1e-10


def _probabilities(owner: str, p: Any, **shape: Any) -> torch.Tensor:
    """``p`` as a floating tensor of finite probabilities in [0, 1] (empty allowed)."""
    check_tensor("p", owner, p, nonempty=False, **shape)
    if p.numel() and (float(p.detach().min()) < 0 or float(p.detach().max()) > 1):
        raise param_error(
            "p",
            owner,
            "probabilities in [0, 1]",
            Described(f"values in [{float(p.detach().min())}, {float(p.detach().max())}]"),
        )
    return p


def _generator(owner: str, generator: Any) -> torch.Generator | None:
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "None or a torch.Generator", describe(generator), cls=TypeError
        )
    return generator


def relax(p: torch.Tensor, tau: float, generator: torch.Generator | None) -> torch.Tensor:
    """:func:`relax_edges` of checked arguments."""
    u0 = torch.rand(p.shape, generator=generator, dtype=p.dtype, device=p.device)
    u1 = torch.rand(p.shape, generator=generator, dtype=p.dtype, device=p.device)
    noise = torch.log(-torch.log(u0 + EPS) + EPS) - torch.log(-torch.log(u1 + EPS) + EPS)
    logit = torch.log(p + EPS) - torch.log(1.0 - p + EPS)
    return torch.sigmoid((logit + noise) / tau)


def relax_edges(
    p: torch.Tensor, tau: float, generator: torch.Generator | None = None
) -> torch.Tensor:
    """A relaxed Bernoulli(``p``) sample at temperature ``tau``: same shape as ``p``, in (0, 1).

    Differentiable in ``p``; the noise comes from ``generator`` (torch's global one if None).
    ``p`` has any shape (empty gives empty) and holds probabilities in [0, 1]; NaN or inf in
    ``p`` and a non-positive or infinite ``tau`` are refused (``ValueError``).

    >>> m = relax_edges(torch.full((4,), 0.5), 1e-3, torch.Generator().manual_seed(0))
    >>> bool(((m < 1e-3) | (m > 1 - 1e-3)).all())
    True
    """
    owner = "relax_edges"
    _probabilities(owner, p)
    tau = check_real("tau", owner, tau, low=0, low_open=True)
    return relax(p, tau, _generator(owner, generator))


def tau_schedule(epoch: int, epochs: int, start: float = 0.97, end: float = 0.03) -> float:
    """Linear annealing :math:`\\tau_e = start\\,(1 - e/E) + end` for ``epoch`` in 1..``epochs``.

    ``start >= 0`` and ``end > 0`` are finite, so every temperature is positive.

    >>> tau_schedule(1, 2), tau_schedule(2, 2)
    (0.515, 0.03)
    """
    owner = "tau_schedule"
    epochs = check_int("epochs", owner, epochs, low=1)
    epoch = check_int("epoch", owner, epoch, low=1, high=epochs)
    start = check_real("start", owner, start, low=0)
    end = check_real("end", owner, end, low=0, low_open=True)
    return schedule(epoch, epochs, start, end)


def schedule(epoch: int, epochs: int, start: float = 0.97, end: float = 0.03) -> float:
    """:func:`tau_schedule` of checked arguments."""
    return start * (1.0 - epoch / epochs) + end


def entropy(p: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """:func:`entropy_loss` of checked arguments."""
    if p.numel() == 0:
        return p.new_zeros(())
    return -(p * torch.log(p + eps) + (1.0 - p) * torch.log(1.0 - p + eps)).mean()


def entropy_loss(p: torch.Tensor, eps: float = EPS) -> torch.Tensor:
    """Mean binary entropy of the keep-probabilities (log 2 at p = 1/2, 0 at p in {0, 1}).

    ``p`` has any shape (empty gives 0); NaN or inf are refused (``ValueError``).

    >>> round(float(entropy_loss(torch.full((3,), 0.5))), 4)
    0.6931
    """
    owner = "entropy_loss"
    _probabilities(owner, p)
    eps = check_real("eps", owner, eps, low=0)
    return entropy(p, eps)


def sparsity(
    p: torch.Tensor, index: torch.Tensor, target_density: float, num_subgraphs: int | None
) -> torch.Tensor:
    """:func:`sparsity_loss` of checked arguments."""
    if p.numel() == 0:
        return p.new_zeros(())
    size = int(index.max()) + 1 if num_subgraphs is None else num_subgraphs
    count = scatter(torch.ones_like(p), index, dim=0, dim_size=size, reduce="sum")
    rho = scatter(p, index, dim=0, dim_size=size, reduce="sum") / count.clamp_min(1.0)
    return ((rho - target_density) ** 2)[count > 0].mean()


def sparsity_loss(
    p: torch.Tensor,
    index: torch.Tensor,
    target_density: float = 0.5,
    num_subgraphs: int | None = None,
) -> torch.Tensor:
    """:math:`\\mathrm{mean}_v(\\rho_v - \\rho^*)^2` over the subgraphs that have candidates.

    ``index[i]`` is the subgraph of candidate ``i``; ``rho_v`` the mean ``p`` of its candidates.

    Shapes:
        p: ``(M,)`` probabilities, finite (NaN and inf refused); index: ``(M,)`` integers in
        ``[0, num_subgraphs)`` (``num_subgraphs`` defaults to ``index.max() + 1``).

    >>> float(sparsity_loss(torch.tensor([0.2, 0.8, 0.5]), torch.tensor([0, 0, 1]), 0.5))
    0.0
    """
    owner = "sparsity_loss"
    _probabilities(owner, p, ndim=1)
    check_tensor("index", owner, index, ndim=1, dtype="int", nonempty=False, device=p.device)
    if len(index) != len(p):
        raise param_error(
            "index",
            owner,
            f"a tensor as long as 'p' ({len(p)})",
            Described(f"{len(index)} entries"),
        )
    target_density = check_real("target_density", owner, target_density, low=0, high=1)
    low = int(index.max()) + 1 if index.numel() else 0
    if index.numel() and int(index.min()) < 0:
        raise param_error("index", owner, "non-negative subgraph ids", int(index.min()))
    if num_subgraphs is not None:
        num_subgraphs = check_int("num_subgraphs", owner, num_subgraphs, low=max(low, 1))
    return sparsity(p, index, target_density, num_subgraphs)
