"""ID energy and the differential energy score of DEnD.

With pattern logits g(x) in R^P of a model fitted to natural images only (the prototype logits of a
self-supervised model), the in-distribution energy is (the energy score of energy-based OOD
detection, with temperature T)

    E(x) = -T log sum_k exp(g_k(x) / T),

low for patterns the natural-image prototypes explain. DEnD scores an image by how much this
energy moves under small perturbations t_i (Gaussian noise of std sigma, clipped to [0, 1]):

    s_abs(x)    = (1/n) sum_i |E(t_i(x)) - E(x)|      (default)
    s_signed(x) = (1/n) sum_i (E(t_i(x)) - E(x)).

Natural images sit in flat, low-energy regions (small s); generated images do not (large s).
The n perturbed copies are stacked with x in the batch axis, so one batch costs one forward pass of
size B (n + 1).
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from idenergy._inputs import as_images
from paperkit import check_choice, check_int, check_memory, check_real, check_tensor, param_error

__all__ = ["MODES", "PERTURBATIONS", "differential_energy", "gaussian_blur", "id_energy"]

#: Differential-score variants: mean absolute and mean signed energy change.
MODES = ("abs", "signed")
#: Perturbations: Gaussian pixel noise of std sigma, or a Gaussian blur of std ``BLUR_STD`` px.
PERTURBATIONS = ("noise", "blur")
#: Standard deviation (pixels) of the ``perturb="blur"`` variant.
BLUR_STD = 0.5


def id_energy(logits: torch.Tensor, T: float = 1.0) -> torch.Tensor:
    """``E = -T logsumexp(logits / T)`` per row: ``(B, P) -> (B,)``.

    Differentiable, with dE/dlogits = -softmax(logits / T). Adding a constant c to every logit
    shifts E by -c. NaN and inf refused.

    >>> id_energy(torch.tensor([[0.0, 0.0]]))
    tensor([-0.6931])
    """
    check_tensor("logits", "id_energy", logits, shape=("B", "P"))
    T = check_real("T", "id_energy", T, low=0, low_open=True)
    return -T * torch.logsumexp(logits / T, dim=1)


def gaussian_blur(x: torch.Tensor, std: float = BLUR_STD) -> torch.Tensor:
    """Separable Gaussian blur of ``x (B, C, H, W)`` with reflected borders (radius 4 std).

    The same filter as ``scipy.ndimage.gaussian_filter(x, (0, 0, std, std), mode="reflect")``:
    borders mirrored with the edge pixel repeated. NaN and inf propagate (a linear filter).

    >>> gaussian_blur(torch.ones(1, 1, 5, 5), 0.5).allclose(torch.ones(1, 1, 5, 5))
    True
    """
    check_tensor("x", "gaussian_blur", x, ndim=4, finite=False)
    std = check_real("std", "gaussian_blur", std, low=0, low_open=True, high=16)
    radius = int(4 * std + 0.5)
    taps = torch.arange(-radius, radius + 1, dtype=x.dtype, device=x.device)
    kernel = torch.exp(-0.5 * (taps / std) ** 2)
    kernel = kernel / kernel.sum()
    b, c, h, w = x.shape
    y = x.reshape(b * c, 1, h, w)
    y = _symmetric_pad(y, radius)
    y = F.conv2d(y, kernel.view(1, 1, 1, -1))
    y = F.conv2d(y, kernel.view(1, 1, -1, 1))
    return y.reshape(b, c, h, w)


def _symmetric_pad(y: torch.Tensor, r: int) -> torch.Tensor:
    """Pad the last two axes by ``r`` mirroring with the edge pixel repeated (scipy "reflect")."""
    for dim in (2, 3):
        n = y.shape[dim]
        idx = torch.arange(-r, n + r, device=y.device)
        period = 2 * n
        idx = torch.remainder(idx, period)
        idx = torch.where(idx >= n, period - 1 - idx, idx)
        y = y.index_select(dim, idx)
    return y


def _logits_of(model: Any, owner: str):
    fn = getattr(model, "logits", None)
    if not callable(fn):
        raise param_error(
            "model",
            owner,
            "a backbone with a logits(x) -> (B, P) method",
            type(model).__name__,
            cls=TypeError,
        )
    return fn


def perturb_stack(
    x: torch.Tensor, sigma: float, n: int, perturb: str, generator: torch.Generator | None
) -> torch.Tensor:
    """``[x, t_1(x), ..., t_n(x)]`` stacked along the batch axis: ``(B (n' + 1), C, H, W)`` with
    ``n' = n`` for noise and ``n' = 1`` for the deterministic blur. Arguments as validated by
    :func:`differential_energy`."""
    if perturb == "blur":
        return torch.cat([x, gaussian_blur(x, BLUR_STD)])
    eps = torch.randn((n, *x.shape), generator=generator, dtype=x.dtype, device=x.device)
    noisy = (x.unsqueeze(0) + sigma * eps).clamp_(0.0, 1.0)
    return torch.cat([x, noisy.reshape(-1, *x.shape[1:])])


def differential_energy(
    model: Any,
    x: Any,
    sigma: float = 0.05,
    n: int = 8,
    mode: str = "abs",
    perturb: str = "noise",
    generator: torch.Generator | None = None,
    T: float = 1.0,
) -> torch.Tensor:
    """The DEnD score ``(1/n) sum_i |E(t_i(x)) - E(x)|`` (``mode="abs"``) or its signed mean
    (``mode="signed"``), ``x (B, C, H, W) -> (B,)``, larger = more likely generated.

    ``t_i(x) = clip(x + sigma eps_i, 0, 1)``, ``eps_i ~ N(0, I)`` drawn from ``generator``
    (``perturb="noise"``), or the Gaussian blur of std 0.5 px (``perturb="blur"``: deterministic,
    so one blurred copy and ``n`` unused). ``model.logits`` is called once, on the stacked batch of
    ``B (n + 1)`` images. Pixels must lie in [0, 1]; NaN and inf refused.

    >>> from idenergy.ssl import DinoLite
    >>> _ = torch.manual_seed(0)
    >>> s = differential_energy(DinoLite(1), torch.rand(3, 1, 16, 16), n=4)
    >>> s.shape, bool((s >= 0).all())
    (torch.Size([3]), True)
    """
    owner = "differential_energy"
    logits_fn = _logits_of(model, owner)
    x = as_images("x", owner, x)
    sigma = check_real("sigma", owner, sigma, low=0, high=1)
    n = check_int("n", owner, n, low=1, high=1024)
    check_choice("mode", owner, mode, MODES)
    check_choice("perturb", owner, perturb, PERTURBATIONS)
    T = check_real("T", owner, T, low=0, low_open=True)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "a torch.Generator or None", type(generator).__name__, cls=TypeError
        )
    copies = 1 if perturb == "blur" else n
    check_memory("n", owner, n, 4.0 * x.numel() * (copies + 1) * 3)
    b = x.shape[0]
    energies = id_energy(logits_fn(perturb_stack(x, sigma, copies, perturb, generator)), T)
    delta = energies[b:].view(copies, b) - energies[:b].unsqueeze(0)
    return (delta.abs() if mode == "abs" else delta).mean(dim=0)
