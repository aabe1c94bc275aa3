r"""Bias factors :math:`B \approx \phi_q \phi_k^\top`: closed forms, SVD and a neural factoriser.

Factors have the layout of the kernel: :math:`\phi_q` (B|1, N, H, R), :math:`\phi_k` (B|1, M, H, R),
and :math:`B_{h,ij} = \sum_r \phi_q[i,h,r]\,\phi_k[j,h,r]`. NaN policy of every function here:
non-finite inputs are refused; sizes whose outputs would not fit in memory are refused before any
work (``PAPERKIT_MAX_BYTES`` raises the limit).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import nn

from paperkit import (
    check_bool,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = [
    "NeuralFactorizer",
    "alibi_bias",
    "alibi_factors",
    "alibi_slopes",
    "distance_factors",
    "factors_to_dense",
    "svd_factors",
]


def alibi_slopes(H: int) -> torch.Tensor:
    r"""ALiBi head slopes :math:`m_h = 2^{-8(h+1)/H}`, h = 0..H-1 (float64, shape (H,)).

    >>> alibi_slopes(4)
    tensor([0.2500, 0.0625, 0.0156, 0.0039], dtype=torch.float64)
    """
    H = check_int("H", "alibi_slopes", H, low=1)
    check_memory("H", "alibi_slopes", H, 8 * H)
    h = torch.arange(1, H + 1, dtype=torch.float64)
    return torch.pow(2.0, -8.0 * h / H)


def alibi_bias(N: int, H: int, causal: bool = True) -> torch.Tensor:
    r"""The dense ALiBi bias (1, H, N, N), float64: :math:`b_{ij} = -m_h (i - j)` (causal; the
    entries j > i are masked by the attention) or :math:`-m_h |i - j|` (bidirectional)."""
    owner = "alibi_bias"
    N = check_int("N", owner, N, low=1)
    H = check_int("H", owner, H, low=1)
    causal = check_bool("causal", owner, causal)
    check_memory("N", owner, N, 8 * H * N * N)
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
    N = check_int("N", owner, N, low=1)
    H = check_int("H", owner, H, low=1)
    if not check_bool("causal", owner, causal):
        raise param_error(
            "causal", owner, "True (bidirectional ALiBi is not low-rank: use svd_factors)", causal
        )
    check_memory("N", owner, N, 8 * 4 * N * H)
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
    With ``drop_row_constant`` the first column, constant along each row and so invisible to
    softmax, is dropped (rank c+1; the bias then differs from the dense one by
    :math:`-w_h\|x_i\|^2` per row, the attention output does not).

    Shapes:
        x: (B, N, c) query positions; y: (B, M, c) key positions (x's dtype and device).
        weight: (H,) per-head weights, cast to x's dtype.
        returns: (B, N, H, c+2) and (B, M, H, c+2) (c+1 with ``drop_row_constant``).
    """
    owner = "distance_factors"
    dims: dict = {}
    check_tensor("x", owner, x, shape=("B", "N", "c"), dims=dims)
    check_tensor("y", owner, y, shape=("B", "M", "c"), dims=dims, device=x.device)
    if y.dtype != x.dtype:
        raise param_error(
            "y", owner, f"of the dtype of 'x' ({x.dtype})", describe(y), cls=TypeError
        )
    check_tensor("weight", owner, weight, shape=("H",), device=x.device)
    drop_row_constant = check_bool("drop_row_constant", owner, drop_row_constant)
    B, N, c = x.shape
    M, H = y.shape[1], weight.shape[0]
    check_memory("weight", owner, weight, (N + M) * B * H * (c + 2) * x.element_size())
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
    r"""The dense bias :math:`\phi_q\phi_k^\top`.

    Shapes:
        q_b: (B or 1, N, H, R); k_b: (B or 1, M, H, R) (q_b's dtype and device).
        returns: (B or 1, H, N, M), the larger batch of the two.

    >>> q_b, k_b = alibi_factors(3, 1)
    >>> factors_to_dense(q_b, k_b)[0, 0] * 256  # ALiBi: -m (i - j), m = 2**-8 for H = 1
    tensor([[ 0.,  1.,  2.],
            [-1.,  0.,  1.],
            [-2., -1.,  0.]], dtype=torch.float64)
    """
    owner = "factors_to_dense"
    dims: dict = {}
    check_tensor("q_b", owner, q_b, shape=(None, "N", "H", "R"), dims=dims)
    check_tensor("k_b", owner, k_b, shape=(None, "M", "H", "R"), dims=dims, device=q_b.device)
    if k_b.dtype != q_b.dtype:
        raise param_error(
            "k_b", owner, f"of the dtype of 'q_b' ({q_b.dtype})", describe(k_b), cls=TypeError
        )
    B = max(q_b.shape[0], k_b.shape[0])
    if q_b.shape[0] not in (1, B) or k_b.shape[0] not in (1, B):
        raise param_error(
            "k_b", owner, f"of batch size 1 or {q_b.shape[0]} (as 'q_b')", describe(k_b)
        )
    N, H, _ = q_b.shape[1:]
    check_memory("q_b", owner, describe(q_b), B * H * N * k_b.shape[1] * q_b.element_size())
    return _dense(q_b.expand(B, -1, -1, -1), k_b.expand(B, -1, -1, -1))


def _dense(q_b: torch.Tensor, k_b: torch.Tensor) -> torch.Tensor:
    return torch.einsum("bnhr,bmhr->bhnm", q_b, k_b)


