r"""The spike nonlinearity with a surrogate gradient (for training through spikes by BPTT).

Forward: the Heaviside step :math:`H(x) = 1[x \ge 0]` of :math:`x = v - \theta`. Backward: the
derivative of the fast sigmoid :math:`\tilde H(x) = x / (1 + k|x|)`,

.. math:: \frac{\partial \tilde H}{\partial x} = \frac{1}{(1 + k|x|)^2}, \quad k = 10,

the surrogate the paper trains its gains with (Sec. 2; Zenke & Ganguli's SuperSpike form).
"""

from __future__ import annotations

import torch

from paperkit import check_real, check_tensor

__all__ = ["fast_sigmoid", "spike_fn"]

SLOPE = 10.0


class _SpikeFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor, slope: float) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.slope = slope
        return (x >= 0).to(x.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        (x,) = ctx.saved_tensors
        return grad / (1.0 + ctx.slope * x.abs()) ** 2, None


def spike_fn(x: torch.Tensor, slope: float = SLOPE) -> torch.Tensor:
    r"""Heaviside :math:`1[x \ge 0]` forward, fast-sigmoid surrogate :math:`(1 + k|x|)^{-2}`
    backward (``slope`` = :math:`k`). Call it on :math:`v - \theta`.

    NaN policy: NaN is refused (ValueError); the check is skipped inside the simulation loop.

    >>> x = torch.tensor([-0.5, 0.0, 0.2], requires_grad=True)
    >>> s = spike_fn(x)
    >>> s.tolist()
    [0.0, 1.0, 1.0]
    >>> s.sum().backward(); [round(g, 4) for g in x.grad.tolist()]
    [0.0278, 1.0, 0.1111]
    """
    check_tensor("x", "spike_fn", x, ndim=None, nonempty=False)
    slope = check_real("slope", "spike_fn", slope, low=0, low_open=True)
    return _SpikeFunction.apply(x, slope)


def spike(x: torch.Tensor, slope: float = SLOPE) -> torch.Tensor:
    """:func:`spike_fn` without argument checks, for the simulation loop."""
    return _SpikeFunction.apply(x, slope)


def fast_sigmoid(x: torch.Tensor, slope: float = SLOPE) -> torch.Tensor:
    r"""The fast sigmoid :math:`x / (1 + k|x|)` whose derivative is :func:`spike_fn`'s backward.

    NaN policy: NaN is refused (ValueError).

    >>> fast_sigmoid(torch.tensor([0.1])).tolist()
    [0.05000000074505806]
    """
    check_tensor("x", "fast_sigmoid", x, ndim=None, nonempty=False)
    slope = check_real("slope", "fast_sigmoid", slope, low=0, low_open=True)
    return x / (1.0 + slope * x.abs())
