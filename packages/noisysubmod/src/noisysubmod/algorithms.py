r"""The robust base algorithms, on any value oracle (exact f, noisy f~ or the smoothed F).

* :func:`greedy` -- monotone f under a partition matroid (cardinality included): add the feasible
  element of largest marginal F(S + e) - F(S) until no element fits. Exact ratio 1 - 1/e for a
  cardinality constraint, 1/2 for a matroid.
* :func:`measured_continuous_greedy` -- Feldman, Naor and Schwartz (2011), the matroid base
  algorithm the paper plugs into its meta-algorithm for matroids: x <- x + delta 1_B (1 - x),
  B the max-weight independent set for the sampled marginals w_e = E_{R~x}[F(R + e) - F(R)],
  then pipage rounding. Ratios 1 - 1/e (monotone) and 1/e (non-monotone) up to O(delta).
* :func:`double_greedy` -- Buchbinder, Feldman, Naor and Schwartz (2012), randomized; 1/2 in
  expectation for unconstrained non-monotone f.
* :func:`random_feasible` -- the random baseline.

Every algorithm takes ``ground`` (a boolean mask (n,) of the elements it may use; default all)
and ``random_state`` (an int seed). It returns the chosen elements as a sorted int array. The value
oracle is a callable on masks with ``.n`` (ideally with a vectorised ``evaluate(masks)``).
NaN policy: the oracle must return finite values >= 0 (else ValueError naming ``f``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from noisysubmod.constraints import Constraint, Unconstrained, check_constraint
from noisysubmod.sets import evaluate, extensions
from paperkit import check_array, check_bool, check_callable, check_int, check_real, param_error

__all__ = [
    "brute_force",
    "double_greedy",
    "greedy",
    "measured_continuous_greedy",
    "pipage_round",
    "random_feasible",
]


def _setup(f: Any, constraint: Any, ground: Any, owner: str) -> tuple[int, np.ndarray]:
    check_callable("f", owner, f)
    n = getattr(f, "n", None)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise param_error("f", owner, "a set function with a ground-set size .n >= 1", n)
    check_constraint(constraint, int(n), owner)
    if ground is None:
        return int(n), np.ones(int(n), dtype=bool)
    ground = check_array("ground", owner, ground, shape=(int(n),), kind="bool")
    return int(n), ground


def greedy(f: Any, constraint: Constraint, *, ground: np.ndarray | None = None) -> np.ndarray:
    r"""Greedy: S <- S + argmax_{e: S+e feasible} [F(S + e) - F(S)] until no element fits.

    Needs n' per step evaluations, batched. Fills every block to its capacity (f is assumed
    monotone, so the greedy never stops early).

    >>> from noisysubmod.functions import WeightedCoverage
    >>> from noisysubmod.constraints import Cardinality
    >>> f = WeightedCoverage.random(n=12, universe=40, density=0.2, seed=0)
    >>> greedy(f, Cardinality(3)).size
    3
    """
    n, ground = _setup(f, constraint, ground, "greedy")
    return _complete(f, constraint, np.zeros(n, dtype=bool), ground, "greedy")


def _complete(
    f: Any, constraint: Constraint, S: np.ndarray, ground: np.ndarray, owner: str
) -> np.ndarray:
    """Greedy from S: add the feasible element of largest marginal until none fits."""
    S = S.copy()
    while True:
        cand = np.flatnonzero(constraint.can_add(S, ground))
        if cand.size == 0:
            return np.flatnonzero(S)
        _, values = extensions(f, S[None], cand, owner)
        S[cand[int(np.argmax(values[0]))]] = True


def double_greedy(
    f: Any,
    constraint: Constraint | None = None,
    *,
    ground: np.ndarray | None = None,
    random_state: int = 0,
) -> np.ndarray:
    r"""Randomized double greedy for unconstrained maximization (ratio 1/2 in expectation).

    X = {} and Y = ground. For each e in index order: a = F(X + e) - F(X), b = F(Y - e) - F(Y),
    a' = max(a, 0), b' = max(b, 0); add e to X w.p. a' / (a' + b') (1 when both are 0), else
    remove e from Y. Returns X (= Y at the end).

    >>> from noisysubmod.functions import GraphCut
    >>> f = GraphCut(np.ones((4, 4)) - np.eye(4))
    >>> f(double_greedy(f, random_state=0)) >= 2.0
    True
    """
    constraint = Unconstrained() if constraint is None else constraint
    n, ground = _setup(f, constraint, ground, "double_greedy")
    if not isinstance(constraint, Unconstrained):
        raise param_error("constraint", "double_greedy", "Unconstrained()", constraint)
    rng = np.random.default_rng(check_int("random_state", "double_greedy", random_state, low=0))
    X, Y = np.zeros(n, dtype=bool), ground.copy()
    fX, fY = evaluate(f, np.stack([X, Y]), "double_greedy")
    for e in np.flatnonzero(ground):
        Xe, Ye = X.copy(), Y.copy()
        Xe[e], Ye[e] = True, False
        fXe, fYe = evaluate(f, np.stack([Xe, Ye]), "double_greedy")
        a, b = max(fXe - fX, 0.0), max(fYe - fY, 0.0)
        if rng.random() < (a / (a + b) if a + b > 0 else 1.0):
            X, fX = Xe, fXe
        else:
            Y, fY = Ye, fYe
    return np.flatnonzero(X)


def pipage_round(
    x: np.ndarray, constraint: Constraint, *, random_state: int | np.random.Generator = 0
) -> np.ndarray:
    r"""Randomized pipage (swap) rounding of x in a partition-matroid polytope to a feasible set.

    In each block, while two coordinates i, j are fractional, move mass along e_i - e_j:
    with a = min(1 - x_i, x_j), b = min(x_i, 1 - x_j), w.p. b / (a + b) set x_i += a, x_j -= a,
    else x_i -= b, x_j += b. Each move keeps E[x] and the block sum, and the multilinear extension
    is convex along e_i - e_j, so E[f(S)] >= F(x) (Calinescu et al. 2011). The last fractional
    coordinate of a block is kept w.p. its value; the block then holds at most
    ceil(sum x) <= cap elements.

    >>> from noisysubmod.constraints import Cardinality
    >>> int(pipage_round(np.array([0.5, 0.5, 0.5, 0.5]), Cardinality(2)).size)
    2
    """
    owner = "pipage_round"
    x = check_array("x", owner, x, ndim=1).astype(float)
    if np.any(x < -1e-12) or np.any(x > 1 + 1e-12):
        raise param_error("x", owner, "coordinates in [0, 1]", float(x.min()))
    block, caps = check_constraint(constraint, len(x), owner).blocks_of(len(x))
    sums = np.bincount(block, weights=x, minlength=len(caps))
    if np.any(sums > caps + 1e-9):
        raise param_error(
            "x", owner, "a point of the matroid polytope (block sums <= caps)", float(sums.max())
        )
    rng = (
        random_state
        if isinstance(random_state, np.random.Generator)
        else (np.random.default_rng(check_int("random_state", owner, random_state, low=0)))
    )
    x = np.clip(x, 0.0, 1.0)
    tol = 1e-12
    for j in range(len(caps)):
        frac = [e for e in rng.permutation(np.flatnonzero(block == j)) if tol < x[e] < 1 - tol]
        while len(frac) >= 2:
            i, k = frac[-1], frac[-2]
            a, b = min(1 - x[i], x[k]), min(x[i], 1 - x[k])
            if rng.random() < b / (a + b):
                x[i], x[k] = x[i] + a, x[k] - a
            else:
                x[i], x[k] = x[i] - b, x[k] + b
            frac = [e for e in frac if tol < x[e] < 1 - tol]
        for e in frac:
            x[e] = float(rng.random() < x[e])
    return np.flatnonzero(x > 0.5)


def measured_continuous_greedy(
    f: Any,
    constraint: Constraint,
    *,
    eps: float = 0.05,
    n_samples: int = 20,
    ground: np.ndarray | None = None,
    random_state: int = 0,
    return_fractional: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    r"""Measured continuous greedy (Feldman, Naor, Schwartz 2011) with pipage rounding.

    delta = 1 / ceil(1 / eps); x = 0; for 1/delta steps: draw ``n_samples`` sets R ~ x (each e
    independently w.p. x_e), shared by all elements; w_e = mean_R [F(R + e) - F(R)] (0 for
    e in R); B = the max-weight independent set for w (positive weights only);
    x <- x + delta 1_B (1 - x). Then :func:`pipage_round` (x stays in the matroid polytope since
    each step adds at most delta per block capacity). For a monotone f (``f.is_monotone``) the
    rounded set is then completed greedily to a base: the measured update leaves block sums
    near 1 - (1 - delta)^(1/delta) < cap, and adding elements cannot lower a monotone f.
    Cost: (1/delta) n_samples (n + 1) evaluations.

    Returns the rounded set, and x too when ``return_fractional``.

    >>> from noisysubmod.functions import WeightedCoverage
    >>> from noisysubmod.constraints import Cardinality
    >>> f = WeightedCoverage.random(n=12, universe=40, density=0.2, seed=0)
    >>> measured_continuous_greedy(f, Cardinality(3), eps=0.2, n_samples=4).size <= 3
    True
    """
    owner = "measured_continuous_greedy"
    n, ground = _setup(f, constraint, ground, owner)
    eps = check_real("eps", owner, eps, low=0.001, high=1)
    n_samples = check_int("n_samples", owner, n_samples, low=1, high=10**5)
    return_fractional = check_bool("return_fractional", owner, return_fractional)
    rng = np.random.default_rng(check_int("random_state", owner, random_state, low=0))
    steps = math.ceil(1.0 / eps)
    delta = 1.0 / steps
    x = np.zeros(n)
    elems = np.flatnonzero(ground)
    for _ in range(steps):
        R = rng.random((n_samples, n)) < x
        base, ext = extensions(f, R, elems, owner)
        gains = np.where(R[:, elems], 0.0, ext - base[:, None])  # F(R + e) - F(R), 0 for e in R
        w = np.zeros(n)
        w[elems] = gains.mean(axis=0)
        B = constraint.max_weight_independent(w, ground)
        x = x + delta * B * (1.0 - x)
    S = pipage_round(x, constraint, random_state=rng)
    if getattr(f, "is_monotone", False):  # fill the capacity rounding left (cannot lose value)
        S = _complete(f, constraint, np.isin(np.arange(n), S), ground, owner)
    return (S, x) if return_fractional else S


def random_feasible(
    n: int,
    constraint: Constraint,
    *,
    ground: np.ndarray | None = None,
    random_state: int = 0,
) -> np.ndarray:
    """A random feasible set: a uniformly random base of the partition matroid (every block
    filled to capacity), or a uniformly random subset when ``Unconstrained``.

    >>> from noisysubmod.constraints import Cardinality
    >>> random_feasible(10, Cardinality(4), random_state=1).size
    4
    """
    owner = "random_feasible"
    n = check_int("n", owner, n, low=1, high=10**8)
    check_constraint(constraint, n, owner)
    if ground is not None:
        ground = check_array("ground", owner, ground, shape=(n,), kind="bool")
    rng = np.random.default_rng(check_int("random_state", owner, random_state, low=0))
    if isinstance(constraint, Unconstrained):
        mask = rng.random(n) < 0.5
        return np.flatnonzero(mask if ground is None else mask & ground)
    return np.flatnonzero(constraint.random_base(n, rng, ground))


def brute_force(f: Any, constraint: Constraint) -> tuple[np.ndarray, float]:
    """The exact optimum (S*, f(S*)) over all 2^n feasible sets, evaluated in batches (n <= 22).

    >>> from noisysubmod.functions import GraphCut
    >>> brute_force(GraphCut(np.ones((4, 4)) - np.eye(4)), Unconstrained())[1]
    4.0
    """
    n, _ = _setup(f, constraint, None, "brute_force")
    if n > 22:
        raise param_error("f", "brute_force", "a ground set of at most 22 elements", n)
    block, caps = constraint.blocks_of(n)
    best_value, best = -1.0, np.zeros(n, dtype=bool)
    bits = np.arange(n, dtype=np.int64)
    step = 2**16
    for start in range(0, 2**n, step):
        codes = np.arange(start, min(start + step, 2**n), dtype=np.int64)
        masks = ((codes[:, None] >> bits) & 1).astype(bool)
        counts = np.stack([masks[:, block == j].sum(axis=1) for j in range(len(caps))], axis=1)
        masks = masks[np.all(counts <= caps, axis=1)]
        if len(masks) == 0:
            continue
        values = evaluate(f, masks, "brute_force")
        i = int(np.argmax(values))
        if values[i] > best_value:
            best_value, best = float(values[i]), masks[i]
    return np.flatnonzero(best), best_value