def svd_factors(
    bias: torch.Tensor, rank: int | None = None, energy: float = 0.995
) -> tuple[torch.Tensor, torch.Tensor, int]:
    r"""Truncated-SVD factors of a static bias (H, N, M): per head :math:`B_h = U\Sigma V^\top`,
    :math:`\phi_q = U_R\Sigma_R^{1/2}`, :math:`\phi_k = V_R\Sigma_R^{1/2}`.

    Without ``rank``, R is the smallest rank holding ``energy`` of :math:`\sum\sigma^2` in every
    head (the maximum over heads).

    Shapes:
        bias: (H, N, M), finite.
        returns: q_b (1, N, H, R), k_b (1, M, H, R) and the rank R.
    """
    owner = "svd_factors"
    check_tensor("bias", owner, bias, shape=("H", "N", "M"))
    full = min(bias.shape[1], bias.shape[2])
    if rank is not None:
        rank = check_int("rank", owner, rank, low=1, high=full)
    energy = check_real("energy", owner, energy, low=0, low_open=True, high=1)
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


def _check_features(owner: str, module: nn.Module, f_q, f_k, in_q: int, in_k: int) -> int:
    """f_q (B, N, in_q) and f_k (B, M, in_k), finite, in the module's dtype and device; B."""
    param = next(module.parameters())
    dims: dict = {}
    for name, f, width in (("f_q", f_q, in_q), ("f_k", f_k, in_k)):
        length = "N" if name == "f_q" else "M"
        check_tensor(name, owner, f, shape=("B", length, width), dims=dims, device=param.device)
        if f.dtype != param.dtype:
            expected = f"of the module's dtype ({param.dtype})"
            raise param_error(name, owner, expected, describe(f), cls=TypeError)
    return dims["B"][0]


class NeuralFactorizer(nn.Module):
    r"""Neural decomposition of a dynamic bias,
    :math:`b_{h,ij}\approx\phi_q(f_i)_h\cdot\phi_k(g_j)_h`.

    :math:`\phi_q, \phi_k`: Linear(in, hidden)-tanh-Linear(hidden, hidden)-tanh-Linear(hidden, H·R),
    no biases. Trained by :meth:`fit` on :math:`\|\phi_q\phi_k^\top - B\|^2` against the dense
    bias while the base model stays frozen.

    Shapes:
        forward(f_q, f_k): f_q (B, N, in_q) row features, f_k (B, M, in_k) column features, in the
            module's dtype; returns (B, N, H, R) and (B, M, H, R).

    NaN policy: non-finite features (and, in :meth:`fit`, targets) are refused.
    """

    def __init__(self, in_q: int, in_k: int, heads: int, rank: int = 96, hidden: int = 256):
        super().__init__()
        owner = "NeuralFactorizer"
        sizes = {
            name: check_int(name, owner, value, low=1)
            for name, value in (
                ("in_q", in_q),
                ("in_k", in_k),
                ("heads", heads),
                ("rank", rank),
                ("hidden", hidden),
            )
        }
        weights = hidden * (in_q + in_k + 2 * hidden + 2 * heads * rank)
        largest = max(sizes, key=sizes.__getitem__)  # the size that drives the weights
        check_memory(largest, owner, sizes[largest], 4 * weights)
        self.in_q, self.in_k, self.heads, self.rank = in_q, in_k, heads, rank
        self.phi_q = _mlp(in_q, hidden, heads * rank)
        self.phi_k = _mlp(in_k, hidden, heads * rank)

    def forward(self, f_q: torch.Tensor, f_k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Factors (B, N, H, R) and (B, M, H, R) from row features and column features."""
        _check_features("NeuralFactorizer", self, f_q, f_k, self.in_q, self.in_k)
        return self._factors(f_q, f_k)

    def _factors(self, f_q: torch.Tensor, f_k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
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
        cycling over ``feature_pairs`` (a non-empty sequence of ``(f_q, f_k)`` as in
        :meth:`forward`); returns the relative MSE
        :math:`\|\phi_q\phi_k^\top - B\|^2/\|B\|^2` per step. Every argument and every target
        is checked before the first step."""
        owner = "NeuralFactorizer.fit"
        if (
            isinstance(feature_pairs, (str, bytes))
            or not isinstance(feature_pairs, Sequence)
            or len(feature_pairs) == 0
            or not all(isinstance(p, (tuple, list)) and len(p) == 2 for p in feature_pairs)
        ):
            expected = "a non-empty sequence of (f_q, f_k) pairs"
            raise param_error("feature_pairs", owner, expected, describe(feature_pairs))
        if not callable(dense_bias_fn):
            raise param_error(
                "dense_bias_fn", owner, "a callable", describe(dense_bias_fn), cls=TypeError
            )
        steps = check_int("steps", owner, steps, low=1)
        lr = check_real("lr", owner, lr, low=0, low_open=True)
        targets = []
        for f_q, f_k in feature_pairs:
            B = _check_features(owner, self, f_q, f_k, self.in_q, self.in_k)
            shape = (B, self.heads, f_q.shape[1], f_k.shape[1])
            target = dense_bias_fn(f_q, f_k)
            targets.append(check_tensor("dense_bias_fn", owner, target, shape=shape).detach())
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        history = []
        for step in range(steps):
            (f_q, f_k), target = (
                feature_pairs[step % len(feature_pairs)],
                targets[step % len(targets)],
            )
            err = _dense(*self._factors(f_q, f_k)) - target
            loss = err.pow(2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            history.append(float(loss.detach() / target.pow(2).mean().clamp_min(1e-30)))
        return history
