r"""Error metrics of the paper's evaluation (Sec. 5): relative L2 error and spectral band errors.

.. math::
    \mathrm{L2RE} = \frac1N \sum_n \frac{\lVert \hat y_n - y_n \rVert_2}{\lVert y_n \rVert_2},
    \qquad
    E_b = \frac{\lVert \mathcal F(\hat y - y)|_{b} \rVert_2}{\lVert \mathcal F(y)|_{b} \rVert_2},

where band ``b`` of ``n_bands`` holds the 2-D modes whose Chebyshev radius
:math:`\max(|k_x|, |k_y|)` lies in :math:`[\lfloor bK/n \rfloor, \lfloor (b+1)K/n \rfloor)`,
:math:`K = \lfloor \min(H, W)/2 \rfloor + 1`, summed over the whole batch.
"""

from __future__ import annotations

import torch

from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["band_errors", "l2re"]


def _pair(owner: str, pred: torch.Tensor, true: torch.Tensor, min_ndim: int) -> None:
    check_tensor("pred", owner, pred, ndim=tuple(range(min_ndim, 9)))
    check_tensor("true", owner, true, ndim=tuple(range(min_ndim, 9)))
    if pred.shape != true.shape:
        raise param_error(
            "pred", owner, f"of the same shape as 'true' {tuple(true.shape)}", describe(pred)
        )


def l2re(pred: torch.Tensor, true: torch.Tensor) -> torch.Tensor:
    """Mean over the first axis of the relative L2 error over all other axes (a 0-d tensor).

    NaN policy: NaN or inf in either input is refused; a sample with ``true == 0`` everywhere
    is refused (its relative error is undefined).

    >>> t = torch.ones(2, 4)
    >>> float(l2re(1.5 * t, t))
    0.5
    """
    _pair("l2re", pred, true, 1)
    diff = (pred - true).reshape(true.shape[0], -1).norm(dim=1)
    ref = true.reshape(true.shape[0], -1).norm(dim=1)
    if bool((ref == 0).any()):
        raise param_error("true", "l2re", "a reference with no all-zero sample", "a zero sample")
    return (diff / ref).mean()


def band_errors(pred: torch.Tensor, true: torch.Tensor, n_bands: int = 4) -> torch.Tensor:
    """Relative spectral error per Chebyshev-radius band of the last two (spatial) axes,
    low frequencies first (a (n_bands,) tensor; a band with no reference energy gives NaN).

    NaN policy: NaN or inf in either input is refused.

    >>> x = torch.arange(16.0).reshape(1, 4, 4)
    >>> band_errors(x, x, 2).tolist()
    [0.0, 0.0]
    """
    owner = "band_errors"
    _pair(owner, pred, true, 2)
    H, W = true.shape[-2:]
    K = min(H, W) // 2 + 1
    n_bands = check_int("n_bands", owner, n_bands, low=1, high=K)
    ft = torch.fft.fft2(true.double(), norm="ortho")
    fd = torch.fft.fft2((pred - true).double(), norm="ortho")
    kx = torch.fft.fftfreq(H, d=1.0 / H).abs()[:, None]
    ky = torch.fft.fftfreq(W, d=1.0 / W).abs()[None, :]
    rho = torch.maximum(kx, ky).round().long()
    edges = [b * K // n_bands for b in range(n_bands + 1)]
    err_e = fd.abs().pow(2).reshape(-1, H, W).sum(0)
    ref_e = ft.abs().pow(2).reshape(-1, H, W).sum(0)
    out = []
    for b in range(n_bands):
        sel = (rho >= edges[b]) & (rho < edges[b + 1])
        out.append((err_e[sel].sum() / ref_e[sel].sum()).sqrt())
    return torch.stack(out).to(true.dtype)
