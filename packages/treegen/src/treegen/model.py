r"""The TreeGen network: a transformer over a probabilistic hierarchy, trained as a BFN.

Tokens are the ``n`` leaves and the ``n - 1`` internal nodes (indexed by decreasing mass). A leaf
token embeds :math:`(\log E, \log p_T, \eta, \phi - \phi_\mathrm{jet}, \log m^2)`; an internal
token ``j`` embeds its rank and *soft* features of the current probabilistic hierarchy
:math:`\theta`: with :math:`P_\mathrm{leaf}` (``n × (n-1)``, rows :math:`\theta_{a_i}`) and the
strictly lower-triangular :math:`P_\mathrm{int}` (rows :math:`\theta_{b_j}`), the soft ancestor
matrix :math:`D = P_\mathrm{leaf}(I - P_\mathrm{int})^{-1}` gives the probability that leaf ``i``
lies below node ``j``, the soft momentum :math:`\hat p_j = \sum_i D_{ij} p_i`, its soft mass, the
soft leaf count :math:`\sum_i D_{ij}` and the soft child count :math:`\sum_u \theta_u(j)`.
Every token also embeds its own parent distribution and Fourier features of ``t``; attention is
biased by :math:`\gamma_h \log(S + S^\top + 10^{-3})`, :math:`S_{u,v}` the probability that
``v`` is ``u``'s parent. The output for each variable is a pointer-network softmax over the
internal tokens, masked to its admissible parents (:math:`a_i \in \{0..n-2\}`,
:math:`b_j \in \{0..j-1\}`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from paperkit import check_choice, check_int, check_real, param_error
from treegen.bfn import CategoricalBFN, class_mask
from treegen.checks import check_leaves
from treegen.ginkgo import GinkgoLike, check_model
from treegen.likelihood import tree_loglik
from treegen.physics import jet_features
from treegen.scheduler import EntropyScheduler, QuadraticScheduler
from treegen.tree import Tree, canonicalize

__all__ = ["TreeGen", "class_counts", "make_scheduler"]


@functools.lru_cache(maxsize=16)
def make_scheduler(kind: str, k_max: int, beta1: float = 3.0) -> Any:
    """A (cached) :class:`EntropyScheduler` (``kind="entropy"``) or :class:`QuadraticScheduler`."""
    if kind == "entropy":
        return EntropyScheduler(k_max)
    return QuadraticScheduler(k_max, beta1)


def class_counts(n: int) -> torch.Tensor:
    """Class count of each variable over ``n`` leaves: ``n - 1`` for the ``n`` leaves, then ``j``
    for internal nodes ``j = 1..n-2``; ``(2n - 2,)`` int64."""
    return torch.cat([torch.full((n,), n - 1), torch.arange(1, n - 1)]).long()


def targets_of(tree: Tree) -> np.ndarray:
    """The variables' classes of a tree: its parents array without the root, ``(2n - 2,)``."""
    n = tree.n
    return np.concatenate([tree.parents[:n], tree.parents[n + 1 :]])


def tree_of(classes: np.ndarray) -> Tree:
    """The inverse of :func:`targets_of`."""
    n = (classes.size + 2) // 2
    return Tree(np.concatenate([classes[:n], [-1], classes[n:]]))


