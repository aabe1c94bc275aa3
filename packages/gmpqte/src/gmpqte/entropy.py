"""Layer topological entropy (TE): the paper's per-layer quantisation-sensitivity score, computed
by persistent homology on the feature maps of one minibatch of same-label images (Sec. 3).

For a quantisable layer l (``Conv2d`` or ``Linear``) with post-activation output
:math:`F_l \\in \\mathbb{R}^{B \\times C_l \\times H_l \\times W_l}`:

- mode ``"cubical"`` (default): for every image b and every sampled channel c (at most
  ``max_channels``, drawn with the seed), the map :math:`F_l[b, c]` is min-max normalised and its
  superlevel-set filtration gives diagrams :math:`D_0, D_1`
  (:func:`gmpqte.topology.cubical_diagrams`); the map's entropy is
  :math:`PE(D_0) + PE(D_1)` (``dims="sum"``, or their mean) with summary ``"persistent"``, or
  the entropy of the Betti curve of :math:`D_0 \\cup D_1` with summary ``"betti"``.
  :math:`TE_l` is the mean over the non-constant maps (``skip_constant=True``; a dead ReLU
  channel has no topology) or over all maps with constant ones counted as 0.
- mode ``"pointcloud"`` (and ``Linear`` layers in either mode): the B feature vectors, z-scored
  per coordinate, form a point cloud; its Vietoris-Rips diagrams (dims 0, 1; bars divided by the
  diameter) give :math:`TE_l` through the same summary.

Both modes are invariant to a positive rescaling of :math:`F_l`. A layer's post-activation
output is its output passed through ReLU, except for the model's last quantisable layer (the
classifier head), taken as it is; fold batch norms into their convolutions first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from gmpqte.topology import (
    BETTI_GRID,
    betti_entropy,
    cubical_diagrams,
    persistent_entropy,
    rips_diagrams,
)
from paperkit import check_bool, check_choice, check_int, check_tensor, param_error

__all__ = ["LayerTE", "layer_te_details", "layer_topological_entropy", "quantisable_layers"]

MODES = ("cubical", "pointcloud")
SUMMARIES = ("persistent", "betti")
DIMS = ("sum", "mean")
#: The largest calibration batch accepted (the paper uses one minibatch, B = 32 here).
MAX_BATCH = 4096


@dataclass(frozen=True)
class LayerTE:
    """One layer's TE, the share of its sampled maps that were constant (0 in point-cloud mode
    unless every coordinate is constant), and how many maps (or clouds) entered the mean."""

    te: float
    constant_share: float
    n_maps: int
    mode: str


def quantisable_layers(model: nn.Module) -> list[str]:
    """Names of the ``Conv2d`` and ``Linear`` modules of ``model``, in registration order.

    >>> from gmpqte.models import small_cnn
    >>> quantisable_layers(small_cnn())
    ['conv1', 'conv2', 'conv3', 'conv4', 'fc']
    """
    if not isinstance(model, nn.Module):
        raise param_error(
            "model", "quantisable_layers", "a torch.nn.Module", type(model).__name__, cls=TypeError
        )
    return [n for n, m in model.named_modules() if isinstance(m, (nn.Conv2d, nn.Linear))]


def _check_layers(owner: str, model: nn.Module, layers: Any) -> list[str]:
    names = quantisable_layers(model)
    if layers is None:
        if not names:
            raise param_error("model", owner, "a model with Conv2d or Linear layers", "none")
        return names
    if isinstance(layers, str) or not isinstance(layers, (list, tuple)):
        raise param_error(
            "layers", owner, "a list of layer names or None", type(layers).__name__, cls=TypeError
        )
    if len(layers) == 0:
        raise param_error("layers", owner, "a non-empty list of layer names", "[]")
    for name in layers:
        if name not in names:
            raise param_error("layers", owner, f"names of Conv2d/Linear layers among {names}", name)
    return list(layers)


def _check_batch(owner: str, images: Any, labels: Any, allow_mixed: bool) -> None:
    dims: dict[str, Any] = {}
    check_tensor("images", owner, images, shape=("B", None, None, None), dims=dims)
    if images.shape[0] > MAX_BATCH:
        raise param_error(
            "images", owner, f"a batch of at most {MAX_BATCH} images", images.shape[0]
        )
    allow_mixed = check_bool("allow_mixed", owner, allow_mixed)
    if labels is None:
        return
    check_tensor("labels", owner, labels, shape=("B",), dims=dims, dtype="int")
    if not allow_mixed and labels.numel() and bool((labels != labels[0]).any()):
        raise param_error(
            "labels",
            owner,
            "one label for the whole minibatch (TE is computed on same-label images; pass "
            "allow_mixed=True to override)",
            f"{len(torch.unique(labels))} different labels",
        )


def _features(model: nn.Module, images: torch.Tensor, layers: list[str]) -> dict[str, np.ndarray]:
    """Post-activation outputs of ``layers`` on one forward pass, as float64 arrays."""
    modules = dict(model.named_modules())
    head = quantisable_layers(model)[-1]
    captured: dict[str, torch.Tensor] = {}
    hooks = [
        modules[name].register_forward_hook(
            lambda _m, _i, out, name=name: captured.__setitem__(name, out.detach())
        )
        for name in layers
    ]
    was_training = model.training
    param = next(model.parameters(), None)
    x = images.to(param.dtype) if param is not None else images
    try:
        model.eval()
        with torch.no_grad():
            model(x)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    out = {}
    for name in layers:
        f = captured[name]
        if name != head:
            f = torch.relu(f)
        out[name] = f.double().cpu().numpy()
    return out


def _summary(diagrams: dict[int, np.ndarray], summary: str, dims: str) -> float:
    if summary == "betti":
        return betti_entropy(np.concatenate([diagrams[0], diagrams[1]]), BETTI_GRID)
    pe = persistent_entropy(diagrams[0]) + persistent_entropy(diagrams[1])
    return pe if dims == "sum" else pe / 2


def _cloud_te(features: np.ndarray, summary: str, dims: str) -> LayerTE:
    x = features.reshape(features.shape[0], -1)
    std = x.std(axis=0)
    keep = std > 1e-12 * max(1.0, float(np.abs(x).max()))
    if not keep.any() or x.shape[0] < 2:
        return LayerTE(0.0, 1.0, 1, "pointcloud")
    z = (x[:, keep] - x[:, keep].mean(axis=0)) / std[keep]
    diagrams = rips_diagrams(z, maxdim=1)
    end = max(float(diagrams[0][:, 1].max()) if len(diagrams[0]) else 0.0, 1e-300)
    diagrams = {d: bars / end for d, bars in diagrams.items()}
    return LayerTE(_summary(diagrams, summary, dims), 0.0, 1, "pointcloud")


def _cubical_te(
    features: np.ndarray, summary: str, dims: str, channels: np.ndarray, skip_constant: bool
) -> LayerTE:
    values, constant = [], 0
    for b in range(features.shape[0]):
        for c in channels:
            f = features[b, c]
            if f.max() - f.min() <= 0:
                constant += 1
                if not skip_constant:
                    values.append(0.0)
                continue
            values.append(_summary(cubical_diagrams(f), summary, dims))
    total = features.shape[0] * len(channels)
    te = float(np.mean(values)) if values else 0.0
    return LayerTE(te, constant / total, len(values), "cubical")


def layer_te_details(
    model: nn.Module,
    images: torch.Tensor,
    layers: list[str] | None = None,
    mode: str = "cubical",
    summary: str = "persistent",
    max_channels: int = 64,
    seed: int = 0,
    *,
    labels: torch.Tensor | None = None,
    allow_mixed: bool = False,
    skip_constant: bool = True,
    dims: str = "sum",
) -> dict[str, LayerTE]:
    """:func:`layer_topological_entropy` with, per layer, the share of constant maps and the
    number of maps averaged (:class:`LayerTE`). Same arguments and NaN policy.

    Shapes: ``images`` (B, C, H, W); ``labels`` (B,).
    """
    owner = "layer_topological_entropy"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", type(model).__name__, cls=TypeError)
    names = _check_layers(owner, model, layers)
    _check_batch(owner, images, labels, allow_mixed)
    check_choice("mode", owner, mode, MODES)
    check_choice("summary", owner, summary, SUMMARIES)
    check_choice("dims", owner, dims, DIMS)
    max_channels = check_int("max_channels", owner, max_channels, low=1, high=100_000)
    seed = check_int("seed", owner, seed, low=0)
    skip_constant = check_bool("skip_constant", owner, skip_constant)
    try:
        feats = _features(model, images, names)
    except RuntimeError as exc:  # the model cannot take these images
        raise param_error("images", owner, "a batch the model accepts", str(exc)[:200]) from exc
    out = {}
    for position, name in enumerate(names):
        f = feats[name]
        if mode == "pointcloud" or f.ndim != 4:
            out[name] = _cloud_te(f, summary, dims)
            continue
        rng = np.random.default_rng([seed, position])
        n_channels = f.shape[1]
        channels = np.arange(n_channels)
        if n_channels > max_channels:
            channels = np.sort(rng.choice(n_channels, size=max_channels, replace=False))
        out[name] = _cubical_te(f, summary, dims, channels, skip_constant)
    return out


def layer_topological_entropy(
    model: nn.Module,
    images: torch.Tensor,
    layers: list[str] | None = None,
    mode: str = "cubical",
    summary: str = "persistent",
    max_channels: int = 64,
    seed: int = 0,
    *,
    labels: torch.Tensor | None = None,
    allow_mixed: bool = False,
    skip_constant: bool = True,
    dims: str = "sum",
) -> dict[str, float]:
    """Topological entropy :math:`TE_l` of every quantisable layer (or of ``layers``) on one
    calibration minibatch.

    Args:
        model: the trained network (batch norms folded); put in eval mode for the forward pass
            and restored afterwards.
        images: one minibatch of images sharing a label, ``(B, C, H, W)``; cast to the model's
            dtype.
        layers: names of ``Conv2d``/``Linear`` modules (default: all of them); not empty.
        mode: ``"cubical"`` (superlevel filtration of each feature map) or ``"pointcloud"``
            (Vietoris-Rips on the B feature vectors); ``Linear`` layers always use the latter.
        summary: ``"persistent"`` (persistent entropy) or ``"betti"`` (Betti-curve entropy).
        max_channels: channels sampled per layer (with ``seed``) in cubical mode.
        labels: the images' labels ``(B,)``; mixed labels are refused unless ``allow_mixed``.
        skip_constant: leave constant maps out of the mean (else they count as 0).
        dims: ``"sum"`` or ``"mean"`` of the dim-0 and dim-1 persistent entropies.

    Returns ``{layer name: TE_l}``. NaN policy: NaN or infinite pixels are refused.

    Shapes: ``images`` (B, C, H, W); ``labels`` (B,).

    >>> from gmpqte.models import small_cnn
    >>> torch.manual_seed(0) and None
    >>> te = layer_topological_entropy(small_cnn(), torch.rand(4, 1, 16, 16), max_channels=4)
    >>> sorted(te) == ['conv1', 'conv2', 'conv3', 'conv4', 'fc'] and min(te.values()) >= 0
    True
    """
    details = layer_te_details(
        model,
        images,
        layers,
        mode,
        summary,
        max_channels,
        seed,
        labels=labels,
        allow_mixed=allow_mixed,
        skip_constant=skip_constant,
        dims=dims,
    )
    return {name: d.te for name, d in details.items()}
