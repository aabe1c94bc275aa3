r"""The LION attention layer: one set of weights, the three forms as backends, three decays.

``x (B, N, D)`` :math:`\to` ``q = phi(x W_q)``, ``k = phi(x W_k)``, ``v = x W_v`` per head
(``D = H d``), then LION attention and the output projection. Feature maps and decays:

- ``"lit"``: :math:`\phi(x)=\mathrm{elu}(x)+1`, :math:`\lambda_i=1` (bidirectional Katharopoulos).
- ``"d"``: :math:`\phi(x)=\mathrm{silu}(x)+0.5`, L2-normalised over the head, and a learned
  :math:`\lambda=\sigma(a_h)`, :math:`a_h\sim\mathcal N(0,1)`, per head (bidirectional RetNet).
- ``"s"``: the same :math:`\phi` and a selective :math:`\lambda_i=1-\sigma(w_h^\top x_i+b_h)` per
  token, from a ``Linear(D, H)`` (like Mamba-2).
  :math:`\log\lambda_i=\log\sigma(-(w_h^\top x_i+b_h))` is computed directly, so it never
  underflows to :math:`-\infty`.

The backend is the form (:mod:`lion.ops`): ``"reference"`` the full masked attention,
``"chunk"`` the chunkwise form, ``"rnn"`` the recurrence, ``"triton"`` the fused chunkwise kernel,
``"auto"`` Triton where it runs, else chunk. :meth:`LionAttention.set_backend` switches it on the
same weights.

``order="snake"``: the mask is applied under the row-wise and the column-wise serpentine orders of
the patch grid, each with its own decay parameters, and the two masks are averaged (the other
backends sum the numerators and the denominators of the two orders, which is the same).
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from lion.kernels.chunk_triton import MAX_TRITON_HEAD_DIM, triton_fits
from lion.ops import BACKENDS, lion_parts, pick_backend, reference_bytes, work_dtype
from lion.orders import grid_for, snake_orders
from lion.reference import LOG_LAMBDA_MIN, full_parts, mask, normalize, powers
from paperkit import (
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = [
    "DECAYS",
    "ORDERS",
    "LionAttention",
    "feature_map",
    "layer_input",
    "module_input",
    "phi",
]

DECAYS = ("lit", "d", "s")
ORDERS = ("raster", "snake")
Backend = Literal["auto", "reference", "chunk", "rnn", "triton"]


def feature_map(x: torch.Tensor, decay: str) -> torch.Tensor:
    r"""LIT: :math:`\mathrm{elu}(x)+1`; D and S: :math:`\mathrm{silu}(x)+0.5`, L2-normalised over
    the last (head) dimension. Both are positive.

    Shapes: ``x (..., d) -> (..., d)``. NaN or inf in ``x`` is refused (``ValueError``).
    """
    check_tensor("x", "feature_map", x, ndim=range(1, 9))
    check_choice("decay", "feature_map", decay, DECAYS)
    return phi(x, decay)


def phi(x: torch.Tensor, decay: str) -> torch.Tensor:
    """:func:`feature_map` on a checked tensor."""
    if decay == "lit":
        return F.elu(x) + 1
    return F.normalize(F.silu(x) + 0.5, dim=-1)


def module_input(
    name: str, owner: str, x: torch.Tensor, weight: torch.Tensor, shape: tuple
) -> torch.Tensor:
    """``x`` of ``shape``, finite, of the module's dtype and device (those of ``weight``). Another
    floating dtype is refused, not cast: cast the module (``.double()``) or the input. Under
    ``torch.autocast`` on ``x``'s device, ``x`` may also have the autocast dtype (the output of
    an autocast linear layer)."""
    dtype = weight.dtype
    if isinstance(x, torch.Tensor) and x.is_floating_point() and _autocast_dtype(x) == x.dtype:
        dtype = x.dtype
    if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype != dtype:
        expected = (
            f"of the module's dtype {weight.dtype} (cast the module, e.g. .double(), or the "
            "input; there is no silent cast)"
        )
        raise param_error(name, owner, expected, describe(x), cls=TypeError)
    return check_tensor(name, owner, x, shape=shape, dtype=dtype, device=weight.device)


def _autocast_dtype(x: torch.Tensor) -> torch.dtype | None:
    """The autocast dtype on ``x``'s device, None when autocast is off there."""
    device = x.device.type
    try:
        if torch.is_autocast_enabled(device):
            return torch.get_autocast_dtype(device)
    except (RuntimeError, TypeError):  # a device type autocast does not know
        return None
    return None


