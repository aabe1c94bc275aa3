r"""The two-path Mamba blocks: Vim's bidirectional block and AMVim's asymmetric block.

Both blocks compute, for tokens x (B, L, D) at grid coordinates ``coords`` (AMVim abstract,
following Vim's bidirectional block),

.. math::
    (x_{in}, z) = W_{in}\,\mathrm{LN}(x), \qquad
    y = \big(\mathrm{P}_1^{-1}\,\mathrm{SSM}_1(\mathrm{P}_1 x_{in})
        + \mathrm{P}_2^{-1}\,\mathrm{SSM}_2(\mathrm{P}_2 x_{in})\big)\odot\mathrm{SiLU}(z), \qquad
    x \leftarrow x + W_{out}\,y,

where each path o has its own causal depthwise conv1d (kernel 4) + SiLU and its own selective
SSM (:func:`amvim.ops.selective_scan`, with :math:`B_t, C_t, \Delta_t` projected from the
path's input, :math:`\Delta = \mathrm{softplus}(W_\Delta W_{dt} u + b_\Delta)`), and
:math:`\mathrm{P}_o` is the path's scan order (a permutation; :math:`\mathrm{P}^{-1}` scatters the
outputs back to the tokens' places).

* :class:`VimBlock`: P_1 = raster order, P_2 = reversed raster order.
* :class:`AMVimBlock`: P_1 = raster order (sequential path S, global row-scale context),
  P_2 = the window-major order with s × s windows, reversed (window-aware path W, local 2-D
  context). Same parameters and FLOPs as Vim; only P_2 differs.

Orders are rebuilt from ``coords`` at every call, so pruned sequences (survivors with their
original coordinates) get the orders of :func:`amvim.orders.order_from_coords`. With
``middle_cls=True`` the last token of x is a class token that each path visits at the middle of
its order (Vim's middle cls token).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from amvim.ops import BACKENDS, resolve, scan
from amvim.orders import MAX_SIDE, sort_keys
from paperkit import check_bool, check_choice, check_int, check_tensor, param_error

__all__ = ["AMVimBlock", "SSMPath", "VimBlock"]


class SSMPath(nn.Module):
    r"""One scan path: causal depthwise conv1d + SiLU, then the selective SSM.

    :math:`u = \mathrm{SiLU}(\mathrm{conv}(x))`, :math:`(\delta, B, C) = W_x u`,
    :math:`\Delta^{in} = W_\Delta \delta`, out = selective_scan(u, Δ^in, A, B, C, D,
    delta_bias=b_Δ, softplus). Mamba's initialisation: :math:`A_{en} = -(n+1)`, D = 1,
    :math:`b_\Delta = \mathrm{softplus}^{-1}(\Delta_0)` with :math:`\Delta_0` log-uniform in
    [1e-3, 1e-1]. Input and output (B, E, L) in the path's scan order.
    """

    def __init__(self, d_inner: int, d_state: int, dt_rank: int, d_conv: int) -> None:
        super().__init__()
        self.d_state, self.dt_rank = d_state, dt_rank
        self.conv1d = nn.Conv1d(d_inner, d_inner, d_conv, groups=d_inner, padding=d_conv - 1)
        self.x_proj = nn.Linear(d_inner, dt_rank + 2 * d_state, bias=False)
        self.dt_proj = nn.Linear(dt_rank, d_inner, bias=True)
        nn.init.uniform_(self.dt_proj.weight, -(dt_rank**-0.5), dt_rank**-0.5)
        dt = torch.exp(torch.rand(d_inner) * (math.log(0.1) - math.log(1e-3)) + math.log(1e-3))
        with torch.no_grad():
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # softplus^-1(dt)
        A = torch.arange(1, d_state + 1, dtype=torch.float32).repeat(d_inner, 1)
        self.A_log = nn.Parameter(torch.log(A))
        self.D = nn.Parameter(torch.ones(d_inner))

    def forward(self, x: torch.Tensor, backend: str) -> torch.Tensor:
        L = x.shape[-1]
        u = F.silu(self.conv1d(x)[..., :L])
        proj = self.x_proj(u.transpose(1, 2))  # (B, L, R + 2N)
        dt, Bm, Cm = proj.split([self.dt_rank, self.d_state, self.d_state], dim=-1)
        delta = (dt @ self.dt_proj.weight.t()).transpose(1, 2)
        A = -torch.exp(self.A_log.float())
        u32 = u.float()
        out, _ = scan(
            u32,
            delta.float(),
            A,
            Bm.transpose(1, 2).float().contiguous(),
            Cm.transpose(1, 2).float().contiguous(),
            self.D.float(),
            None,
            self.dt_proj.bias.float(),
            True,
            backend,
        )
        return out.to(x.dtype)


def _permute(x: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """x (B, L, E) re-ordered along L by perm (L,) or (B, L)."""
    if perm.ndim == 1:
        return x.index_select(1, perm)
    return x.gather(1, perm[..., None].expand(-1, -1, x.shape[-1]))


def _inverse(perm: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(perm)
    out.scatter_(-1, perm, torch.arange(perm.shape[-1], device=perm.device).expand_as(perm))
    return out


class _TwoPathBlock(nn.Module):
    """The shared body of :class:`VimBlock` and :class:`AMVimBlock`; subclasses give the second
    path's sort keys."""

    owner = "block"

    def __init__(self, dim: int, d_state: int, expand: int, d_conv: int, backend: str) -> None:
        super().__init__()
        owner = self.owner
        self.dim = check_int("dim", owner, dim, low=1, high=2**16)
        d_state = check_int("d_state", owner, d_state, low=1, high=1024)
        expand = check_int("expand", owner, expand, low=1, high=64)
        d_conv = check_int("d_conv", owner, d_conv, low=1, high=64)
        self.backend = check_choice("backend", owner, backend, BACKENDS)
        self.d_inner = expand * dim
        self.d_state, self.d_conv = d_state, d_conv
        self.dt_rank = math.ceil(dim / 16)
        self.norm = nn.LayerNorm(dim)
        self.in_proj = nn.Linear(dim, 2 * self.d_inner)
        self.path_1 = SSMPath(self.d_inner, d_state, self.dt_rank, d_conv)
        self.path_2 = SSMPath(self.d_inner, d_state, self.dt_rank, d_conv)
        self.out_proj = nn.Linear(self.d_inner, dim)

    def _second_keys(self, coords: torch.Tensor) -> tuple[torch.Tensor, bool]:
        """Sort keys of the second path and whether the path reads them backwards."""
        raise NotImplementedError

    def _check(self, x: torch.Tensor, coords: torch.Tensor, middle_cls: bool) -> None:
        owner = self.owner
        dims: dict = {}
        check_tensor(
            "x", owner, x, shape=("B", "L", self.dim), dims=dims, dtype=self.norm.weight.dtype
        )
        check_bool("middle_cls", owner, middle_cls)
        check_tensor("coords", owner, coords, ndim=(2, 3), dtype="int", device=x.device)
        L = x.shape[1] - int(middle_cls)
        want = "(L, 2) or (B, L, 2) with " + (
            "L = x.shape[1] - 1" if middle_cls else "L = x.shape[1]"
        )
        if coords.shape[-1] != 2 or coords.shape[-2] != L:
            raise param_error("coords", owner, f"of shape {want}", tuple(coords.shape))
        if coords.ndim == 3 and coords.shape[0] != x.shape[0]:
            raise param_error("coords", owner, f"of batch size {x.shape[0]}", coords.shape[0])
        if L < 1 or int(coords.min()) < 0 or int(coords.max()) >= MAX_SIDE:
            raise param_error(
                "coords", owner, f"integers in [0, {MAX_SIDE})", "out-of-range entries"
            )

    def _order(self, keys: torch.Tensor, reverse: bool, middle_cls: bool) -> torch.Tensor | None:
        """The permutation sorting ``keys`` (backwards when ``reverse``), the class token (index
        L) inserted at the middle; None for the identity."""
        perm = torch.argsort(keys, dim=-1)
        if reverse:
            perm = perm.flip(-1)
        if middle_cls:
            L = perm.shape[-1]
            cls = torch.full_like(perm[..., :1], L)
            perm = torch.cat([perm[..., : L // 2], cls, perm[..., L // 2 :]], dim=-1)
        identity = torch.arange(perm.shape[-1], device=perm.device)
        return None if torch.equal(perm, identity.expand_as(perm)) else perm

    def _path(self, path: SSMPath, x: torch.Tensor, perm: torch.Tensor | None, backend: str):
        if perm is None:
            return path(x.transpose(1, 2), backend).transpose(1, 2)
        y = path(_permute(x, perm).transpose(1, 2), backend).transpose(1, 2)
        return _permute(y, _inverse(perm))

    def forward(
        self, x: torch.Tensor, coords: torch.Tensor, middle_cls: bool = False
    ) -> torch.Tensor:
        """x (B, L, D) (B, L+1, D with ``middle_cls``: the class token last), coords (L, 2) or
        (B, L, 2): the (row, column) of each patch token. Returns (B, L, D) (or L+1).

        NaN policy: NaN or inf in x is refused (ValueError)."""
        self._check(x, coords, middle_cls)
        return self._forward(x, coords.long(), middle_cls)

    def _forward(self, x: torch.Tensor, coords: torch.Tensor, middle_cls: bool) -> torch.Tensor:
        backend = resolve(self.backend, x, self.d_state)
        xi, z = self.in_proj(self.norm(x)).chunk(2, dim=-1)
        perm_1 = self._order(sort_keys(coords, "raster", 1), False, middle_cls)
        keys_2, reverse_2 = self._second_keys(coords)
        perm_2 = self._order(keys_2, reverse_2, middle_cls)
        y = self._path(self.path_1, xi, perm_1, backend) + self._path(
            self.path_2, xi, perm_2, backend
        )
        return x + self.out_proj(y * F.silu(z))


class VimBlock(_TwoPathBlock):
    r"""Vim's bidirectional Mamba block (Zhu et al. 2024, the baseline in the AMVim abstract).

    Path 1 scans the tokens in raster order, path 2 in reversed raster order, each with its own
    conv and SSM parameters; :math:`y = (y_{fwd} + y_{bwd})\odot\mathrm{SiLU}(z)`, then the
    output projection and the residual.

    Args:
        dim: token width D. d_state: SSM state size N. expand: E = expand·D. d_conv: conv
            kernel. backend: the scan backend (:func:`amvim.ops.selective_scan`).

    Shapes: forward(x (B, L, D), coords (L, 2) or (B, L, 2)) -> (B, L, D).
    NaN policy: NaN or inf in x is refused.

    >>> import torch
    >>> from amvim.orders import grid_coords
    >>> block = VimBlock(16, d_state=4)
    >>> block(torch.randn(2, 9, 16), grid_coords(3, 3)).shape
    torch.Size([2, 9, 16])
    """

    owner = "VimBlock"

    def __init__(
        self, dim: int, d_state: int = 16, expand: int = 2, d_conv: int = 4, backend: str = "auto"
    ) -> None:
        super().__init__(dim, d_state, expand, d_conv, backend)

    def _second_keys(self, coords: torch.Tensor) -> tuple[torch.Tensor, bool]:
        return sort_keys(coords, "raster", 1), True


class AMVimBlock(_TwoPathBlock):
    r"""AMVim's asymmetric two-path block (AMVim abstract): a sequential path and a window-aware
    path.

    Path S scans the tokens in raster order; path W scans them window-major with s × s windows
    (windows in raster order, raster inside each window), reversed when ``window_reverse``, and
    its outputs are scattered back to the tokens' places. :math:`y = (y_S + y_W)\odot
    \mathrm{SiLU}(z)`. With s covering the whole grid path W is Vim's backward path, so the
    block equals :class:`VimBlock` with the same weights.

    Args:
        dim: token width D. window_size: s >= 1. window_reverse: read path W backwards.
        d_state, expand, d_conv, backend: as in :class:`VimBlock`.

    Shapes: forward(x (B, L, D), coords (L, 2) or (B, L, 2)) -> (B, L, D).
    NaN policy: NaN or inf in x is refused.

    >>> import torch
    >>> from amvim.orders import grid_coords
    >>> block = AMVimBlock(16, window_size=2, d_state=4)
    >>> block(torch.randn(2, 16, 16), grid_coords(4, 4)).shape
    torch.Size([2, 16, 16])
    """

    owner = "AMVimBlock"

    def __init__(
        self,
        dim: int,
        window_size: int,
        window_reverse: bool = True,
        d_state: int = 16,
        expand: int = 2,
        d_conv: int = 4,
        backend: str = "auto",
    ) -> None:
        super().__init__(dim, d_state, expand, d_conv, backend)
        self.window_size = check_int("window_size", self.owner, window_size, low=1, high=MAX_SIDE)
        self.window_reverse = check_bool("window_reverse", self.owner, window_reverse)

    def _second_keys(self, coords: torch.Tensor) -> tuple[torch.Tensor, bool]:
        return sort_keys(coords, "window", self.window_size), self.window_reverse
