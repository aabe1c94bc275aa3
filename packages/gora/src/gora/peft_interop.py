"""peft interop: a GoRA allocation as a ``peft.LoraConfig`` and GoRA factors in a peft model.

GoRA's per-layer ranks become peft's ``rank_pattern`` (keys: full module names) and its scale
``s = alpha / sqrt(r_i)`` is peft's rsLoRA scaling (``use_rslora=True``), so a GoRA-initialised
peft model is an ordinary peft LoRA model: it trains, saves, loads and merges with peft's tools.
peft is imported when these functions are first called, not when ``gora`` is imported.

NaN policy: factors holding NaN or inf are refused (``ValueError``); factors of another floating
dtype are cast to the peft layer's dtype when copied in.
"""

from __future__ import annotations

import numbers
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from gora.gradients import module_arg
from paperkit import Described, check_bool, check_real, check_tensor, describe, param_error

if TYPE_CHECKING:
    from peft import LoraConfig

__all__ = ["load_factors_into_peft", "peft_lora_layers", "to_peft_config"]


def rank_values(owner: str, ranks: Any) -> dict[str, int]:
    """``ranks`` as ``{name: int >= 0}`` with at least one positive rank."""
    if not isinstance(ranks, Mapping):
        raise param_error(
            "ranks", owner, "a mapping of module name to rank", describe(ranks), cls=TypeError
        )
    if not ranks:
        raise param_error("ranks", owner, "a non-empty mapping", Described("an empty one"))
    out = {}
    for name, r in ranks.items():
        if isinstance(r, bool) or not isinstance(r, numbers.Integral) or r < 0:
            raise param_error(
                "ranks", owner, "non-negative integer ranks", Described(f"{r!r} for {name!r}")
            )
        out[name] = int(r)
    if not any(out.values()):
        raise param_error("ranks", owner, "at least one positive rank", out)
    return out


def to_peft_config(
    ranks: Mapping[str, int],
    lora_alpha: float = 16,
    target_modules: list[str] | None = None,
    use_rslora: bool = True,
    **lora_kwargs: Any,
) -> LoraConfig:
    """A ``peft.LoraConfig`` with GoRA's per-layer ranks as ``rank_pattern``.

    Args:
        ranks: ``{full module name: rank}`` (integers >= 0, at least one positive); layers with
            rank 0 are left out (unadapted).
        lora_alpha: LoRA alpha (finite, > 0); the scale is ``lora_alpha / sqrt(r_i)`` with
            ``use_rslora``.
        target_modules: defaults to the names with a positive rank.
        **lora_kwargs: passed to ``LoraConfig`` (e.g. ``modules_to_save=["head"]``).

    >>> config = to_peft_config({"a.q": 3, "a.k": 5, "b.q": 3, "b.k": 0}, lora_alpha=16)
    >>> config.r, config.rank_pattern
    (3, {'a.q': 3, 'a.k': 5, 'b.q': 3})
    """
    owner = "to_peft_config"
    values = rank_values(owner, ranks)
    lora_alpha = check_real("lora_alpha", owner, lora_alpha, low=0, low_open=True)
    use_rslora = check_bool("use_rslora", owner, use_rslora)
    if target_modules is not None and (
        isinstance(target_modules, str)
        or not isinstance(target_modules, (list, tuple))
        or not all(isinstance(t, str) for t in target_modules)
    ):
        raise param_error(
            "target_modules",
            owner,
            "None or a list of module names",
            describe(target_modules),
            cls=TypeError,
        )
    return peft_config(values, lora_alpha, target_modules, use_rslora, **lora_kwargs)


def peft_config(
    ranks: Mapping[str, int],
    lora_alpha: float,
    target_modules: list[str] | None,
    use_rslora: bool,
    **lora_kwargs: Any,
) -> LoraConfig:
    """:func:`to_peft_config` of checked arguments."""
    from peft import LoraConfig

    active = {name: r for name, r in ranks.items() if r > 0}
    r = Counter(active.values()).most_common(1)[0][0]
    return LoraConfig(
        r=r,
        lora_alpha=lora_alpha,
        target_modules=list(target_modules) if target_modules is not None else list(active),
        rank_pattern=dict(active),
        use_rslora=use_rslora,
        lora_dropout=0.0,
        bias="none",
        **lora_kwargs,
    )


