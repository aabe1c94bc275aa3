"""The baselines the paper compares against, all through the same ILP
(:func:`gmpqte.allocation.allocate`):

- HAWQ (Hessian-aware, V2/V3): the average Hessian trace :math:`\\bar T_l = \\mathrm{Tr}(H_l)/P_l`
  by Hutchinson's estimator, :math:`\\mathrm{Tr}(H) \\approx \\frac1m\\sum_i v_i^\\top H v_i` with
  Rademacher :math:`v_i` (Hessian-vector products by double back-propagation), and the ILP
  :math:`\\min \\sum_l \\bar T_l\\, \\|Q_b(w_l) - w_l\\|^2` under the same budgets;
- the oracle: the measured accuracy drop when one layer alone is quantised to 2 bits, as the
  score of the GMPQ-TE ILP (more bits to more sensitive layers);
- uniform bit-widths, and random scores through the ILP (a random policy that spends the budget).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from gmpqte.allocation import (
    DEFAULT_BITS,
    _check_bops,
    _check_fixed,
    _same_keys,
    allocate,
    check_bit_choices,
    check_scores,
)
from gmpqte.entropy import quantisable_layers
from gmpqte.quantize import quantize_model, quantize_weight
from gmpqte.training import accuracy
from paperkit import check_callable, check_int, check_real, check_tensor, param_error

__all__ = [
    "hawq_policy",
    "hawq_trace_sensitivity",
    "measured_sensitivity",
    "random_policy",
    "uniform_policy",
]

#: The most Hutchinson probes accepted.
MAX_PROBES = 10_000


def _check_model(owner: str, model: Any, layers: Any) -> list[str]:
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", type(model).__name__, cls=TypeError)
    names = quantisable_layers(model)
    if layers is None:
        return names
    if isinstance(layers, str) or not isinstance(layers, (list, tuple)):
        raise param_error(
            "layers", owner, "a list of layer names or None", type(layers).__name__, cls=TypeError
        )
    if not layers:
        raise param_error("layers", owner, "a non-empty list of layer names", "[]")
    for name in layers:
        if name not in names:
            raise param_error("layers", owner, f"names of Conv2d/Linear layers among {names}", name)
    return list(layers)


def hawq_trace_sensitivity(
    model: nn.Module,
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    batches: Iterable[tuple[torch.Tensor, torch.Tensor]],
    n_probe: int = 20,
    layers: list[str] | None = None,
    seed: int = 0,
) -> dict[str, float]:
    """HAWQ's average Hessian trace per layer, :math:`\\mathrm{Tr}(H_l)/P_l`, by Hutchinson's
    estimator over ``n_probe`` Rademacher probes on each batch (averaged over the batches); H_l
    is the Hessian of ``loss_fn(model(x), y)`` with respect to layer l's weight.

    NaN policy: NaN or infinite inputs are refused.

    >>> from gmpqte.models import small_cnn
    >>> x, y = torch.rand(8, 1, 16, 16), torch.arange(8) % 10
    >>> tr = hawq_trace_sensitivity(small_cnn().eval(), torch.nn.functional.cross_entropy,
    ...                             [(x, y)], n_probe=2)
    >>> sorted(tr)
    ['conv1', 'conv2', 'conv3', 'conv4', 'fc']
    """
    owner = "hawq_trace_sensitivity"
    names = _check_model(owner, model, layers)
    check_callable("loss_fn", owner, loss_fn)
    n_probe = check_int("n_probe", owner, n_probe, low=1, high=MAX_PROBES)
    seed = check_int("seed", owner, seed, low=0)
    if isinstance(batches, (str, bytes, torch.Tensor)) or not isinstance(batches, Iterable):
        raise param_error(
            "batches",
            owner,
            "an iterable of (inputs, targets) pairs",
            type(batches).__name__,
            cls=TypeError,
        )
    batches = list(batches)
    if not batches:
        raise param_error("batches", owner, "a non-empty iterable of (inputs, targets)", "[]")
    for x_y in batches:
        if not isinstance(x_y, (tuple, list)) or len(x_y) != 2:
            raise param_error(
                "batches", owner, "(inputs, targets) pairs", type(x_y).__name__, cls=TypeError
            )
        check_tensor("batches", owner, x_y[0])
    modules = dict(model.named_modules())
    weights = [modules[n].weight for n in names]
    gen = torch.Generator().manual_seed(seed)
    traces = np.zeros(len(names))
    was_training = model.training
    model.eval()
    try:
        for x, y in batches:
            loss = loss_fn(model(x), y)
            grads = torch.autograd.grad(loss, weights, create_graph=True)
            for _ in range(n_probe):
                vs = [
                    torch.randint(0, 2, w.shape, generator=gen).to(w.dtype) * 2 - 1 for w in weights
                ]
                hvs = torch.autograd.grad(grads, weights, grad_outputs=vs, retain_graph=True)
                traces += np.array([float((hv * v).sum()) for hv, v in zip(hvs, vs, strict=True)])
    finally:
        model.train(was_training)
    traces /= n_probe * len(batches)
    return {n: float(t / w.numel()) for n, t, w in zip(names, traces, weights, strict=True)}


def hawq_policy(
    model: nn.Module,
    traces: Mapping[str, float],
    budget_bits: float,
    bit_choices: Sequence[int] = DEFAULT_BITS,
    bops: Mapping[str, float] | None = None,
    budget_bops: float | None = None,
    fixed: Mapping[str, int] | None = None,
    *,
    a_bits: int = 8,
) -> dict[str, int]:
    """HAWQ-V3's ILP: :math:`\\min_x \\sum_{l,b} x_{l,b}\\, \\bar T_l\\, \\|Q_b(w_l) - w_l\\|^2`
    under the size (and BitOps) budget, one bit-width per layer (``traces`` from
    :func:`hawq_trace_sensitivity`; the weights are read from ``model``).

    NaN policy: NaN or infinite traces and budgets are refused.
    """
    owner = "hawq_policy"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", type(model).__name__, cls=TypeError)
    scores = check_scores("traces", owner, traces, low=None)
    layers = list(scores)
    names = quantisable_layers(model)
    for name in layers:
        if name not in names:
            raise param_error("traces", owner, "layer names of the model", name)
    budget_bits = check_real("budget_bits", owner, budget_bits, low=0)
    bits = check_bit_choices(owner, bit_choices)
    a_bits = check_int("a_bits", owner, a_bits, low=1, high=32)
    ops, budget_ops = _check_bops(owner, bops, budget_bops, layers)
    pinned = _check_fixed(owner, fixed, layers)
    modules = dict(model.named_modules())
    gains, sizes = {}, {}
    with torch.no_grad():
        for name in layers:
            w = modules[name].weight.detach()
            sizes[name] = float(w.numel())
            choices = (pinned[name],) if name in pinned else bits
            gains[name] = {
                b: -scores[name] * float(((quantize_weight(w, b) - w) ** 2).sum()) for b in choices
            }
    policy, _ = allocate(owner, gains, sizes, budget_bits, ops, budget_ops, a_bits)
    return policy


def measured_sensitivity(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    bits: int = 2,
    layers: list[str] | None = None,
    a_bits: int | None = None,
) -> dict[str, float]:
    """The oracle: for each layer, the accuracy drop (in [−1, 1]) when that layer alone is
    quantised to ``bits`` (the others in full precision; activations at ``a_bits``, None: full).

    NaN policy: NaN or infinite pixels are refused.

    Shapes: ``images`` (B, C, H, W); ``labels`` (B,).
    """
    owner = "measured_sensitivity"
    names = _check_model(owner, model, layers)
    bits = check_int("bits", owner, bits, low=1, high=32)
    if a_bits is not None:
        a_bits = check_int("a_bits", owner, a_bits, low=1, high=32)
    full = accuracy(model, images, labels)
    return {
        n: full - accuracy(quantize_model(model, {n: bits}, a_bits), images, labels) for n in names
    }


def uniform_policy(layers: Sequence[str] | Mapping[str, Any], bits: int = 3) -> dict[str, int]:
    """Every layer at ``bits``. ``layers``: names, or a dict keyed by them (e.g. ``n_params``).

    >>> uniform_policy(["conv1", "fc"], 4)
    {'conv1': 4, 'fc': 4}
    """
    owner = "uniform_policy"
    if isinstance(layers, str) or not isinstance(layers, (list, tuple, Mapping)):
        raise param_error(
            "layers", owner, "a list of layer names", type(layers).__name__, cls=TypeError
        )
    if not layers:
        raise param_error("layers", owner, "a non-empty list of layer names", "[]")
    bits = check_int("bits", owner, bits, low=1, high=32)
    return {str(name): bits for name in layers}


def random_policy(
    n_params: Mapping[str, float],
    budget_bits: float,
    seed: int = 0,
    bit_choices: Sequence[int] = DEFAULT_BITS,
    fixed: Mapping[str, int] | None = None,
) -> dict[str, int]:
    """A random policy that spends the budget: scores drawn uniformly in [0, 1) (seeded) through
    the GMPQ-TE ILP.

    NaN policy: NaN or infinite sizes and budgets are refused.

    >>> random_policy({"a": 10, "b": 10, "c": 10}, budget_bits=120, seed=1, bit_choices=(2, 4, 8))
    {'a': 2, 'b': 8, 'c': 2}
    """
    owner = "random_policy"
    sizes = check_scores("n_params", owner, n_params, low=0)
    layers = list(sizes)
    budget_bits = check_real("budget_bits", owner, budget_bits, low=0)
    seed = check_int("seed", owner, seed, low=0)
    bits = check_bit_choices(owner, bit_choices)
    pinned = _check_fixed(owner, fixed, layers)
    scores = np.random.default_rng(seed).random(len(layers))
    gains = {
        l: {b: float(s) * b for b in ((pinned[l],) if l in pinned else bits)}
        for l, s in zip(layers, scores, strict=True)
    }
    _same_keys("n_params", owner, sizes, layers)
    policy, _ = allocate(owner, gains, sizes, budget_bits)
    return policy
