r"""Calibrated synthetic probability maps and labels drawn from them.

Maps are smooth random fields: white noise blurred by a Gaussian of width ``sigma`` (periodic),
standardised per map, then :math:`p = \sigma(a f + b)` (binary) or a softmax over C fields
(multiclass). Labels drawn from the same probabilities, :math:`Y_j \sim \mathrm{Bern}(p_j)` or
:math:`\mathrm{Categorical}(p_{\cdot j})`, make the maps exactly calibrated: the setting in which
RankSEG's Bayes rule is optimal.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy.ndimage import gaussian_filter

from paperkit import check_choice, check_int, check_memory, check_real
from rmaseg.probabilities import as_probs

__all__ = ["OBJECTS", "calibrated_binary", "calibrated_multiclass", "sample_labels"]

#: Binary regimes: (blur sigma, slope a, offset b) of the logit a f + b.
OBJECTS = {"faint": (1.5, 1.0, -2.5), "confident": (4.0, 6.0, -1.0)}


def _check_fits(owner: str, **sizes: int) -> None:
    """Refuse maps whose float64 noise, blur and probabilities (4 arrays of n C size^2 values)
    would not fit, naming the argument that, set to 1, would shrink the need the most."""

    def need(n: int, size: int, C: int = 1) -> float:
        return 4 * 8.0 * n * C * size * size

    culprit = min(sizes, key=lambda name: need(**{**sizes, name: 1}))
    check_memory(culprit, owner, sizes[culprit], need(**sizes))


def _fields(rng: np.random.Generator, shape: tuple[int, ...], sigma: float) -> np.ndarray:
    noise = rng.standard_normal(shape)
    blurred = gaussian_filter(noise, sigma=(0,) * (len(shape) - 2) + (sigma, sigma), mode="wrap")
    axes = (-2, -1)
    return (blurred - blurred.mean(axes, keepdims=True)) / blurred.std(axes, keepdims=True)


def calibrated_binary(
    n: int, size: int = 32, seed: int = 0, *, objects: str = "faint"
) -> torch.Tensor:
    r"""``n`` binary probability maps, float64 (n, 1, size, size).

    ``objects="faint"``: small blobs (blur 1.5 px), :math:`p = \sigma(f - 2.5)`, most
    :math:`p < 0.5`; ``"confident"``: large blobs (blur 4 px), :math:`p = \sigma(6 f - 1)`.

    >>> calibrated_binary(2, size=8, seed=0).shape
    torch.Size([2, 1, 8, 8])
    """
    owner = "calibrated_binary"
    n = check_int("n", owner, n, low=1)
    size = check_int("size", owner, size, low=2)
    seed = check_int("seed", owner, seed, low=0)
    _check_fits(owner, n=n, size=size)
    sigma, a, b = OBJECTS[check_choice("objects", owner, objects, tuple(OBJECTS))]
    f = _fields(np.random.default_rng(seed), (n, 1, size, size), sigma)
    return torch.sigmoid(torch.from_numpy(a * f + b))


def calibrated_multiclass(
    n: int, C: int = 4, size: int = 32, seed: int = 0, *, sharpness: float = 2.5
) -> torch.Tensor:
    r"""``n`` softmax probability maps over ``C`` classes, float64 (n, C, size, size).

    :math:`p_c = \mathrm{softmax}_c(\kappa f_c + 1\{c = 0\})`: independent blurred fields
    (3 px), ``sharpness`` :math:`\kappa`, class 0 a background slightly favoured.

    >>> p = calibrated_multiclass(2, C=3, size=8)
    >>> p.shape, bool((p.sum(dim=1) - 1).abs().max() < 1e-12)
    (torch.Size([2, 3, 8, 8]), True)
    """
    owner = "calibrated_multiclass"
    n = check_int("n", owner, n, low=1)
    C = check_int("C", owner, C, low=2)
    size = check_int("size", owner, size, low=2)
    seed = check_int("seed", owner, seed, low=0)
    _check_fits(owner, n=n, C=C, size=size)
    sharpness = check_real("sharpness", owner, sharpness)
    f = _fields(np.random.default_rng(seed), (n, C, size, size), 3.0)
    logits = torch.from_numpy(sharpness * f)
    logits[:, 0] += 1.0
    return torch.softmax(logits, dim=1)


def sample_labels(
    probs: torch.Tensor | np.ndarray,
    n_draws: int,
    seed: int = 0,
    *,
    output_mode: str = "multilabel",
) -> torch.Tensor:
    r"""Labels drawn from the probabilities, independent over pixels and draws.

    ``"multilabel"``: :math:`Y_{cj} \sim \mathrm{Bern}(p_{cj})`, bool (n_draws, B, C, \*spatial);
    ``"multiclass"``: :math:`y_j \sim \mathrm{Categorical}(p_{\cdot j})` (by the inverse CDF),
    int64 (n_draws, B, \*spatial). ``probs`` as :func:`rmaseg.rma_predict` takes them (NaN,
    inf and values outside [0, 1] refused); ``n_draws`` draws that would not fit in memory are
    refused.

    >>> sample_labels(torch.tensor([[[1.0, 0.0]]]), n_draws=2).tolist()
    [[[[True, False]]], [[[True, False]]]]
    """
    owner = "sample_labels"
    x, _ = as_probs(probs, owner)
    n_draws = check_int("n_draws", owner, n_draws, low=1)
    seed = check_int("seed", owner, seed, low=0)
    mode = check_choice("output_mode", owner, output_mode, ("multilabel", "multiclass"))
    check_memory("n_draws", owner, n_draws, 2.0 * n_draws * x.numel() * x.element_size())
    g = torch.Generator(device=x.device).manual_seed(seed)
    if mode == "multilabel":
        u = torch.rand((n_draws, *x.shape), generator=g, device=x.device, dtype=x.dtype)
        return u < x
    u = torch.rand(
        (n_draws, x.shape[0], 1, *x.shape[2:]), generator=g, device=x.device, dtype=x.dtype
    )
    cdf = x.cumsum(dim=1)
    return (u >= cdf[:, :-1].unsqueeze(0)).sum(dim=2)
