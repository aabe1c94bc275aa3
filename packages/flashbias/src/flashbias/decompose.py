r"""Bias factors :math:`B \approx \phi_q \phi_k^\top`: closed forms, SVD and a neural factoriser.

Factors have the layout of the kernel: :math:`\phi_q` (B|1, N, H, R), :math:`\phi_k` (B|1, M, H, R),
and :math:`B_{h,ij} = \sum_r \phi_q[i,h,r]\,\phi_k[j,h,r]`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from paperkit import Described, param_error

__all__ = [
    "NeuralFactorizer",
    "alibi_bias",
    "alibi_factors",
    "alibi_slopes",
    "distance_factors",
    "factors_to_dense",
    "svd_factors",
]


def _positive_int(name: str, owner: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise param_error(name, owner, "a positive integer", value)
    return value


def alibi_slopes(H: int) -> torch.Tensor:
    r"""ALiBi head slopes :math:`m_h = 2^{-8(h+1)/H}`, h = 0..H-1 (float64, shape (H,))."""
    _positive_int("H", "alibi_slopes", H)
    h = torch.arange(1, H + 1, dtype=torch.float64)
    return torch.pow(2.0, -8.0 * h / H)


def alibi_bias(N: int, H: int, causal: bool = True) -> torch.Tensor:
    r"""The dense ALiBi bias (1, H, N, N), float64: :math:`b_{ij} = -m_h (i - j)` (causal; the
    entries j > i are masked by the attention) or :math:`-m_h |i - j|` (bidirectional)."""
    _positive_int("N", "alibi_bias", N)
    i = torch.arange(N, dtype=torch.float64)
    diff = i[:, None] - i[None, :]
    diff = diff if causal else diff.abs()
    return (-alibi_slopes(H)[:, None, None] * diff)[None]


def alibi_factors(N: int, H: int, causal: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Exact rank-2 factors of causal ALiBi: :math:`\phi_q = m_h[-i, 1]`, :math:`\phi_k = [1, j]`,
    so :math:`\phi_q\phi_k^\top = -m_h(i - j)`. Returns (1, N, H, 2) each, float64.

    Bidirectional ALiBi :math:`-m_h|i-j|` is not low-rank; use :func:`svd_factors` on
    :func:`alibi_bias` with ``causal=False`` instead (``causal=False`` here is an error).
    """
    owner = "alibi_factors"
    _positive_int("N", owner, N)
    if not causal:
        raise param_error(
            "causal", owner, "True (bidirectional ALiBi is not low-rank: use svd_factors)", causal
        )
    m = alibi_slopes(H)
    i = torch.arange(N, dtype=torch.float64)
    q_b = torch.stack([-i[:, None] * m, torch.ones(N, 1, dtype=torch.float64) * m], dim=-1)
    k_b = torch.stack([torch.ones(N, H, dtype=torch.float64), i[:, None].expand(N, H)], dim=-1)
    return q_b[None], k_b[None]


