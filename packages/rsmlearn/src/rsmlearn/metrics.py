"""Evaluation against the known truth of a realizable generator (paper, Sec. 6): statistic L2
error, target regrets and excess surrogate risk. Arrays as produced by the estimators (no checks:
internal helpers of the reproduction)."""

from __future__ import annotations

import numpy as np

from rsmlearn.losses import Loss
from rsmlearn.ranking import discounts

__all__ = ["binary01_regret", "excess_binary_risk", "ndcg_regret_linear", "sq_error"]


def sq_error(est: np.ndarray, truth: np.ndarray) -> float:
    """:math:`\\mathbb E\\lVert\\hat g(X)-g^*(X)\\rVert^2` (sum over the statistic's entries)."""
    diff = (np.asarray(est) - np.asarray(truth)) ** 2
    return float(diff.reshape(len(diff), -1).sum(axis=1).mean())


def binary01_regret(pred: np.ndarray, eta: np.ndarray) -> float:
    """:math:`\\mathbb E[|2\\eta-1|\\,1\\{h(X)\\ne 1\\{\\eta>\\frac12\\}\\}]`."""
    return float(np.mean(np.abs(2 * eta - 1) * (pred != (eta > 0.5))))


def excess_binary_risk(loss: Loss, u: np.ndarray, eta: np.ndarray) -> float:
    """Excess surrogate risk
    :math:`\\varepsilon_\\psi=\\mathbb E[\\mathbb E_\\eta\\psi(Y,u)-\\mathbb E_\\eta\\psi(Y,u^*)]`
    with :math:`u^*=\\lambda^{-1}(\\eta)`."""

    def risk(v: np.ndarray) -> np.ndarray:
        return eta * loss.value(1.0, v) + (1 - eta) * loss.value(0.0, v)

    return float(np.mean(risk(u) - risk(loss.inverse_link(eta))))


def ndcg_regret_linear(scores: np.ndarray, T: np.ndarray) -> float:
    """Expected NDCG regret when :math:`\\mathbb E[\\mathrm{NDCG}(\\pi)|x]=\\sum_jT_jD(\\pi(j))`:
    the Bayes ranking sorts by T."""
    D = discounts(T.shape[1])

    def value(s: np.ndarray) -> np.ndarray:
        order = np.argsort(-s, axis=1, kind="stable")
        return (np.take_along_axis(T, order, axis=1) * D).sum(axis=1)

    return float(np.mean(value(T) - value(scores)))