def _adapter_layers(peft_model: nn.Module, adapter_name: str) -> dict[str, nn.Module]:
    return {
        name: mod
        for name, mod in peft_model.named_modules()
        if isinstance(getattr(mod, "lora_A", None), nn.ModuleDict) and adapter_name in mod.lora_A
    }


def lora_layers_of(owner: str, peft_model: Any, adapter_name: Any) -> dict[str, nn.Module]:
    """The LoRA layers holding ``adapter_name``; refuses a model without any."""
    module_arg("peft_model", owner, peft_model)
    if not isinstance(adapter_name, str):
        raise param_error(
            "adapter_name",
            owner,
            "an adapter name (a string)",
            describe(adapter_name),
            cls=TypeError,
        )
    layers = _adapter_layers(peft_model, adapter_name)
    if not layers:
        names = sorted(
            {
                k
                for _, m in peft_model.named_modules()
                if isinstance(getattr(m, "lora_A", None), nn.ModuleDict)
                for k in m.lora_A
            }
        )
        if names:
            raise param_error(
                "adapter_name", owner, f"one of the model's adapters {names}", adapter_name
            )
        raise param_error("peft_model", owner, "a peft model with LoRA adapters", Described("none"))
    return layers


def peft_lora_layers(peft_model: nn.Module, adapter_name: str = "default") -> dict[str, nn.Module]:
    """The peft LoRA layers of ``peft_model`` holding ``adapter_name``, keyed by full name.

    A model without LoRA layers (``peft_model``) or without that adapter (``adapter_name``) is
    refused with a ``ValueError``. Reads no tensor values.
    """
    return lora_layers_of("peft_lora_layers", peft_model, adapter_name)


def load_factors_into_peft(
    peft_model: nn.Module,
    factors: Mapping[str, tuple[Tensor, Tensor]],
    adapter_name: str = "default",
) -> None:
    """Write GoRA factors into a peft LoRA model, in place.

    ``factors[name] = (A, B)`` with ``A`` (r x in) going to ``lora_A.<adapter>.weight`` and ``B``
    (out x r) to ``lora_B.<adapter>.weight`` of the layer whose full name is ``name`` or ends
    with ``"." + name`` (peft prefixes names with ``base_model.model.``). Factors are checked
    (shapes, finiteness) before any is written; they are cast to the layer's dtype.
    """
    owner = "load_factors_into_peft"
    layers = lora_layers_of(owner, peft_model, adapter_name)
    if not isinstance(factors, Mapping):
        raise param_error(
            "factors", owner, "a mapping of layer name to (A, B)", describe(factors), cls=TypeError
        )
    writes = []
    for name, pair in factors.items():
        if not (isinstance(pair, (tuple, list)) and len(pair) == 2):
            raise param_error(
                "factors",
                owner,
                "(A, B) pairs",
                Described(f"{describe(pair)} for {name!r}"),
                cls=TypeError,
            )
        hits = [mod for full, mod in layers.items() if full == name or full.endswith("." + name)]
        if len(hits) != 1:
            raise param_error(
                "factors",
                owner,
                "names of exactly one LoRA layer each",
                Described(f"{name!r} matching {len(hits)} layers"),
            )
        lora_A = hits[0].lora_A[adapter_name].weight
        lora_B = hits[0].lora_B[adapter_name].weight
        dims = {"r": (lora_A.shape[0], name), "in": (lora_A.shape[1], name)}
        dims["out"] = (lora_B.shape[0], name)
        check_tensor("factors", owner, pair[0], shape=("r", "in"), dims=dims)
        check_tensor("factors", owner, pair[1], shape=("out", "r"), dims=dims)
        writes.append((lora_A, pair[0], lora_B, pair[1]))
    with torch.no_grad():
        for lora_A, A, lora_B, B in writes:
            lora_A.copy_(A)
            lora_B.copy_(B)