class _Block(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))

    def forward(self, h: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        B, L, d = h.shape
        q, k, v = self.qkv(self.norm1(h)).view(B, L, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        att = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=bias.to(q.dtype))
        h = h + self.out(att.transpose(1, 2).reshape(B, L, d))
        return h + self.mlp(self.norm2(h))


class TreeGen(nn.Module):
    r"""TreeGen: a categorical BFN over parent arrays with the network described above.

    Args:
        d_model, layers, heads: transformer width, depth, attention heads.
        n_max: the largest number of leaves (internal ranks embedded, schedules tabulated).
        scheduler: ``"entropy"`` (TreeGen's entropy-consistent :math:`\beta_K(t)`) or
            ``"quadratic"`` (:math:`\beta_1 t^2` for every K).
        beta1: :math:`\beta_1` of the quadratic schedule.

    ``forward(theta, t, leaves)``: ``theta`` ``(B, 2n-2, n-1)`` parent distributions of the
    variables (leaves, then internal nodes 1..n-2), ``t`` ``(B,)``, ``leaves`` ``(B, n, 4)`` →
    logits ``(B, 2n-2, n-1)`` (inadmissible parents at -inf).
    """

    def __init__(
        self,
        d_model: int = 128,
        layers: int = 3,
        heads: int = 4,
        n_max: int = 8,
        scheduler: str = "entropy",
        beta1: float = 3.0,
    ) -> None:
        super().__init__()
        owner = "TreeGen"
        self.d_model = check_int("d_model", owner, d_model, low=1, high=4096)
        heads = check_int("heads", owner, heads, low=1, high=self.d_model)
        if self.d_model % heads:
            raise param_error("heads", owner, f"a divisor of d_model={d_model}", heads)
        layers = check_int("layers", owner, layers, low=1, high=64)
        self.n_max = check_int("n_max", owner, n_max, low=2, high=64)
        self.scheduler_kind = check_choice("scheduler", owner, scheduler, ("entropy", "quadratic"))
        self.beta1 = check_real("beta1", owner, beta1, low=0, low_open=True)
        self.bfn = CategoricalBFN(make_scheduler(self.scheduler_kind, self.n_max - 1, self.beta1))
        d, k = self.d_model, self.n_max - 1
        self.leaf_in = nn.Sequential(nn.Linear(5, d), nn.GELU(), nn.Linear(d, d))
        self.node_in = nn.Sequential(nn.Linear(7, d), nn.GELU(), nn.Linear(d, d))
        self.rank = nn.Embedding(k, d)
        self.theta_in = nn.Linear(k, d)
        self.time_in = nn.Sequential(nn.Linear(16, d), nn.GELU(), nn.Linear(d, d))
        self.register_buffer("freqs", torch.logspace(0, 2, 8) * math.pi, persistent=False)
        self.gamma = nn.Parameter(torch.ones(heads))
        self.blocks = nn.ModuleList(_Block(d, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(d)
        self.query, self.key = nn.Linear(d, d), nn.Linear(d, d)

    def forward(self, theta: torch.Tensor, t: torch.Tensor, leaves: torch.Tensor) -> torch.Tensor:
        B, n, _ = leaves.shape
        k, dt = self.n_max - 1, theta.dtype
        leaves = leaves.to(dt)
        jet = leaves.sum(1, keepdim=True)
        zero = theta.new_zeros(B, 1, n - 1)
        rows = torch.cat([theta[:, :n], zero, theta[:, n:]], 1)  # (B, 2n-1, n-1), token order
        p_int = rows[:, n:]
        eye = torch.eye(n - 1, dtype=dt).expand(B, -1, -1)
        inv = torch.linalg.solve_triangular(eye - p_int, eye, upper=False)
        D = theta[:, :n] @ inv  # (B, n, n-1): P(leaf i below node j)
        p_hat = D.transpose(1, 2) @ leaves
        count = D.sum(1).clamp_min(1e-3).log()[..., None]
        kids = theta.sum(1)[..., None]  # soft number of children (2 in a valid tree)
        node_feat = torch.cat([jet_features(p_hat, jet), count, kids], -1)
        h = torch.cat(
            [
                self.leaf_in(jet_features(leaves, jet)),
                self.node_in(node_feat) + self.rank.weight[: n - 1],
            ],
            1,
        )
        h = h + self.theta_in(nn.functional.pad(rows, (0, k - (n - 1))))
        ang = t.to(dt)[:, None] * self.freqs
        h = h + self.time_in(torch.cat([ang.sin(), ang.cos()], -1))[:, None]
        S = nn.functional.pad(rows, (n, 0))  # S[u, n + v] = P(parent of u is v)
        logS = (S + S.transpose(1, 2) + 1e-3).log()
        bias = self.gamma[None, :, None, None] * logS[:, None]
        for block in self.blocks:
            h = block(h, bias)
        h = self.norm(h)
        logits = self.query(h) @ self.key(h[:, n:]).transpose(1, 2) / math.sqrt(self.d_model)
        logits = torch.cat([logits[:, :n], logits[:, n + 1 :]], 1)
        return logits.masked_fill(~class_mask(class_counts(n), n - 1), float("-inf"))

    def fit(
        self,
        jets: Sequence[tuple[np.ndarray, Tree | Sequence[Tree]]],
        epochs: int,
        lr: float = 3e-4,
        batch: int = 64,
        seed: int = 0,
        progress: Any = None,
    ) -> TreeGen:
        r"""Train with the continuous-time BFN loss (Adam with a cosine decay of ``lr`` to 0,
        gradient norm clipped at 1).

        ``jets``: ``(leaves (n, 4), target)`` pairs with ``2 <= n <= n_max``; the target is a
        canonically labelled :class:`Tree` or a sequence of them, of which epoch ``e`` uses
        entry ``e mod len`` (draws from the exact posterior re-drawn every epoch). Batches hold
        jets of one size. ``progress``: an optional wrapper of the epoch iterator. Returns self.
        """
        owner = "TreeGen.fit"
        epochs = check_int("epochs", owner, epochs, low=1, high=10**6)
        lr = check_real("lr", owner, lr, low=0, low_open=True)
        batch = check_int("batch", owner, batch, low=1, high=10**6)
        seed = check_int("seed", owner, seed, low=0)
        if isinstance(jets, (str, bytes)) or not isinstance(jets, Sequence) or not jets:
            raise param_error("jets", owner, "a non-empty list of (leaves, tree) pairs", jets)
        data = self._prepare(jets, owner)
        rng = np.random.default_rng(seed)
        gen = torch.Generator().manual_seed(seed)
        opt = torch.optim.Adam(self.parameters(), lr=lr)
        total = epochs * sum(-(-a.shape[0] // batch) for a, _ in data.values())
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda step: 0.5 * (1 + math.cos(math.pi * min(step, total) / total))
        )
        self.train()
        epoch_iter = range(epochs) if progress is None else progress(range(epochs))
        self.losses: list[float] = []
        for epoch in epoch_iter:
            order = []
            for n, (leaves, _) in data.items():
                perm = rng.permutation(leaves.shape[0])
                order += [(n, perm[i : i + batch]) for i in range(0, perm.size, batch)]
            for i in rng.permutation(len(order)):
                n, idx = order[i]
                leaves, targets = data[n]
                x = targets[idx, epoch % targets.shape[1]]
                x = nn.functional.one_hot(torch.from_numpy(x), n - 1).float()
                lv = torch.from_numpy(leaves[idx]).float()
                t = torch.rand(idx.size, generator=gen)
                loss = self.bfn.loss(
                    lambda th, tt, lv=lv: self(th, tt, lv), x, t, class_counts(n), gen
                )
                opt.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.parameters(), 1.0)
                opt.step()
                sched.step()
                self.losses.append(float(loss.detach()))
        self.eval()
        return self

    def _prepare(self, jets, owner) -> dict[int, tuple[np.ndarray, np.ndarray]]:
        groups: dict[int, tuple[list, list]] = {}
        draws = None
        for i, item in enumerate(jets):
            if not (isinstance(item, tuple) and len(item) == 2):
                raise param_error("jets", owner, "(leaves, tree) pairs", f"item {i}: {item!r}")
            leaves = check_leaves("jets", owner, item[0], n_max=self.n_max)
            trees = [item[1]] if isinstance(item[1], Tree) else list(item[1])
            if not trees or not all(isinstance(t, Tree) and t.n == leaves.shape[0] for t in trees):
                raise param_error("jets", owner, "targets that are Trees over the jet's leaves", i)
            draws = len(trees) if draws is None else draws
            if len(trees) != draws:
                raise param_error("jets", owner, f"{draws} target trees per jet", len(trees))
            group = groups.setdefault(leaves.shape[0], ([], []))
            group[0].append(leaves)
            group[1].append(np.stack([targets_of(t) for t in trees]))
        return {n: (np.stack(a), np.stack(b)) for n, (a, b) in sorted(groups.items())}

    @torch.no_grad()
    def sample(
        self,
        leaves: np.ndarray,
        num: int = 100,
        steps: int = 100,
        seed: int = 0,
        final: str = "sample",
    ) -> list[Tree]:
        r"""``num`` hierarchies for ``leaves`` (``(n, 4)``, ``2 <= n <= n_max``) from ``steps``
        BFN sampling steps, all ``num`` chains batched in one forward per step; deterministic
        under ``seed``. Trees are returned as generated (they may be invalid; see
        :func:`treegen.is_valid`)."""
        owner = "TreeGen.sample"
        leaves = check_leaves("leaves", owner, leaves, n_max=self.n_max)
        num = check_int("num", owner, num, low=1, high=10**6)
        steps = check_int("steps", owner, steps, low=1, high=10**5)
        seed = check_int("seed", owner, seed, low=0)
        final = check_choice("final", owner, final, ("sample", "argmax"))
        n = leaves.shape[0]
        lv = torch.from_numpy(leaves).float()[None].expand(num, -1, -1)
        gen = torch.Generator().manual_seed(seed)
        self.eval()
        classes = self.bfn._sample(
            lambda th, tt: self(th, tt, lv), class_counts(n), n - 1, steps, num, gen, final
        ).numpy()
        return [tree_of(c) for c in classes]

    def map_tree(
        self,
        leaves: np.ndarray,
        num: int = 1000,
        model: GinkgoLike | None = None,
        steps: int = 100,
        seed: int = 0,
        samples: Sequence[Tree] | None = None,
    ) -> tuple[Tree, float]:
        r"""Likelihood maximisation by rejection sampling: draw ``num`` trees (or take
        ``samples``), drop the invalid ones, return the canonical max-likelihood tree and its
        :math:`\log L`. When no draw is valid, returns the first draw and ``-inf``."""
        owner = "TreeGen.map_tree"
        leaves = check_leaves("leaves", owner, leaves, n_max=self.n_max)
        model = GinkgoLike() if model is None else check_model("model", owner, model)
        if samples is None:
            samples = self.sample(leaves, num=num, steps=steps, seed=seed)
        best, best_ll = samples[0], -np.inf
        for tree in {s.key(): s for s in samples}.values():
            ll = tree_loglik(leaves, tree, model)
            if ll > best_ll:
                best, best_ll = tree, ll
        if np.isfinite(best_ll):
            best = canonicalize(best, leaves)
        return best, float(best_ll)
