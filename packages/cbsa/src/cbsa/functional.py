r"""The contract-and-broadcast step of CBSA as a function of per-head tensors (paper, Sec. 3).

One gradient step on the streamlined compression objective of the representatives,

.. math::

    \min_Z \; \sum_k R_\varepsilon(Q_k), \qquad
    R_\varepsilon(Q) = \tfrac12 \log\det\!\Big(I + \tfrac{p}{m\varepsilon^2} Q^\top Q\Big),

splits into three forward operations per head :math:`k`, with :math:`W_k = Z U_k` (N x p):

1. extraction: :math:`A_k = \mathrm{softmax}_{\text{row}}(Q^0_k W_k^\top / \sqrt p)` (m x N) and
   :math:`Q_k = Q^0_k + s^{\text{rep}}_k A_k W_k`;
2. contraction among the representatives (the softmax standing in for
   :math:`(I + \alpha Q_k Q_k^\top)^{-1}` as in CRATE):
   :math:`C_k = \mathrm{softmax}_{\text{row}}(Q_k Q_k^\top / \sqrt p)\, Q_k`;
3. broadcast through the same assignment transposed (the chain rule through :math:`Q_k = A_k W_k`):
   :math:`Y_k = s^x_k A_k^\top C_k` (N x p).

The cost is O(N m p) per head, linear in N for fixed m.
"""

from __future__ import annotations

import torch

from paperkit import check_real, check_tensor

__all__ = ["contract_broadcast", "contract_broadcast_unchecked"]


def _dtype_rule(x: torch.Tensor) -> object:
    """Inputs must share one floating dtype, except under autocast (which casts them itself)."""
    return "float" if torch.is_autocast_enabled(x.device.type) else (x.dtype,)


def contract_broadcast(
    w: torch.Tensor,
    reps0: torch.Tensor,
    step_rep: torch.Tensor,
    step_x: torch.Tensor,
    *,
    scale: float | None = None,
    assignment: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Contract the representatives and broadcast the contraction back to every token.

    .. math::

        A = \mathrm{softmax}_{\text{row}}(s\, Q^0 W^\top), \quad Q = Q^0 + s^{\text{rep}} A W,
        \quad \text{out} = s^x A^\top \mathrm{softmax}_{\text{row}}(s\, Q Q^\top) Q.

    With ``assignment`` given, it replaces the softmax ``A`` (any (m x N) matrix; the special
    cases of the paper's Sec. 3.3): ``reps0 = w``, ``assignment = I_N`` and ``step_rep = 0``
    recover MSSA (CRATE) attention :math:`\mathrm{softmax}(s W W^\top) W\, s^x`; ``m = 1`` with a
    uniform assignment gives every token the same global contraction.

    Shapes:
        w: (B, H, N, p) tokens projected on each head's subspace, :math:`W_k = Z U_k`.
        reps0: (B, H, m, p) initial representatives :math:`Q^0_k`.
        step_rep, step_x: (H,) per-head step sizes :math:`s^{\text{rep}}_k`, :math:`s^x_k`.
        assignment: (B, H, m, N) or None.
        returns: ``out`` (B, H, N, p) and the assignment ``A`` (B, H, m, N).

    Args:
        scale: the softmax temperature :math:`s`; default :math:`p^{-1/2}`.

    NaN policy: NaN or inf in any input is refused with a ValueError (so is a non-finite or
    non-positive ``scale``). All tensors share ``w``'s dtype and device (under ``torch.autocast``
    the dtypes may differ).

    >>> w = torch.randn(1, 2, 10, 4)
    >>> out, A = contract_broadcast(w, w[:, :, :3], torch.ones(2), torch.ones(2))
    >>> out.shape, A.shape, bool(torch.allclose(A.sum(-1), torch.ones(1, 2, 3)))
    (torch.Size([1, 2, 10, 4]), torch.Size([1, 2, 3, 10]), True)
    """
    owner = "contract_broadcast"
    dims: dict = {}
    check_tensor("w", owner, w, shape=("B", "H", "N", "p"), dims=dims)
    rule = _dtype_rule(w)
    check_tensor(
        "reps0", owner, reps0, shape=("B", "H", "m", "p"), dims=dims, dtype=rule, device=w.device
    )
    check_tensor("step_rep", owner, step_rep, shape=("H",), dims=dims, dtype=rule, device=w.device)
    check_tensor("step_x", owner, step_x, shape=("H",), dims=dims, dtype=rule, device=w.device)
    p = w.shape[-1]
    scale = p**-0.5 if scale is None else check_real("scale", owner, scale, low=0, low_open=True)
    if assignment is not None:
        check_tensor(
            "assignment",
            owner,
            assignment,
            shape=("B", "H", "m", "N"),
            dims=dims,
            dtype=rule,
            device=w.device,
        )
    return contract_broadcast_unchecked(w, reps0, step_rep, step_x, scale, assignment)


def contract_broadcast_unchecked(
    w: torch.Tensor,
    reps0: torch.Tensor,
    step_rep: torch.Tensor,
    step_x: torch.Tensor,
    scale: float,
    assignment: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`contract_broadcast` without the argument checks (for layers that checked their
    input already)."""
    if assignment is None:
        A = torch.softmax(reps0 @ w.transpose(-1, -2) * scale, dim=-1)
    else:
        A = assignment
    Q = reps0 + step_rep.view(-1, 1, 1) * (A @ w)
    C = torch.softmax(Q @ Q.transpose(-1, -2) * scale, dim=-1) @ Q
    out = step_x.view(-1, 1, 1) * (A.transpose(-1, -2) @ C)
    return out, A
