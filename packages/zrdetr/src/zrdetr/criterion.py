r"""Hungarian matching and the training loss (paper Sec. 3; DETR's set criterion).

Per image, predictions are matched one-to-one to the present structures by the Hungarian
algorithm on :math:`C=2\,\mathrm{CE}_{class}+5\,\lVert b-\hat b\rVert_1+2(1-\mathrm{GIoU})`
(class-specific queries can only take their own class). The loss of every decoder layer (deep
supervision, including the zoom-free first pass of the box-based zoom estimator) is
:math:`\mathrm{CE}+5L_1+2(1-\mathrm{GIoU})+\mathrm{NLL}_{box}+0.1L_{rel}`; once
per batch :math:`\mathrm{KL}/N+0.5L_{zoom}` with :math:`L_{zoom}=|\widehat{\log z}-\log z|`.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_bool, check_int, check_real, check_tensor, param_error
from zrdetr.box_ops import _giou, _to_xyxy
from zrdetr.gp_head import _gaussian_nll
from zrdetr.relation import AnatomicalRelationPrior

__all__ = ["ZRDETRCriterion", "hungarian_match"]

#: Cost of a class-specific query taking another class: never chosen while any other is free.
FORBIDDEN = 1e6


def hungarian_match(cost: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Minimum-cost one-to-one assignment of the columns of ``cost`` (Q, G) (tensor or array),
    Q >= G, to rows
    (scipy's ``linear_sum_assignment``): (row indices, column indices), each (G,) int64,
    sorted by column."""
    from scipy.optimize import linear_sum_assignment

    if isinstance(cost, np.ndarray):
        cost = torch.as_tensor(cost)
    check_tensor("cost", "hungarian_match", cost, shape=("Q", "G"), nonempty=False)
    if cost.shape[0] < cost.shape[1]:
        raise param_error(
            "cost", "hungarian_match", "at least as many rows as columns", tuple(cost.shape)
        )
    rows, cols = linear_sum_assignment(cost.detach().cpu().double().numpy())
    order = np.argsort(cols)
    return torch.as_tensor(rows[order], dtype=torch.int64), torch.as_tensor(
        cols[order], dtype=torch.int64
    )


