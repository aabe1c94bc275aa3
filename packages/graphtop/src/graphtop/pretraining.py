r"""Pre-training strategies for the encoder (self-supervised; labels are never read).

* ``"link_pred"``: edge reconstruction, the link-prediction pre-training of GPPT/GraphPrompt in
  its plain form: :math:`\mathcal L = -\log\sigma(z_u^\top z_v) - \log(1-\sigma(z_u^\top z_w))`
  over the graph's edges :math:`(u,v)` and as many uniformly drawn node pairs :math:`(u,w)`.
* ``"graphcl"`` (You et al., 2020), node-level as in ProG: a batch of target 2-hop subgraphs, two
  views each by edge dropping (0.2) and feature masking (0.2), mean-pooled, a projection head,
  and the InfoNCE loss at temperature 0.5 (the other subgraphs of the batch are negatives).
* ``"simgrace"`` (Xia et al., 2022): the same subgraphs unaugmented; the second view comes from
  the encoder with perturbed weights :math:`\theta + \eta\,\sigma_\theta\,\epsilon`,
  :math:`\epsilon\sim\mathcal N(0, I)` (:math:`\eta = 1`, :math:`\sigma_\theta` the standard
  deviation of each weight tensor), detached, as in the SimGRACE code.

InfoNCE for a batch of B pairs with cosine similarity :math:`s`:
:math:`\mathcal L = \frac{1}{B}\sum_i -\log \frac{e^{s(a_i,b_i)/T}}{\sum_j e^{s(a_i,b_j)/T}}`.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call
from torch_geometric.data import Batch, Data
from torch_geometric.nn import global_mean_pool
from torch_geometric.utils import dropout_edge, k_hop_subgraph, mask_feature

from graphtop.inputs import graph_arg, module_arg
from paperkit import check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["METHODS", "info_nce", "pretrain"]

METHODS = ("link_pred", "graphcl", "simgrace")


def info_nce(a: torch.Tensor, b: torch.Tensor, temperature: float = 0.5) -> torch.Tensor:
    """InfoNCE of paired rows of ``a`` and ``b`` (cosine similarity, the batch as negatives).

    Shapes:
        a, b: ``(B, d)`` floating, finite (NaN and inf refused); ``temperature`` > 0.

    >>> round(float(info_nce(torch.eye(4), torch.eye(4), 0.5)), 4)  # -log(e^2 / (e^2 + 3))
    0.3408
    """
    owner = "info_nce"
    dims: dict = {}
    check_tensor("a", owner, a, shape=("B", "d"), dims=dims)
    check_tensor("b", owner, b, shape=("B", "d"), dims=dims, dtype=a.dtype, device=a.device)
    temperature = check_real("temperature", owner, temperature, low=0, low_open=True)
    return _info_nce(a, b, temperature)


def _info_nce(a: torch.Tensor, b: torch.Tensor, temperature: float) -> torch.Tensor:
    logits = F.normalize(a, dim=-1) @ F.normalize(b, dim=-1).T / temperature
    return F.cross_entropy(logits, torch.arange(a.shape[0], device=a.device))


def _subgraph_batch(data: Data, centers: torch.Tensor, num_hops: int) -> Batch:
    graphs = []
    for v in centers.tolist():
        subset, edge_index, _, _ = k_hop_subgraph(
            v, num_hops, data.edge_index, relabel_nodes=True, num_nodes=data.num_nodes
        )
        graphs.append(Data(x=data.x[subset], edge_index=edge_index))
    return Batch.from_data_list(graphs)


def _pooled(
    encoder: nn.Module, batch: Batch, x: torch.Tensor, edge_index: torch.Tensor
) -> torch.Tensor:
    return global_mean_pool(encoder(x, edge_index), batch.batch, size=batch.num_graphs)


def _perturbed(encoder: nn.Module, eta: float) -> dict[str, torch.Tensor]:
    params = {}
    for name, p in encoder.named_parameters():
        scale = p.detach().std() if p.numel() > 1 else p.detach().abs()
        params[name] = p.detach() + eta * scale * torch.randn_like(p)
    return params


def pretrain(
    encoder: nn.Module,
    data: Data,
    method: Literal["link_pred", "graphcl", "simgrace"],
    epochs: int,
    seed: int,
    *,
    lr: float = 1e-3,
    batch_size: int = 128,
    temperature: float = 0.5,
    drop: float = 0.2,
    num_hops: int = 2,
    eta: float = 1.0,
) -> nn.Module:
    """Pre-train ``encoder`` in place on ``data`` with ``method``; return it (trainable, eval mode).

    ``epochs`` optimisation steps with Adam(``lr``): full-graph steps for ``"link_pred"``, steps
    on ``batch_size`` random target subgraphs for the contrastive methods. All randomness is drawn
    under ``seed`` without touching the caller's global random state. ``data`` is checked first
    (finite features of the encoder's width and dtype, an integer ``(2, E)`` ``edge_index`` with
    ids below N): NaN or inf features are refused, as are non-finite scalars.
    """
    owner = "pretrain"
    module_arg("encoder", owner, encoder)
    check_choice("method", owner, method, METHODS)
    epochs = check_int("epochs", owner, epochs, low=1)
    seed = check_int("seed", owner, seed, low=0)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch_size = check_int("batch_size", owner, batch_size, low=2)
    temperature = check_real("temperature", owner, temperature, low=0, low_open=True)
    drop = check_real("drop", owner, drop, low=0, high=1, high_open=True)
    num_hops = check_int("num_hops", owner, num_hops, low=1)
    eta = check_real("eta", owner, eta, low=0)
    first = next(encoder.parameters(), None)
    if first is None:
        raise param_error("encoder", owner, "a module with parameters to train", "none")
    graph_arg(owner, data, in_dim=getattr(encoder, "in_dim", None), dtype=first.dtype)
    device = next(encoder.parameters()).device
    data = data.to(device)
    encoder.requires_grad_(True)
    encoder.train()
    width = (
        getattr(encoder, "out_dim", None) or encoder(data.x[:1], data.edge_index[:, :0]).shape[1]
    )
    n = data.num_nodes
    with torch.random.fork_rng(devices=[device.index or 0] if device.type == "cuda" else []):
        torch.manual_seed(seed)
        head = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, width))
        head = head.to(device)
        params = list(encoder.parameters())
        if method != "link_pred":
            params += list(head.parameters())
        optimizer = torch.optim.Adam(params, lr=lr)
        for _ in range(epochs):
            if method == "link_pred":
                z = encoder(data.x, data.edge_index)
                pos = data.edge_index
                neg = torch.randint(0, n, pos.shape, device=device)
                scores = torch.cat(
                    [(z[pos[0]] * z[pos[1]]).sum(-1), (z[neg[0]] * z[neg[1]]).sum(-1)]
                )
                labels = torch.cat([torch.ones(pos.shape[1]), torch.zeros(neg.shape[1])]).to(device)
                loss = F.binary_cross_entropy_with_logits(scores, labels)
            else:
                centers = torch.randperm(n, device=device)[: min(batch_size, n)]
                batch = _subgraph_batch(data, centers, num_hops)
                if method == "graphcl":
                    views = []
                    for _view in range(2):
                        edge_index, _ = dropout_edge(batch.edge_index, p=drop)
                        x, _ = mask_feature(batch.x, p=drop, mode="all")
                        views.append(head(_pooled(encoder, batch, x, edge_index)))
                    loss = _info_nce(views[0], views[1], temperature)
                else:
                    a = head(_pooled(encoder, batch, batch.x, batch.edge_index))
                    with torch.no_grad():
                        perturbed = _perturbed(encoder, eta)
                        h = functional_call(encoder, perturbed, (batch.x, batch.edge_index))
                        b = head(global_mean_pool(h, batch.batch, size=batch.num_graphs))
                    loss = _info_nce(a, b, temperature)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    encoder.eval()
    return encoder
