r"""The CBSA layer (paper, Sec. 3): one shared projection, representatives, contract, broadcast.

Per head :math:`k`, with :math:`W_k = Z U_k` from one shared projection
``proj = Linear(D, K p, bias=False)`` (no separate query, key and value):

* initial representatives :math:`Q^0_k` (m x p): average pooling of the patch-token grid to
  :math:`\sqrt m \times \sqrt m` (``"pool2d"``, the cls token excluded), average pooling over the
  sequence (``"pool1d"``), or m learned queries (``"learned"``, which makes the layer
  permutation-equivariant);
* :func:`cbsa.functional.contract_broadcast` with learned per-head steps
  :math:`s^{\text{rep}}_k, s^x_k \sim \mathcal N(0, 1)`;
* :math:`\mathrm{concat}_k Y_k` through ``Linear(K p, D)``: the layer returns this update.

The token-to-token attention one head implies is :math:`A_k^\top A_k` (N x N).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from cbsa.functional import contract_broadcast_unchecked
from paperkit import check_bool, check_choice, check_int, check_memory, check_tensor, param_error

__all__ = ["CBSA", "check_tokens"]

REP_INITS = ("pool2d", "pool1d", "learned")


def check_tokens(x: torch.Tensor, owner: str, dim: int, weight: torch.Tensor) -> torch.Tensor:
    """``x`` must be a finite (B, N, dim) tensor on the layer's device, of its dtype (any
    floating dtype under ``torch.autocast``)."""
    autocast = torch.is_autocast_enabled(weight.device.type)
    return check_tensor(
        "x",
        owner,
        x,
        shape=("B", "N", dim),
        dtype="float" if autocast else (weight.dtype,),
        device=weight.device,
    )


def check_heads(owner: str, dim: int, heads: int, dim_head: int | None) -> tuple[int, int, int]:
    """``dim``, ``heads`` >= 1 and ``dim_head`` (default ``dim // heads``, which must then be
    exact) >= 1."""
    dim = check_int("dim", owner, dim, low=1, high=2**16)
    heads = check_int("heads", owner, heads, low=1, high=dim)
    if dim_head is None:
        if dim % heads:
            raise param_error(
                "heads", owner, f"a divisor of dim={dim} when dim_head is None", heads
            )
        dim_head = dim // heads
    dim_head = check_int("dim_head", owner, dim_head, low=1, high=2**16)
    return dim, heads, dim_head


class CBSA(nn.Module):
    r"""Contract-and-broadcast self-attention, linear in the number of tokens N.

    Args:
        dim: token width D.
        heads: number of heads (subspaces) K.
        dim_head: subspace dimension p; ``heads * dim_head`` is the inner width (default
            ``dim // heads``, then ``dim`` must be a multiple of ``heads``).
        num_reps: number of representatives m (a perfect square for ``"pool2d"``).
        rep_init: ``"pool2d"`` (default, for images), ``"pool1d"`` or ``"learned"``.
        grid: (h, w) of the patch tokens for ``"pool2d"``; None: a square grid inferred from N.
        has_cls: the first token is a cls token, left out of the pooled representatives.

    ``forward(x, return_attn=False)``: x (B, N, D) -> the update (B, N, D); with ``return_attn``
    the implied attention :math:`A_k^\top A_k`, (B, H, N, N).

    NaN policy: NaN or inf in ``x`` is refused with a ValueError; so are a wrong shape, dtype or
    device. A ``"pool2d"`` layer refuses an N whose patch tokens do not form its grid.

    >>> layer = CBSA(32, heads=4, dim_head=8, num_reps=4)
    >>> x = torch.randn(2, 1 + 16, 32)   # cls + a 4 x 4 grid of patches
    >>> layer(x).shape, layer(x, return_attn=True).shape
    (torch.Size([2, 17, 32]), torch.Size([2, 4, 17, 17]))
    """

    def __init__(
        self,
        dim: int,
        heads: int,
        dim_head: int | None = None,
        *,
        num_reps: int = 64,
        rep_init: str = "pool2d",
        grid: tuple[int, int] | None = None,
        has_cls: bool = True,
    ) -> None:
        super().__init__()
        owner = "CBSA"
        dim, heads, dim_head = check_heads(owner, dim, heads, dim_head)
        num_reps = check_int("num_reps", owner, num_reps, low=1, high=2**16)
        check_choice("rep_init", owner, rep_init, REP_INITS)
        if rep_init == "pool2d" and math.isqrt(num_reps) ** 2 != num_reps:
            raise param_error(
                "num_reps", owner, 'a perfect square with rep_init="pool2d"', num_reps
            )
        if grid is not None:
            if not isinstance(grid, (tuple, list)) or len(grid) != 2:
                raise param_error("grid", owner, "a pair (h, w) or None", grid, cls=TypeError)
            grid = tuple(check_int("grid", owner, g, low=1, high=2**16) for g in grid)
        if not isinstance(has_cls, bool):
            raise param_error("has_cls", owner, "True or False", has_cls, cls=TypeError)
        self.dim, self.heads, self.dim_head, self.num_reps = dim, heads, dim_head, num_reps
        self.rep_init, self.grid, self.has_cls = rep_init, grid, has_cls
        self.scale = dim_head**-0.5
        self.proj = nn.Linear(dim, heads * dim_head, bias=False)
        self.step_rep = nn.Parameter(torch.randn(heads))
        self.step_x = nn.Parameter(torch.randn(heads))
        self.to_out = nn.Linear(heads * dim_head, dim)
        if rep_init == "learned":
            self.reps = nn.Parameter(torch.randn(heads, num_reps, dim_head))

    def representatives(self, w: torch.Tensor) -> torch.Tensor:
        """Initial representatives (B, H, m, p) from the projected tokens w (B, H, N, p)."""
        B, H, N, p = w.shape
        if self.rep_init == "learned":
            return self.reps.to(w.dtype).expand(B, H, self.num_reps, p)
        patches = w[:, :, 1:] if self.has_cls else w
        if self.rep_init == "pool1d":
            return (
                F.adaptive_avg_pool1d(rearrange(patches, "b h n p -> (b h) p n"), self.num_reps)
                .view(B, H, p, self.num_reps)
                .transpose(-1, -2)
            )
        gh, gw = self._grid(patches.shape[2])
        side = math.isqrt(self.num_reps)
        img = rearrange(patches, "b h (gh gw) p -> (b h) p gh gw", gh=gh, gw=gw)
        pooled = F.adaptive_avg_pool2d(img, side)
        return rearrange(pooled, "(b h) p sh sw -> b h (sh sw) p", b=B)

    def _grid(self, n_patches: int) -> tuple[int, int]:
        if self.grid is not None:
            if self.grid[0] * self.grid[1] != n_patches:
                raise param_error(
                    "x",
                    "CBSA",
                    f"{self.grid[0] * self.grid[1] + self.has_cls} tokens "
                    f"(grid={self.grid}{' + cls' if self.has_cls else ''})",
                    n_patches + self.has_cls,
                )
            return self.grid
        side = math.isqrt(n_patches)
        if side * side != n_patches:
            cls = " - 1 (the cls token)" if self.has_cls else ""
            raise param_error(
                "x",
                "CBSA",
                f"a token count N with N{cls} a perfect square when grid=None",
                n_patches + self.has_cls,
            )
        return side, side

    def forward(self, x: torch.Tensor, return_attn: bool = False) -> torch.Tensor:
        check_tokens(x, "CBSA", self.dim, self.proj.weight)
        check_bool("return_attn", "CBSA", return_attn)
        B, N, _ = x.shape
        needs = self.num_reps if not return_attn else N
        check_memory(
            "x", "CBSA", tuple(x.shape), 4.0 * x.element_size() * B * self.heads * N * needs
        )
        if self.has_cls and self.rep_init != "learned" and N < 2:
            raise param_error("x", "CBSA", "at least 2 tokens (a cls token and a patch)", N)
        if self.rep_init == "pool2d":
            self._grid(N - self.has_cls)
        return self.update(x, return_attn=return_attn)

    def update(self, x: torch.Tensor, return_attn: bool = False) -> torch.Tensor:
        """:meth:`forward` without the input checks (for a model that checked its input)."""
        w = rearrange(self.proj(x), "b n (h p) -> b h n p", h=self.heads)
        reps0 = self.representatives(w)
        out, A = contract_broadcast_unchecked(w, reps0, self.step_rep, self.step_x, self.scale)
        if return_attn:
            return A.transpose(-1, -2) @ A
        return self.to_out(rearrange(out, "b h n p -> b n (h p)"))
