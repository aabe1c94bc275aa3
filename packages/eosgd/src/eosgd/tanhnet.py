r"""The generic instance: a two-layer tanh network fitted to a few data points.

With data :math:`X \in \mathbb{R}^{N \times d}`, targets :math:`Y \in \mathbb{R}^{N \times o}`
and width :math:`h`, the parameters are :math:`w = (W, A)` with :math:`W \in \mathbb{R}^{h \times
d}`, :math:`A \in \mathbb{R}^{o \times h}` (flattened in that order, :math:`p = h(d + o)`), and the
model stacks the network's outputs on every data point,

.. math:: F(w)_{n,k} = \sum_j A_{kj} \tanh\big((W x_n)_j\big), \qquad q = N o,

so that :math:`L(w) = \tfrac12 \|F(w) - Y\|^2` is full-batch least squares. Its Jacobian is
:math:`\partial F_{n,k} / \partial A_{k'j} = \delta_{kk'} \tanh((W x_n)_j)` and
:math:`\partial F_{n,k} / \partial W_{ji} = A_{kj} (1 - \tanh^2((W x_n)_j)) x_{n,i}`. There is no
closed form for :math:`S^*`: it is computed numerically (SLSQP on :math:`M`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def tanh_parts(X: np.ndarray, Y: np.ndarray, width: int) -> dict[str, Any]:
    """Parts of the two-layer tanh net (arguments already checked; ``Y`` is ``(N, o)``)."""
    N, d = X.shape
    o = Y.shape[1]
    nw = width * d
    eye = np.eye(o)

    def split(w: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        W = w[..., :nw].reshape(w.shape[:-1] + (width, d))
        A = w[..., nw:].reshape(w.shape[:-1] + (o, width))
        T = np.tanh(np.einsum("...hd,nd->...nh", W, X))
        return W, A, T

    def F(w: np.ndarray) -> np.ndarray:
        _, A, T = split(w)
        return np.einsum("...kh,...nh->...nk", A, T).reshape(w.shape[:-1] + (N * o,))

    def J(w: np.ndarray) -> np.ndarray:
        _, A, T = split(w)
        lead = w.shape[:-1]
        JW = np.einsum("...kh,...nh,ni->...nkhi", A, 1.0 - T**2, X).reshape(lead + (N * o, nw))
        JA = np.einsum("kl,...nh->...nklh", eye, T).reshape(lead + (N * o, o * width))
        return np.concatenate([JW, JA], -1)

    return {"F": F, "J": J}