class ZRDETRCriterion(nn.Module):
    r"""The ZR-DETR loss.

    Args:
        n_classes: K.
        prior: a fitted :class:`~zrdetr.relation.AnatomicalRelationPrior` (None: no
            :math:`L_{rel}`).
        n_train: N, the number of training images (the KL is divided by it).
        class_queries: the first K queries may only be matched to their own class.
        cost_class, cost_l1, cost_giou: matching weights (2, 5, 2).
        w_ce, w_l1, w_giou, w_nll, w_rel, w_zoom: loss weights (1, 5, 2, 1, 0.1, 0.5).
        eos_coef: weight of the no-object class in the CE (DETR's 0.1).
        deep_supervision: add the loss of every earlier decoder layer (the last layer of the
            zoom-free first pass is always trained: the zoom is read off its boxes).
        nll_detach_mean: the box NLL trains the variance only (stop-gradient on the mean).

    forward(outputs, targets) with ``targets`` a dict: ``boxes`` (B, K, 4) ``(cx, cy, w, h)``,
    ``present`` (B, K) bool, optionally ``zoom`` (B,). Returns (total loss, dict of the parts as
    floats).
    """

    def __init__(
        self,
        n_classes: int,
        prior: AnatomicalRelationPrior | None = None,
        n_train: int = 1,
        class_queries: bool = True,
        cost_class: float = 2.0,
        cost_l1: float = 5.0,
        cost_giou: float = 2.0,
        w_ce: float = 1.0,
        w_l1: float = 5.0,
        w_giou: float = 2.0,
        w_nll: float = 1.0,
        w_rel: float = 0.1,
        w_zoom: float = 0.5,
        eos_coef: float = 0.1,
        deep_supervision: bool = True,
        nll_detach_mean: bool = True,
    ) -> None:
        super().__init__()
        owner = "ZRDETRCriterion"
        self.n_classes = check_int("n_classes", owner, n_classes, low=1, high=1024)
        if prior is not None and not isinstance(prior, AnatomicalRelationPrior):
            raise param_error(
                "prior",
                owner,
                "an AnatomicalRelationPrior or None",
                type(prior).__name__,
                cls=TypeError,
            )
        if prior is not None and prior.n_classes != self.n_classes:
            raise param_error("prior", owner, f"a prior over {n_classes} classes", prior.n_classes)
        self.prior = prior
        self.n_train = check_int("n_train", owner, n_train, low=1)
        self.class_queries = check_bool("class_queries", owner, class_queries)
        w = {}
        for name, value in (
            ("cost_class", cost_class),
            ("cost_l1", cost_l1),
            ("cost_giou", cost_giou),
            ("w_ce", w_ce),
            ("w_l1", w_l1),
            ("w_giou", w_giou),
            ("w_nll", w_nll),
            ("w_rel", w_rel),
            ("w_zoom", w_zoom),
        ):
            w[name] = check_real(name, owner, value, low=0)
        self.w = w
        self.eos_coef = check_real("eos_coef", owner, eos_coef, low=0, high=1, low_open=True)
        self.deep_supervision = check_bool("deep_supervision", owner, deep_supervision)
        self.nll_detach_mean = check_bool("nll_detach_mean", owner, nll_detach_mean)

    @torch.no_grad()
    def match(self, out: dict, targets: dict) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per image: (query indices, class indices) of the Hungarian assignment."""
        K, w = self.n_classes, self.w
        probs = out["logits"].float().log_softmax(-1)
        boxes = out["boxes"].float()
        result = []
        for b in range(boxes.shape[0]):
            cls = torch.nonzero(targets["present"][b]).squeeze(1)
            if cls.numel() == 0:
                empty = torch.zeros(0, dtype=torch.int64)
                result.append((empty, empty))
                continue
            tgt = targets["boxes"][b, cls].float()
            cost = -w["cost_class"] * probs[b][:, cls]
            cost = cost + w["cost_l1"] * torch.cdist(boxes[b], tgt, p=1)
            giou = _giou(_to_xyxy(boxes[b]), _to_xyxy(tgt))
            cost = cost + w["cost_giou"] * (1 - giou)
            if self.class_queries:
                q = torch.arange(boxes.shape[1])[:, None]
                cost = cost + FORBIDDEN * ((q < K) & (q != cls[None, :])).to(cost.dtype)
            rows, cols = hungarian_match(cost)
            result.append((rows, cls[cols]))
        return result

    def _layer_loss(self, out: dict, targets: dict, gp: bool) -> dict[str, torch.Tensor]:
        K = self.n_classes
        B, Q = out["boxes"].shape[:2]
        matches = self.match(out, targets)
        bidx = torch.cat([torch.full_like(r, b) for b, (r, _) in enumerate(matches)])
        qidx = torch.cat([r for r, _ in matches])
        cidx = torch.cat([c for _, c in matches])
        target_cls = torch.full((B, Q), K, dtype=torch.int64, device=out["logits"].device)
        target_cls[bidx, qidx] = cidx
        weight = torch.ones(K + 1, device=out["logits"].device)
        weight[K] = self.eos_coef
        logp = out["logits"].float().log_softmax(-1)
        parts = {"ce": F.nll_loss(logp.reshape(B * Q, -1), target_cls.reshape(-1), weight=weight)}
        n_boxes = max(len(qidx), 1)
        pred = out["boxes"][bidx, qidx].float()
        tgt = targets["boxes"][bidx, cidx].float()
        parts["l1"] = (pred - tgt).abs().sum() / n_boxes
        giou = torch.diagonal(_giou(_to_xyxy(pred), _to_xyxy(tgt)))
        parts["giou"] = (1 - giou).sum() / n_boxes
        if gp and len(qidx):
            var = out["box_var"][bidx, qidx].float().clamp(min=1e-8)
            # the NLL trains the variance only: (y - mu) / sigma^2 would otherwise swamp the L1
            # and GIoU gradients of the box as soon as sigma^2 is small
            mu = pred.detach() if self.nll_detach_mean else pred
            parts["nll"] = _gaussian_nll(mu, var, tgt)
        if self.prior is not None and len(qidx):
            arranged = targets["boxes"].float().clone()
            arranged[bidx, cidx] = pred
            matched = torch.zeros(B, K, dtype=torch.bool, device=pred.device)
            matched[bidx, cidx] = True
            present = matched & ~targets.get("truncated", torch.zeros_like(matched))
            parts["rel"] = self.prior.nll_unchecked(arranged, present).mean()
        return parts

    def forward(self, outputs: dict, targets: dict) -> tuple[torch.Tensor, dict[str, float]]:
        if not isinstance(outputs, dict) or "boxes" not in outputs or "logits" not in outputs:
            raise param_error(
                "outputs",
                "ZRDETRCriterion",
                "the dict ZRDETR returns",
                type(outputs).__name__,
                cls=TypeError,
            )
        dims: dict = {}
        K = self.n_classes
        check_tensor("boxes", "ZRDETRCriterion", targets["boxes"], shape=("B", K, 4), dims=dims)
        check_tensor(
            "present",
            "ZRDETRCriterion",
            targets["present"],
            shape=("B", K),
            dims=dims,
            dtype="bool",
        )
        gp = "kl" in outputs
        first = list(outputs.get("first_pass", []))  # the zoom-free pass of the box estimator
        if self.deep_supervision:
            layers = [outputs, *outputs.get("aux", []), *first]
        else:
            layers = [outputs, *first[-1:]]
        w = self.w
        names = {"ce": "w_ce", "l1": "w_l1", "giou": "w_giou", "nll": "w_nll", "rel": "w_rel"}
        total = outputs["boxes"].new_zeros(())
        logged: dict[str, float] = {}
        for i, out in enumerate(layers):
            for name, value in self._layer_loss(out, targets, gp).items():
                total = total + w[names[name]] * value
                if i == 0:
                    logged[name] = float(value.detach())
        if gp:
            kl = outputs["kl"] / self.n_train
            total = total + kl
            logged["kl"] = float(kl.detach())
        if targets.get("zoom") is not None and outputs.get("has_zoom", False):
            lz = (outputs["log_zoom"].float() - torch.log(targets["zoom"].float())).abs().mean()
            total = total + w["w_zoom"] * lz
            logged["zoom"] = float(lz.detach())
        logged["total"] = float(total.detach())
        return total, logged
