r"""The LION attention layer: one set of weights, three forms (``set_form``), three decays.

``x (B, N, D)`` :math:`\to` ``q = phi(x W_q)``, ``k = phi(x W_k)``, ``v = x W_v`` per head
(``D = H d``), then LION attention and the output projection. Feature maps and decays:

- ``"lit"``: :math:`\phi(x)=\mathrm{elu}(x)+1`, :math:`\lambda_i=1` (bidirectional Katharopoulos).
- ``"d"``: :math:`\phi(x)=\mathrm{silu}(x)+0.5`, L2-normalised over the head, and a learned
  :math:`\lambda=\sigma(a_h)`, :math:`a_h\sim\mathcal N(0,1)`, per head (bidirectional RetNet).
- ``"s"``: the same :math:`\phi` and a selective :math:`\lambda_i=1-\sigma(w_h^\top x_i+b_h)` per
  token, from a ``Linear(D, H)`` (like Mamba-2).
  :math:`\log\lambda_i=\log\sigma(-(w_h^\top x_i+b_h))` is computed directly, so it never
  underflows to :math:`-\infty`.

``order="snake"``: the mask is applied under the row-wise and the column-wise serpentine orders of
the patch grid, each with its own decay parameters, and the two masks are averaged (the RNN and
chunk forms sum the numerators and the denominators of the two orders, which is the same).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from lion import ops
from lion.orders import grid_for, snake_orders
from paperkit import Described, check_choice, param_error

__all__ = ["BACKENDS", "DECAYS", "FORMS", "ORDERS", "LionAttention", "feature_map"]

DECAYS = ("lit", "d", "s")
FORMS = ("attention", "rnn", "chunk")
ORDERS = ("raster", "snake")
BACKENDS = ("auto", "reference", "triton")


def feature_map(x: torch.Tensor, decay: str) -> torch.Tensor:
    r"""LIT: :math:`\mathrm{elu}(x)+1`; D and S: :math:`\mathrm{silu}(x)+0.5`, L2-normalised over
    the last (head) dimension. Both are positive."""
    if decay == "lit":
        return F.elu(x) + 1
    return F.normalize(F.silu(x) + 0.5, dim=-1)


class LionAttention(nn.Module):
    r"""LION bidirectional linear attention, ``(B, N, D) -> (B, N, D)``.

    Args:
        dim: model width :math:`D`; ``num_heads`` must divide it.
        decay: ``"lit"`` (no decay), ``"d"`` (fixed learned per-head decay) or ``"s"`` (selective).
        form: ``"attention"`` (full masked, :math:`O(N^2)`), ``"rnn"`` (forward + backward
            recurrence, :math:`O(d^2)` state) or ``"chunk"`` (chunkwise); switch with
            :meth:`set_form`, the weights are shared.
        chunk_size: :math:`C` of the chunk form (>= 1).
        eps: added to the denominator :math:`A\mathbf 1`.
        order: ``"raster"`` or ``"snake"`` (two serpentine orders of the ``grid`` of patches).
        grid: ``(h, w)`` of the patch grid for ``order="snake"``; ``N`` may be ``h * w`` or
            ``h * w + 1`` (a leading class token keeps its place). None: square.
        backend: for the chunk form, ``"reference"`` (pure torch), ``"triton"`` (the fused kernel)
            or ``"auto"`` (Triton on a CUDA device when the shapes suit it, else reference).
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        decay: Literal["lit", "d", "s"] = "s",
        form: Literal["attention", "rnn", "chunk"] = "attention",
        chunk_size: int = 64,
        qkv_bias: bool = True,
        eps: float = 1e-6,
        order: Literal["raster", "snake"] = "raster",
        grid: tuple[int, int] | None = None,
        backend: Literal["auto", "reference", "triton"] = "auto",
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        for name, value in (("dim", dim), ("num_heads", num_heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise param_error(name, owner, "a positive integer", value)
        if dim % num_heads:
            raise param_error("dim", owner, f"divisible by num_heads = {num_heads}", dim)
        self.decay = check_choice("decay", owner, decay, DECAYS)
        self.order = check_choice("order", owner, order, ORDERS)
        self.backend = check_choice("backend", owner, backend, BACKENDS)
        if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
            raise param_error("chunk_size", owner, "an integer >= 1", chunk_size)
        if not eps >= 0:
            raise param_error("eps", owner, "a non-negative float", eps)
        if grid is not None and (len(grid) != 2 or min(grid) < 1):
            raise param_error("grid", owner, "None or a pair (h, w) of positive integers", grid)
        self.dim, self.num_heads, self.head_dim = dim, num_heads, dim // num_heads
        self.chunk_size, self.eps, self.grid = chunk_size, eps, grid
        self.form = "attention"
        self.set_form(form)
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        n_orders = 2 if order == "snake" else 1
        if decay == "d":
            self.decay_logit = nn.Parameter(torch.randn(n_orders, num_heads))
        elif decay == "s":
            self.decay_proj = nn.ModuleList(nn.Linear(dim, num_heads) for _ in range(n_orders))

    def set_form(self, form: Literal["attention", "rnn", "chunk"]) -> LionAttention:
        """Switch between the equivalent forms on the same weights; returns ``self``."""
        self.form = check_choice("form", type(self).__name__, form, FORMS)
        return self

    def extra_repr(self) -> str:
        return (
            f"dim={self.dim}, num_heads={self.num_heads}, decay={self.decay!r}, "
            f"form={self.form!r}, order={self.order!r}, chunk_size={self.chunk_size}"
        )

    def log_decay(self, x: torch.Tensor) -> list[torch.Tensor | None]:
        r""":math:`\log\lambda` ``(B, H, N)`` per order (raster positions; None for LIT)."""
        B, N, _ = x.shape
        if self.decay == "lit":
            return [None] * (2 if self.order == "snake" else 1)
        if self.decay == "d":
            ll = F.logsigmoid(self.decay_logit).to(x.dtype)
            return [row[None, :, None].expand(B, -1, N) for row in ll]
        return [F.logsigmoid(-proj(x)).transpose(1, 2) for proj in self.decay_proj]

    def _parts(self, q, k, v, ll) -> torch.Tensor:
        if self.form == "attention":
            if ll is None:
                return ops.full_parts(q, k, v, None)
            if self.decay == "d":  # lambda^|i-j| as integer powers, as in RetNet
                return ops.full_parts(q, k, v, ops.decay_mask(ll[..., 0], q.shape[2]))
            return ops.full_parts(q, k, v, ops.lion_mask(ll))
        if self.form == "rnn":
            return ops.rnn_parts(q, k, v, ll)
        if self._use_triton(q):
            from lion.kernels.chunk_triton import lion_chunk_triton_parts

            return lion_chunk_triton_parts(q, k, v, ll, self.chunk_size)
        return ops.chunk_parts(q, k, v, ll, self.chunk_size)

    def _use_triton(self, q: torch.Tensor) -> bool:
        if self.backend == "reference":
            return False
        if self.backend == "triton":
            return True
        from lion.kernels.chunk_triton import triton_supported

        return q.is_cuda and triton_supported(q, self.chunk_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        owner = type(self).__name__
        if x.dim() != 3 or x.shape[-1] != self.dim:
            shape = Described(f"a tensor of shape {tuple(x.shape)}")
            raise param_error("x", owner, f"a 3-D tensor (B, N, {self.dim})", shape)
        qkv = rearrange(self.qkv(x), "b n (s h d) -> s b h n d", s=3, h=self.num_heads)
        q, k, v = feature_map(qkv[0], self.decay), feature_map(qkv[1], self.decay), qkv[2]
        decays = self.log_decay(x)
        if self.order == "raster":
            parts = self._parts(q, k, v, decays[0])
        else:
            h, w, prefix = grid_for(x.shape[1], self.grid, owner)
            parts = 0
            for perm, ll in zip(snake_orders(h, w, prefix), decays, strict=True):
                perm = perm.to(x.device)
                permuted = [t[:, :, perm] for t in (q, k, v)]
                out = self._parts(*permuted, None if ll is None else ll[..., perm])
                parts = parts + out[:, :, perm.argsort()]
            parts = parts / 2
        y = ops.normalize(parts, self.eps)
        return self.proj(rearrange(y, "b h n d -> b n (h d)"))
