"""DePE: decompose each pretrained weight into a frozen dictionary and a trainable lookup table.

For a linear layer ``W ∈ R^{d_out×d_in}`` with truncated SVD ``W ≈ U_r S_r V_rᵀ`` (rank r):

    D = U_r S_r^{1/2} ∈ R^{d_out×r}     (dictionary: frozen, local, never sent)
    T = S_r^{1/2} V_rᵀ ∈ R^{r×d_in}      (lookup table: trained, encrypted, aggregated)
    W_res = W − D T                      (residual: frozen, local)

so the decomposed layer ``y = W_res x + D (T x) + b`` equals the pretrained one at
initialisation, and an update of the table changes the weight by ``ΔW = D ΔT``. Only
``r·d_in`` coordinates per layer are shared instead of ``d_out·d_in``.
"""

from __future__ import annotations

import fnmatch

import torch
from torch import nn

from dictpfl.model import check_model
from paperkit import (
    check_bool,
    check_int,
    check_tensor,
    describe,
    param_error,
)

__all__ = [
    "DictLinear",
    "decompose_model",
    "flatten_tables",
    "lookup_parameters",
    "shared_numel",
    "unflatten_into",
]


class DictLinear(nn.Module):
    """A linear layer stored as ``W_res + D T`` with only the lookup table ``T`` trainable.

    Args:
        weight: the pretrained weight, shape ``(d_out, d_in)``.
        bias: the pretrained bias ``(d_out,)`` or None (kept frozen unless ``train_bias``).
        rank: the SVD rank r, ``1 <= r <= min(d_out, d_in)``.
        train_bias: also train (and share) the bias.

    NaN or inf in the weight, the bias or the input ``x`` of ``forward`` is refused. ``x`` must
    have the layer's dtype and device.
    """

    def __init__(
        self,
        weight: torch.Tensor,
        bias: torch.Tensor | None = None,
        rank: int = 8,
        *,
        train_bias: bool = False,
    ):
        super().__init__()
        owner = "DictLinear"
        dims: dict = {}
        check_tensor("weight", owner, weight, shape=("d_out", "d_in"), dims=dims)
        if bias is not None:
            check_tensor(
                "bias",
                owner,
                bias,
                shape=("d_out",),
                dims=dims,
                dtype=weight.dtype,
                device=weight.device,
            )
        d_out, d_in = weight.shape
        rank = check_int("rank", owner, rank, low=1, high=min(d_out, d_in))
        train_bias = check_bool("train_bias", owner, train_bias)
        w = weight.detach().to(torch.float64)
        U, S, Vh = torch.linalg.svd(w, full_matrices=False)
        root = S[:rank].sqrt()
        D = U[:, :rank] * root
        T = root[:, None] * Vh[:rank]
        dtype = weight.dtype
        self.register_buffer("D", D.to(dtype))
        self.register_buffer("W_res", (w - D @ T).to(dtype))
        self.T = nn.Parameter(T.to(dtype))
        if bias is None:
            self.bias = None
        elif train_bias:
            self.bias = nn.Parameter(bias.detach().clone())
        else:
            self.register_buffer("bias", bias.detach().clone())
        self.rank = rank
        self.in_features, self.out_features = d_in, d_out

    @property
    def weight(self) -> torch.Tensor:
        """The effective weight ``W_res + D T``."""
        return self.W_res + self.D @ self.T

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``y = W_res x + D (T x) + b`` for ``x`` of shape ``(..., d_in)``."""
        owner = "DictLinear"
        check_tensor("x", owner, x, dtype=self.T.dtype, device=self.T.device)
        if x.ndim == 0 or x.shape[-1] != self.in_features:
            raise param_error("x", owner, f"of shape (..., {self.in_features})", describe(x))
        y = x @ self.W_res.T + (x @ self.T.T) @ self.D.T
        return y if self.bias is None else y + self.bias

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, rank={self.rank}"


def decompose_model(
    model: nn.Module,
    rank: int,
    include: tuple[type[nn.Module], ...] = (nn.Linear,),
    skip: tuple[str, ...] = ("head",),
    *,
    train_bias: bool = False,
) -> nn.Module:
    """Swap (in place) every ``include`` layer whose name matches no ``skip`` pattern for a
    :class:`DictLinear`; freeze everything else except the skipped modules (the new head).

    ``rank`` must be in [1, min(d_out, d_in)] of every layer it decomposes; ``include`` holds
    ``nn.Linear`` types (subclasses included); ``skip`` holds names or fnmatch patterns.
    Returns ``model``.
    """
    owner = "decompose_model"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", describe(model), cls=TypeError)
    rank = check_int("rank", owner, rank, low=1)
    if (
        not isinstance(include, tuple)
        or not include
        or not all(isinstance(t, type) and issubclass(t, nn.Linear) for t in include)
    ):
        raise param_error(
            "include",
            owner,
            "a non-empty tuple of nn.Linear types",
            describe(include),
            cls=TypeError,
        )
    if isinstance(skip, str) or not all(isinstance(p, str) for p in skip):
        raise param_error(
            "skip", owner, "a tuple of module names or patterns", describe(skip), cls=TypeError
        )
    train_bias = check_bool("train_bias", owner, train_bias)

    def skipped(name: str) -> bool:
        return any(fnmatch.fnmatch(name, p) or name.split(".")[0] == p for p in skip)

    targets = [
        (name, m)
        for name, m in model.named_modules()
        if name and isinstance(m, include) and not skipped(name)
    ]
    for name, module in targets:
        if rank > min(module.weight.shape):
            raise param_error(
                "rank",
                owner,
                f"at most min(d_out, d_in) = {min(module.weight.shape)} for layer {name!r}",
                rank,
            )
    for p in model.parameters():
        p.requires_grad_(False)
    for name, module in model.named_modules():
        if name and skipped(name):
            for p in module.parameters():
                p.requires_grad_(True)
    for name, module in targets:
        parent = model.get_submodule(name.rsplit(".", 1)[0]) if "." in name else model
        layer = DictLinear(module.weight, module.bias, rank, train_bias=train_bias)
        setattr(parent, name.rsplit(".", 1)[-1], layer)
    return model


def lookup_parameters(model: nn.Module) -> list[nn.Parameter]:
    """The shared, trainable parameters in a fixed order: every lookup table ``T`` (and trained
    bias) of the :class:`DictLinear` layers plus the parameters left trainable (the head).
    On an undecomposed model: every trainable parameter (full fine-tuning). ``model`` must have
    trainable parameters."""
    check_model("model", "lookup_parameters", model)
    return _shared(model)


def _shared(model: nn.Module) -> list[nn.Parameter]:
    return [p for p in model.parameters() if p.requires_grad]


def shared_numel(model: nn.Module) -> int:
    """P, the length of the shared vector (``model`` with trainable parameters)."""
    check_model("model", "shared_numel", model)
    return sum(p.numel() for p in _shared(model))


def flatten_tables(model: nn.Module) -> torch.Tensor:
    """The shared parameters concatenated into one detached vector of length P (``model`` with
    trainable parameters)."""
    check_model("model", "flatten_tables", model)
    return torch.cat([p.detach().reshape(-1) for p in _shared(model)])


def unflatten_into(model: nn.Module, vec: torch.Tensor) -> None:
    """Write a length-P vector back into the shared parameters (inverse of flatten_tables).

    ``vec`` is cast to the parameters' dtype; NaN or inf in it is refused.
    """
    owner = "unflatten_into"
    check_model("model", owner, model)
    params = _shared(model)
    total = sum(p.numel() for p in params)
    check_tensor("vec", owner, vec, shape=(total,), dtype=None)
    if vec.dtype == torch.bool or vec.is_complex():
        raise param_error("vec", owner, "a real tensor", describe(vec), cls=TypeError)
    with torch.no_grad():
        i = 0
        for p in params:
            p.copy_(vec[i : i + p.numel()].view_as(p))
            i += p.numel()
