r"""What GraphTOP and the baselines share: a frozen encoder read at the target of each k-hop
subgraph, a linear head, and the few-shot training loop.

Every method classifies a target node :math:`v` from :math:`z_v = f_\theta(\text{prompted } S_v)
[v]` with :math:`\text{logits} = W z_v + b`, trained with Adam on the cross-entropy of the few
labelled targets (plus a method's own penalties), batches of ``batch_size`` subgraphs collated
with PyG ``Batch``. Only the prompt and the head are trained; the encoder stays frozen
(``requires_grad=False``, eval mode), except in :class:`~graphtop.baselines.FineTune`.

``fit`` and ``predict_proba`` check their inputs before any work (:mod:`graphtop.inputs`): the
graph (finite features of the encoder's width and dtype, an integer ``(2, E)`` ``edge_index``
with ids below N, integer labels below ``num_classes`` at the training nodes), the nodes, the
encoder (frozen, finite parameters) and every scalar. NaN or inf features are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.data import Batch, Data

from graphtop.inputs import finite_module, frozen_encoder, graph_arg, module_arg, node_ids
from graphtop.subgraphs import subgraphs_of
from paperkit import Described, check_int, check_real, param_error

__all__ = ["SubgraphClassifier"]

PREDICT_BATCH = 250  # subgraphs per forward pass at inference (five training batches)


def target_positions(batch: Batch) -> torch.Tensor:
    """Row of each subgraph's target node in the collated batch."""
    return batch.ptr[:-1] + batch.target


