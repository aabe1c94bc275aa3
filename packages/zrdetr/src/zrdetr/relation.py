r"""The anatomical relation prior and the relation bias (paper Sec. 3, "anatomical relation
constraints").

For an ordered pair of structures (k, l) seen together, the relative geometry is

.. math:: r_{kl}=\Big(\frac{c^x_l-c^x_k}{s_k},\ \frac{c^y_l-c^y_k}{s_k},\
          \log\frac{w_l}{w_k},\ \log\frac{h_l}{h_k}\Big),\qquad s_k=\sqrt{w_kh_k},

which does not change when every box is translated or scaled about a common point, so zoom
leaves it unchanged. :class:`AnatomicalRelationPrior` fits a Gaussian
:math:`\mathcal{N}(m_{kl}, C_{kl}+10^{-3}I)` per pair on training boxes (untruncated ones: a box
cut by the frame has the wrong size) and scores a set of boxes by
:math:`L_{rel}=\mathrm{mean}_{(k,l)}\tfrac12(r_{kl}-m_{kl})^\top C_{kl}^{-1}(r_{kl}-m_{kl})`.
:class:`RelationBias` is the learned additive bias :math:`b_{kl}` (zero-initialised) on the
self-attention logits between the class queries.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import torch
from torch import nn

from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["AnatomicalRelationPrior", "RelationBias", "relative_geometry"]


def relative_geometry(boxes: torch.Tensor) -> torch.Tensor:
    r"""All pairwise :math:`r_{kl}` of ``boxes`` (..., K, 4) in ``(cx, cy, w, h)``:
    (..., K, K, 4), entry [k, l] the geometry of l seen from k."""
    cx, cy, w, h = boxes.unbind(-1)
    s = torch.sqrt(w * h)
    dx = (cx[..., None, :] - cx[..., :, None]) / s[..., :, None]
    dy = (cy[..., None, :] - cy[..., :, None]) / s[..., :, None]
    lw = torch.log(w)[..., None, :] - torch.log(w)[..., :, None]
    lh = torch.log(h)[..., None, :] - torch.log(h)[..., :, None]
    return torch.stack([dx, dy, lw, lh], dim=-1)


class AnatomicalRelationPrior:
    r"""Pairwise Gaussian prior over relative box geometry.

    Args:
        n_classes: K, the number of anatomical structures.
        ridge: added to every covariance, :math:`C_{kl}+\mathrm{ridge}\,I` (paper: 1e-3).
        min_count: pairs seen together fewer times are left out of :meth:`nll`.

    Attributes (after :meth:`fit`): ``mean`` (K, K, 4), ``cov`` (K, K, 4, 4), ``count`` (K, K),
    ``valid`` (K, K) bool (pairs with at least ``min_count`` samples; the diagonal is False).
    """

    def __init__(self, n_classes: int, ridge: float = 1e-3, min_count: int = 5) -> None:
        owner = "AnatomicalRelationPrior"
        self.n_classes = check_int("n_classes", owner, n_classes, low=2, high=1024)
        self.ridge = check_real("ridge", owner, ridge, low=0, low_open=True)
        self.min_count = check_int("min_count", owner, min_count, low=2)
        K = self.n_classes
        self.mean = torch.zeros(K, K, 4, dtype=torch.float64)
        self.cov = torch.eye(4, dtype=torch.float64).expand(K, K, 4, 4).clone()
        self.count = torch.zeros(K, K, dtype=torch.int64)
        self.valid = torch.zeros(K, K, dtype=torch.bool)
        self._precision = torch.eye(4, dtype=torch.float64).expand(K, K, 4, 4).clone()

    @property
    def fitted(self) -> bool:
        return bool(self.valid.any())

    def fit(
        self,
        boxes: Sequence[torch.Tensor | np.ndarray],
        labels: Sequence[torch.Tensor | np.ndarray],
    ) -> AnatomicalRelationPrior:
        """Fit :math:`m_{kl}`, :math:`C_{kl}` on the boxes (K_i, 4) ``(cx, cy, w, h)`` and class
        ids (K_i,) of each training image (each class at most once per image). Returns self."""
        owner = "AnatomicalRelationPrior.fit"
        if not isinstance(boxes, (list, tuple)) or not isinstance(labels, (list, tuple)):
            what = "boxes" if not isinstance(boxes, (list, tuple)) else "labels"
            raise param_error(
                what, owner, "a list of per-image arrays", type(boxes).__name__, cls=TypeError
            )
        if len(boxes) == 0:
            raise param_error("boxes", owner, "a non-empty list", "[]")
        if len(boxes) != len(labels):
            raise param_error(
                "labels", owner, f"a list as long as 'boxes' ({len(boxes)})", len(labels)
            )
        K = self.n_classes
        full = torch.full((len(boxes), K, 4), 1.0, dtype=torch.float64)
        present = torch.zeros(len(boxes), K, dtype=torch.bool)
        for i, (b, y) in enumerate(zip(boxes, labels, strict=True)):
            b = torch.as_tensor(b)
            y = torch.as_tensor(y)
            check_tensor("boxes", owner, b, shape=(None, 4))
            check_tensor("labels", owner, y, shape=(b.shape[0],), dtype="int", nonempty=False)
            if bool((b[:, 2:] <= 0).any()):
                raise param_error(
                    "boxes",
                    owner,
                    "boxes with w > 0 and h > 0",
                    f"a box with w or h <= 0 in image {i}",
                )
            if y.numel() and (int(y.min()) < 0 or int(y.max()) >= K):
                raise param_error(
                    "labels", owner, f"class ids in [0, {K})", f"ids {y.tolist()} in image {i}"
                )
            if y.unique().numel() != y.numel():
                raise param_error(
                    "labels", owner, "each class at most once per image", f"{y.tolist()}"
                )
            full[i, y] = b.to(torch.float64)
            present[i, y] = True
        r = relative_geometry(full)  # (N, K, K, 4)
        both = present[:, :, None] & present[:, None, :]
        both &= ~torch.eye(K, dtype=torch.bool)
        count = both.sum(0)
        w = both.to(torch.float64)[..., None]
        n = count.clamp(min=1).to(torch.float64)[..., None]
        mean = (w * r).sum(0) / n
        dev = (r - mean) * w
        cov = torch.einsum("nkla,nklb->klab", dev, dev) / (n[..., None] - 1).clamp(min=1)
        eye = torch.eye(4, dtype=torch.float64)
        self.valid = count >= self.min_count
        self.count = count
        self.mean = torch.where(self.valid[..., None], mean, torch.zeros_like(mean))
        cov = torch.where(self.valid[..., None, None], cov, eye.expand_as(cov)) + self.ridge * eye
        self.cov = cov
        self._precision = torch.linalg.inv(cov)
        return self

    def pair_mahalanobis(self, boxes: torch.Tensor) -> torch.Tensor:
        r"""Squared Mahalanobis distances :math:`d^2_{kl}` of every ordered pair of ``boxes``
        (B, K, 4) under the fitted prior, (B, K, K); no checks (inside the loss)."""
        dt = boxes.dtype if boxes.dtype == torch.float64 else torch.float32
        mean = self.mean.to(boxes.device, dt)
        prec = self._precision.to(boxes.device, dt)
        b = boxes.to(dt)
        b = torch.cat([b[..., :2], b[..., 2:].clamp(min=1e-6)], -1)
        delta = relative_geometry(b) - mean
        return torch.einsum("nkla,klab,nklb->nkl", delta, prec, delta)

    def pair_mask(self, present: torch.Tensor) -> torch.Tensor:
        """(B, K, K) bool: both structures present and the pair fitted."""
        return present[:, :, None] & present[:, None, :] & self.valid.to(present.device)

    def nll(self, boxes: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        r""":math:`L_{rel}` per image: the mean over present, fitted ordered pairs of
        :math:`\tfrac12 d^2_{kl}`; 0 for an image with no such pair. ``boxes`` (B, K, 4)
        ``(cx, cy, w, h)`` with w, h > 0, ``present`` (B, K) bool -> (B,)."""
        owner = "AnatomicalRelationPrior.nll"
        dims: dict = {}
        K = self.n_classes
        check_tensor("boxes", owner, boxes, shape=("B", K, 4), dims=dims)
        check_tensor("present", owner, present, shape=("B", K), dims=dims, dtype="bool")
        if bool((boxes[..., 2:] <= 0).any()):
            raise param_error(
                "boxes", owner, "boxes with w > 0 and h > 0", "a box with w or h <= 0"
            )
        return self.nll_unchecked(boxes, present)

    def nll_unchecked(self, boxes: torch.Tensor, present: torch.Tensor) -> torch.Tensor:
        """:meth:`nll` without the argument checks (inside the training loss)."""
        d2 = self.pair_mahalanobis(boxes)
        mask = self.pair_mask(present).to(d2.dtype)
        return 0.5 * (d2 * mask).sum((1, 2)) / mask.sum((1, 2)).clamp(min=1)

    def save(self, path: str | Path) -> Path:
        """Write the fitted prior to ``path`` (a torch file); returns the path."""
        path = Path(path)
        torch.save(
            {
                "n_classes": self.n_classes,
                "ridge": self.ridge,
                "min_count": self.min_count,
                "mean": self.mean,
                "cov": self.cov,
                "count": self.count,
                "valid": self.valid,
            },
            path,
        )
        return path

    @classmethod
    def load(cls, path: str | Path) -> AnatomicalRelationPrior:
        """Read a prior written by :meth:`save`."""
        state = torch.load(Path(path), weights_only=True)
        prior = cls(state["n_classes"], ridge=state["ridge"], min_count=state["min_count"])
        prior.mean, prior.cov = state["mean"], state["cov"]
        prior.count, prior.valid = state["count"], state["valid"]
        prior._precision = torch.linalg.inv(prior.cov)
        return prior


class RelationBias(nn.Module):
    r"""Learned :math:`b\in\mathbb{R}^{K\times K}` (zero-init) added to the query self-attention
    logits between the K class queries; forward(n_queries) -> the (Q, Q) additive mask (zero
    outside the top-left K x K block)."""

    def __init__(self, n_classes: int) -> None:
        super().__init__()
        self.n_classes = check_int("n_classes", "RelationBias", n_classes, low=1, high=4096)
        self.bias = nn.Parameter(torch.zeros(n_classes, n_classes))

    def forward(self, n_queries: int) -> torch.Tensor:
        K = self.n_classes
        n_queries = check_int("n_queries", "RelationBias", n_queries, low=K, high=1 << 15)
        return nn.functional.pad(self.bias, (0, n_queries - K, 0, n_queries - K))
