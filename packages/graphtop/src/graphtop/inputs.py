"""The graph inputs every entry point shares, checked once at the entry point the user called.

A graph is a PyG ``Data`` with ``x`` (N x F, floating, finite, N >= 1) and ``edge_index``
(2 x E, integer node ids in [0, N)); with labels, ``y`` holds one integer class per node. Nodes
are a 1-D integer tensor (or a list) of ids in [0, N). Errors name the argument as the user
passed it (``data``, ``nodes``, ``train_nodes``, ``encoder``) and say which field is wrong,
worded by :func:`paperkit.param_error`.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch_geometric.data import Data

from paperkit import Described, check_tensor, describe, param_error

__all__ = ["finite_module", "frozen_encoder", "graph_arg", "module_arg", "node_ids"]


def module_arg(name: str, owner: str, module: Any) -> nn.Module:
    """``module`` when it is an ``nn.Module``, else the worded ``TypeError``."""
    if not isinstance(module, nn.Module):
        raise param_error(name, owner, "a torch.nn.Module", describe(module), cls=TypeError)
    return module


def _refuse(owner: str, name: str, what: str, got: Any, cls: type[Exception] = ValueError):
    return param_error(name, owner, f"a graph whose {what}", Described(got), cls=cls)


def graph_arg(
    owner: str,
    data: Any,
    *,
    name: str = "data",
    labels: bool = False,
    in_dim: int | None = None,
    dtype: torch.dtype | None = None,
) -> Data:
    """Check ``data`` (see the module docstring); ``labels``: it needs integer ``y``;
    ``in_dim`` / ``dtype``: the width and dtype ``x`` must have (an encoder's input)."""
    if not isinstance(data, Data):
        raise param_error(name, owner, "a torch_geometric.data.Data", describe(data), cls=TypeError)
    x, ei = data.x, data.edge_index
    if not isinstance(x, torch.Tensor) or not x.is_floating_point():
        raise _refuse(owner, name, "x is a floating-point tensor", f"x = {describe(x)}", TypeError)
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise _refuse(owner, name, "x is a non-empty N x F matrix", f"x of shape {tuple(x.shape)}")
    if dtype is not None and x.dtype != dtype:
        raise _refuse(
            owner, name, f"x has the encoder's dtype {dtype}", f"x of {x.dtype}", TypeError
        )
    if in_dim is not None and x.shape[1] != in_dim:
        raise _refuse(owner, name, f"x has the encoder's {in_dim} features", f"{x.shape[1]}")
    if not bool(torch.isfinite(x).all()):
        raise _refuse(owner, name, "node features x are finite", "NaN or inf in x")
    if (
        not isinstance(ei, torch.Tensor)
        or ei.is_floating_point()
        or ei.is_complex()
        or ei.dtype == torch.bool
    ):
        raise _refuse(
            owner,
            name,
            "edge_index is an integer tensor",
            f"edge_index = {describe(ei)}",
            TypeError,
        )
    n = x.shape[0]
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise _refuse(owner, name, "edge_index has shape (2, E)", f"shape {tuple(ei.shape)}")
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= n):
        raise _refuse(
            owner,
            name,
            f"edge_index holds node ids in [0, {n})",
            f"ids from {int(ei.min())} to {int(ei.max())}",
        )
    if labels:
        y = getattr(data, "y", None)
        if not isinstance(y, torch.Tensor) or y.is_floating_point() or y.dtype == torch.bool:
            raise _refuse(owner, name, "labels y are integers", f"y = {describe(y)}", TypeError)
        if tuple(y.shape) != (n,):
            raise _refuse(
                owner, name, f"y holds one label per node ({n})", f"shape {tuple(y.shape)}"
            )
    return data


def node_ids(owner: str, nodes: Any, num_nodes: int, name: str = "nodes") -> torch.Tensor:
    """``nodes`` as a non-empty 1-D int64 tensor of ids in ``[0, num_nodes)``."""
    if isinstance(nodes, (list, tuple)):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in nodes):
            raise param_error(
                name, owner, "a list of integer node ids", describe(nodes), cls=TypeError
            )
        nodes = torch.tensor(nodes, dtype=torch.long)
    check_tensor(name, owner, nodes, ndim=1, dtype="int")
    if int(nodes.min()) < 0 or int(nodes.max()) >= num_nodes:
        raise param_error(
            name,
            owner,
            f"node ids in [0, {num_nodes})",
            Described(f"ids from {int(nodes.min())} to {int(nodes.max())}"),
        )
    return nodes.long()


def frozen_encoder(owner: str, encoder: nn.Module) -> None:
    """Every parameter of ``encoder`` must have ``requires_grad=False`` (frozen at construction)."""
    trainable = [name for name, p in encoder.named_parameters() if p.requires_grad]
    if trainable:
        raise param_error(
            "encoder",
            owner,
            "frozen (requires_grad=False on every parameter, as set at construction)",
            Described(f"an encoder with trainable parameters {trainable[:3]}"),
        )


def finite_module(owner: str, module: nn.Module, name: str = "encoder") -> None:
    """Refuse a module whose parameters hold NaN or inf (one pass over each parameter)."""
    for pname, p in module.named_parameters():
        if not bool(torch.isfinite(p.detach()).all()):
            raise param_error(
                name, owner, "a module with finite parameters", Described(f"NaN or inf in {pname}")
            )
