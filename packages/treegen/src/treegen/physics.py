r"""Four-vector algebra for the jet simulator and the network's features.

Four-momenta are ``(E, px, py, pz)`` in GeV, metric ``(+, -, -, -)``: the invariant mass squared is
:math:`t = m^2 = E^2 - |\vec p|^2`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["boost", "jet_features", "mass2", "two_body_decay"]


def mass2(p: np.ndarray) -> np.ndarray:
    r""":math:`t = E^2 - p_x^2 - p_y^2 - p_z^2` over the last axis."""
    return p[..., 0] ** 2 - (p[..., 1:] ** 2).sum(-1)


def boost(p: np.ndarray, frame: np.ndarray) -> np.ndarray:
    r"""Boost ``p`` from the rest frame of ``frame`` (a massive four-vector) to the lab.

    With :math:`\vec\beta = \vec p_F / E_F`, :math:`\gamma = E_F / m_F`:
    :math:`E' = \gamma (E + \vec\beta\cdot\vec p)`,
    :math:`\vec p' = \vec p + [(\gamma - 1)(\hat\beta\cdot\vec p) + \gamma E |\vec\beta|]\hat\beta`.
    """
    m = np.sqrt(mass2(frame))
    gamma = frame[0] / m
    beta = frame[1:] / frame[0]
    b2 = float(beta @ beta)
    bp = float(beta @ p[1:])
    energy = gamma * (p[0] + bp)
    coef = (gamma - 1.0) * bp / b2 + gamma * p[0] if b2 > 0 else 0.0
    return np.concatenate([[energy], p[1:] + coef * beta])


def two_body_decay(
    parent: np.ndarray, t1: float, t2: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    r"""Isotropic decay of ``parent`` (mass² :math:`t_P`) into children of mass² ``t1``, ``t2``.

    In the parent's rest frame each child has momentum
    :math:`p^* = \sqrt{\lambda(t_P, t_1, t_2)} / (2\sqrt{t_P})` (Källén function
    :math:`\lambda(a,b,c) = a^2+b^2+c^2-2ab-2ac-2bc`) along a uniform direction on the sphere
    (:math:`\cos\theta \sim U[-1,1]`, :math:`\phi \sim U[0,2\pi)`), back to back; both are then
    boosted to the lab with :func:`boost`.
    """
    t_p = mass2(parent)
    m_p = np.sqrt(t_p)
    kallen = t_p**2 + t1**2 + t2**2 - 2 * (t_p * t1 + t_p * t2 + t1 * t2)
    p_star = np.sqrt(max(kallen, 0.0)) / (2 * m_p)
    cos = rng.uniform(-1.0, 1.0)
    phi = rng.uniform(0.0, 2 * np.pi)
    sin = np.sqrt(1.0 - cos**2)
    direction = np.array([sin * np.cos(phi), sin * np.sin(phi), cos])
    e1 = (t_p + t1 - t2) / (2 * m_p)
    e2 = (t_p + t2 - t1) / (2 * m_p)
    c1 = np.concatenate([[e1], p_star * direction])
    c2 = np.concatenate([[e2], -p_star * direction])
    return boost(c1, parent), boost(c2, parent)


def jet_features(p: np.ndarray, jet: np.ndarray) -> np.ndarray:
    r"""Per-particle features :math:`(\log E, \log p_T, \eta, \phi - \phi_\mathrm{jet}, \log m^2)`.

    ``p`` is ``(..., 4)``, ``jet`` the summed four-vector ``(..., 4)`` broadcastable to it; masses
    and transverse momenta are floored at 1e-6 before the logarithm, :math:`\phi` differences
    are wrapped to :math:`(-\pi, \pi]`.
    """
    import torch

    xp = torch if isinstance(p, torch.Tensor) else np
    energy = xp.clip(p[..., 0], 1e-6, None)
    pt = xp.sqrt(p[..., 1] ** 2 + p[..., 2] ** 2)
    pt_c = xp.clip(pt, 1e-6, None)
    eta = xp.arcsinh(p[..., 3] / pt_c)
    phi = xp.arctan2(p[..., 2], p[..., 1])
    phi_jet = xp.arctan2(jet[..., 2], jet[..., 1])
    dphi = xp.remainder(phi - phi_jet + np.pi, 2 * np.pi) - np.pi
    m2 = xp.clip(p[..., 0] ** 2 - (p[..., 1:] ** 2).sum(-1), 1e-6, None)
    return xp.stack([xp.log(energy), xp.log(pt_c), eta, dphi, xp.log(m2)], -1)
