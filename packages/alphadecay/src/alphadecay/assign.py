r"""Which modules AlphaDecay tracks, their exponents, and the map from exponent to weight decay.

Tracked modules (as in the official code): every ``nn.Linear`` of the model in
``named_modules()`` order, minus the first and the last one (``drop_first_last``; the last is the
LM head, embeddings are ``nn.Embedding`` and never tracked), minus those with fewer than
``min_eigs`` eigenvalues :math:`N = \min(m, n)`.

Assignment (``fn="linear"``), with :math:`\alpha_{\min}, \alpha_{\max}` over tracked modules and
base decay :math:`\lambda`:

.. math:: \lambda_l = s_1 \lambda + \frac{\alpha_l - \alpha_{\min}}{\alpha_{\max} - \alpha_{\min}}
          (s_2 - s_1) \lambda

so the heaviest-tailed module (smallest :math:`\alpha`) gets :math:`s_1 \lambda` and the
lightest-tailed one :math:`s_2 \lambda`. ``"sqrt"`` and ``"log2"`` (ablations of the code):
:math:`\lambda_l = L \lambda\, f(\alpha_l) / \sum_j f(\alpha_j)` over the :math:`L` modules.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

import torch
from torch import nn

from alphadecay.esd import fit_tail
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_real,
    describe,
    param_error,
)

__all__ = ["assign_weight_decay", "module_alphas", "tracked_modules"]

Include = Callable[[str, nn.Module], bool]


def tracked_modules(
    model: nn.Module,
    min_eigs: int = 50,
    drop_first_last: bool = True,
    include: Include | None = None,
) -> dict[str, nn.Linear]:
    """The ``nn.Linear`` modules AlphaDecay assigns a decay to, by name, in model order.

    ``include(name, module) -> bool``, when given, further restricts the set (applied after the
    first/last drop, so the dropped modules are those of the whole model as in the paper).
    Raises ``ValueError`` when the model has no parameters or no module is left.
    """
    return select_modules("tracked_modules", model, min_eigs, drop_first_last, include)


def select_modules(
    owner: str, model: Any, min_eigs: Any, drop_first_last: Any, include: Any
) -> dict[str, nn.Linear]:
    """:func:`tracked_modules` with its arguments checked for ``owner`` (the function or class
    the user called)."""
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", describe(model), cls=TypeError)
    min_eigs = check_int("min_eigs", owner, min_eigs, low=1)
    drop_first_last = check_bool("drop_first_last", owner, drop_first_last)
    if include is not None and not callable(include):
        raise param_error(
            "include",
            owner,
            "None or a callable (name, module) -> bool",
            describe(include),
            cls=TypeError,
        )
    if next(model.parameters(), None) is None:
        raise param_error("model", owner, "a model with parameters", Described("an empty model"))
    linears = [(n, m) for n, m in model.named_modules() if isinstance(m, nn.Linear)]
    if drop_first_last:
        linears = linears[1:-1]
    chosen = {
        n: m
        for n, m in linears
        if min(m.weight.shape) >= min_eigs and (include is None or include(n, m))
    }
    if not chosen:
        raise param_error(
            "model",
            owner,
            f"a model with at least one nn.Linear of min(m, n) >= 'min_eigs' = {min_eigs}"
            + (" besides its first and last Linear" if drop_first_last else ""),
            Described(f"a model with {len(linears)} candidate Linear layers, none kept"),
        )
    return chosen


def module_alphas(
    model: nn.Module,
    min_eigs: int = 50,
    drop_first_last: bool = True,
    include: Include | None = None,
    *,
    method: Literal["median", "ks"] = "median",
    xmin_pos: float = 2,
    filter_zeros: bool = False,
) -> dict[str, float]:
    """``PL_Alpha_Hill`` of every tracked module's weight (see :func:`tracked_modules` and
    :func:`alphadecay.pl_alpha_hill`), keyed by module name. Non-finite weights (NaN, inf), or
    a weight whose ESD tail cannot be fitted, raise ``ValueError`` naming ``model`` and the
    module."""
    owner = "module_alphas"
    check_choice("method", owner, method, ("median", "ks"))
    xmin_pos = check_real("xmin_pos", owner, xmin_pos, low=1, low_open=True)
    filter_zeros = check_bool("filter_zeros", owner, filter_zeros)
    modules = select_modules(owner, model, min_eigs, drop_first_last, include)
    return alphas_of(owner, modules, method, xmin_pos, filter_zeros)


def alphas_of(
    owner: str,
    modules: Mapping[str, nn.Linear],
    method: str,
    xmin_pos: float,
    filter_zeros: bool,
) -> dict[str, float]:
    """The exponent of each module's weight; a weight that cannot be fitted is a ``ValueError``
    naming ``model`` of ``owner``."""
    alphas = {}
    with torch.no_grad():
        for name, module in modules.items():
            weight = module.weight
            if not bool(torch.isfinite(weight).all()):
                raise param_error(
                    "model",
                    owner,
                    "a model with finite weights",
                    Described(f"non-finite entries in {name}.weight"),
                )
            try:
                alphas[name] = fit_tail(weight, xmin_pos, method, filter_zeros, owner).alpha
            except ValueError as exc:
                raise param_error(
                    "model",
                    owner,
                    "a model whose tracked weights have a power-law tail to fit",
                    Described(f"{name}.weight, for which {exc}"),
                ) from exc
    return alphas


def assign_weight_decay(
    alphas: Mapping[str, float],
    base_wd: float,
    s1: float = 2 / 3,
    s2: float = 3.0,
    fn: Literal["linear", "sqrt", "log2"] = "linear",
) -> dict[str, float]:
    """Per-module weight decay from the modules' exponents (formula in the module docstring).

    Larger ``alpha`` (lighter tail) gets a larger decay. With ``fn="linear"`` and all exponents
    within 1e-12 of each other every module gets ``base_wd``. ``alphas``: a non-empty mapping of
    module name to finite exponent (NaN and inf are refused); ``base_wd`` and ``s1`` finite and
    >= 0, ``s2 >= s1``.

    >>> decays = assign_weight_decay({"attn": 2.0, "mlp": 4.0}, base_wd=0.3)
    >>> {name: round(decay, 6) for name, decay in decays.items()}  # s1 * 0.3, s2 * 0.3
    {'attn': 0.2, 'mlp': 0.9}
    """
    owner = "assign_weight_decay"
    check_choice("fn", owner, fn, ("linear", "sqrt", "log2"))
    if not isinstance(alphas, Mapping):
        raise param_error(
            "alphas", owner, "a mapping of module name to alpha", describe(alphas), cls=TypeError
        )
    if not alphas:
        raise param_error("alphas", owner, "a non-empty mapping", Described("an empty mapping"))
    values = [check_real("alphas", owner, a) for a in alphas.values()]
    base_wd = check_real("base_wd", owner, base_wd, low=0)
    s1, s2 = scale_pair(owner, s1, s2)
    names = list(alphas)
    if fn == "linear":
        lo, hi = min(values), max(values)
        if hi - lo < 1e-12:
            return dict.fromkeys(names, float(base_wd))
        return {
            n: s1 * base_wd + (a - lo) / (hi - lo) * (s2 - s1) * base_wd
            for n, a in zip(names, values, strict=True)
        }
    if min(values) <= (1.0 if fn == "log2" else 0.0):
        raise param_error(
            "alphas", owner, f"all > {1 if fn == 'log2' else 0} for fn={fn!r}", min(values)
        )
    f = math.sqrt if fn == "sqrt" else math.log2
    scores = [f(a) for a in values]
    total = sum(scores)
    return {n: s / total * len(names) * base_wd for n, s in zip(names, scores, strict=True)}


def scale_pair(owner: str, s1: Any, s2: Any) -> tuple[float, float]:
    """``s1`` (finite, >= 0) and ``s2`` (finite, >= s1), the decay scales of the heaviest- and
    lightest-tailed module."""
    s1 = check_real("s1", owner, s1, low=0)
    s2 = check_real("s2", owner, s2)
    if s2 < s1:
        raise param_error("s2", owner, f"a finite number >= 's1' = {s1:g}", s2)
    return s1, s2
