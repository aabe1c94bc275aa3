"""The TS-GNN network (paper Sec. 4): triple-symmetric layers from one channel to one channel."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data

from paperkit import check_bool, check_choice, check_int, check_memory, check_tensor, param_error
from symgfm.layers import CORES, TSLayer, check_maps

__all__ = ["TSGNN", "check_prepared"]

PREPARED = ("x_norm", "y0", "edge_index", "conversions", "feats", "num_classes", "ls_num_layers")


def check_prepared(owner: str, data: Data) -> None:
    """``data`` must come from :func:`symgfm.prepare_graph` (every field it adds)."""
    if not isinstance(data, Data):
        raise param_error(
            "data", owner, "a torch_geometric.data.Data", type(data).__name__, cls=TypeError
        )
    missing = [k for k in PREPARED if data.get(k) is None]
    if missing:
        raise param_error(
            "data", owner, "a graph made by symgfm.prepare_graph", f"a Data without {missing}"
        )


class TSGNN(nn.Module):
    """A graph foundation model for node classification that runs on any feature width ``F`` and
    any class count ``C``: equivariant to node and label permutations, invariant to feature
    permutations (paper Thm. 4.3 and Sec. 4).

    The input :math:`X_0 = X_{norm}` ``(N, F, 1)`` and :math:`Y_0` ``(N, C, 1)`` (one-hot labels of
    the context nodes) pass through ``num_layers`` :class:`symgfm.TSLayer` with channels
    ``1 -> hidden -> ... -> 1`` and GELU in between; the logits are
    :math:`Y_{out}` squeezed, ``(N, C)``.

    Args:
        hidden: hidden channels :math:`k` (``[1, 4096]``, paper: 16).
        num_layers: TS layers (``[1, 16]``, paper: 2).
        ls_num_layers: :math:`L \\in [0, 8]` of the least-squares maps.
        core: ``"mean"`` (TS-Mean) or ``"gat"`` (TS-GAT).
        use_ls_maps: False keeps only the pool maps between the streams (ablation).

    ``forward(data, y_input, maps=None)``: ``data`` from :func:`symgfm.prepare_graph`, ``y_input``
    ``(N, C)`` the labels fed (usually ``data.y0``), ``maps`` the least-squares maps to use
    (default ``data.conversions``). Inputs are cast to the parameters' dtype. NaN and inf in
    ``y_input`` are refused (``prepare_graph`` refuses them in the features).

    >>> import torch
    >>> from torch_geometric.data import Data
    >>> from symgfm import prepare_graph
    >>> g = Data(x=torch.rand(6, 5), y=torch.tensor([0, 1, 2, 0, 1, 2]),
    ...          edge_index=torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]))
    >>> p = prepare_graph(g, torch.tensor([True] * 4 + [False] * 2))
    >>> TSGNN()(p, p.y0).shape
    torch.Size([6, 3])
    """

    def __init__(
        self,
        hidden: int = 16,
        num_layers: int = 2,
        ls_num_layers: int = 1,
        core: str = "mean",
        use_ls_maps: bool = True,
    ) -> None:
        super().__init__()
        owner = "TSGNN"
        self.hidden = check_int("hidden", owner, hidden, low=1, high=4096)
        self.num_layers = check_int("num_layers", owner, num_layers, low=1, high=16)
        self.ls_num_layers = check_int("ls_num_layers", owner, ls_num_layers, low=0, high=8)
        self.core = check_choice("core", owner, core, tuple(CORES))
        self.use_ls_maps = check_bool("use_ls_maps", owner, use_ls_maps)
        chans = [1] + [hidden] * (num_layers - 1) + [1]
        self.layers = nn.ModuleList(
            TSLayer(a, b, ls_num_layers, core, use_ls_maps)
            for a, b in zip(chans[:-1], chans[1:], strict=True)
        )

    def forward(
        self, data: Data, y_input: Tensor, maps: dict[str, tuple[Tensor, Tensor]] | None = None
    ) -> Tensor:
        owner = "TSGNN"
        check_prepared(owner, data)
        n, f = data.x_norm.shape
        c = int(data.num_classes)
        check_tensor("y_input", owner, y_input, shape=(n, c))
        maps = data.conversions if maps is None else maps
        check_maps(owner, maps, self.layers[0].required_maps(), f, c)
        per_node = (f + c) * max(self.hidden, 1) * 8 * (2 * self.ls_num_layers + 6)
        check_memory("data", owner, n, n * per_node * self.num_layers)
        dtype = next(self.parameters()).dtype
        x = data.x_norm.to(dtype).unsqueeze(-1)
        y = y_input.to(dtype).unsqueeze(-1)
        maps = {k: (w.to(dtype), b.to(dtype)) for k, (w, b) in maps.items()}
        for i, layer in enumerate(self.layers):
            x, y = layer.run(x, y, maps, data.edge_index)
            if i < self.num_layers - 1:
                x, y = F.gelu(x), F.gelu(y)
        return y.squeeze(-1)
