r"""The exact likelihood of a hierarchy given its leaves under :class:`treegen.GinkgoLike`.

Internal momenta are the sums of their leaves' momenta, hence every invariant mass :math:`t`.
With :math:`s_i = t_i / t_P`, the density of one split in :math:`t`-units is

.. math::
   f(t_1, t_2 \mid t_P) = \frac{\lambda e^{-\lambda s_1}}{t_P (1 - e^{-\lambda})}
   \cdot \frac{\lambda e^{-\lambda s_2}}{t_P (1 - e^{-\lambda (1-\sqrt{s_1})^2})}
   \cdot \mathbb 1[s_2 \le (1 - \sqrt{s_1})^2],

and, the left/right assignment being a fair coin and the decay angles uniform,
:math:`\log L(T) = \sum_\text{splits}
\log[\tfrac12 f(t_a, t_b \mid t_P) + \tfrac12 f(t_b, t_a \mid t_P)]`
up to a tree-independent constant. :math:`L = 0` when an internal node has
:math:`t \le t_\mathrm{cut}`, a leaf has :math:`t > t_\mathrm{cut}`, or
:math:`\sqrt{t_a} + \sqrt{t_b} > \sqrt{t_P}`.
"""

from __future__ import annotations

import numpy as np

from treegen.checks import check_leaves
from treegen.ginkgo import GinkgoLike, check_model
from treegen.physics import mass2
from treegen.tree import Tree, check_tree

__all__ = ["is_valid", "split_logpdf", "tree_loglik"]


def _log_f(t1: np.ndarray, t2: np.ndarray, tp: np.ndarray, lam: float) -> np.ndarray:
    """log f(t1, t2 | tP), -inf outside the support."""
    s1 = np.clip(t1 / tp, 0.0, None)
    s2 = np.clip(t2 / tp, 0.0, None)
    upper = (1.0 - np.sqrt(np.minimum(s1, 1.0))) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (
            2 * np.log(lam)
            - lam * (s1 + s2)
            - 2 * np.log(tp)
            - np.log(-np.expm1(-lam))
            - np.log(-np.expm1(-lam * upper))
        )
    return np.where((s1 <= 1.0) & (s2 <= upper) & (upper > 0), out, -np.inf)


def split_logpdf(
    t_a: np.ndarray,
    t_b: np.ndarray,
    t_p: np.ndarray,
    internal_a: np.ndarray,
    internal_b: np.ndarray,
    model: GinkgoLike,
) -> np.ndarray:
    r""":math:`\log[\frac12 f(t_a,t_b|t_P) + \frac12 f(t_b,t_a|t_P)]` with the validity rules.

    Arrays broadcast; ``internal_a``/``internal_b`` say whether each child is an internal node
    (needs :math:`t > t_\mathrm{cut}`) or a leaf (needs :math:`t \le t_\mathrm{cut}`); the parent
    needs :math:`t_P > t_\mathrm{cut}`. Returns ``-inf`` where the split is impossible.
    """
    cut = model.t_cut
    ok = (t_p > cut) & np.where(internal_a, t_a > cut, t_a <= cut)
    ok &= np.where(internal_b, t_b > cut, t_b <= cut)
    ok &= np.sqrt(np.clip(t_a, 0, None)) + np.sqrt(np.clip(t_b, 0, None)) <= np.sqrt(
        np.clip(t_p, 0, None)
    )
    tp = np.where(t_p > 0, t_p, 1.0)
    both = np.logaddexp(_log_f(t_a, t_b, tp, model.lam), _log_f(t_b, t_a, tp, model.lam))
    return np.where(ok, both - np.log(2.0), -np.inf)


def tree_loglik(leaves: np.ndarray, tree: Tree, model: GinkgoLike) -> float:
    r""":math:`\log L(T)` of ``tree`` given ``leaves`` (``(n, 4)``), up to the tree-independent
    constant; ``-inf`` when the tree is not binary or not physical (see the module docstring).
    Invariant to the labelling of leaves and internal nodes. NaN/inf leaves are refused.

    >>> from treegen import GinkgoLike
    >>> model = GinkgoLike()
    >>> leaves, tree = model.sample(seed=1)
    >>> bool(np.isfinite(tree_loglik(leaves, tree, model)))
    True
    """
    owner = "tree_loglik"
    leaves = check_leaves("leaves", owner, leaves)
    tree = check_tree("tree", owner, tree, leaves.shape[0])
    model = check_model("model", owner, model)
    return _loglik(leaves, tree, model)


def _loglik(leaves: np.ndarray, tree: Tree, model: GinkgoLike) -> float:
    n = tree.n
    if not tree.is_binary:
        return -np.inf
    t_leaf = mass2(leaves)
    if (t_leaf > model.t_cut).any():
        return -np.inf
    t_int = mass2(tree.internal_momenta(leaves))
    t_all = np.concatenate([t_leaf, t_int])
    parents = np.concatenate([tree.parents[:n], tree.parents[n + 1 :]])
    nodes = np.concatenate([np.arange(n), n + np.arange(1, n - 1)])
    order = np.argsort(parents, kind="stable")
    kids = nodes[order].reshape(n - 1, 2)  # two children per internal node, by parent index
    a, b = kids[:, 0], kids[:, 1]
    scores = split_logpdf(t_all[a], t_all[b], t_int, a >= n, b >= n, model)
    return float(scores.sum())


def is_valid(tree: Tree, leaves: np.ndarray, model: GinkgoLike) -> bool:
    """Whether ``tree`` is a binary hierarchy with non-zero likelihood given ``leaves``
    (:func:`tree_loglik` finite). NaN/inf leaves are refused."""
    owner = "is_valid"
    leaves = check_leaves("leaves", owner, leaves)
    tree = check_tree("tree", owner, tree, leaves.shape[0])
    model = check_model("model", owner, model)
    return bool(np.isfinite(_loglik(leaves, tree, model)))
