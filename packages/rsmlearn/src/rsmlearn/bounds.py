"""The guarantee chain of surrogate ERM (paper, Sec. 4): from excess surrogate risk ε_ψ to the
L2 error of the statistic and the binary 0-1 regret.

Strong properness gives, pointwise and so in expectation over X,
:math:`\\mathbb E\\lVert\\hat g(X)-g^*(X)\\rVert^2\\le 2\\varepsilon_\\psi/\\kappa`, and for the
plug-in classifier :math:`1\\{\\hat\\eta>\\tfrac12\\}` the 0-1 regret is at most
:math:`2\\mathbb E|\\hat\\eta-\\eta|\\le 2\\sqrt{2\\varepsilon_\\psi/\\kappa}`.
NaN is refused.

>>> l2_from_surrogate(0.01, 4.0)
0.005
>>> round(binary01_from_surrogate(0.01, 4.0), 4)
0.1414
"""

from __future__ import annotations

import math

from paperkit import check_real

__all__ = ["binary01_from_surrogate", "l2_from_surrogate"]


def l2_from_surrogate(excess: float, kappa: float) -> float:
    """:math:`2\\varepsilon_\\psi/\\kappa`: the bound on the mean squared statistic error."""
    excess = check_real("excess", "l2_from_surrogate", excess, low=0)
    kappa = check_real("kappa", "l2_from_surrogate", kappa, low=0, low_open=True)
    return 2.0 * excess / kappa


def binary01_from_surrogate(excess: float, kappa: float) -> float:
    """:math:`2\\sqrt{2\\varepsilon_\\psi/\\kappa}`: the bound on the binary 0-1 regret."""
    excess = check_real("excess", "binary01_from_surrogate", excess, low=0)
    kappa = check_real("kappa", "binary01_from_surrogate", kappa, low=0, low_open=True)
    return 2.0 * math.sqrt(2.0 * excess / kappa)
