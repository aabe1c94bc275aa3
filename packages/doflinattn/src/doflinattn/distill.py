r"""Layerwise distillation of softmax attention into linear attention (the paper's Sec. 4).

For each layer :math:`l` independently, the teacher's per-head :math:`q, k, v` and softmax
output :math:`o` are cached, and the layer's feature maps :math:`\phi_l` (one per head) are
trained to minimise the relative output error

.. math::
    \mathcal L_{\mathrm{mse}} = \frac{\|\hat o - o\|^2}{\|o\|^2},
    \qquad \hat o = \mathrm{LinAttn}_{\phi_l}(q, k, v),

over the real (non-padded) tokens; ``loss="mse+ce"`` adds the Hedgehog cross-entropy
:math:`-\sum_{ij} P_{ij} \log \hat A_{ij}` between the teacher's softmax weights :math:`P` and
the normalised linear weights :math:`\hat A_{ij} = \phi(q_i)\cdot\phi(k_j) / \sum_{j'}
\phi(q_i)\cdot\phi(k_{j'})`. The layers never backpropagate through each other: L small
problems instead of one large one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from doflinattn.attention import LinearAttention
from doflinattn.features import MAX_DIM, make_feature_map
from paperkit import (
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_tensor,
    param_error,
    progress,
)

__all__ = ["LayerCache", "layerwise_distill", "relative_output_error"]


@dataclass
class LayerCache:
    """A teacher layer's per-head inputs and output on S sequences.

    Attributes:
        q, k, v: (S, H, N, d) queries, keys and values as the layer computes them (unscaled).
        o: (S, H, N, d) the softmax output :math:`\\operatorname{softmax}(qk^\\top/\\sqrt d
            + \\text{mask})\\, v` per head.
        mask: (S, N) bool, True marking padding (or None: no padding).
        causal: whether the teacher's attention is causal.
    """

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor
    o: torch.Tensor
    mask: torch.Tensor | None = None
    causal: bool = False

    def __post_init__(self) -> None:
        dims: dict = {}
        for name in ("q", "k", "v", "o"):
            check_tensor(
                name, "LayerCache", getattr(self, name), shape=("S", "H", "N", "d"), dims=dims
            )
        if self.mask is not None:
            check_tensor("mask", "LayerCache", self.mask, shape=("S", "N"), dims=dims, dtype="bool")
        self.causal = check_bool("causal", "LayerCache", self.causal)

    @property
    def num_heads(self) -> int:
        return self.q.shape[1]

    @property
    def head_dim(self) -> int:
        return self.q.shape[-1]

    def batch(self, idx: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """The sequences ``idx``, trimmed to their longest real length."""
        mask = self.mask[idx] if self.mask is not None else None
        n = self.q.shape[2] if mask is None else int((~mask).sum(1).max())
        n = max(n, 1)
        out = [t[idx][:, :, :n] for t in (self.q, self.k, self.v, self.o)]
        return (*out, None if mask is None else mask[:, :n])


def _softmax_weights(q, k, mask, causal):  # noqa: ANN001, ANN202
    s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    n = s.shape[-1]
    if mask is not None:
        s = s.masked_fill(mask[:, None, None, :], float("-inf"))
    if causal:
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1)


def _loss(attn: LinearAttention, q, k, v, o, mask, kind: str) -> torch.Tensor:  # noqa: ANN001
    out = attn(q, k, v, key_padding_mask=mask)
    w = 1.0 if mask is None else (~mask)[:, None, :, None].to(o.dtype)
    loss = (((out - o) * w) ** 2).sum() / ((o * w) ** 2).sum().clamp_min(1e-12)
    if kind == "mse+ce":
        p = _softmax_weights(q, k, mask, attn.causal)
        fq, fk = attn.features(q, k)
        a = fq @ fk.transpose(-1, -2)
        keep = p > 0
        a = torch.where(keep, a, torch.zeros_like(a))
        a_hat = a / (a.sum(-1, keepdim=True) + attn.eps)
        ce = -(p * torch.where(keep, a_hat, torch.ones_like(a_hat)).clamp_min(1e-12).log())
        rows = 1.0 if mask is None else (~mask)[:, None, :, None].to(o.dtype)
        loss = loss + (ce * rows).sum() / (torch.ones_like(p[..., :1]) * rows).sum()
    return loss


def _check_caches(caches: Sequence[LayerCache], owner: str) -> None:
    if not isinstance(caches, (list, tuple)) or not caches:
        raise param_error(
            "caches", owner, "a non-empty list of LayerCache", type(caches).__name__, cls=TypeError
        )
    for i, c in enumerate(caches):
        if not isinstance(c, LayerCache):
            raise param_error(
                "caches", owner, f"a list of LayerCache (item {i})", type(c).__name__, cls=TypeError
            )


def layerwise_distill(
    caches: list[LayerCache],
    dims: list[int],
    *,
    steps: int = 300,
    lr: float = 1e-2,
    loss: str = "mse",
    seed: int = 0,
    feature_map: str = "hedgehog",
    batch_size: int = 16,
    show_progress: bool = False,
) -> list[nn.ModuleList]:
    r"""Train one feature map per head for every layer, each layer on its own cache.

    Adam (``lr``) for ``steps`` steps per layer on random batches of ``batch_size`` sequences,
    minimising the relative MSE (``loss="mse"``) or MSE plus the attention-weight
    cross-entropy (``"mse+ce"``). ``dims[l]`` is layer l's feature dimension (even for
    ``feature_map="hedgehog"``). Seeded: the same ``seed`` gives the same maps. Returns, per
    layer, an ``nn.ModuleList`` of H maps (use with :class:`LinearAttention`).

    >>> g = torch.Generator().manual_seed(0)
    >>> q, k, v = (torch.randn(4, 2, 6, 8, generator=g) for _ in range(3))
    >>> o = torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, -1) @ v
    >>> maps = layerwise_distill([LayerCache(q, k, v, o)], [4], steps=2)
    >>> len(maps), len(maps[0]), maps[0][0].feature_dim
    (1, 2, 4)
    """
    owner = "layerwise_distill"
    _check_caches(caches, owner)
    if not isinstance(dims, (list, tuple)) or len(dims) != len(caches):
        raise param_error("dims", owner, f"a list of {len(caches)} feature dimensions", dims)
    dims = [check_int("dims", owner, m, low=1, high=MAX_DIM) for m in dims]
    steps = check_int("steps", owner, steps, low=0, high=10**7)
    lr = check_real("lr", owner, lr, low=0.0, low_open=True, high=10.0)
    loss = check_choice("loss", owner, loss, ("mse", "mse+ce"))
    seed = check_int("seed", owner, seed, low=0)
    feature_map = check_choice("feature_map", owner, feature_map, ("hedgehog", "mlp"))
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
    if feature_map == "hedgehog":
        for i, m in enumerate(dims):
            if m % 2:
                raise param_error("dims", owner, f"even for the hedgehog map (layer {i})", m)
    out = []
    layers = progress(range(len(caches)), "distilling layers", disable=not show_progress)
    for l in layers:
        cache = caches[l]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed * 1009 + l)
            maps = nn.ModuleList(
                make_feature_map(feature_map, cache.head_dim, dims[l])
                for _ in range(cache.num_heads)
            ).to(device=cache.q.device, dtype=cache.q.dtype)
        attn = LinearAttention(maps, causal=cache.causal, backend="reference")
        opt = torch.optim.Adam(maps.parameters(), lr=lr)
        g = torch.Generator().manual_seed(seed * 1009 + l)
        S = cache.q.shape[0]
        for _ in range(steps):
            idx = torch.randperm(S, generator=g)[: min(batch_size, S)]
            value = _loss(attn, *cache.batch(idx), loss)
            opt.zero_grad(set_to_none=True)
            value.backward()
            opt.step()
        out.append(maps)
    return out


@torch.no_grad()
def relative_output_error(
    feature_maps: nn.Module, cache: LayerCache, *, batch_size: int = 64
) -> torch.Tensor:
    r"""Per-sequence relative output error :math:`\|\hat o - o\|^2 / \|o\|^2` (real tokens
    only) of a layer's linear attention with ``feature_maps`` (a module or per-head
    ``nn.ModuleList``) on ``cache``; a (S,) tensor.

    >>> from doflinattn.features import HedgehogFeatureMap
    >>> q = k = v = torch.randn(3, 2, 5, 4)
    >>> o = torch.softmax(q @ k.transpose(-1, -2) / 2, -1) @ v
    >>> relative_output_error(HedgehogFeatureMap(4, 8), LayerCache(q, k, v, o)).shape
    torch.Size([3])
    """
    owner = "relative_output_error"
    if not isinstance(feature_maps, nn.Module):
        raise param_error(
            "feature_maps", owner, "an nn.Module", type(feature_maps).__name__, cls=TypeError
        )
    if not isinstance(cache, LayerCache):
        raise param_error("cache", owner, "a LayerCache", type(cache).__name__, cls=TypeError)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
    attn = LinearAttention(feature_maps, causal=cache.causal, backend="reference")
    errs = []
    for start in range(0, cache.q.shape[0], batch_size):
        idx = torch.arange(start, min(start + batch_size, cache.q.shape[0]))
        q, k, v, o, mask = cache.batch(idx)
        out = attn(q, k, v, key_padding_mask=mask)
        w = 1.0 if mask is None else (~mask)[:, None, :, None].to(o.dtype)
        num = (((out - o) * w) ** 2).sum((1, 2, 3))
        errs.append(num / ((o * w) ** 2).sum((1, 2, 3)).clamp_min(1e-12))
    return torch.cat(errs)
