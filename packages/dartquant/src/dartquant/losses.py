"""The Whip loss of DartQuant.

For rotated activations y = x R (rows of a batch of B tokens, d channels)

    L(R) = (1/B) sum_b sum_{i=1}^{d} exp(-|y_{b,i}|).

Because ||x R|| = ||x||, the norm of each row is fixed and minimising L pushes coordinates away
from zero: the rotated distribution becomes flat ("uniform-like") with a small max/RMS ratio,
which is what sets the error of per-token low-bit quantisation. Closed forms: a spike
x = sqrt(d) e_1 gives L = (d - 1) + exp(-sqrt(d)); its Hadamard rotation (every |y_i| = 1)
gives L = d / e.
"""

from __future__ import annotations

import torch

from paperkit import Described, check_tensor, param_error

__all__ = ["whip_loss"]


def whip_loss(x: torch.Tensor) -> torch.Tensor:
    """Whip loss: sum over the last dim of exp(-|x|), mean over every leading dim (a scalar).

    ``x``: a non-empty floating tensor ``[..., d]``. NaN propagates by design (the loss is NaN,
    as torch's losses are); ``±inf`` entries contribute exp(-inf) = 0.

    >>> whip_loss(torch.zeros(2, 3))
    tensor(3.)
    """
    check_tensor("x", "whip_loss", x, finite=False)
    if x.dim() == 0:
        raise param_error("x", "whip_loss", "at least 1-D [..., d]", Described("a 0-D tensor"))
    return torch.exp(-x.abs()).sum(-1).mean()
