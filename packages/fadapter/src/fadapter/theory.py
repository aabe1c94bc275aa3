r"""The two numerical probes of the paper's theory (Sec. 3: LoRA's lower bound, adapters' rate).

(a) :func:`lora_depth_probe`: a stack of ``L`` Fourier layers (:class:`fadapter.AFNO2d`,
    weights :math:`\mathcal N(0, 1/c)`) is the pretrained model; the target perturbs every
    spectral weight by a full-rank :math:`\Delta \sim \mathcal N(0, \delta^2/c)`. Rank-``r``
    LoRA updates per layer (:class:`fadapter.LoRAAFNO2d`) are fitted with Adam on the output
    MSE; the relative error left, :math:`\lVert f_{LoRA} - f^\star\rVert/\lVert f^\star\rVert`,
    has a floor (each layer's update keeps only ``r`` of ``c`` directions) that grows with
    depth.
(b) :func:`adapter_width_probe`: a residual target map :math:`z \mapsto z + Mz` whose singular
    values decay geometrically, :math:`\sigma_j = q^j` (a spectrally concentrated target); a
    bottleneck adapter of width ``d`` fitted to it leaves a relative error that decays roughly
    like :math:`q^d` (the best rank-``d`` map leaves exactly
    :math:`\sqrt{\sum_{j\ge d}\sigma_j^2 / \sum_j \sigma_j^2} = q^d`), i.e. exponentially in
    the width. :func:`log_linear_fit` gives the slope and :math:`R^2` of log error vs width.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from fadapter.adapters import BandAdapters
from fadapter.layers import AFNO2d
from fadapter.lora import LoRAAFNO2d
from paperkit import check_int, check_real, param_error

__all__ = ["adapter_width_probe", "log_linear_fit", "lora_depth_probe"]


def _ints(name: str, owner: str, values: Sequence[int], high: int) -> list[int]:
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
        raise param_error(name, owner, "a non-empty list of integers", values, cls=TypeError)
    return [check_int(name, owner, v, low=1, high=high) for v in values]


def _fit(params: list[torch.Tensor], loss_fn: Any, steps: int, lr: float) -> None:
    opt = torch.optim.Adam(params, lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for _ in range(steps):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        sched.step()


def lora_depth_probe(
    depths: Sequence[int] = (1, 2, 4),
    rank: int = 2,
    width: int = 16,
    delta: float = 0.5,
    steps: int = 200,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Fit rank-``rank`` LoRA to a perturbed stack of ``depth`` Fourier layers, per depth.

    Returns one row per depth: ``depth``, ``rel_error`` (held-out, relative to the target
    output) and ``shift_left`` (the fraction of the target's change from the pretrained model
    that LoRA did not capture; 1 at initialisation). One channel block of ``width`` channels,
    4 modes on an 8x8 grid, 128 training and 64 test inputs. NaN policy: a NaN or inf
    ``delta`` is refused.
    """
    owner = "lora_depth_probe"
    depths = _ints("depths", owner, depths, 64)
    width = check_int("width", owner, width, low=2, high=256)
    rank = check_int("rank", owner, rank, low=1, high=width)
    delta = check_real("delta", owner, delta, low=0, low_open=True, high=10)
    steps = check_int("steps", owner, steps, low=1, high=10**5)
    seed = check_int("seed", owner, seed, low=0)
    rows = []
    for depth in depths:
        g = torch.Generator().manual_seed(seed + depth)
        base = [AFNO2d(width, num_blocks=1, modes=4) for _ in range(depth)]
        target = [AFNO2d(width, num_blocks=1, modes=4) for _ in range(depth)]
        with torch.no_grad():
            for b, t in zip(base, target, strict=True):
                for name in ("w1", "w2"):
                    w = torch.randn(getattr(b, name).shape, generator=g) / math.sqrt(width)
                    d = delta * torch.randn(w.shape, generator=g) / math.sqrt(width)
                    getattr(b, name).copy_(w)
                    getattr(t, name).copy_(w + d)
                for name in ("b1", "b2"):
                    getattr(t, name).copy_(getattr(b, name))
        for p in [p for m in base + target for p in m.parameters()]:
            p.requires_grad_(False)
        torch.manual_seed(seed + depth)
        student = [LoRAAFNO2d(b, rank, float(rank)) for b in base]
        x_train = torch.randn(128, 8, 8, width, generator=g)
        x_test = torch.randn(64, 8, 8, width, generator=g)

        def run(layers: list[torch.nn.Module], x: torch.Tensor) -> torch.Tensor:
            for layer in layers:
                x = layer(x)
            return x

        with torch.no_grad():
            y_train, y_test = run(target, x_train), run(target, x_test)
            y_base = run(base, x_test)
        params = [p for s in student for p in (s.a1, s.b1, s.a2, s.b2)]
        _fit(
            params,
            lambda s=student, x=x_train, y=y_train: (run(s, x) - y).pow(2).mean(),
            steps,
            1e-2,
        )
        with torch.no_grad():
            err = (run(student, x_test) - y_test).norm()
        rows.append(
            {
                "depth": depth,
                "rel_error": float(err / y_test.norm()),
                "shift_left": float(err / (y_base - y_test).norm()),
            }
        )
    return rows


