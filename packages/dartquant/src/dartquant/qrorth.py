"""QR-Orth: an orthogonal matrix parametrised through a QR factorisation.

DartQuant replaces manifold optimisation (Cayley / Riemannian SGD on the Stiefel manifold) by an
unconstrained parameter Z ∈ R^{d x d} and the rotation

    R = Q(Z),   (Q, _) = torch.linalg.qr(Z)   (Householder QR, Q^T Q = I),

so plain SGD on Z is enough: whatever Z becomes, R stays exactly orthogonal, and gradients flow
through the QR factorisation. Z starts at a normalised Sylvester Hadamard matrix (QuaRot's start),
at a random orthogonal matrix, or at the identity. ``n_mats`` independent rotations are held in a
batch Z[n_mats, d, d] (one R2 per KV head).
"""

from __future__ import annotations

import torch
from torch import nn

from dartquant.rotations import hadamard, is_power_of_two, random_orthogonal
from paperkit import Described, check_choice, check_int, check_memory, check_tensor, param_error

__all__ = ["INITS", "QROrth", "initial_rotation"]

INITS = ("hadamard", "random", "identity")


def initial_rotation(
    d: int, init: str = "hadamard", seed: int = 0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """The starting orthogonal matrix: Sylvester Hadamard (d a power of 2, else random orthogonal),
    Haar-random orthogonal from ``seed``, or the identity."""
    check_choice("init", "initial_rotation", init, INITS)
    if init == "identity":
        return torch.eye(d, dtype=dtype)
    if init == "hadamard" and is_power_of_two(d):
        return hadamard(d, dtype)
    return random_orthogonal(d, seed, dtype)


class QROrth(nn.Module):
    """``n_mats`` rotations R_k = Q(Z_k) of size d x d, learned through the unconstrained Z.

    ``forward(x)`` rotates the last dim: x[..., d] ↦ x R (one matrix), or
    x[..., n_mats, d] ↦ (x[..., k, :] R_k)_k (a batch of matrices). ``x`` must have the
    module's dtype (float32 unless converted with ``.to``; another dtype is refused, convert
    the input or the module); NaN and inf in ``x`` are refused.

    >>> rotation = QROrth(4, init="random")
    >>> x = torch.randn(3, 4)
    >>> bool(torch.allclose(rotation(x).norm(dim=-1), x.norm(dim=-1), atol=1e-5))
    True
    """

    def __init__(self, d: int, n_mats: int = 1, init: str = "hadamard", seed: int = 0) -> None:
        super().__init__()
        owner = "QROrth"
        d = check_int("d", owner, d, low=1)
        n_mats = check_int("n_mats", owner, n_mats, low=1)
        check_choice("init", owner, init, INITS)
        seed = check_int("seed", owner, seed, low=0)
        check_memory("d", owner, d, 3 * 8 * n_mats * d * d)
        self.d, self.n_mats, self.init = d, n_mats, init
        start = torch.stack([initial_rotation(d, init, seed + k) for k in range(n_mats)])
        self.Z = nn.Parameter(start)

    def rotation(self) -> torch.Tensor:
        """R = Q(Z): [d, d] when ``n_mats == 1``, else [n_mats, d, d]."""
        Q = torch.linalg.qr(self.Z).Q
        return Q[0] if self.n_mats == 1 else Q

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tensor("x", "QROrth", x, dtype=self.Z.dtype)
        tail = (self.d,) if self.n_mats == 1 else (self.n_mats, self.d)
        if tuple(x.shape[-len(tail) :]) != tail or x.dim() < len(tail):
            raise param_error(
                "x",
                "QROrth",
                f"a tensor [..., {', '.join(map(str, tail))}]",
                Described(f"a tensor of shape {tuple(x.shape)}"),
            )
        R = self.rotation()
        if self.n_mats == 1:
            return x @ R
        return torch.einsum("...kd,kde->...ke", x, R)

    def extra_repr(self) -> str:
        return f"d={self.d}, n_mats={self.n_mats}, init={self.init!r}"