def distance_factors(
    x: torch.Tensor, y: torch.Tensor, weight: torch.Tensor, drop_row_constant: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Exact factors of the spatial-distance bias :math:`b_{h,ij} = -w_h\|x_i - y_j\|^2`.

    :math:`\phi_q = w_h[-\|x_i\|^2, -1, 2x_i]`, :math:`\phi_k = [1, \|y_j\|^2, y_j]` (rank c+2) for
    x (B, N, c), y (B, M, c), weight (H,). With ``drop_row_constant`` the first column, constant
    along each row and so invisible to softmax, is dropped (rank c+1; the bias then differs from
    the dense one by :math:`-w_h\|x_i\|^2` per row, the attention output does not).
    """
    owner = "distance_factors"
    for name, t in (("x", x), ("y", y)):
        if not isinstance(t, torch.Tensor) or not t.is_floating_point() or t.dim() != 3:
            raise param_error(name, owner, "a floating-point (B, L, c) tensor", Described(repr(t)))
    if y.shape[0] != x.shape[0] or y.shape[2] != x.shape[2]:
        raise param_error("y", owner, f"of shape ({x.shape[0]}, M, {x.shape[2]})", tuple(y.shape))
    if not isinstance(weight, torch.Tensor) or weight.dim() != 1:
        raise param_error("weight", owner, "a 1-D (H,) tensor", Described(repr(weight)))
    B, N, _ = x.shape
    M = y.shape[1]
    H = weight.shape[0]
    w = weight.to(x.dtype)[:, None]  # (H, 1)
    xx = (x * x).sum(-1, keepdim=True)[:, :, None]  # (B, N, 1, 1)
    yy = (y * y).sum(-1, keepdim=True)[:, :, None]
    xh = x[:, :, None].expand(B, N, H, -1)
    yh = y[:, :, None].expand(B, M, H, -1)
    q_cols = [-torch.ones_like(xx).expand(B, N, H, 1), 2 * xh]
    k_cols = [yy.expand(B, M, H, 1), yh]
    if not drop_row_constant:
        q_cols.insert(0, -xx.expand(B, N, H, 1))
        k_cols.insert(0, torch.ones_like(yy).expand(B, M, H, 1))
    return torch.cat(q_cols, -1) * w, torch.cat(k_cols, -1)


def factors_to_dense(q_b: torch.Tensor, k_b: torch.Tensor) -> torch.Tensor:
    r"""The dense bias :math:`\phi_q\phi_k^\top`:
    (B|1, N, H, R), (B|1, M, H, R) -> (B|1, H, N, M)."""
    if q_b.dim() != 4 or k_b.dim() != 4 or q_b.shape[-1] != k_b.shape[-1]:
        raise param_error(
            "k_b", "factors_to_dense", "a 4-D tensor of the rank of q_b", tuple(k_b.shape)
        )
    return torch.einsum("bnhr,bmhr->bhnm", q_b, k_b)


def svd_factors(
    bias: torch.Tensor, rank: int | None = None, energy: float = 0.995
) -> tuple[torch.Tensor, torch.Tensor, int]:
    r"""Truncated-SVD factors of a static bias (H, N, M): per head :math:`B_h = U\Sigma V^\top`,
    :math:`\phi_q = U_R\Sigma_R^{1/2}`, :math:`\phi_k = V_R\Sigma_R^{1/2}`.

    Without ``rank``, R is the smallest rank holding ``energy`` of :math:`\sum\sigma^2` in every
    head (the maximum over heads). Returns (q_b (1, N, H, R), k_b (1, M, H, R), R).
    """
    owner = "svd_factors"
    if not isinstance(bias, torch.Tensor) or not bias.is_floating_point() or bias.dim() != 3:
        raise param_error("bias", owner, "a floating-point (H, N, M) tensor", Described(repr(bias)))
    if not bool(torch.isfinite(bias).all()):
        raise param_error("bias", owner, "finite", Described("a tensor with inf or nan"))
    full = min(bias.shape[1], bias.shape[2])
    if rank is not None and (isinstance(rank, bool) or not isinstance(rank, int)):
        raise param_error("rank", owner, f"an integer in [1, {full}] or None", rank, cls=TypeError)
    if rank is not None and not 1 <= rank <= full:
        raise param_error("rank", owner, f"an integer in [1, {full}] or None", rank)
    if not 0.0 < energy <= 1.0:
        raise param_error("energy", owner, "in (0, 1]", energy)
    U, S, Vh = torch.linalg.svd(bias, full_matrices=False)
    if rank is None:
        cum = (S**2).cumsum(-1) / (S**2).sum(-1, keepdim=True).clamp_min(torch.finfo(S.dtype).tiny)
        per_head = (cum < energy - 1e-12).sum(-1) + 1
        rank = int(per_head.clamp(max=full).max())
    root = S[:, :rank].sqrt()
    q_b = (U[:, :, :rank] * root[:, None]).permute(1, 0, 2)[None]
    k_b = (Vh[:, :rank].transpose(1, 2) * root[:, None]).permute(1, 0, 2)[None]
    return q_b.contiguous(), k_b.contiguous(), rank


def _mlp(inp: int, hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Linear(inp, hidden, bias=False),
        nn.Tanh(),
        nn.Linear(hidden, hidden, bias=False),
        nn.Tanh(),
        nn.Linear(hidden, out, bias=False),
    )


class NeuralFactorizer(nn.Module):
    r"""Neural decomposition of a dynamic bias,
    :math:`b_{h,ij}\approx\phi_q(f_i)_h\cdot\phi_k(g_j)_h`.

    :math:`\phi_q, \phi_k`: Linear(in, hidden)-tanh-Linear(hidden, hidden)-tanh-Linear(hidden, H·R),
    no biases. ``forward(f_q (B, N, in_q), f_k (B, M, in_k))`` returns (B, N, H, R), (B, M, H, R).
    Trained by :meth:`fit` on :math:`\|\phi_q\phi_k^\top - B\|^2` against the dense bias while the
    base model stays frozen.
    """

    def __init__(self, in_q: int, in_k: int, heads: int, rank: int = 32, hidden: int = 256):
        super().__init__()
        owner = "NeuralFactorizer"
        for name, value in (
            ("in_q", in_q),
            ("in_k", in_k),
            ("heads", heads),
            ("rank", rank),
            ("hidden", hidden),
        ):
            _positive_int(name, owner, value)
        self.heads, self.rank = heads, rank
        self.phi_q = _mlp(in_q, hidden, heads * rank)
        self.phi_k = _mlp(in_k, hidden, heads * rank)

    def forward(self, f_q: torch.Tensor, f_k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Factors (B, N, H, R) and (B, M, H, R) from row features and column features."""
        q_b = self.phi_q(f_q).unflatten(-1, (self.heads, self.rank))
        k_b = self.phi_k(f_k).unflatten(-1, (self.heads, self.rank))
        return q_b, k_b

    def fit(
        self,
        feature_pairs: Sequence[tuple[torch.Tensor, torch.Tensor]],
        dense_bias_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        steps: int = 1000,
        lr: float = 1e-3,
    ) -> list[float]:
        r"""Adam on the mean squared error against ``dense_bias_fn(f_q, f_k)`` (B, H, N, M),
        cycling over ``feature_pairs``; returns the relative MSE
        :math:`\|\phi_q\phi_k^\top - B\|^2/\|B\|^2` per step."""
        _positive_int("steps", "NeuralFactorizer.fit", steps)
        if len(feature_pairs) == 0:
            raise param_error("feature_pairs", "NeuralFactorizer.fit", "non-empty", [])
        targets = [dense_bias_fn(f_q, f_k).detach() for f_q, f_k in feature_pairs]
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        history = []
        for step in range(steps):
            (f_q, f_k), target = (
                feature_pairs[step % len(feature_pairs)],
                targets[step % len(targets)],
            )
            err = factors_to_dense(*self(f_q, f_k)) - target
            loss = err.pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            history.append(float(loss.detach() / target.pow(2).mean().clamp_min(1e-30)))
        return history
