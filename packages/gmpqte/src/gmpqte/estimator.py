"""The GMPQ-TE estimator: TE from one same-label minibatch (``fit``), then the ILP for any
budget (``policy``), in the scikit-learn style."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from torch import nn

from gmpqte.allocation import DEFAULT_BITS, OBJECTIVES, check_bit_choices, solve_bit_allocation
from gmpqte.entropy import DIMS, MODES, SUMMARIES, layer_te_details
from paperkit import check_bool, check_choice, check_int, check_real, param_error

__all__ = ["GMPQTE"]


class GMPQTE:
    """Mixed-precision policy from layer topological entropy.

    ``fit(model, images, labels=None)`` computes :math:`TE_l` of every quantisable layer on the
    same-label minibatch ``images`` (:func:`gmpqte.layer_topological_entropy` with this object's
    settings) and records each layer's weights :math:`P_l` and multiply-accumulates per image;
    ``policy(budget_bits)`` solves the ILP (:func:`gmpqte.solve_bit_allocation`) with
    ``bit_choices``, ``higher_te_more_bits``, ``objective`` and ``a_bits`` (BitOps cost).

    Attributes after ``fit``: ``te_`` ({layer: TE}), ``constant_share_`` ({layer: share of
    constant maps}), ``n_params_``, ``macs_``, ``layers_``, ``search_time_`` (seconds of the TE
    computation, plus the ILP's after each ``policy`` call), ``info_`` (the last ILP's objective,
    LP bound and costs).

    NaN policy: NaN or infinite pixels are refused.

    >>> from gmpqte.models import small_cnn
    >>> torch.manual_seed(0) and None
    >>> est = GMPQTE(max_channels=4).fit(small_cnn(), torch.rand(4, 1, 16, 16))
    >>> pol = est.policy(3 * sum(est.n_params_.values()))
    >>> sorted(pol) == est.layers_ and est.search_time_ > 0
    True
    """

    def __init__(
        self,
        mode: str = "cubical",
        summary: str = "persistent",
        max_channels: int = 64,
        seed: int = 0,
        bit_choices: Sequence[int] = DEFAULT_BITS,
        higher_te_more_bits: bool = True,
        objective: str = "bits",
        skip_constant: bool = True,
        dims: str = "sum",
        a_bits: int = 8,
    ) -> None:
        owner = "GMPQTE"
        self.mode = check_choice("mode", owner, mode, MODES)
        self.summary = check_choice("summary", owner, summary, SUMMARIES)
        self.max_channels = check_int("max_channels", owner, max_channels, low=1, high=100_000)
        self.seed = check_int("seed", owner, seed, low=0)
        self.bit_choices = check_bit_choices(owner, bit_choices)
        self.higher_te_more_bits = check_bool("higher_te_more_bits", owner, higher_te_more_bits)
        self.objective = check_choice("objective", owner, objective, OBJECTIVES)
        self.skip_constant = check_bool("skip_constant", owner, skip_constant)
        self.dims = check_choice("dims", owner, dims, DIMS)
        self.a_bits = check_int("a_bits", owner, a_bits, low=1, high=32)

    def fit(
        self,
        model: nn.Module,
        images: torch.Tensor,
        labels: torch.Tensor | None = None,
        *,
        layers: list[str] | None = None,
        allow_mixed: bool = False,
    ) -> GMPQTE:
        """Compute the TE of ``layers`` (default: every Conv2d/Linear) on ``images`` (B, C, H, W),
        one label (``labels`` (B,) checked unless ``allow_mixed``)."""
        start = time.perf_counter()
        details = layer_te_details(
            model,
            images,
            layers,
            self.mode,
            self.summary,
            self.max_channels,
            self.seed,
            labels=labels,
            allow_mixed=allow_mixed,
            skip_constant=self.skip_constant,
            dims=self.dims,
        )
        self.search_time_ = time.perf_counter() - start
        self.layers_ = list(details)
        self.te_ = {n: d.te for n, d in details.items()}
        self.constant_share_ = {n: d.constant_share for n, d in details.items()}
        modules = dict(model.named_modules())
        self.n_params_ = {n: float(modules[n].weight.numel()) for n in self.layers_}
        self.macs_ = _macs(model, images[:1], self.layers_)
        return self

    def policy(
        self,
        budget_bits: float,
        budget_bops: float | None = None,
        fixed: Mapping[str, int] | None = None,
    ) -> dict[str, int]:
        """The ILP's policy ``{layer: bits}`` for the size budget ``budget_bits`` (bits of all
        weights) and, optionally, the BitOps budget (MACs x weight bits x ``a_bits``)."""
        if not hasattr(self, "te_"):
            raise param_error(
                "self", "GMPQTE.policy", "a fitted GMPQTE (call fit first)", "unfitted"
            )
        check_real("budget_bits", "GMPQTE.policy", budget_bits, low=0)
        policy, info = solve_bit_allocation(
            self.te_,
            self.n_params_,
            budget_bits,
            self.bit_choices,
            bops=self.macs_ if budget_bops is not None else None,
            budget_bops=budget_bops,
            fixed=fixed,
            higher_te_more_bits=self.higher_te_more_bits,
            objective=self.objective,
            a_bits=self.a_bits,
            return_info=True,
        )
        self.info_ = info
        self.search_time_ += info["solve_s"]
        return policy


def _macs(model: nn.Module, x: torch.Tensor, layers: list[str]) -> dict[str, float]:
    """Multiply-accumulates per image of each layer: :math:`P_l \\cdot H W` of
    its output for a convolution, :math:`P_l` for a linear layer."""
    modules = dict(model.named_modules())
    sizes: dict[str, Any] = {}
    hooks = [
        modules[n].register_forward_hook(lambda _m, _i, out, n=n: sizes.__setitem__(n, out.shape))
        for n in layers
    ]
    param = next(model.parameters(), None)
    was_training = model.training
    try:
        model.eval()
        with torch.no_grad():
            model(x.to(param.dtype) if param is not None else x)
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    out = {}
    for n in layers:
        m, shape = modules[n], sizes[n]
        spatial = float(torch.tensor(shape[2:]).prod()) if len(shape) > 2 else 1.0
        out[n] = float(m.weight.numel()) * spatial
    return out
