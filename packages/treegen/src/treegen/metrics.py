r"""Comparing sampled hierarchies with the exact posterior of one jet.

For ``M`` sampled trees and the exact posterior :math:`p` over the :math:`(2n-3)!!` hierarchies:

* validity: the fraction of samples that are binary and physical (finite :math:`\log L`);
* total variation :math:`\mathrm{TV} = \frac12 \sum_T |\hat p(T) - p(T)|` between the samples'
  histogram (over topologies; invalid samples are a bin of their own, where :math:`p = 0`) and
  :math:`p`; with finitely many samples it is biased upward even for an exact sampler, so it is
  reported next to the TV of ``M`` exact-posterior draws (the noise floor);
* :math:`W_1` between the :math:`\log L` values of the valid samples and the distribution of
  :math:`\log L(T)` under :math:`T \sim p`;
* MAP: the best valid sample (rejection sampling) against the exact MAP tree: a hit when they
  are the same topology, and the gap
  :math:`\Delta\log L = \log L(\mathrm{MAP}) - \log L(\mathrm{best}) \ge 0`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import wasserstein_distance

from treegen.enumeration import tree_logliks, tree_table
from treegen.ginkgo import GinkgoLike
from treegen.tree import Tree

__all__ = ["JetPosterior", "sample_metrics"]


@dataclass(frozen=True)
class JetPosterior:
    """The exact posterior of one jet: every hierarchy's :math:`\\log L` and probability."""

    leaves: np.ndarray
    logl: np.ndarray
    probs: np.ndarray

    @classmethod
    def of(cls, leaves: np.ndarray, model: GinkgoLike) -> JetPosterior:
        logl = tree_logliks(leaves, model)
        w = np.exp(logl - logl.max())
        return cls(leaves, logl, w / w.sum())

    @property
    def map_row(self) -> int:
        return int(np.argmax(self.logl))

    def rows(self, trees: Sequence[Tree]) -> np.ndarray:
        """Row of each tree in :func:`treegen.enumeration.tree_table` (``-1`` if not binary)."""
        index = tree_table(self.leaves.shape[0]).index
        return np.array([index.get(t.key(), -1) if t.is_binary else -1 for t in trees])


def sample_metrics(post: JetPosterior, trees: Sequence[Tree]) -> dict[str, float]:
    """Validity, TV, W1, MAP hit and :math:`\\Delta\\log L` of ``trees`` (see module docstring);
    W1 and :math:`\\Delta\\log L` are NaN when no sample is valid."""
    rows = post.rows(trees)
    ll = np.where(rows >= 0, post.logl[np.maximum(rows, 0)], -np.inf)
    valid = np.isfinite(ll)
    counts = np.bincount(rows[valid], minlength=post.probs.size) / len(trees)
    tv = 0.5 * (np.abs(counts - post.probs).sum() + (~valid).mean())
    support = post.probs > 0
    if valid.any():
        w1 = wasserstein_distance(ll[valid], post.logl[support], v_weights=post.probs[support])
        best = int(rows[valid][np.argmax(ll[valid])])
        gap = float(post.logl[post.map_row] - post.logl[best])
        hit = float(post.logl[best] >= post.logl[post.map_row] - 1e-9)
    else:
        w1, gap, hit = np.nan, np.nan, 0.0
    return {
        "validity": float(valid.mean()),
        "tv": float(tv),
        "w1": float(w1),
        "map_hit": hit,
        "dlogl": gap,
    }
