"""The layers of a TS-GNN (paper Sec. 4, "Triple-symmetric layers").

A core GNN acts on the channel axis only and is shared over the feature (or class) axis: for
:math:`Z \\in \\mathbb{R}^{N \\times A \\times k}`,

* mean core ("TS-Mean"): :math:`\\Phi(Z)_i = Z_i W_{self} + \\big(\\tfrac{1}{|N(i)|}
  \\sum_{j \\in N(i)} Z_j\\big) W_{aggr}` (no bias), the same :math:`W` for every slice :math:`a`;
* GAT core ("TS-GAT"): :math:`\\Phi(Z)_{i,a} = \\sum_{j \\in N(i) \\cup \\{i\\}} \\alpha_{ij,a}
  Z_{j,a} W`, :math:`\\alpha_{ij,a} = \\mathrm{softmax}_j\\,\\mathrm{LeakyReLU}_{0.2}(
  u^\\top W^\\top Z_{i,a} + v^\\top W^\\top Z_{j,a})`, attention per slice.

A triple-symmetric layer keeps a feature stream :math:`X \\in \\mathbb{R}^{N\\times F\\times k}`
and a label stream :math:`Y \\in \\mathbb{R}^{N\\times C\\times k}` and mixes them through the
least-squares maps (:mod:`symgfm.conversions`); with :math:`T_{(W,b)}(Z) = Z \\times_A W + b`
(einsum ``"nak,ab->nbk"``):

.. math::
    X' = \\Phi_1(X) + \\Phi_2(\\bar X) + \\Phi_3(T_{\\bar y \\to x}(\\bar Y))
         + \\sum_{l=0}^{L} \\Phi_{4,l}(T_{y\\to x, l}(Y))
         + \\sum_{l=1}^{L}\\Phi_{5,l}(T_{y\\to\\tilde x, l}(Y))

    Y' = \\Psi_1(Y) + \\Psi_2(\\bar Y) + \\Psi_3(T_{\\bar x \\to y}(\\bar X))
         + \\sum_{l=0}^{L} \\Psi_{4,l}(T_{x\\to y, l}(X))
         + \\sum_{l=1}^{L}\\Psi_{5,l}(T_{\\tilde x\\to y, l}(X))

(:math:`\\bar X = \\mathrm{mean}_F X`, :math:`\\bar Y = \\mathrm{mean}_C Y`; singleton axes
broadcast).
Every :math:`\\Phi`/:math:`\\Psi` is its own core GNN. Because the mean core is linear in its input,
:class:`TSLayer` sums the terms that share an axis before aggregating once (the same numbers as
calling each :class:`MeanGNN`, tested against that loop).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.utils import add_self_loops, remove_self_loops, scatter, softmax

from paperkit import check_bool, check_choice, check_int, check_tensor, param_error
from symgfm.graph import mean_aggregate

__all__ = ["GATCore", "MeanGNN", "TSLayer", "apply_map"]

MAX_CHANNELS = 4096


def _check_z(owner: str, z: Tensor, edge_index: Tensor, k_in: int) -> None:
    check_tensor("z", owner, z, shape=(None, None, k_in))
    check_tensor("edge_index", owner, edge_index, shape=(2, None), dtype="int", nonempty=False)
    _check_edges(owner, edge_index, z.shape[0])


def _check_edges(owner: str, edge_index: Tensor, n: int) -> None:
    if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= n):
        bad = edge_index.min() if edge_index.min() < 0 else edge_index.max()
        raise param_error("edge_index", owner, f"entries in [0, {n})", int(bad))


def _weight(k_in: int, k_out: int) -> nn.Parameter:
    bound = 1.0 / math.sqrt(k_in)
    return nn.Parameter(torch.empty(k_in, k_out).uniform_(-bound, bound))


class MeanGNN(nn.Module):
    """The mean core :math:`\\Phi(Z)_i = Z_i W_{self} + (\\mathrm{mean}_{j\\in N(i)} Z_j) W_{aggr}`
    on the last axis of ``z`` ``(N, A, k_in)``, shared over ``A``; no bias.

    ``forward(z, edge_index)`` returns ``(N, A, k_out)``. NaN and inf in ``z`` are refused.

    >>> layer = MeanGNN(1, 4)
    >>> layer(torch.ones(3, 5, 1), torch.tensor([[0, 1], [1, 2]])).shape
    torch.Size([3, 5, 4])
    """

    def __init__(self, k_in: int, k_out: int) -> None:
        super().__init__()
        self.k_in = check_int("k_in", "MeanGNN", k_in, low=1, high=MAX_CHANNELS)
        self.k_out = check_int("k_out", "MeanGNN", k_out, low=1, high=MAX_CHANNELS)
        self.w_self = _weight(k_in, k_out)
        self.w_aggr = _weight(k_in, k_out)

    def forward(self, z: Tensor, edge_index: Tensor) -> Tensor:
        _check_z("MeanGNN", z, edge_index, self.k_in)
        return self.run(z, edge_index)

    def run(self, z: Tensor, edge_index: Tensor) -> Tensor:
        """``forward`` without the checks (the layer validates its inputs once)."""
        agg = mean_aggregate(z, edge_index)
        return z @ self.w_self.to(z.dtype) + agg @ self.w_aggr.to(z.dtype)


class GATCore(nn.Module):
    """The GAT core: single-head graph attention with self-loops, attention computed per slice
    ``a`` of ``z`` ``(N, A, k_in)`` and the same weights for every slice; no bias.

    ``forward(z, edge_index)`` returns ``(N, A, k_out)``. NaN and inf in ``z`` are refused.

    >>> GATCore(2, 3)(torch.ones(4, 5, 2), torch.tensor([[0, 1], [1, 2]])).shape
    torch.Size([4, 5, 3])
    """

    def __init__(self, k_in: int, k_out: int) -> None:
        super().__init__()
        self.k_in = check_int("k_in", "GATCore", k_in, low=1, high=MAX_CHANNELS)
        self.k_out = check_int("k_out", "GATCore", k_out, low=1, high=MAX_CHANNELS)
        self.w = _weight(k_in, k_out)
        bound = 1.0 / math.sqrt(k_out)
        self.att_src = nn.Parameter(torch.empty(k_out).uniform_(-bound, bound))
        self.att_dst = nn.Parameter(torch.empty(k_out).uniform_(-bound, bound))

    def forward(self, z: Tensor, edge_index: Tensor) -> Tensor:
        _check_z("GATCore", z, edge_index, self.k_in)
        return self.run(z, edge_index)

    def run(self, z: Tensor, edge_index: Tensor) -> Tensor:
        """``forward`` without the checks."""
        n = z.shape[0]
        h = z @ self.w.to(z.dtype)  # (N, A, k_out)
        ei, _ = add_self_loops(remove_self_loops(edge_index)[0], num_nodes=n)
        src, dst = ei
        score = h @ self.att_src.to(h.dtype)  # (N, A)
        score = score[src] + (h @ self.att_dst.to(h.dtype))[dst]
        alpha = softmax(F.leaky_relu(score, 0.2), dst, num_nodes=n)  # (E, A)
        return scatter(alpha.unsqueeze(-1) * h[src], dst, dim=0, dim_size=n, reduce="sum")


CORES = {"mean": MeanGNN, "gat": GATCore}


def apply_map(z: Tensor, wb: tuple[Tensor, Tensor]) -> Tensor:
    """:math:`T_{(W,b)}(Z) = Z \\times_A W + b`: ``einsum("nak,ab->nbk", z, W) + b[:, None]``,
    mapping ``(N, A, k)`` to ``(N, B, k)`` (no checks; NaN propagates)."""
    W, b = wb
    return torch.einsum("nak,ab->nbk", z, W.to(z.dtype)) + b.to(z.dtype)[None, :, None]


class TSLayer(nn.Module):
    """One triple-symmetric layer (module docstring): ``forward(x, y, maps, edge_index)`` with
    ``x`` ``(N, F, k_in)``, ``y`` ``(N, C, k_in)`` and ``maps`` the least-squares maps
    (:func:`symgfm.least_squares_maps`) returns ``(x', y')`` ``(N, F, k_out)``, ``(N, C, k_out)``.

    Args:
        k_in, k_out: channels in and out (``[1, 4096]``).
        ls_num_layers: :math:`L \\in [0, 8]`; ``maps`` must hold the keys for ``l <= L``.
        core: ``"mean"`` (TS-Mean) or ``"gat"`` (TS-GAT).
        use_ls_maps: False drops the :math:`\\Phi_4, \\Phi_5, \\Psi_4, \\Psi_5` terms (only the
            pool maps couple the streams; the paper's ablation).

    Submodules ``phi1``, ``phi2``, ``phi3``, ``phi4[l]``, ``phi5[l-1]`` and ``psi1`` ... ``psi5``
    are the terms of the equations. NaN and inf in ``x``, ``y`` are refused.

    >>> from symgfm.conversions import least_squares_maps
    >>> x, y = torch.rand(4, 3), torch.eye(2).repeat(2, 1)
    >>> ei = torch.tensor([[0, 1, 2], [1, 2, 3]])
    >>> maps = least_squares_maps(x, y, ei, torch.ones(4, dtype=torch.bool), 1)
    >>> xo, yo = TSLayer(1, 8)(x[..., None], y[..., None], maps, ei)
    >>> tuple(xo.shape), tuple(yo.shape)
    ((4, 3, 8), (4, 2, 8))
    """

    def __init__(
        self,
        k_in: int,
        k_out: int,
        ls_num_layers: int = 1,
        core: str = "mean",
        use_ls_maps: bool = True,
    ) -> None:
        super().__init__()
        owner = "TSLayer"
        self.k_in = check_int("k_in", owner, k_in, low=1, high=MAX_CHANNELS)
        self.k_out = check_int("k_out", owner, k_out, low=1, high=MAX_CHANNELS)
        self.ls_num_layers = check_int("ls_num_layers", owner, ls_num_layers, low=0, high=8)
        self.core = check_choice("core", owner, core, tuple(CORES))
        self.use_ls_maps = check_bool("use_ls_maps", owner, use_ls_maps)
        make = CORES[core]
        L = ls_num_layers if use_ls_maps else -1
        for s in ("phi", "psi"):
            for i in (1, 2, 3):
                setattr(self, f"{s}{i}", make(k_in, k_out))
            setattr(self, f"{s}4", nn.ModuleList(make(k_in, k_out) for _ in range(L + 1)))
            setattr(self, f"{s}5", nn.ModuleList(make(k_in, k_out) for _ in range(max(L, 0))))

    def required_maps(self) -> list[str]:
        """The keys of ``maps`` this layer reads."""
        keys = ["pool2x", "pool2y"]
        if self.use_ls_maps:
            for layer in range(self.ls_num_layers + 1):
                keys += [f"ls2x_{layer}", f"ls2y_{layer}"]
                if layer:
                    keys += [f"ls2x_{layer}_het", f"ls2y_{layer}_het"]
        return keys

    def terms(
        self, x: Tensor, y: Tensor, maps: dict[str, tuple[Tensor, Tensor]], stream: str
    ) -> list[tuple[nn.Module, Tensor]]:
        """The (core GNN, input) pairs whose sum is ``x'`` (``stream="x"``) or ``y'`` (``"y"``)."""
        s, z, other = ("phi", x, y) if stream == "x" else ("psi", y, x)
        pool = "pool2x" if stream == "x" else "pool2y"
        out = [
            (getattr(self, f"{s}1"), z),
            (getattr(self, f"{s}2"), z.mean(1, keepdim=True)),
            (getattr(self, f"{s}3"), apply_map(other.mean(1, keepdim=True), maps[pool])),
        ]
        to = f"ls2{stream}"
        for layer, module in enumerate(getattr(self, f"{s}4")):
            out.append((module, apply_map(other, maps[f"{to}_{layer}"])))
        for layer, module in enumerate(getattr(self, f"{s}5"), start=1):
            out.append((module, apply_map(other, maps[f"{to}_{layer}_het"])))
        return out

    def forward(
        self,
        x: Tensor,
        y: Tensor,
        maps: dict[str, tuple[Tensor, Tensor]],
        edge_index: Tensor,
    ) -> tuple[Tensor, Tensor]:
        owner = "TSLayer"
        dims: dict = {}
        check_tensor("x", owner, x, shape=("N", "F", self.k_in), dims=dims)
        check_tensor("y", owner, y, shape=("N", "C", self.k_in), dims=dims, dtype=x.dtype)
        check_tensor("edge_index", owner, edge_index, shape=(2, None), dtype="int", nonempty=False)
        _check_edges(owner, edge_index, x.shape[0])
        check_maps(owner, maps, self.required_maps(), x.shape[1], y.shape[1])
        return self.run(x, y, maps, edge_index)

    def run(self, x, y, maps, edge_index) -> tuple[Tensor, Tensor]:
        """``forward`` without the checks (the network validates its inputs once)."""
        combine = _fused_mean if self.core == "mean" else _separate
        return (
            combine(self.terms(x, y, maps, "x"), edge_index),
            combine(self.terms(x, y, maps, "y"), edge_index),
        )


def check_maps(owner: str, maps, keys: list[str], F_: int, C: int) -> None:
    """``maps`` holds every key in ``keys`` with ``(W, b)`` of the shapes the table of
    :mod:`symgfm.conversions` gives for ``F_`` features and ``C`` classes."""
    if not isinstance(maps, dict):
        raise param_error(
            "maps", owner, "a dict of (W, b) pairs", type(maps).__name__, cls=TypeError
        )
    for key in keys:
        want_in = 1 if key.startswith("pool") else (C if key.startswith("ls2x") else F_)
        want_out = F_ if key.startswith(("ls2x", "pool2x")) else C
        wb = maps.get(key)
        ok = (
            isinstance(wb, (tuple, list))  # Data.clone() turns tuples into lists
            and len(wb) == 2
            and all(isinstance(t, Tensor) and t.is_floating_point() for t in wb)
            and tuple(wb[0].shape) == (want_in, want_out)
            and tuple(wb[1].shape) == (want_out,)
            and bool(torch.isfinite(wb[0]).all() and torch.isfinite(wb[1]).all())
        )
        if not ok:
            raise param_error(
                "maps",
                owner,
                f"a dict whose {key!r} is a finite (W, b) of shapes ({want_in}, {want_out}), "
                f"({want_out},)",
                "a missing or different entry",
            )


def _separate(terms: list[tuple[nn.Module, Tensor]], edge_index: Tensor) -> Tensor:
    out = None
    for module, z in terms:
        t = module.run(z, edge_index)
        out = t if out is None else out + t
    return out


def _fused_mean(terms: list[tuple[MeanGNN, Tensor]], edge_index: Tensor) -> Tensor:
    """:math:`\\sum_t \\Phi_t(Z_t)` for mean cores, aggregating once per axis size: the mean
    aggregation is linear, so :math:`\\sum_t M(Z_t) W_t = M(\\sum_t Z_t W_t)`; the narrower of
    the stacked inputs and the projected sum is aggregated."""
    groups: dict[int, list[tuple[MeanGNN, Tensor]]] = {}
    for module, z in terms:
        groups.setdefault(z.shape[1], []).append((module, z))
    out = None
    for items in groups.values():
        dt = items[0][1].dtype
        part = sum(z @ m.w_self.to(dt) for m, z in items)
        k_in, k_out = items[0][0].k_in, items[0][0].k_out
        if len(items) * k_in <= k_out:
            agg = mean_aggregate(torch.cat([z for _, z in items], dim=-1), edge_index)
            chunks = agg.split(k_in, dim=-1)
            part = part + sum(c @ m.w_aggr.to(dt) for (m, _), c in zip(items, chunks, strict=True))
        else:
            part = part + mean_aggregate(sum(z @ m.w_aggr.to(dt) for m, z in items), edge_index)
        out = part if out is None else out + part
    return out
