r"""GraphTOP: topology-oriented prompting by learned rewiring of each target's k-hop subgraph.

For a target :math:`v` with subgraph :math:`S_v` (see :mod:`graphtop.subgraphs`):

1. :math:`H = f_\theta(X, E)` once on the original graph (frozen, detached);
2. :math:`p_{vu} = \sigma(g_\phi(H_v + H_u)/t)` for every candidate :math:`u \in S_v\setminus\{v\}`
   (:class:`~graphtop.prompt.TopologyPrompt`);
3. training: relaxed masks :math:`m_{vu}` (:func:`~graphtop.relaxation.relax_edges`) at the
   annealed :math:`\tau_e`; both directed copies of :math:`(v,u)` get weight :math:`m_{vu}`;
4. :math:`z_v = f_\theta(X[S_v], E_{S_v}, w(m))[v]`, logits :math:`= W z_v + b`;
5. loss :math:`= \mathrm{CE} + \lambda_e L_{ent} + \lambda_s L_{sp}`;
6. inference: hard masks, ``"sample"`` (:math:`m \sim \mathrm{Bernoulli}(p)`, the official
   behaviour), ``"threshold"`` (:math:`m = 1[p > 1/2]`) or ``"expect"`` (logits averaged over
   ``n_samples`` Bernoulli draws).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch_geometric.data import Batch, Data
from torch_geometric.utils import scatter

from graphtop.base import SubgraphClassifier, target_positions
from graphtop.prompt import TopologyPrompt
from graphtop.relaxation import entropy, relax, schedule, sparsity
from graphtop.subgraphs import subgraphs_of
from paperkit import Described, check_choice, check_int, check_real, param_error

__all__ = ["GraphTOP"]

MODES = ("sample", "threshold", "expect")
PREDICT_SEED_OFFSET = 1_000_003  # inference draws use their own stream, fixed per fitted model


class GraphTOP(SubgraphClassifier):
    """Frozen ``encoder`` + :class:`TopologyPrompt` + linear head (only the last two train).

    Args:
        encoder: the pre-trained GNN ``forward(x, edge_index, edge_weight)``; frozen here
            (``requires_grad=False``, eval mode). Its output width must equal ``hidden``.
        num_classes: number of classes C.
        hidden: embedding width d of the encoder (and of the scorer).
        num_hops: k of the target subgraphs.
        lambda_ent, lambda_sparse: weights (finite, >= 0) of the entropy and sparsity penalties.
        target_density: :math:`\\rho^*` in [0, 1], the connected fraction the sparsity term pulls
            to.
        t: the scorer's sharpening temperature (finite, > 0).

    NaN policy: refused. ``fit``, ``predict_proba``, ``rewiring_stats`` and ``rewired_subgraph``
    check the graph (finite features, valid ``edge_index``) and the encoder's weights before any
    work, and an encoder whose embeddings of the graph are not finite is refused too.
    """

    def __init__(
        self,
        encoder: nn.Module,
        num_classes: int,
        hidden: int = 128,
        num_hops: int = 2,
        lambda_ent: float = 2.0,
        lambda_sparse: float = 10.0,
        target_density: float = 0.5,
        t: float = 0.2,
    ):
        super().__init__(encoder, num_classes, hidden, num_hops)
        owner = "GraphTOP"
        self.lambda_ent = check_real("lambda_ent", owner, lambda_ent, low=0)
        self.lambda_sparse = check_real("lambda_sparse", owner, lambda_sparse, low=0)
        self.target_density = check_real("target_density", owner, target_density, low=0, high=1)
        t = check_real("t", owner, t, low=0, low_open=True)
        self.prompt = TopologyPrompt(hidden, t)

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters(generator)
        self.prompt.reset_parameters(generator)

    # -- the method --------------------------------------------------------------------------
    @torch.no_grad()
    def node_embeddings(self, data: Data, owner: str = "GraphTOP") -> torch.Tensor:
        """:math:`H = f_\\theta(X, E)` on the whole original graph, detached; an encoder whose
        output is not ``(N, hidden)`` or not finite is refused."""
        h = self.encoder(data.x.to(self.device), data.edge_index.to(self.device))
        if h.dim() != 2 or h.shape[1] != self.hidden:
            raise param_error(
                "encoder",
                owner,
                f"a GNN with output width hidden={self.hidden}",
                Described(f"output of shape {tuple(h.shape)}"),
            )
        if not bool(torch.isfinite(h).all()):
            raise param_error(
                "encoder", owner, "a GNN with finite embeddings of data", Described("NaN or inf")
            )
        return h

    def _context(self, data: Data, owner: str) -> dict[str, Any]:
        return {"h": self.node_embeddings(data, owner)}

    def candidate_probs(self, batch: Batch, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keep-probabilities ``p`` of the candidates of a batch, and each one's subgraph index."""
        cand = batch.edge_index[:, batch.cand_mask]
        t_local, u_local = cand[0, 0::2], cand[1, 0::2]
        p = self.prompt(h[batch.node_idx[t_local]], h[batch.node_idx[u_local]])
        return p, batch.batch[u_local]

    def _encode(self, batch: Batch, m: torch.Tensor) -> torch.Tensor:
        """Logits of each target with candidate weights ``m`` (both directions of each edge)."""
        weight = batch.edge_weight.masked_scatter(batch.cand_mask, m.repeat_interleave(2))
        z = self.encoder(batch.x, batch.edge_index, weight)[target_positions(batch)]
        return self.classifier(z)

    def hard_mask(
        self, p: torch.Tensor, mode: str, generator: torch.Generator | None = None
    ) -> torch.Tensor:
        """Inference masks: Bernoulli(p) draws (``"sample"``, ``"expect"``) or ``1[p > 1/2]``."""
        if mode == "threshold":
            return (p > 0.5).to(p.dtype)
        return torch.bernoulli(p, generator=generator)

    def _forward(
        self,
        batch: Batch,
        ctx: dict[str, Any],
        *,
        epoch: int | None = None,
        epochs: int | None = None,
        generator: torch.Generator | None = None,
        mode: str = "sample",
        n_samples: int = 1,
    ) -> tuple[torch.Tensor, dict[str, Any]]:
        p, index = self.candidate_probs(batch, ctx["h"])
        if epoch is not None:  # training: one relaxed sample at the annealed temperature
            m = relax(p, schedule(epoch, epochs), generator)
            return self._encode(batch, m), {"p": p, "index": index}
        if mode == "threshold":
            return self._encode(batch, self.hard_mask(p, mode)), {"p": p}
        logits = [self._encode(batch, self.hard_mask(p, mode, generator)) for _ in range(n_samples)]
        if mode == "expect":
            return torch.stack(logits).mean(0), {"p": p}
        probs = torch.stack([torch.softmax(x, -1) for x in logits]).mean(0)
        return probs.log(), {"p": p}

    def _regularised(
        self, ce: torch.Tensor, aux: dict[str, Any], batch: Batch
    ) -> tuple[torch.Tensor, dict[str, float]]:
        ent = entropy(aux["p"])
        sparse = sparsity(aux["p"], aux["index"], self.target_density, batch.num_graphs)
        loss = ce + self.lambda_ent * ent + self.lambda_sparse * sparse
        return loss, {"entropy": ent.item(), "sparsity": sparse.item()}

    # -- inference ---------------------------------------------------------------------------
    def _predict_generator(self) -> torch.Generator:
        return torch.Generator(device=self.device).manual_seed(self.seed_ + PREDICT_SEED_OFFSET)

    @torch.no_grad()
    def predict_proba(
        self,
        data: Data,
        nodes: torch.Tensor | Sequence[int],
        mode: str = "sample",
        n_samples: int = 1,
    ) -> torch.Tensor:
        """Class probabilities ``(len(nodes), C)`` on the rewired subgraphs.

        ``"sample"``: probabilities averaged over ``n_samples`` hard Bernoulli rewirings;
        ``"expect"``: softmax of the logits averaged over ``n_samples`` rewirings;
        ``"threshold"``: the deterministic rewiring ``1[p > 1/2]``. Draws come from a stream
        fixed by the ``fit`` seed, so repeated calls agree.
        """
        owner = "GraphTOP.predict_proba"
        check_choice("mode", owner, mode, MODES)
        n_samples = check_int("n_samples", owner, n_samples, low=1)
        nodes = self._check_graph(data, nodes, owner, labels=False)
        ctx, generator = self._context(data, owner), self._predict_generator()
        logits = [
            self._forward(batch, ctx, generator=generator, mode=mode, n_samples=n_samples)[0]
            for batch in self._batches(data, nodes, owner)
        ]
        return torch.softmax(torch.cat(logits), dim=-1)

    @torch.no_grad()
    def rewiring_stats(
        self, data: Data, nodes: torch.Tensor | Sequence[int], mode: str = "threshold"
    ) -> dict[str, float]:
        """Mean rewired density (kept candidates / candidates, per subgraph), the fraction of the
        targets' original edges kept, the fraction of non-edges added, and the mean entropy of p.
        """
        owner = "GraphTOP.rewiring_stats"
        check_choice("mode", owner, mode, ("sample", "threshold"))
        nodes = self._check_graph(data, nodes, owner, labels=False)
        ctx, generator = self._context(data, owner), self._predict_generator()
        density, kept, orig, added, absent, ent, n_p = [], 0.0, 0.0, 0.0, 0.0, 0.0, 0
        for batch in self._batches(data, nodes, owner):
            p, index = self.candidate_probs(batch, ctx["h"])
            m = self.hard_mask(p, mode, generator)
            a = batch.edge_weight[batch.cand_mask][0::2]
            size = batch.num_graphs
            count = scatter(torch.ones_like(m), index, dim=0, dim_size=size, reduce="sum")
            per = (
                scatter(m, index, dim=0, dim_size=size, reduce="sum")[count > 0] / count[count > 0]
            )
            density.append(per)
            kept, orig = kept + float((m * a).sum()), orig + float(a.sum())
            added, absent = added + float((m * (1 - a)).sum()), absent + float((1 - a).sum())
            ent, n_p = ent + float(entropy(p)) * p.numel(), n_p + p.numel()
        return {
            "density": float(torch.cat(density).mean()),
            "kept_original": kept / max(orig, 1.0),
            "added_fraction": added / max(absent, 1.0),
            "mean_entropy": ent / max(n_p, 1),
        }

    @torch.no_grad()
    def rewired_subgraph(self, data: Data, node: int, mode: str = "threshold") -> Data:
        """The rewired subgraph of one ``node`` (for case studies).

        Returned fields: ``x``, ``edge_index`` (fixed edges plus the kept candidate edges, both
        directions), ``edge_weight`` (ones), ``cand_mask`` (which of those are candidate edges),
        ``node_idx`` (global ids), ``target`` (local id of ``node``), ``cand_node``
        (local id of each candidate), ``cand_prob`` (its p), ``cand_kept`` (the hard mask) and
        ``cand_original`` (whether the edge existed), ``density`` (kept fraction).
        """
        owner = "GraphTOP.rewired_subgraph"
        check_choice("mode", owner, mode, ("sample", "threshold"))
        if isinstance(node, torch.Tensor) and node.numel() == 1 and not node.is_floating_point():
            node = int(node.reshape(-1)[0])
        node = check_int("node", owner, node, low=0)
        (node_id,) = self._check_graph(data, [node], owner, labels=False, name="node").tolist()
        sub = subgraphs_of(data, torch.tensor([node_id]), self.num_hops, owner)[0]
        batch = Batch.from_data_list([sub]).to(self.device)
        p, _ = self.candidate_probs(batch, self.node_embeddings(data, owner))
        m = self.hard_mask(p, mode, self._predict_generator())
        weight = batch.edge_weight.masked_scatter(batch.cand_mask, m.repeat_interleave(2))
        cand = sub.edge_index[:, sub.cand_mask]
        keep = weight.cpu() > 0
        return Data(
            x=sub.x,
            edge_index=sub.edge_index[:, keep],
            edge_weight=torch.ones(int(keep.sum()), dtype=sub.edge_weight.dtype),
            cand_mask=sub.cand_mask[keep],
            node_idx=sub.node_idx,
            target=sub.target,
            center=sub.center,
            cand_node=cand[1, 0::2],
            cand_prob=p.cpu(),
            cand_kept=m.cpu().bool(),
            cand_original=sub.edge_weight[sub.cand_mask][0::2].bool(),
            density=float(m.mean()) if m.numel() else 0.0,
        )
