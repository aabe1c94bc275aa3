r"""The synthetic compression demo (paper, Sec. 3; no training): unrolled CBSA steps on tokens
from a union of subspaces, with the true bases :math:`U_k` as the head projections.

Each step takes :math:`W_k = Z U_k`, the initial representatives :math:`Q^0_k` = the projections
of ``num_reps`` fixed sampled tokens, and moves the tokens in one of two forms:

* ``"residual"``: the layer's forward form :math:`Z \leftarrow Z + \eta \sum_k U_k A_k^\top C_k`
  (unit step scalars), as a CBSA block applies it;
* ``"gradient"``: the exact gradient step on the representatives' objective,
  :math:`Z \leftarrow Z - \eta \nabla_Z \sum_k R_\varepsilon(Q_k)` with
  :math:`Q_k = Q^0_k + A_k W_k` (autograd through the softmax assignment and the pooling).

After every step it records the tokens' subspace coding rate :math:`\sum_k R_\varepsilon(Z U_k)`,
the representatives' rate, the same token rate with every token rescaled to the initial mean norm
(so that a fall from mere shrinking is told apart), the mean token norm, the mean angle of each
token to its own subspace and the largest principal angle between each class's top-p principal
subspace and its true subspace.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from cbsa.functional import contract_broadcast
from cbsa.rate import coding_rate, principal_angles, subspace_compression
from paperkit import check_choice, check_int, check_real

__all__ = ["unrolled_compression"]


def _project(Z: torch.Tensor, bases: torch.Tensor) -> torch.Tensor:
    """(N, D) tokens on K bases (K, D, p) -> (1, K, N, p)."""
    return torch.einsum("nd,kdp->knp", Z, bases).unsqueeze(0)


def _reps_rate(Z: torch.Tensor, bases: torch.Tensor, idx: torch.Tensor, eps: float) -> torch.Tensor:
    W = _project(Z, bases)
    reps0 = W[:, :, idx]
    A = torch.softmax(reps0 @ W.transpose(-1, -2) * W.shape[-1] ** -0.5, dim=-1)
    return coding_rate(reps0 + A @ W, eps).sum()


def _stats(Z, labels, U_list, bases, idx, eps, norm0) -> dict[str, float]:
    norms = Z.norm(dim=1, keepdim=True)
    own = (Z.unsqueeze(1) @ bases[labels]).squeeze(1).norm(dim=-1) / norms.squeeze(1)
    worst = []
    for k, U in enumerate(U_list):
        top = torch.linalg.svd(Z[labels == k], full_matrices=False)[2][: U.shape[1]].T
        worst.append(float(principal_angles(top, U).max()))
    return {
        "rate": float(subspace_compression(Z, U_list, eps)),
        "rate_rescaled": float(subspace_compression(Z / norms * norm0, U_list, eps)),
        "reps_rate": float(_reps_rate(Z, bases, idx, eps)),
        "mean_norm": float(norms.mean()),
        "angle_deg": math.degrees(float(torch.arccos(own.clamp(max=1.0)).mean())),
        "max_principal_angle_deg": math.degrees(max(worst)),
    }


def unrolled_compression(
    Z: torch.Tensor,
    labels: torch.Tensor,
    U_list: Sequence[torch.Tensor],
    *,
    form: str = "gradient",
    steps: int = 10,
    step_size: float = 0.1,
    num_reps: int = 16,
    eps: float = 0.5,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """``steps`` unrolled steps of ``form`` (see the module docstring); one row of statistics
    per step, the input first (step 0). Z (N, D) float64, labels (N,), U_list K bases (D, p)."""
    owner = "unrolled_compression"
    check_choice("form", owner, form, ("residual", "gradient"))
    steps = check_int("steps", owner, steps, low=0, high=10**4)
    step_size = check_real("step_size", owner, step_size, low=0)
    num_reps = check_int("num_reps", owner, num_reps, low=1, high=Z.shape[0])
    bases = torch.stack(list(U_list))
    ones = torch.ones(len(U_list), dtype=Z.dtype)
    idx = torch.randperm(Z.shape[0], generator=torch.Generator().manual_seed(seed))[:num_reps]
    norm0 = Z.norm(dim=1).mean()
    rows = []
    for t in range(steps + 1):
        rows.append({"step": t, **_stats(Z, labels, U_list, bases, idx, eps, norm0)})
        if t == steps:
            break
        if form == "gradient":
            leaf = Z.detach().clone().requires_grad_(True)
            (grad,) = torch.autograd.grad(_reps_rate(leaf, bases, idx, eps), leaf)
            Z = Z - step_size * grad
        else:
            W = _project(Z, bases)
            out, _ = contract_broadcast(W, W[:, :, idx], ones, ones)
            Z = Z + step_size * torch.einsum("knp,kdp->nd", out[0], bases)
    return rows