class SubgraphClassifier(nn.Module):
    """Base of every method: a (frozen) ``encoder``, a linear head ``hidden -> num_classes``.

    Subclasses define :meth:`_forward` (logits of a batch, plus what their penalties need) and
    may add penalties in :meth:`_regularised`.
    """

    frozen: bool = True

    def __init__(self, encoder: nn.Module, num_classes: int, hidden: int = 128, num_hops: int = 2):
        super().__init__()
        owner = type(self).__name__
        module_arg("encoder", owner, encoder)
        self.num_classes = check_int("num_classes", owner, num_classes, low=2)
        self.hidden = check_int("hidden", owner, hidden, low=1)
        self.num_hops = check_int("num_hops", owner, num_hops, low=1)
        width = getattr(encoder, "out_dim", None)
        if width is not None and width != hidden:
            raise param_error("hidden", owner, f"the encoder's output width {width}", hidden)
        self.encoder = encoder
        if self.frozen:
            encoder.requires_grad_(False)
            encoder.eval()
        self.classifier = nn.Linear(hidden, num_classes)
        self.seed_ = 0
        self.history_: list[dict[str, float]] = []

    # -- hooks -------------------------------------------------------------------------------
    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        """Fresh head (Xavier-uniform weight, zero bias); subclasses reset their prompt too."""
        nn.init.xavier_uniform_(self.classifier.weight, generator=generator)
        nn.init.zeros_(self.classifier.bias)

    def trainable_parameters(self) -> list[nn.Parameter]:
        """The prompt's and the head's parameters (everything but the frozen encoder)."""
        return [p for name, p in self.named_parameters() if not name.startswith("encoder.")]

    def _context(self, data: Data, owner: str) -> dict[str, Any]:
        """What a method computes once per graph (GraphTOP: the node embeddings H)."""
        return {}

    def _forward(
        self, batch: Batch, ctx: dict[str, Any], **kw: Any
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        raise NotImplementedError

    def _regularised(
        self, ce: torch.Tensor, aux: dict[str, Any], batch: Batch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        return ce, {}

    # -- shared machinery --------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        return self.classifier.weight.device

    def train(self, mode: bool = True) -> SubgraphClassifier:
        """Switch the trainable parts; a frozen encoder stays in eval mode."""
        super().train(mode)
        if self.frozen:
            self.encoder.eval()
        return self

    def _check_graph(
        self, data: Data, nodes: Any, owner: str, *, labels: bool, name: str = "nodes"
    ) -> torch.Tensor:
        """Check the graph, the nodes and the encoder (see the module docstring); the node ids."""
        first = next(self.encoder.parameters(), None)
        graph_arg(
            owner,
            data,
            labels=labels,
            in_dim=getattr(self.encoder, "in_dim", None),
            dtype=None if first is None else first.dtype,
        )
        nodes = node_ids(owner, nodes, data.num_nodes, name)
        if labels:
            y = data.y[nodes]
            if int(y.min()) < 0 or int(y.max()) >= self.num_classes:
                raise param_error(
                    "data",
                    owner,
                    f"a graph whose labels at the training nodes are in [0, {self.num_classes})",
                    Described(f"labels from {int(y.min())} to {int(y.max())}"),
                )
        if self.frozen:
            frozen_encoder(owner, self.encoder)
        finite_module(owner, self.encoder)
        return nodes

    def fit(
        self,
        data: Data,
        train_nodes: torch.Tensor | Sequence[int],
        epochs: int = 500,
        lr: float = 5e-4,
        batch_size: int = 50,
        seed: int = 0,
    ) -> SubgraphClassifier:
        """Train the prompt and head on the subgraphs of ``train_nodes`` (labels ``data.y``).

        The trainable parameters are re-initialised from ``seed``, which also drives the batch
        order and every random draw, so equal seeds give identical models. ``history_`` holds
        the per-epoch mean of each loss term. NaN or inf node features, labels outside
        ``[0, num_classes)`` at the training nodes, an ``edge_index`` that is not ``(2, E)``
        integer ids below N, and an encoder with non-finite weights are refused before any work.
        """
        owner = f"{type(self).__name__}.fit"
        epochs = check_int("epochs", owner, epochs, low=1)
        lr = check_real("lr", owner, lr, low=0, low_open=True)
        batch_size = check_int("batch_size", owner, batch_size, low=1)
        seed = check_int("seed", owner, seed, low=0)
        nodes = self._check_graph(data, train_nodes, owner, labels=True, name="train_nodes")
        self.seed_ = seed
        shuffle = torch.Generator().manual_seed(seed)
        noise = torch.Generator(device=self.device).manual_seed(seed)
        self.reset_parameters(noise)
        subgraphs = subgraphs_of(data, nodes, self.num_hops, owner)
        one_batch = (
            Batch.from_data_list(subgraphs).to(self.device)
            if len(subgraphs) <= batch_size
            else None
        )
        ctx = self._context(data, owner)
        optimizer = torch.optim.Adam(self.trainable_parameters(), lr=lr)
        self.history_ = []
        for epoch in range(1, epochs + 1):
            totals = self.train_epoch(
                subgraphs,
                ctx,
                optimizer,
                epoch=epoch,
                epochs=epochs,
                batch_size=batch_size,
                shuffle=shuffle,
                noise=noise,
                one_batch=one_batch,
            )
            self.history_.append({"epoch": epoch, **totals})
        self.eval()
        return self

    def train_epoch(
        self,
        subgraphs: list[Data],
        ctx: dict[str, Any],
        optimizer: torch.optim.Optimizer,
        *,
        epoch: int,
        epochs: int,
        batch_size: int,
        shuffle: torch.Generator | None = None,
        noise: torch.Generator | None = None,
        one_batch: Batch | None = None,
    ) -> dict[str, float]:
        """One pass over ``subgraphs`` in shuffled batches; the mean of each loss term."""
        self.train()
        totals: dict[str, float] = {}
        chunks = torch.randperm(len(subgraphs), generator=shuffle).split(batch_size)
        for chunk in chunks:
            if one_batch is not None:
                batch = one_batch
            else:
                batch = Batch.from_data_list([subgraphs[i] for i in chunk]).to(self.device)
            logits, aux = self._forward(batch, ctx, epoch=epoch, epochs=epochs, generator=noise)
            ce = F.cross_entropy(logits, batch.y)
            loss, terms = self._regularised(ce, aux, batch)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            for key, value in {"loss": loss.item(), "ce": ce.item(), **terms}.items():
                totals[key] = totals.get(key, 0.0) + value / len(chunks)
        return totals

    def _batches(self, data: Data, nodes: torch.Tensor, owner: str):
        """The subgraphs of ``nodes`` in batches of ``PREDICT_BATCH``, built batch by batch."""
        for chunk in nodes.split(PREDICT_BATCH):
            subgraphs = subgraphs_of(data, chunk, self.num_hops, owner)
            yield Batch.from_data_list(subgraphs).to(self.device)

    @torch.no_grad()
    def predict_proba(self, data: Data, nodes: torch.Tensor | Sequence[int]) -> torch.Tensor:
        """Class probabilities ``(len(nodes), C)`` from the prompted subgraphs.

        ``data`` and ``nodes`` are checked as in :meth:`fit` (labels are not needed).
        """
        owner = f"{type(self).__name__}.predict_proba"
        nodes = self._check_graph(data, nodes, owner, labels=False)
        ctx = self._context(data, owner)
        logits = [self._forward(batch, ctx)[0] for batch in self._batches(data, nodes, owner)]
        return torch.softmax(torch.cat(logits), dim=-1)

    def predict(self, data: Data, nodes: torch.Tensor | Sequence[int], **kw: Any) -> torch.Tensor:
        """The most probable class of each node (keywords go to :meth:`predict_proba`)."""
        return self.predict_proba(data, nodes, **kw).argmax(dim=-1)
