"""Training a TS-GNN over several graphs with the label-propagation split, and zero-shot use
(paper Sec. 5, "Training").

Each step takes one training graph. Per class :math:`c`, :math:`\\min(k, n_c)` random train nodes
with :math:`k = \\lfloor |\\mathrm{train}| \\cdot r / C \\rfloor` (:math:`r` = ``lp_ratio``) are the
*context*: their labels are fed as :math:`Y_0`. The other train nodes are the *targets*: their
:math:`Y_0` rows are zero and the loss is the cross-entropy of their logits. The least-squares
maps are refitted on the context nodes each step (``ls_from="context"``), so a step never sees
its targets' labels; ``ls_from="all_train"`` fits them once on every train node, targets
included, as the paper's code does. At test time every train node is context.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor
from torch_geometric.data import Data

from paperkit import check_choice, check_int, check_real, check_tensor, param_error
from symgfm.conversions import Maps, maps_from_features
from symgfm.graph import check_graph, one_hot_context
from symgfm.model import TSGNN, check_prepared
from symgfm.prepare import prepare_graph

__all__ = ["context_maps", "fit_foundation", "lp_split", "zero_shot_predict"]


def lp_split(
    y: Tensor, train_mask: Tensor, lp_ratio: float = 0.4, generator: torch.Generator | None = None
) -> tuple[Tensor, Tensor]:
    """The per-class split of the train nodes into context (labels fed) and targets (loss).

    :math:`k = \\lfloor |\\mathrm{train}|\\, r / C \\rfloor` with :math:`C = \\max y + 1`; class
    :math:`c` gives :math:`\\min(k, n_c)` uniformly drawn context nodes and the rest of its train
    nodes are targets. Returns boolean ``(lp_mask, target_mask)``, disjoint, covering
    ``train_mask``.

    Args:
        y: ``(N,)`` non-negative integer labels.
        train_mask: ``(N,)`` boolean.
        lp_ratio: :math:`r \\in (0, 1)`; must give :math:`k \\ge 1`.
        generator: the random source (None: torch's global one).

    Integer and boolean inputs only (no NaN to handle); negative labels are refused.

    >>> y = torch.tensor([0, 0, 0, 1, 1, 1])
    >>> lp, tg = lp_split(y, torch.ones(6, dtype=torch.bool), 0.4, torch.Generator().manual_seed(0))
    >>> int(lp.sum()), int(tg.sum()), bool((lp & tg).any())
    (2, 4, False)
    """
    owner = "lp_split"
    check_tensor("y", owner, y, ndim=1, dtype="int")
    check_tensor("train_mask", owner, train_mask, shape=(y.shape[0],), dtype=torch.bool)
    r = check_real("lp_ratio", owner, lp_ratio, low=0, high=1, low_open=True, high_open=True)
    if y.min() < 0:
        raise param_error("y", owner, "labels 0..C-1", int(y.min()))
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "a torch.Generator or None", type(generator).__name__, cls=TypeError
        )
    C = int(y.max()) + 1
    k = math.floor(int(train_mask.sum()) * r / C)
    if k < 1:
        raise param_error(
            "lp_ratio",
            owner,
            f"large enough for one context node per class "
            f"(|train| * lp_ratio / C >= 1 with |train| = {int(train_mask.sum())}, C = {C})",
            r,
        )
    lp = torch.zeros_like(train_mask)
    for c in range(C):
        idx = torch.nonzero(train_mask & (y == c)).flatten()
        idx = idx[torch.randperm(len(idx), generator=generator)]
        lp[idx[:k]] = True
    return lp, train_mask & ~lp


def context_maps(data: Data, lp_mask: Tensor, ls_from: str = "context") -> Maps:
    """The least-squares maps one training step uses: fitted on the context nodes ``lp_mask``
    (``"context"``) or on every train node of ``data`` (``"all_train"``, the paper's code).

    Args:
        data: a graph from :func:`symgfm.prepare_graph`.
        lp_mask: ``(N,)`` boolean context mask, inside ``data.train_mask``, not empty.
        ls_from: ``"context"`` or ``"all_train"``.

    NaN cannot reach here: :func:`symgfm.prepare_graph` refuses it in the features.
    """
    owner = "context_maps"
    check_prepared(owner, data)
    n = data.x_norm.shape[0]
    check_tensor("lp_mask", owner, lp_mask, shape=(n,), dtype=torch.bool)
    if not bool(lp_mask.any()) or bool((lp_mask & ~data.train_mask).any()):
        raise param_error("lp_mask", owner, "a non-empty subset of data.train_mask", "another mask")
    check_choice("ls_from", owner, ls_from, ("context", "all_train"))
    if ls_from == "all_train":
        return data.conversions
    y0 = one_hot_context(data.y, lp_mask, int(data.num_classes), data.x_norm.dtype)
    return maps_from_features(data.feats, y0, lp_mask)


def _check_model(owner: str, model: TSGNN) -> None:
    if not isinstance(model, TSGNN):
        raise param_error("model", owner, "a symgfm.TSGNN", type(model).__name__, cls=TypeError)


def _check_train_graph(owner: str, g: Data, name: str) -> Tensor:
    """``g.train_mask`` after checking ``g`` and its mask (errors name ``name``)."""
    mask = g.get("train_mask") if isinstance(g, Data) else None
    if mask is None:
        raise param_error(name, owner, "a Data with a train_mask", type(g).__name__, cls=TypeError)
    check_graph(owner, g, mask, name, name)
    return mask


def fit_foundation(
    model: TSGNN,
    graphs: Sequence[Data],
    epochs: int,
    lr: float = 1e-2,
    lp_ratio: float = 0.4,
    seed: int = 0,
    ls_from: str = "context",
) -> TSGNN:
    """Train ``model`` on ``graphs`` (each a ``Data`` with ``x``, ``y``, ``edge_index`` and
    ``train_mask``): ``epochs`` passes, each one AdamW step per graph in a random order.

    Step on graph :math:`G`: :func:`lp_split` of its train nodes, maps from
    :func:`context_maps` (``ls_from``), logits ``model(G, Y_0[context], maps)`` and the loss
    :math:`\\mathrm{CE}(\\text{logits}[\\text{targets}], y[\\text{targets}])`.

    Args:
        model: the :class:`symgfm.TSGNN` to train (in place; returned).
        graphs: one or more training graphs (checked as by :func:`symgfm.prepare_graph`).
        epochs: passes over ``graphs`` (``[1, 100000]``); steps = ``epochs * len(graphs)``.
        lr: AdamW learning rate (``(0, 1]``).
        lp_ratio: the context share :math:`r \\in (0, 1)`.
        seed: seeds the splits and the graph order (``>= 0``).
        ls_from: ``"context"`` (default) or ``"all_train"`` (the paper's code: label leakage).

    The per-step loss is kept in ``model.train_losses_``. NaN features are refused.
    """
    owner = "fit_foundation"
    _check_model(owner, model)
    if not isinstance(graphs, Sequence) or isinstance(graphs, (str, bytes)) or not graphs:
        raise param_error(
            "graphs", owner, "a non-empty list of Data", type(graphs).__name__, cls=TypeError
        )
    epochs = check_int("epochs", owner, epochs, low=1, high=100_000)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=1)
    check_real("lp_ratio", owner, lp_ratio, low=0, high=1, low_open=True, high_open=True)
    seed = check_int("seed", owner, seed, low=0)
    check_choice("ls_from", owner, ls_from, ("context", "all_train"))
    prepared = [
        prepare_graph(g, _check_train_graph(owner, g, "graphs"), model.ls_num_layers)
        for g in graphs
    ]
    for p in prepared:  # every graph must allow a split with targets before any work starts
        lp, target = lp_split(p.y, p.train_mask, lp_ratio)
        if not bool(target.any()):
            raise param_error("lp_ratio", owner, "small enough to leave target nodes", lp_ratio)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    losses = []
    for _ in range(epochs):
        for i in torch.randperm(len(prepared), generator=gen).tolist():
            p = prepared[i]
            lp, target = lp_split(p.y, p.train_mask, lp_ratio, gen)
            maps = context_maps(p, lp, ls_from)
            y_in = one_hot_context(p.y, lp, int(p.num_classes), p.x_norm.dtype)
            logits = model(p, y_in, maps)
            loss = F.cross_entropy(logits[target], p.y[target])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.train_losses_ = losses
    model.eval()
    return model


def zero_shot_predict(model: TSGNN, data: Data) -> Tensor:
    """Logits ``(N, C)`` of a trained ``model`` on an unseen graph, with every node of
    ``data.train_mask`` as context (their labels fed, maps fitted on them); no parameter update,
    no gradient. ``argmax(1)`` gives the predicted classes.

    ``data``: a ``Data`` with ``x`` ``(N, F)`` (any ``F``; NaN refused), ``y`` (the labels of
    the train nodes are fed; ``C = y.max() + 1``), ``edge_index`` and ``train_mask``.
    """
    owner = "zero_shot_predict"
    _check_model(owner, model)
    p = prepare_graph(data, _check_train_graph(owner, data, "data"), model.ls_num_layers)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        logits = model(p, p.y0)
    model.train(was_training)
    return logits
