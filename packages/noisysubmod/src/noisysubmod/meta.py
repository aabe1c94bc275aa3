r"""The meta-algorithm: run a robust exact-oracle algorithm on a smoothed surrogate.

Following the paper's approach (arXiv 2510.21128: averaging the noisy oracle over many distinct
padded sets, whose noise terms are independent), with our reading of its construction:

1. Smoothing pool: a uniformly random P subset of N, |P| = p (default ceil(4 log2 n), at most
   n/5), removed from the ground set: the base algorithm works on N' = N \ P. A fixed optimum
   loses at most a p/n fraction in expectation (E f(OPT \ P) >= (1 - p/n) f(OPT), f monotone).
2. Smoothing family: L distinct subsets H_1..H_L of P of size h (default h = 2, L = 48; when
   C(p, h) < L, subsets of size h + 1 top the family up).
3. Smoothed oracle F(S) = (1/L) sum_l f~(S cup H_l) for S subset of N'. The sets S cup H_l are
   pairwise distinct, so their noise terms are independent and F(S) concentrates around
   g(S) = (1/L) sum_l f(S cup H_l), itself submodular (an average of the submodular
   S -> f(S cup H)), monotone when f is.
4. The base algorithm runs on N' with F as its value oracle.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from noisysubmod.algorithms import double_greedy, greedy, measured_continuous_greedy
from noisysubmod.constraints import Constraint, Unconstrained, check_constraint
from noisysubmod.sets import as_mask, evaluate, extensions
from paperkit import check_bool, check_callable, check_choice, check_int, check_real, param_error

__all__ = ["BASES", "SmoothedOracle", "make_bundles", "meta_maximize", "smoothed_oracle"]

#: The base algorithms meta_maximize can run.
BASES: dict[str, Callable[..., np.ndarray]] = {
    "greedy": greedy,
    "measured_continuous_greedy": measured_continuous_greedy,
    "double_greedy": double_greedy,
}
_ROWS = 2**16  # masks per batched oracle call


class SmoothedOracle:
    r"""F(S) = (1/L) sum_l f~(S cup H_l), the average of ``oracle`` over the bundles.

    With an exact f in place of f~ this is the noise-free surrogate g. ``evaluate(masks)``
    answers a batch (batch, n) with batch L oracle queries. NaN policy: as the oracle.
    """

    def __init__(self, oracle: Callable[..., Any], bundles: np.ndarray) -> None:
        self.oracle = oracle
        self.bundles = bundles
        self.n = bundles.shape[1]
        self.is_monotone = bool(getattr(oracle, "is_monotone", False))

    def evaluate(self, masks: np.ndarray) -> np.ndarray:
        """F(S) for every row of ``masks`` (batch, n)."""
        masks = np.asarray(masks, dtype=bool)
        L = len(self.bundles)
        out = np.empty(len(masks))
        step = max(1, _ROWS // L)
        for s in range(0, len(masks), step):
            block = masks[s : s + step]
            padded = (block[:, None, :] | self.bundles[None]).reshape(-1, self.n)
            out[s : s + step] = (
                evaluate(self.oracle, padded, "smoothed_oracle").reshape(len(block), L).mean(axis=1)
            )
        return out

    def extensions(self, masks: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(F(S) (batch,), F(S + e) (batch, len(cand))) for e in ``cand`` (outside the pool)."""
        masks = np.asarray(masks, dtype=bool)
        L = len(self.bundles)
        padded = (masks[:, None, :] | self.bundles[None]).reshape(-1, self.n)
        base, ext = extensions(self.oracle, padded, cand, "smoothed_oracle")
        return base.reshape(-1, L).mean(axis=1), ext.reshape(-1, L, len(cand)).mean(axis=1)

    def __call__(self, S: Any) -> float:
        """F(S) for one set S (indices, a set or a mask (n,))."""
        return float(self.evaluate(as_mask(S, self.n, "S", "SmoothedOracle")[None])[0])


