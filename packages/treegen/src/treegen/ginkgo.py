r"""A Ginkgo-like toy jet simulator (the generative model of the paper's jet-clustering task).

A node of invariant mass squared :math:`t_P > t_\mathrm{cut}` splits into two children:
:math:`s_1 \sim \mathrm{TruncExp}(\lambda)` on :math:`[0, 1]` (density
:math:`\lambda e^{-\lambda s}/(1 - e^{-\lambda})`), :math:`t_1 = s_1 t_P`;
:math:`s_2 \sim \mathrm{TruncExp}(\lambda)` on :math:`[0, (1-\sqrt{s_1})^2]`, :math:`t_2 = s_2 t_P`;
the two masses go to the left/right child at random; the decay is isotropic in the parent's rest
frame and boosted to the lab. A node with :math:`t \le t_\mathrm{cut}` is a leaf (an observed
particle). The condition :math:`s_2 \le (1-\sqrt{s_1})^2` is
:math:`\sqrt{t_1} + \sqrt{t_2} \le \sqrt{t_P}`, so every decay is kinematically allowed.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, check_int, check_real, param_error
from treegen.physics import mass2, two_body_decay
from treegen.tree import Tree, canonicalize

__all__ = ["GinkgoLike"]

#: Default jet momentum: 400 GeV along (1, 1, 1)/sqrt(3), as in Ginkgo's examples.
JET_P = 400.0


def _trunc_exp(lam: float, upper: float, rng: np.random.Generator) -> float:
    r"""Inverse-CDF draw from :math:`\lambda e^{-\lambda s}` truncated to :math:`[0, u]`."""
    u = rng.uniform()
    return float(-np.log1p(-u * (-np.expm1(-lam * upper))) / lam)


class GinkgoLike:
    r"""The simulator and its parameters.

    Args:
        t_root: mass squared of the jet, :math:`t_0` (GeV²), ``> t_cut``.
        lam: decay rate :math:`\lambda > 0` of the truncated exponential.
        t_cut: a node with :math:`t \le t_\mathrm{cut}` does not split.
        p_root: the jet's four-momentum ``(4,)`` with mass² ``t_root`` (relative 1e-6); default
            400 GeV along (1, 1, 1)/√3.

    NaN/inf parameters are refused. With ``t_root=400`` most jets have 4-7 leaves.

    >>> leaves, tree = GinkgoLike().sample(seed=1)
    >>> leaves.shape[1], tree.n == leaves.shape[0], tree.is_binary
    (4, True, True)
    """

    def __init__(
        self,
        t_root: float = 400.0,
        lam: float = 1.5,
        t_cut: float = 16.0,
        p_root: np.ndarray | None = None,
    ) -> None:
        owner = "GinkgoLike"
        self.t_cut = check_real("t_cut", owner, t_cut, low=0, low_open=True)
        self.t_root = check_real("t_root", owner, t_root, low=self.t_cut, low_open=True)
        self.lam = check_real("lam", owner, lam, low=0, low_open=True)
        if p_root is None:
            p3 = JET_P * np.ones(3) / np.sqrt(3.0)
            p_root = np.concatenate([[np.sqrt(JET_P**2 + self.t_root)], p3])
        else:
            p_root = check_array("p_root", owner, p_root, shape=(4,), kind="float")
            if p_root[0] <= 0 or abs(mass2(p_root) - self.t_root) > 1e-6 * self.t_root:
                raise param_error(
                    "p_root",
                    owner,
                    f"a four-vector with E > 0 and mass² = t_root = {t_root}",
                    p_root.tolist(),
                )
        self.p_root = np.asarray(p_root, dtype=np.float64)

    def __repr__(self) -> str:
        return f"GinkgoLike(t_root={self.t_root}, lam={self.lam}, t_cut={self.t_cut})"

    def sample(self, seed: int | np.random.Generator = 0) -> tuple[np.ndarray, Tree]:
        """One jet: its leaves ``(n, 4)`` in random order and the generating :class:`Tree` in
        canonical (decreasing-mass) labelling."""
        rng = seed if isinstance(seed, np.random.Generator) else None
        if rng is None:
            rng = np.random.default_rng(check_int("seed", "GinkgoLike.sample", seed, low=0))
        momenta, masses, parent = [self.p_root], [self.t_root], [-1]
        stack = [0]
        while stack:
            node = stack.pop()
            t_p = masses[node]
            if t_p <= self.t_cut:
                continue
            s1 = _trunc_exp(self.lam, 1.0, rng)
            s2 = _trunc_exp(self.lam, (1.0 - np.sqrt(s1)) ** 2, rng)
            pair = [s1 * t_p, s2 * t_p]
            if rng.uniform() < 0.5:
                pair.reverse()
            for child, t in zip(two_body_decay(momenta[node], *pair, rng), pair, strict=True):
                momenta.append(child)
                masses.append(t)
                parent.append(node)
                stack.append(len(momenta) - 1)
        return self._to_tree(np.array(momenta), np.array(masses), np.array(parent), rng)

    def _to_tree(
        self, momenta: np.ndarray, masses: np.ndarray, parent: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, Tree]:
        is_leaf = masses <= self.t_cut
        leaf_nodes = rng.permutation(np.flatnonzero(is_leaf))
        internal_nodes = np.flatnonzero(~is_leaf)  # creation order: parents first
        n = leaf_nodes.size
        index = np.empty(masses.size, dtype=np.int64)
        index[internal_nodes] = np.arange(n - 1)
        parents = np.empty(2 * n - 1, dtype=np.int64)
        parents[:n] = index[parent[leaf_nodes]]
        parents[n:] = np.where(parent[internal_nodes] < 0, -1, index[parent[internal_nodes]])
        leaves = momenta[leaf_nodes]
        return leaves, canonicalize(Tree(parents), leaves)

    def sample_jets(
        self, count: int, seed: int = 0, n_min: int = 2, n_max: int | None = None
    ) -> list[tuple[np.ndarray, Tree]]:
        """``count`` jets with ``n_min <= n <= n_max`` leaves (others are drawn and rejected)."""
        owner = "GinkgoLike.sample_jets"
        count = check_int("count", owner, count, low=1, high=10**7)
        seed = check_int("seed", owner, seed, low=0)
        n_min = check_int("n_min", owner, n_min, low=2)
        n_max = n_min + 10**6 if n_max is None else check_int("n_max", owner, n_max, low=n_min)
        rng = np.random.default_rng(seed)
        jets: list[tuple[np.ndarray, Tree]] = []
        for _ in range(1000 * count):
            leaves, tree = self.sample(rng)
            if n_min <= leaves.shape[0] <= n_max:
                jets.append((leaves, tree))
                if len(jets) == count:
                    return jets
        raise param_error(
            "n_min", owner, "a leaf-count range this simulator reaches", (n_min, n_max)
        )


def check_model(name: str, owner: str, model: Any) -> GinkgoLike:
    """``model`` if it is a :class:`GinkgoLike`, else a worded ``TypeError``."""
    if not isinstance(model, GinkgoLike):
        raise param_error(name, owner, "a treegen.GinkgoLike", type(model).__name__, cls=TypeError)
    return model
