"""peft interop: a GoRA allocation as a ``peft.LoraConfig`` and GoRA factors in a peft model.

GoRA's per-layer ranks become peft's ``rank_pattern`` (keys: full module names) and its scale
``s = alpha / sqrt(r_i)`` is peft's rsLoRA scaling (``use_rslora=True``), so a GoRA-initialised
peft model is an ordinary peft LoRA model: it trains, saves, loads and merges with peft's tools.
peft is imported when these functions are first called, not when ``gora`` is imported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

from paperkit import Described, param_error

if TYPE_CHECKING:
    from peft import LoraConfig

__all__ = ["load_factors_into_peft", "peft_lora_layers", "to_peft_config"]


def to_peft_config(
    ranks: Mapping[str, int],
    lora_alpha: float = 16,
    target_modules: list[str] | None = None,
    use_rslora: bool = True,
    **lora_kwargs: Any,
) -> LoraConfig:
    """A ``peft.LoraConfig`` with GoRA's per-layer ranks as ``rank_pattern``.

    Args:
        ranks: ``{full module name: rank}``; layers with rank 0 are left out (unadapted).
        lora_alpha: LoRA alpha; the scale is ``lora_alpha / sqrt(r_i)`` with ``use_rslora``.
        target_modules: defaults to the names with a positive rank.
        **lora_kwargs: passed to ``LoraConfig`` (e.g. ``modules_to_save=["head"]``).
    """
    from peft import LoraConfig

    owner = "to_peft_config"
    if not ranks:
        raise param_error("ranks", owner, "a non-empty mapping", Described("empty"))
    bad = {k: v for k, v in ranks.items() if isinstance(v, bool) or not isinstance(v, int) or v < 0}
    if bad:
        raise param_error("ranks", owner, "non-negative integers", bad)
    active = {name: int(r) for name, r in ranks.items() if r > 0}
    if not active:
        raise param_error("ranks", owner, "at least one positive rank", dict(ranks))
    if not lora_alpha > 0:
        raise param_error("lora_alpha", owner, "positive", lora_alpha)
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


def peft_lora_layers(peft_model: nn.Module, adapter_name: str = "default") -> dict[str, nn.Module]:
    """The peft LoRA layers of ``peft_model`` holding ``adapter_name``, keyed by full name."""
    return {
        name: mod
        for name, mod in peft_model.named_modules()
        if isinstance(getattr(mod, "lora_A", None), nn.ModuleDict) and adapter_name in mod.lora_A
    }


def load_factors_into_peft(
    peft_model: nn.Module,
    factors: Mapping[str, tuple[Tensor, Tensor]],
    adapter_name: str = "default",
) -> None:
    """Write GoRA factors into a peft LoRA model, in place.

    ``factors[name] = (A, B)`` with ``A`` (r x in) going to ``lora_A.<adapter>.weight`` and ``B``
    (out x r) to ``lora_B.<adapter>.weight`` of the layer whose full name is ``name`` or ends
    with ``"." + name`` (peft prefixes names with ``base_model.model.``).
    """
    owner = "load_factors_into_peft"
    layers = peft_lora_layers(peft_model, adapter_name)
    if not layers:
        raise param_error(
            "peft_model",
            owner,
            f"a peft model with LoRA adapter {adapter_name!r}",
            Described("none"),
        )
    for name, (A, B) in factors.items():
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
        if tuple(A.shape) != tuple(lora_A.shape) or tuple(B.shape) != tuple(lora_B.shape):
            raise param_error(
                "factors",
                owner,
                "factors of the shapes of the peft layers",
                Described(
                    f"{name!r}: A {tuple(A.shape)}, B {tuple(B.shape)} for lora_A "
                    f"{tuple(lora_A.shape)}, lora_B {tuple(lora_B.shape)}"
                ),
            )
        with torch.no_grad():
            lora_A.copy_(A)
            lora_B.copy_(B)
