r"""Projection neurons: divisive normalisation of ORN input (Olsen, Bhandawat & Wilson 2010).

.. math:: r_{pn} = R_{max} \frac{r^{1.5}}{r^{1.5} + \sigma_n^{1.5} + s^{1.5}}, \qquad
    s = m \cdot \mathrm{LFP}, \quad \mathrm{LFP} = \frac{24\,\bar r}{190},

per glomerulus (Olsen et al. 2010, Eqs. 2 and 4-6), with :math:`\bar r` the mean ORN rate over
the glomeruli of the same trial, :math:`R_{max} = 165` Hz, :math:`\sigma_n = 12` Hz,
:math:`m = 10.63`. Olsen et al. fit the antennal LFP as the summed rate of the 24 recorded ORN
types divided by 190 (Eq. 5); :math:`24\bar r` is that sum for any number of glomeruli of the
same mean rate, so :math:`s \approx 1.34\,\bar r`. PN spikes are Bernoulli with probability
:math:`r_{pn}\Delta t` per step.
"""

from __future__ import annotations

import torch

from paperkit import check_bool, check_tensor, param_error

__all__ = ["LFP_SCALE", "M_GAIN", "R_MAX", "SIGMA_N", "pn_rates"]

R_MAX = 165.0
SIGMA_N = 12.0
M_GAIN = 10.63
#: LFP per unit mean ORN rate: the summed rate of Olsen's 24 ORN types over 190 (Eq. 5).
LFP_SCALE = 24.0 / 190.0


def check_rates(
    name: str, owner: str, rates: torch.Tensor, n_orn: int | None = None
) -> torch.Tensor:
    """A finite, non-negative (B, n_orn) float tensor of firing rates (Hz)."""
    check_tensor(name, owner, rates, shape=("B", n_orn))
    if bool((rates < 0).any()):
        raise param_error(name, owner, "non-negative (firing rates in Hz)", "negative rates")
    return rates


def pn_rates(orn_rates: torch.Tensor, normalization: bool = True) -> torch.Tensor:
    r"""PN firing rates (Hz) from ORN rates (B, n_orn) by the Olsen divisive normalisation
    (``normalization=False``: the ORN rates pass through). Rates stay below :math:`R_{max}`.

    NaN policy: NaN, inf and negative rates are refused (ValueError).

    >>> r = torch.tensor([[12.0, 0.0]])
    >>> round(float(pn_rates(r)[0, 0]), 3)  # 165 * 12^1.5 / (2 * 12^1.5 + (10.63*24*6/190)^1.5)
    64.703
    """
    check_rates("orn_rates", "pn_rates", orn_rates)
    normalization = check_bool("normalization", "pn_rates", normalization)
    if not normalization:
        return orn_rates.clone()
    r = orn_rates.double()
    drive = r.pow(1.5)
    suppression = (M_GAIN * LFP_SCALE * r.mean(dim=1, keepdim=True)).pow(1.5)
    out = R_MAX * drive / (drive + SIGMA_N**1.5 + suppression)
    return out.to(orn_rates.dtype)
