r"""The log-log fit of prompt length against data size.

:func:`fit_scaling` fits :math:`\log m = a + \beta \log(nN)` by least squares; the paper's bound
(Section 3) predicts :math:`\beta = 1/2` up to logarithmic factors for the construction, and
:math:`\beta \le 1` for any prompt that stores the labels (information grows at most linearly in
the prompt length).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from paperkit import check_array, check_real, param_error

__all__ = ["fit_scaling"]


def fit_scaling(
    ns: Sequence[float], Ns: Sequence[float], ms: Sequence[float], *, level: float = 0.95
) -> dict[str, float]:
    r"""Least-squares fit :math:`\log m = a + \beta\log(nN)`, with a confidence interval.

    Args:
        ns, Ns, ms: data sizes, sequence lengths and prompt lengths, positive, equally long
            (at least 2 points with two different :math:`nN`).
        level: confidence level of the interval on :math:`\beta` (Student t, :math:`k - 2`
            degrees of freedom).

    Returns:
        ``dict(slope, intercept, r2, stderr, ci_low, ci_high, points)``; with 2 points the
        interval is undefined (NaN).

    NaN policy: NaN, inf and non-positive values are refused.

    >>> ns = [4, 16, 64, 256]
    >>> fit = fit_scaling(ns, [1] * 4, [3 * n**0.5 for n in ns])
    >>> round(fit["slope"], 6), round(fit["intercept"], 6) == round(math.log(3), 6)
    (0.5, True)
    """
    owner = "fit_scaling"
    dims: dict = {}
    n = check_array("ns", owner, ns, shape=("k",), dims=dims).astype(np.float64)
    N = check_array("Ns", owner, Ns, shape=("k",), dims=dims).astype(np.float64)
    m = check_array("ms", owner, ms, shape=("k",), dims=dims).astype(np.float64)
    level = check_real("level", owner, level, low=0, high=1, low_open=True, high_open=True)
    for name, values in (("ns", n), ("Ns", N), ("ms", m)):
        if not (values > 0).all():
            raise param_error(name, owner, "positive", values.tolist())
    x, y = np.log(n * N), np.log(m)
    if len(x) < 2 or np.ptp(x) == 0:
        raise param_error("ns", owner, "at least two different sizes n * N", (n * N).tolist())
    fit = stats.linregress(x, y)
    dof = len(x) - 2
    half = float(stats.t.ppf(0.5 + level / 2, dof) * fit.stderr) if dof > 0 else math.nan
    return {
        "slope": float(fit.slope),
        "intercept": float(fit.intercept),
        "r2": float(fit.rvalue**2),
        "stderr": float(fit.stderr) if dof > 0 else math.nan,
        "ci_low": float(fit.slope) - half,
        "ci_high": float(fit.slope) + half,
        "points": len(x),
    }
