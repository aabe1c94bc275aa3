"""Persistence diagrams of one feature map and their entropy summaries (the paper's Sec. 3:
topological entropy from persistent homology and Betti curves).

A diagram is an array ``(k, 2)`` of bars ``(birth, death)`` with ``birth <= death``, both finite
(the essential bar is closed at the end of the filtration).

- :func:`cubical_diagrams`: the superlevel-set filtration of a 2-D map ``f`` (min-max normalised
  to [0, 1]) as the sublevel-set filtration of ``1 - f`` on a cubical complex (gudhi), bars of
  dimensions 0 (components) and 1 (loops), in [0, 1].
- :func:`rips_diagrams`: the Vietoris-Rips filtration of a point cloud (ripser), dims 0 and 1.
- :func:`persistent_entropy`: :math:`PE = -\\sum_j p_j \\ln p_j`, :math:`p_j = \\ell_j/\\sum\\ell`,
  :math:`\\ell_j = d_j - b_j` (Atienza et al.), 0 with fewer than two bars.
- :func:`betti_curve` and :func:`betti_entropy`: :math:`\\beta(\\varepsilon) = \\#\\{j : b_j \\le
  \\varepsilon < d_j\\}` on a grid, and the Shannon entropy of :math:`\\beta/\\sum\\beta`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, check_bool, check_int, param_error

__all__ = [
    "betti_curve",
    "betti_entropy",
    "cubical_diagrams",
    "persistent_entropy",
    "rips_diagrams",
]

#: The Betti-curve grid: 100 values of epsilon in [0, 1].
BETTI_GRID = np.linspace(0.0, 1.0, 100)


def _diagram(name: str, owner: str, diagram: Any) -> np.ndarray:
    """A finite ``(k, 2)`` array with ``birth <= death`` (``k = 0`` allowed)."""
    d = check_array(name, owner, diagram, nonempty=False)
    if d.size == 0:
        return np.zeros((0, 2))
    d = check_array(name, owner, d, shape=(None, 2)).astype(np.float64)
    if np.any(d[:, 1] < d[:, 0]):
        raise param_error(name, owner, "bars with birth <= death", "a bar with death < birth")
    return d


def persistent_entropy(diagram: Any) -> float:
    """Persistent entropy of a diagram: :math:`-\\sum_j p_j \\ln p_j`, :math:`p_j = \\ell_j /
    \\sum_k \\ell_k` over the bars of positive length :math:`\\ell_j = d_j - b_j`.

    Returns 0 when fewer than two bars have positive length. Invariant to scaling every length by
    the same factor; ``n`` equal bars give :math:`\\ln n`, its maximum for ``n`` bars.
    NaN policy: NaN or infinite entries are refused (close the essential bar first).

    >>> round(persistent_entropy([[0.0, 1.0], [0.2, 1.2]]), 6)  # two equal bars: ln 2
    0.693147
    """
    d = _diagram("diagram", "persistent_entropy", diagram)
    lengths = d[:, 1] - d[:, 0]
    lengths = lengths[lengths > 0]
    if lengths.size < 2:
        return 0.0
    p = lengths / lengths.sum()
    return float(-(p * np.log(p)).sum())


def betti_curve(diagram: Any, grid: Any = None) -> np.ndarray:
    """Betti curve :math:`\\beta(\\varepsilon) = \\#\\{j : b_j \\le \\varepsilon < d_j\\}`:
    the number of bars alive at each value of ``grid`` (default: 100 values in [0, 1]).

    NaN policy: NaN or infinite diagram entries and grid values are refused.

    >>> betti_curve([[0.0, 0.5], [0.25, 1.0]], [0.0, 0.3, 0.6, 1.0]).tolist()
    [1, 2, 1, 0]
    """
    d = _diagram("diagram", "betti_curve", diagram)
    eps = BETTI_GRID if grid is None else check_array("grid", "betti_curve", grid, ndim=1)
    eps = np.asarray(eps, dtype=np.float64)
    alive = (d[None, :, 0] <= eps[:, None]) & (eps[:, None] < d[None, :, 1])
    return alive.sum(axis=1).astype(np.int64)


def betti_entropy(diagram: Any, grid: Any = None) -> float:
    """Shannon entropy of the normalised Betti curve, :math:`-\\sum_i q_i \\ln q_i` with
    :math:`q_i = \\beta(\\varepsilon_i) / \\sum_k \\beta(\\varepsilon_k)`; 0 for an empty curve.

    NaN policy: as :func:`betti_curve`.

    >>> round(betti_entropy([[0.0, 1.0]], [0.1, 0.2, 0.3, 0.4]), 6)  # flat curve on 4 points
    1.386294
    """
    beta = betti_curve(diagram, grid).astype(np.float64)
    total = beta.sum()
    if total == 0:
        return 0.0
    q = beta[beta > 0] / total
    return float(-(q * np.log(q)).sum())


def cubical_diagrams(
    f: Any, superlevel: bool = True, normalize: bool = True
) -> dict[int, np.ndarray]:
    """Persistence diagrams (dims 0 and 1) of a 2-D map on a cubical complex (gudhi).

    With ``normalize`` the map is min-max normalised to [0, 1] first, and a constant map has no
    topology (both diagrams empty). The superlevel-set filtration :math:`\\{f \\ge t\\}`, t going
    down from the maximum, is computed as the sublevel-set filtration of :math:`g = 1 - f`, so
    bars lie in [0, 1]; ``superlevel=False`` filters :math:`g = f` instead. The one infinite H0
    bar is closed at the end of the filtration, :math:`\\max g`. Pixels are the top cells, so two
    pixels meeting at a corner are connected.

    NaN policy: NaN or infinite entries are refused.

    Shapes: ``f`` (H, W).

    >>> bump = np.exp(-((np.arange(8)[:, None] - 3.5) ** 2 + (np.arange(8) - 3.5) ** 2) / 4)
    >>> d = cubical_diagrams(bump)
    >>> d[0].tolist(), d[1].shape
    ([[0.0, 1.0]], (0, 2))
    """
    import gudhi

    owner = "cubical_diagrams"
    check_bool("superlevel", owner, superlevel)
    check_bool("normalize", owner, normalize)
    f = check_array("f", owner, f, ndim=2).astype(np.float64)
    empty = {0: np.zeros((0, 2)), 1: np.zeros((0, 2))}
    if normalize:
        lo, hi = float(f.min()), float(f.max())
        if hi - lo <= 0:
            return empty
        f = (f - lo) / (hi - lo)
    g = 1.0 - f if superlevel else f
    complex_ = gudhi.CubicalComplex(top_dimensional_cells=g)
    complex_.compute_persistence(homology_coeff_field=2, min_persistence=0)
    end = float(g.max())
    out = {}
    for dim in (0, 1):
        bars = np.asarray(complex_.persistence_intervals_in_dimension(dim), dtype=np.float64)
        bars = bars.reshape(-1, 2)
        bars[np.isinf(bars[:, 1]), 1] = end
        out[dim] = bars
    return out


def rips_diagrams(points: Any, maxdim: int = 1) -> dict[int, np.ndarray]:
    """Vietoris-Rips persistence diagrams of a point cloud (ripser), dims 0..``maxdim``.

    The infinite H0 bar is closed at the end of the filtration, the cloud's diameter (the largest
    pairwise distance, where the complex is complete). Fewer than two distinct points give
    empty diagrams.

    NaN policy: NaN or infinite coordinates are refused.

    Shapes: ``points`` (N, D).

    >>> square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    >>> d = rips_diagrams(square)
    >>> len(d[0]), d[1].round(3).tolist()  # 4 components; one loop born at 1, dead at sqrt 2
    (4, [[1.0, 1.414]])
    """
    import warnings

    from ripser import ripser
    from scipy.spatial.distance import pdist

    owner = "rips_diagrams"
    maxdim = check_int("maxdim", owner, maxdim, low=0, high=2)
    x = check_array("points", owner, points, ndim=2).astype(np.float64)
    empty = {d: np.zeros((0, 2)) for d in range(maxdim + 1)}
    if len(np.unique(x, axis=0)) < 2:
        return empty
    end = float(pdist(x).max())
    with warnings.catch_warnings():  # more columns than rows is the usual case here
        warnings.simplefilter("ignore", UserWarning)
        dgms = ripser(x, maxdim=maxdim)["dgms"]
    out = {}
    for dim, bars in enumerate(dgms):
        bars = np.asarray(bars, dtype=np.float64).reshape(-1, 2).copy()
        bars[np.isinf(bars[:, 1]), 1] = end
        out[dim] = bars
    return out
