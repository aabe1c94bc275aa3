"""The factorised model: a pre-trained temporal backbone ``f`` and a spatio-temporal adapter ``g``.

``Y = denorm( head_f(g(f(x_1..N))) + residual_g(g(f(x_1..N))) )``: every node's window is encoded
independently by ``f`` (frozen, or with its last encoder layer or all of it trainable), the
adapter mixes nodes and metadata, the backbone's forecasting head plus the adapter's
zero-initialised residual head map the adapted tokens to the horizon, and RevIN de-normalises
with each node's own window statistics.
"""

from __future__ import annotations

import contextlib

import torch
from torch import Tensor, nn

from factost.adapter import STAdapter
from factost.backbone import TemporalBackbone
from paperkit import check_choice, check_tensor, param_error

__all__ = ["FINETUNE", "FactoST", "count_trainable"]

#: How much of the backbone trains during adaptation.
FINETUNE = ("frozen", "last_layer", "full")


def count_trainable(model: nn.Module) -> int:
    """Number of parameters with ``requires_grad`` (each shared tensor counted once).

    >>> count_trainable(torch.nn.Linear(3, 2))
    8
    """
    if not isinstance(model, nn.Module):
        raise param_error("model", "count_trainable", "a torch.nn.Module", model, cls=TypeError)
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


class FactoST(nn.Module):
    r"""FactoST: frozen (or lightly fine-tuned) temporal backbone + spatio-temporal adapter.

    Args:
        backbone: a (pre-trained) :class:`TemporalBackbone`.
        adapter: an :class:`STAdapter` of the same ``d_model`` (its residual head is bound to the
            backbone's ``T_p`` and ``H`` here).
        finetune: ``"frozen"`` (no backbone gradients; the backbone stays in eval mode),
            ``"last_layer"`` (last encoder layer and final norm train) or ``"full"``.

    ``forward(x (B, N, L), coords (N, c) | None, time_feat (B, 2) | None, edge_index (2, E) |
    None)`` returns ``(B, N, H)`` forecasts in the units of ``x`` (cast to the model's dtype).
    NaN/inf are refused.

    >>> f = TemporalBackbone(12, 6, 2, d_model=8, layers=1, heads=2)
    >>> model = FactoST(f, STAdapter(8, n_nodes=4, topk=2))
    >>> model(torch.randn(3, 4, 12), torch.rand(4, 2)).shape
    torch.Size([3, 4, 6])
    >>> count_trainable(model) == count_trainable(model.adapter)
    True
    """

    def __init__(
        self, backbone: TemporalBackbone, adapter: STAdapter, finetune: str = "frozen"
    ) -> None:
        super().__init__()
        owner = "FactoST"
        if not isinstance(backbone, TemporalBackbone):
            raise param_error("backbone", owner, "a TemporalBackbone", backbone, cls=TypeError)
        if not isinstance(adapter, STAdapter):
            raise param_error("adapter", owner, "an STAdapter", adapter, cls=TypeError)
        if adapter.d_model != backbone.d_model:
            raise param_error(
                "adapter", owner, f"of d_model={backbone.d_model} (the backbone's)", adapter.d_model
            )
        self.finetune = check_choice("finetune", owner, finetune, FINETUNE)
        self.backbone = backbone
        self.adapter = adapter.bind(backbone.n_tokens, backbone.horizon)
        self.set_finetune(finetune)

    @property
    def input_len(self) -> int:
        """Input steps ``L`` (the backbone's)."""
        return self.backbone.input_len

    @property
    def horizon(self) -> int:
        """Forecast steps ``H`` (the backbone's)."""
        return self.backbone.horizon

    def set_finetune(self, finetune: str) -> FactoST:
        """Set which backbone parameters train (see the class docstring)."""
        self.finetune = check_choice("finetune", "FactoST.set_finetune", finetune, FINETUNE)
        for p in self.backbone.parameters():
            p.requires_grad_(finetune == "full")
        if finetune == "last_layer":
            for p in [
                *self.backbone.encoder.layers[-1].parameters(),
                *self.backbone.norm.parameters(),
            ]:
                p.requires_grad_(True)
        self.train(self.training)
        return self

    def train(self, mode: bool = True) -> FactoST:
        super().train(mode)
        if self.finetune == "frozen":
            self.backbone.eval()
        return self

    def predict(
        self,
        x: Tensor,
        coords: Tensor | None = None,
        time_feat: Tensor | None = None,
        edge_index: Tensor | None = None,
        nodes: bool = True,
    ) -> tuple[Tensor, Tensor]:
        """Forecast ``(B, N, H)`` and the pooled adapted latents ``(B N, d)``, unchecked
        (``nodes=False`` leaves out the node embedding, for replayed single series)."""
        B, N, L = x.shape
        frozen = self.finetune == "frozen"
        with torch.no_grad() if frozen else contextlib.nullcontext():
            enc = self.backbone.encode(x.reshape(B * N, L))
        z = enc["z"].reshape(B, N, *enc["z"].shape[1:])
        za = self.adapter.adapt_tokens(z, coords, time_feat, edge_index, nodes)
        out = self.backbone.forecast_head(za) + self.adapter.residual(za)
        mean, std = (s.reshape(B, N, 1) for s in enc["stats"])
        pred = self.backbone.revin.denorm(out, (mean, std))
        return pred, za.mean(2).reshape(B * N, -1)

    def forward(
        self,
        x: Tensor,
        coords: Tensor | None = None,
        time_feat: Tensor | None = None,
        edge_index: Tensor | None = None,
    ) -> Tensor:
        owner = "FactoST"
        check_tensor("x", owner, x, shape=(None, None, self.backbone.input_len))
        self.adapter.check_inputs(owner, x.shape[1], coords, time_feat, edge_index, x.shape[0])
        x = x.to(self.backbone.pos.dtype)  # documented cast to the model's dtype
        return self.predict(x, coords, time_feat, edge_index)[0]
