"""Argument checks shared by the public functions, worded as :func:`paperkit.param_error`."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn
from torch_geometric.data import Data

from paperkit import Described, param_error


def check_data(data: object, owner: str, *, needs_y: bool = False) -> Data:
    """``data`` must be a PyG ``Data`` with 2-D float ``x`` and an in-range ``edge_index``."""
    if not isinstance(data, Data):
        raise param_error(
            "data",
            owner,
            "a torch_geometric.data.Data",
            Described(type(data).__name__),
            cls=TypeError,
        )
    x = data.x
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or not x.is_floating_point():
        got = Described(f"x of shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else repr(x))
        raise param_error("data", owner, "a graph whose x is a 2-D float tensor", got)
    ei = data.edge_index
    if not isinstance(ei, torch.Tensor) or ei.dim() != 2 or ei.shape[0] != 2:
        got = Described(f"edge_index of shape {tuple(ei.shape)}" if ei is not None else "None")
        raise param_error("data", owner, "a graph with an edge_index of shape (2, E)", got)
    if ei.numel() and (int(ei.min()) < 0 or int(ei.max()) >= x.shape[0]):
        raise param_error(
            "data",
            owner,
            f"a graph whose edge_index holds node ids in [0, {x.shape[0]})",
            Described(f"ids from {int(ei.min())} to {int(ei.max())}"),
        )
    if needs_y:
        y = getattr(data, "y", None)
        if not isinstance(y, torch.Tensor) or y.shape[:1] != (x.shape[0],):
            raise param_error(
                "data", owner, "a graph with one label per node in data.y", Described(repr(y))
            )
        check_int_labels(y, owner, param="data.y")
    return data


def check_int_labels(y: torch.Tensor, owner: str, *, param: str = "y") -> torch.Tensor:
    """Labels must be an integer tensor (TypeError otherwise)."""
    if (
        not isinstance(y, torch.Tensor)
        or y.is_floating_point()
        or y.is_complex()
        or y.dtype == torch.bool
    ):
        got = Described(f"dtype {y.dtype}" if isinstance(y, torch.Tensor) else type(y).__name__)
        raise param_error(param, owner, "an integer tensor of class labels", got, cls=TypeError)
    return y


def check_nodes(
    nodes: torch.Tensor | Sequence[int], num_nodes: int, owner: str, param: str = "nodes"
) -> torch.Tensor:
    """A non-empty 1-D int64 tensor of node ids in ``[0, num_nodes)``."""
    nodes = torch.as_tensor(nodes)
    if nodes.numel() == 0:
        raise param_error(param, owner, "non-empty", Described("an empty tensor"))
    if nodes.is_floating_point() or nodes.dtype == torch.bool or nodes.dim() > 1:
        raise param_error(
            param,
            owner,
            "a 1-D tensor of integer node ids",
            Described(f"dtype {nodes.dtype}"),
            cls=TypeError,
        )
    nodes = nodes.reshape(-1).long()
    if int(nodes.min()) < 0 or int(nodes.max()) >= num_nodes:
        raise param_error(
            param,
            owner,
            f"node ids in [0, {num_nodes})",
            Described(f"ids from {int(nodes.min())} to {int(nodes.max())}"),
        )
    return nodes


def check_positive_int(value: object, param: str, owner: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise param_error(param, owner, f"an integer >= {minimum}", value)
    return value


def check_positive_float(
    value: object, param: str, owner: str, *, allow_zero: bool = False
) -> float:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not ok or not (value >= 0 if allow_zero else value > 0):
        raise param_error(param, owner, "non-negative" if allow_zero else "positive", value)
    return float(value)


def check_frozen(encoder: nn.Module, owner: str) -> None:
    """Every encoder parameter must have ``requires_grad=False`` (the pre-trained GNN is frozen)."""
    trainable = [name for name, p in encoder.named_parameters() if p.requires_grad]
    if trainable:
        raise param_error(
            "encoder",
            owner,
            "frozen (requires_grad=False on every parameter, as set at construction)",
            Described(f"an encoder with trainable parameters {trainable[:3]}"),
        )