def adapter_width_probe(
    widths: Sequence[int] = (1, 2, 3, 4, 5, 6),
    features: int = 16,
    decay: float = 0.6,
    steps: int = 500,
    seed: int = 0,
) -> list[dict[str, float]]:
    """Fit a bottleneck adapter of each width to a residual map with singular values
    ``decay**j`` on ``features`` channels.

    Returns one row per width: ``width``, ``rel_error`` (held-out
    :math:`\\lVert Ad(z) - T(z)\\rVert / \\lVert T(z) - z\\rVert`) and ``best_linear``
    (``decay**width`` up to the normalisation: the error of the best rank-``width`` map).
    NaN policy: a NaN or inf ``decay`` is refused.
    """
    owner = "adapter_width_probe"
    features = check_int("features", owner, features, low=2, high=1024)
    widths = _ints("widths", owner, widths, features)
    decay = check_real("decay", owner, decay, low=0, low_open=True, high=1, high_open=True)
    steps = check_int("steps", owner, steps, low=1, high=10**5)
    seed = check_int("seed", owner, seed, low=0)
    g = torch.Generator().manual_seed(seed)
    q1, _ = torch.linalg.qr(torch.randn(features, features, generator=g))
    q2, _ = torch.linalg.qr(torch.randn(features, features, generator=g))
    sigma = decay ** torch.arange(features, dtype=torch.float32)
    M = q1 @ torch.diag(sigma) @ q2.T
    z_train = torch.randn(512, 1, 1, features, generator=g)
    z_test = torch.randn(512, 1, 1, features, generator=g)
    rows = []
    for d in widths:
        torch.manual_seed(seed + d)
        ad = BandAdapters(1, features, [d])
        t_train, t_test = z_train @ M.T, z_test @ M.T
        _fit(
            list(ad.parameters()),
            lambda ad=ad, t=t_train: (ad.adapt(0, z_train) - z_train - t).pow(2).mean(),
            steps,
            1e-2,
        )
        with torch.no_grad():
            err = (ad.adapt(0, z_test) - z_test - t_test).norm() / t_test.norm()
        best = float(torch.sqrt((sigma[d:] ** 2).sum() / (sigma**2).sum()))
        rows.append({"width": d, "rel_error": float(err), "best_linear": best})
    return rows


def log_linear_fit(x: Sequence[float], y: Sequence[float]) -> dict[str, float]:
    """Least-squares fit of ``log y = a + s x``: slope ``s``, ratio ``exp(s)`` per unit of x,
    and :math:`R^2`.

    >>> fit = log_linear_fit([1, 2, 3], [0.5, 0.25, 0.125])
    >>> round(fit["ratio"], 6), round(fit["r2"], 6)
    (0.5, 1.0)
    """
    xs, ys = np.asarray(x, float), np.log(np.asarray(y, float))
    slope, icept = np.polyfit(xs, ys, 1)
    resid = ys - (icept + slope * xs)
    total = ((ys - ys.mean()) ** 2).sum()
    r2 = 1.0 - float((resid**2).sum() / total) if total > 0 else 1.0
    return {"slope": float(slope), "ratio": float(np.exp(slope)), "r2": r2}