def make_bundles(
    pool: np.ndarray, n: int, bundle_size: int, n_bundles: int, rng: np.random.Generator
) -> np.ndarray:
    """L = ``n_bundles`` distinct subsets of ``pool`` of size ``bundle_size``, drawn uniformly
    among all such subsets, topped up with subsets of size ``bundle_size + 1`` (then + 2, ...)
    when there are too few. Returns masks (L', n), L' <= L when the pool is exhausted."""
    chosen: list[tuple[int, ...]] = []
    size = bundle_size
    while len(chosen) < n_bundles and size <= len(pool):
        combos = list(itertools.combinations(sorted(pool.tolist()), size))
        need = n_bundles - len(chosen)
        picks = rng.permutation(len(combos))[:need]
        chosen += [combos[i] for i in sorted(picks)]
        size += 1
    masks = np.zeros((len(chosen), n), dtype=bool)
    for row, combo in enumerate(chosen):
        masks[row, list(combo)] = True
    return masks


def smoothed_oracle(oracle: Callable[..., Any], bundles: Any) -> SmoothedOracle:
    r"""The smoothed oracle F(S) = (1/L) sum_l oracle(S cup H_l) for the bundles H_l.

    Args:
        oracle: a value oracle with ``.n`` (a :class:`NoisyOracle`, or an exact f for g).
        bundles: boolean masks (L, n), or a list of index lists.

    >>> from noisysubmod.functions import WeightedCoverage
    >>> f = WeightedCoverage.random(n=10, universe=30, density=0.2, seed=0)
    >>> g = smoothed_oracle(f, [[8, 9]])
    >>> g([0]) == f([0, 8, 9])
    True
    """
    owner = "smoothed_oracle"
    check_callable("oracle", owner, oracle)
    n = getattr(oracle, "n", None)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise param_error("oracle", owner, "a value oracle with a ground-set size .n", n)
    if isinstance(bundles, np.ndarray) and bundles.dtype == bool:
        masks = bundles
        if masks.ndim != 2 or masks.shape[1] != n or len(masks) == 0:
            raise param_error("bundles", owner, f"boolean masks (L, {n}) with L >= 1", masks.shape)
    else:
        if not isinstance(bundles, (list, tuple)) or len(bundles) == 0:
            raise param_error(
                "bundles", owner, "a non-empty list of index lists", bundles, cls=TypeError
            )
        masks = np.stack([as_mask(b, int(n), "bundles", owner) for b in bundles])
    if len({row.tobytes() for row in masks}) != len(masks):
        raise param_error("bundles", owner, "pairwise distinct bundles", len(masks))
    return SmoothedOracle(oracle, masks)


