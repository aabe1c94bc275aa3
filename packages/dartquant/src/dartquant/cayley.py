"""Cayley SGD on the orthogonal group: SpinQuant's optimiser, the baseline of QR-Orth.

For an orthogonal parameter R with Euclidean gradient G = dL/dR, the Riemannian gradient in the
Lie algebra is the skew matrix A = G R^T - R G^T. Heavy-ball momentum is kept there,
M ← β M + A (skew), and R moves along the Cayley retraction

    R ← (I + α/2 M)^{-1} (I - α/2 M) R,

computed as R ← R - (I + α/2 M)^{-1} α M R (the same map; rounding then scales with the small
update, not with R), which is exactly orthogonal for any step α (Li, Li & Todorovic, ICLR 2020,
used by SpinQuant).
As in SpinQuant's optimiser the step is α = min(lr, 1 / ||M||_1), which keeps I + α/2 M well
conditioned when the gradient is large.
Each step costs a d x d linear solve on top of the matmuls, the extra price the paper's QR-Orth
avoids.
"""

from __future__ import annotations

from collections.abc import Iterable

import torch

from paperkit import Described, check_real, check_tensor, param_error

__all__ = ["CayleySGD"]


class CayleySGD(torch.optim.Optimizer):
    """SGD with momentum on orthogonal matrices [..., d, d] through the Cayley transform.

    ``params``: tensors (or parameter groups) of square matrices ``[..., d, d]``, finite at
    construction; ``lr`` > 0 and ``momentum`` in [0, 1) are finite reals. NaN or inf gradients
    propagate into the parameters, as in torch's optimizers.
    """

    def __init__(self, params: Iterable[torch.Tensor], lr: float = 1e-3, momentum: float = 0.9):
        owner = "CayleySGD"
        lr = check_real("lr", owner, lr, low=0, low_open=True)
        momentum = check_real("momentum", owner, momentum, low=0, high=1, high_open=True)
        if isinstance(params, torch.Tensor):
            raise param_error(
                "params",
                owner,
                "an iterable of tensors",
                Described("a single tensor"),
                cls=TypeError,
            )
        try:
            super().__init__(params, {"lr": lr, "momentum": momentum})
        except (TypeError, ValueError) as exc:
            raise param_error(
                "params",
                owner,
                "a non-empty iterable of tensors or parameter groups",
                Described(str(exc)),
            ) from exc
        for group in self.param_groups:
            for R in group["params"]:
                check_tensor("params", owner, R)
                if R.dim() < 2 or R.shape[-1] != R.shape[-2]:
                    raise param_error(
                        "params",
                        owner,
                        "square matrices [..., d, d]",
                        Described(f"a tensor of shape {tuple(R.shape)}"),
                    )

    @torch.no_grad()
    def step(self, closure=None):  # noqa: D102 - torch.optim.Optimizer.step
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, beta = group["lr"], group["momentum"]
            for R in group["params"]:
                if R.grad is None:
                    continue
                G = R.grad
                A = G @ R.mT - R @ G.mT
                state = self.state[R]
                M = state.get("momentum_buffer")
                M = A.clone() if M is None else M.mul_(beta).add_(A)
                state["momentum_buffer"] = M
                norm1 = torch.linalg.matrix_norm(M, ord=1).amax().item()
                alpha = min(lr, 1.0 / (norm1 + 1e-8))
                eye = torch.eye(R.shape[-1], dtype=R.dtype, device=R.device)
                R.sub_(torch.linalg.solve(eye + 0.5 * alpha * M, alpha * (M @ R)))
        return loss