def layer_input(owner: str, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """``x (B, N, D)`` for a layer whose first weight is ``weight (*, D)``: see
    :func:`module_input`."""
    return module_input("x", owner, x, weight, ("B", "N", weight.shape[-1]))


class LionAttention(nn.Module):
    r"""LION bidirectional linear attention.

    Shapes:
        x: ``(B, N, D)`` with ``D = dim``, of the layer's dtype and device.
        returns: ``(B, N, D)``.

    Args:
        dim: model width :math:`D`; ``num_heads`` must divide it.
        decay: ``"lit"`` (no decay), ``"d"`` (fixed learned per-head decay) or ``"s"`` (selective).
        backend: the form, ``"reference"`` (full masked attention, :math:`O(N^2)`), ``"chunk"``,
            ``"rnn"`` (:math:`O(d^2)` state), ``"triton"`` or ``"auto"``; switch with
            :meth:`set_backend`, the weights are shared.
        chunk_size: :math:`C` of ``"chunk"`` and ``"triton"`` (>= 1).
        eps: added to the denominator :math:`A\mathbf 1` (>= 0).
        order: ``"raster"`` or ``"snake"`` (two serpentine orders of the ``grid`` of patches).
        grid: ``(h, w)`` of the patch grid for ``order="snake"``; ``N`` may be ``h * w`` or
            ``h * w + 1`` (a leading class token keeps its place). None: square.

    NaN or inf in ``x`` is refused (``ValueError``) on every backend, as is an ``x`` of another
    dtype or device than the layer's.

    >>> import torch
    >>> layer = LionAttention(32, 4, decay="s")
    >>> x = torch.randn(2, 10, 32)
    >>> y = layer(x)
    >>> torch.allclose(layer.set_backend("rnn")(x), y, atol=1e-5)
    True
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        decay: Literal["lit", "d", "s"] = "s",
        backend: Backend = "reference",
        chunk_size: int = 64,
        qkv_bias: bool = True,
        eps: float = 1e-6,
        order: Literal["raster", "snake"] = "raster",
        grid: tuple[int, int] | None = None,
    ) -> None:
        super().__init__()
        owner = type(self).__name__
        dim = check_int("dim", owner, dim, low=1)
        num_heads = check_int("num_heads", owner, num_heads, low=1)
        if dim % num_heads:
            raise param_error("dim", owner, f"divisible by num_heads = {num_heads}", dim)
        self.decay = check_choice("decay", owner, decay, DECAYS)
        self.order = check_choice("order", owner, order, ORDERS)
        self.chunk_size = check_int("chunk_size", owner, chunk_size, low=1)
        self.eps = check_real("eps", owner, eps, low=0)
        check_bool("qkv_bias", owner, qkv_bias)
        if grid is not None:
            if not isinstance(grid, (tuple, list)) or len(grid) != 2:
                raise param_error("grid", owner, "None or a pair (h, w)", grid)
            grid = tuple(check_int("grid", owner, g, low=1) for g in grid)
        self.dim, self.num_heads, self.head_dim = dim, num_heads, dim // num_heads
        self.grid = grid
        self.set_backend(backend)
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)
        n_orders = 2 if order == "snake" else 1
        if decay == "d":
            self.decay_logit = nn.Parameter(torch.randn(n_orders, num_heads))
        elif decay == "s":
            self.decay_proj = nn.ModuleList(nn.Linear(dim, num_heads) for _ in range(n_orders))

    def set_backend(self, backend: Backend) -> LionAttention:
        """Switch between the equivalent forms on the same weights; returns ``self``. Whether the
        backend can run on the input's device is checked at the call."""
        owner = type(self).__name__
        check_choice("backend", owner, backend, ("auto", *BACKENDS))
        if backend == "triton" and not triton_fits(self.head_dim, self.chunk_size):
            expected = (
                "a backend that fits the layer ('triton' needs a head size dim / num_heads that "
                f"is a power of two in [16, {MAX_TRITON_HEAD_DIM}] and a chunk_size that is a "
                f"power of two >= 16; here {self.head_dim} and {self.chunk_size})"
            )
            raise param_error("backend", owner, expected, backend)
        self.backend = backend
        return self

    def extra_repr(self) -> str:
        return (
            f"dim={self.dim}, num_heads={self.num_heads}, decay={self.decay!r}, "
            f"backend={self.backend!r}, order={self.order!r}, chunk_size={self.chunk_size}"
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

    def _parts(self, q, k, v, ll, backend: str) -> torch.Tensor:
        """``[num, den]`` in :func:`lion.ops.work_dtype` (float32 for float16/bfloat16)."""
        work = work_dtype(q.dtype)
        if ll is not None:
            ll = ll.to(work).clamp(min=LOG_LAMBDA_MIN)
        if backend != "reference":
            return lion_parts(q, k, v, ll, backend, self.chunk_size)
        with torch.autocast(q.device.type, enabled=False):
            q, k, v = (x.to(work) for x in (q, k, v))
            if ll is None:
                return full_parts(q, k, v, None)
            if self.decay == "d":  # lambda^|i-j| as integer powers, as in RetNet
                return full_parts(q, k, v, powers(ll[..., 0], q.shape[2]))
            return full_parts(q, k, v, mask(ll))

    def _backend(self, owner: str, x: torch.Tensor) -> str:
        backend = pick_backend(owner, self.backend, self.head_dim, x.device, self.chunk_size)
        if backend == "reference":
            B, N, _ = x.shape
            nbytes = reference_bytes(B, self.num_heads, N, x.element_size())
            check_memory("x", owner, x, nbytes * (2 if self.order == "snake" else 1))
        return backend

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        owner = type(self).__name__
        layer_input(owner, x, self.qkv.weight)
        if self.order == "snake":
            h, w, prefix = grid_for("x", owner, x.shape[1], self.grid)
        backend = self._backend(owner, x)
        qkv = rearrange(self.qkv(x), "b n (s h d) -> s b h n d", s=3, h=self.num_heads)
        q, k, v = phi(qkv[0], self.decay), phi(qkv[1], self.decay), qkv[2]
        decays = self.log_decay(x)
        if self.order == "raster":
            parts = self._parts(q, k, v, decays[0], backend)
        else:
            parts = 0
            for perm, ll in zip(snake_orders(h, w, prefix), decays, strict=True):
                perm = perm.to(x.device)
                permuted = [t[:, :, perm] for t in (q, k, v)]
                out = self._parts(*permuted, None if ll is None else ll[..., perm], backend)
                parts = parts + out[:, :, perm.argsort()]
            parts = parts / 2
        y = normalize(parts, self.eps).to(q.dtype)
        return self.proj(rearrange(y, "b h n d -> b n (h d)"))