def _default_pool(n: int) -> int:
    return max(1, min(math.ceil(4 * math.log2(n)), n // 5))


def meta_maximize(
    noisy: Any,
    constraint: Constraint | None = None,
    base: str = "greedy",
    pool_size: int | None = None,
    bundle_size: int = 2,
    n_bundles: int | str | None = None,
    eps: float = 0.1,
    random_state: int = 0,
    *,
    pad_output: bool = False,
    base_options: dict[str, Any] | None = None,
) -> tuple[np.ndarray, dict[str, Any]]:
    r"""Maximize the f behind a persistent noisy oracle with the meta-algorithm.

    Draws the pool P (|P| = ``pool_size``, default min(ceil(4 log2 n), n/5)), the L bundles
    (``n_bundles``: default 48; ``"theory"``: L = min(C(p, h), ceil(sigma^2 log n / eps^2)),
    sigma from the oracle), builds F (see :class:`SmoothedOracle`) and runs ``base`` on N \ P with
    F as the value oracle. With ``pad_output``, returns S cup H_l* (l* the bundle of largest
    f~(S cup H_l)) when that set is feasible and f~(S cup H_l*) > F(S).

    Args:
        noisy: the noisy oracle (a :class:`NoisyOracle`, or any value oracle with ``.n``).
        constraint: Cardinality, PartitionMatroid or Unconstrained (default Unconstrained).
        base: ``"greedy"``, ``"measured_continuous_greedy"`` or ``"double_greedy"``.
        base_options: keyword arguments of the base algorithm (``eps``, ``n_samples`` of MCG).
        random_state: seeds the pool, the bundles and the base algorithm.

    Returns:
        (S, info): S the chosen elements (sorted int array, feasible); info with ``pool``,
        ``bundles`` (index lists), ``n_bundles``, ``n_queries`` (noisy queries made by this
        call) and ``surrogate_value`` F(S).

    NaN policy: the oracle's values must be finite and >= 0 (ValueError otherwise).

    >>> from noisysubmod import NoisyOracle
    >>> from noisysubmod.functions import WeightedCoverage
    >>> from noisysubmod.constraints import Cardinality
    >>> f = WeightedCoverage.random(n=60, universe=200, density=0.03, seed=0)
    >>> noisy = NoisyOracle(f, noise="exponential", sigma=1.0, seed=1)
    >>> S, info = meta_maximize(noisy, Cardinality(5), random_state=0)
    >>> len(S), info["n_bundles"], info["n_queries"] == noisy.n_queries
    (5, 48, True)
    """
    owner = "meta_maximize"
    check_callable("noisy", owner, noisy)
    n = getattr(noisy, "n", None)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 2:
        raise param_error("noisy", owner, "a value oracle with a ground-set size .n >= 2", n)
    n = int(n)
    constraint = Unconstrained() if constraint is None else constraint
    check_constraint(constraint, n, owner)
    check_choice("base", owner, base, tuple(BASES))
    p = _default_pool(n) if pool_size is None else check_int("pool_size", owner, pool_size, low=1)
    if p > n / 2:
        raise param_error("pool_size", owner, f"at most n/2 = {n / 2:g}", p)
    h = check_int("bundle_size", owner, bundle_size, low=1)
    if h > p:
        raise param_error("bundle_size", owner, f"at most the pool size {p}", h)
    eps = check_real("eps", owner, eps, low=0, low_open=True, high=1)
    seed = check_int("random_state", owner, random_state, low=0)
    pad_output = check_bool("pad_output", owner, pad_output)
    options = dict(base_options or {})
    if not isinstance(base_options, (dict, type(None))):
        raise param_error("base_options", owner, "a dict or None", base_options, cls=TypeError)
    if n_bundles is None:
        L = 48
    elif isinstance(n_bundles, str):
        check_choice("n_bundles", owner, n_bundles, ("theory",))
        sigma = float(getattr(noisy, "sigma", 1.0))
        L = max(1, min(math.comb(p, h), math.ceil(sigma**2 * math.log(n) / eps**2)))
    else:
        L = check_int("n_bundles", owner, n_bundles, low=1, high=10**5)
    rng = np.random.default_rng(seed)
    pool = np.sort(rng.choice(n, size=p, replace=False))
    bundles = make_bundles(pool, n, h, L, rng)
    if len(bundles) < 16:
        warnings.warn(
            f"meta_maximize: L = {len(bundles)} bundles (fewer than 16, pool of {p}); the "
            "smoothed oracle will be noisy",
            stacklevel=2,
        )
    ground = np.ones(n, dtype=bool)
    ground[pool] = False
    start = getattr(noisy, "n_queries", 0)
    F = SmoothedOracle(noisy, bundles)
    run = BASES[base]
    if base == "greedy":
        S = run(F, constraint, ground=ground, **options)
    else:
        S = run(F, constraint, ground=ground, random_state=seed, **options)
    mask = as_mask(S, n)
    value = float(F.evaluate(mask[None])[0])
    if pad_output:
        padded = mask[None] | bundles
        feasible = np.array([constraint.is_independent(row) for row in padded])
        if feasible.any():
            vals = evaluate(noisy, padded[feasible], owner)
            best = int(np.argmax(vals))
            if vals[best] > value:
                mask = padded[feasible][best]
                S = np.flatnonzero(mask)
    info = {
        "pool": pool,
        "bundles": [np.flatnonzero(b) for b in bundles],
        "n_bundles": len(bundles),
        "n_queries": getattr(noisy, "n_queries", 0) - start,
        "surrogate_value": value,
        "base": base,
    }
    return np.sort(np.asarray(S, dtype=int)), info
