"""Parameter-efficient fine-tuning of an operator network: freeze the backbone, add PEFT
parameters (paper, Sec. 5: F-Adapter, vanilla adapter, LoRA, full fine-tuning, head only).

:func:`apply_peft` replaces every :class:`fadapter.AFNO2d` of a model in place and leaves only
the new parameters trainable; :func:`count_trainable` counts them.
"""

from __future__ import annotations

from typing import Any

from torch import nn

from fadapter.adapters import AdapterAFNO2d, FAdapterAFNO2d, MLPAdapter, PatchAdapter
from fadapter.layers import AFNO2d
from fadapter.lora import LoRAAFNO2d, LoRALinear
from paperkit import check_bool, check_choice, check_int, check_real, param_error

__all__ = ["METHODS", "apply_peft", "count_trainable"]

METHODS = ("fadapter", "adapter", "lora", "full", "head")
_OPTIONS = {
    "fadapter": {
        "adapter_dim",
        "num_bands",
        "power",
        "min_dim_factor",
        "max_dim_factor",
        "positions",
        "band_shape",
        "scale",
        "patch_adapter_dim",
        "mlp_adapter_dim",
        "train_head",
    },
    "adapter": {
        "adapter_dim",
        "positions",
        "scale",
        "patch_adapter_dim",
        "mlp_adapter_dim",
        "train_head",
    },
    "lora": {"rank", "alpha", "linear_targets", "train_head"},
    "full": set(),
    "head": set(),
}


def _replace(model: nn.Module, kind: type, make: Any) -> int:
    """Replace every submodule of type ``kind`` (not the model itself) by ``make(module)``."""
    count = 0
    for module in list(model.modules()):
        for child_name, child in list(module.named_children()):
            if type(child) is kind:
                setattr(module, child_name, make(child))
                count += 1
    return count


def apply_peft(model: nn.Module, method: str, **kw: Any) -> nn.Module:
    """Freeze ``model`` and add the PEFT parameters of ``method``; returns ``model`` (changed in
    place) with only those parameters trainable.

    Methods and their options:

    * ``"fadapter"``: every :class:`AFNO2d` becomes :class:`FAdapterAFNO2d` (``adapter_dim=32,
      num_bands=4, power=2.0, min_dim_factor=0.5, max_dim_factor=2.0, positions=("in", "mid",
      "out"), band_shape="radial", scale=1.0``).
    * ``"adapter"``: the vanilla adapter, :class:`AdapterAFNO2d` (``adapter_dim=32``,
      ``positions``, ``scale``).
    * ``"lora"``: rank-``rank`` updates (``rank=8, alpha=rank``) of every ``nn.Linear`` whose
      qualified name contains one of ``linear_targets`` (default ``("mlp",)``: the channel MLPs)
      and of the spectral weights ``w1``, ``w2`` of every :class:`AFNO2d`.
    * ``"full"``: every parameter trainable. ``"head"``: only the submodule named ``head``.

    Adapters also take ``patch_adapter_dim`` (0: none; else a :class:`PatchAdapter` after the
    submodule named ``embed``) and ``mlp_adapter_dim`` (0: none; else a :class:`MLPAdapter` of
    that width beside every submodule named ``mlp``, as the official models place one beside
    each block's channel MLP), and all PEFT methods ``train_head`` (also train ``head``).
    NaN policy: NaN or inf options are refused.

    >>> from fadapter import OperatorNet
    >>> net = apply_peft(OperatorNet(width=64, num_blocks=8, modes=8), "fadapter", adapter_dim=4)
    >>> count_trainable(net)
    25920
    """
    owner = "apply_peft"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", type(model).__name__, cls=TypeError)
    check_choice("method", owner, method, METHODS)
    unknown = sorted(set(kw) - _OPTIONS[method])
    if unknown:
        raise param_error(unknown[0], owner, f"an option of method {method!r}", kw[unknown[0]])
    if method in ("fadapter", "adapter", "lora") and not any(
        type(m) is AFNO2d for m in model.modules()
    ):
        raise param_error("model", owner, "a model holding AFNO2d layers", type(model).__name__)
    for p in model.parameters():
        p.requires_grad_(False)
    if method == "full":
        for p in model.parameters():
            p.requires_grad_(True)
        return model
    train_head = check_bool("train_head", owner, kw.pop("train_head", method == "head"))
    if method in ("fadapter", "adapter"):
        _add_adapters(model, method, kw)
    elif method == "lora":
        _add_lora(model, kw)
    if train_head:
        head = getattr(model, "head", None)
        if not isinstance(head, nn.Module):
            raise param_error("model", owner, "a model with a submodule named 'head'", "none")
        for p in head.parameters():
            p.requires_grad_(True)
    return model


def _add_adapters(model: nn.Module, method: str, kw: dict[str, Any]) -> None:
    owner = "apply_peft"
    patch_dim = check_int(
        "patch_adapter_dim", owner, kw.pop("patch_adapter_dim", 0), low=0, high=2**16
    )
    mlp_dim = check_int("mlp_adapter_dim", owner, kw.pop("mlp_adapter_dim", 0), low=0, high=2**16)
    embed = getattr(model, "embed", None)
    if patch_dim and not isinstance(embed, nn.Linear):
        raise param_error("model", owner, "a model with a Linear named 'embed'", "none")
    mlps = [m for m in model.modules() if isinstance(getattr(m, "mlp", None), nn.Sequential)]
    if mlp_dim and not (mlps and all(len(m.mlp) and isinstance(m.mlp[0], nn.Linear) for m in mlps)):
        raise param_error("model", owner, "'mlp' submodules that start with a Linear", "none")
    kind = FAdapterAFNO2d if method == "fadapter" else AdapterAFNO2d
    # check once, on the first layer, so errors name apply_peft's options
    kind.from_layer(next(m for m in model.modules() if type(m) is AFNO2d), **kw)
    _replace(model, AFNO2d, lambda layer: kind.from_layer(layer, **kw))
    if patch_dim:
        model.embed = PatchAdapter(embed, patch_dim)
    for parent in mlps if mlp_dim else []:
        parent.mlp = MLPAdapter(parent.mlp, mlp_dim)


def _add_lora(model: nn.Module, kw: dict[str, Any]) -> None:
    owner = "apply_peft"
    rank = check_int("rank", owner, kw.get("rank", 8), low=1, high=2**16)
    alpha = check_real("alpha", owner, kw.get("alpha", rank), low=0, low_open=True)
    targets = kw.get("linear_targets", ("mlp",))
    if isinstance(targets, str) or not isinstance(targets, (tuple, list)):
        raise param_error("linear_targets", owner, "a tuple of name parts", targets, cls=TypeError)
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            full = f"{name}.{child_name}" if name else child_name
            if type(child) is nn.Linear and any(t in full for t in targets):
                setattr(module, child_name, LoRALinear(child, rank, alpha))
    _replace(model, AFNO2d, lambda layer: LoRAAFNO2d(layer, rank, alpha))


def count_trainable(model: nn.Module) -> int:
    """The number of parameters with ``requires_grad`` (each shared tensor counted once).

    NaN policy: no float inputs.
    """
    if not isinstance(model, nn.Module):
        raise param_error(
            "model", "count_trainable", "a torch.nn.Module", type(model).__name__, cls=TypeError
        )
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
