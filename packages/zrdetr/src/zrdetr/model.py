r"""ZR-DETR (paper Sec. 3): a DETR detector with a zoom embedding, anatomical relation
constraints and a Gaussian-process head.

Pipeline: a small CNN (stride 8) gives tokens (B, N, d) plus a 2-D sine position encoding; two
transformer encoder layers; the zoom embedding :math:`e` FiLM-modulates the encoded tokens and is
added to every decoder query (when no zoom is given, it is predicted: by default from the boxes of
a first decoder pass without the zoom, :class:`~zrdetr.zoom.BoxZoomEstimator`, or from the pooled
tokens, :class:`~zrdetr.zoom.ZoomRegressor`); K class-specific plus ``n_extra_queries`` generic
learned queries run through three decoder layers (self-attention with the learned relation bias
between class queries, cross-attention, FFN). Each decoder layer's output goes through the head
(an :class:`~zrdetr.gp_head.SVGPHead` or an MLP): 4 box deltas added to each query's reference box
in logit space, then a sigmoid, and K + 1 class logits (the last one: no object).
"""

from __future__ import annotations

import copy
import math

import torch
from torch import nn

from paperkit import check_bool, check_choice, check_int, check_tensor, param_error
from zrdetr.criterion import ZRDETRCriterion, hungarian_match
from zrdetr.gp_head import SVGPHead
from zrdetr.relation import RelationBias
from zrdetr.zoom import (
    BoxZoomEstimator,
    ZoomEmbedding,
    ZoomFiLM,
    ZoomRegressor,
    check_dtype,
    check_zoom,
)

__all__ = ["ZRDETR", "ZRDETRCriterion", "hungarian_match", "sine_position_encoding"]


def sine_position_encoding(
    h: int, w: int, d_model: int, temperature: float = 10000.0
) -> torch.Tensor:
    r"""DETR's 2-D sine encoding, (h * w, d): half the channels encode y, half x, each as
    :math:`[\sin(2\pi y/T^{2i/(d/2)}), \cos(\cdot)]` on positions normalised to (0, 1]."""
    npf = d_model // 2
    y = (torch.arange(h, dtype=torch.float32) + 1) / h * 2 * math.pi
    x = (torch.arange(w, dtype=torch.float32) + 1) / w * 2 * math.pi
    dim_t = temperature ** (2 * (torch.arange(npf) // 2) / npf)
    py = y[:, None] / dim_t
    px = x[:, None] / dim_t
    py = torch.stack([py[:, 0::2].sin(), py[:, 1::2].cos()], -1).flatten(1)
    px = torch.stack([px[:, 0::2].sin(), px[:, 1::2].cos()], -1).flatten(1)
    pos = torch.cat([py[:, None, :].expand(h, w, npf), px[None, :, :].expand(h, w, npf)], -1)
    return pos.reshape(h * w, 2 * npf)


class _DecoderLayer(nn.Module):
    """Post-norm DETR decoder layer: self-attention (with an additive mask), cross-attention to
    the memory (keys carry the position encoding), FFN."""

    def __init__(self, d: int, heads: int, ff: int) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ff = nn.Sequential(nn.Linear(d, ff), nn.ReLU(), nn.Linear(ff, d))
        self.norms = nn.ModuleList([nn.LayerNorm(d) for _ in range(3)])

    def forward(self, tgt, query_pos, memory, pos, mask):
        q = tgt + query_pos
        tgt = self.norms[0](tgt + self.self_attn(q, q, tgt, attn_mask=mask, need_weights=False)[0])
        att = self.cross_attn(tgt + query_pos, memory + pos, memory, need_weights=False)[0]
        tgt = self.norms[1](tgt + att)
        return self.norms[2](tgt + self.ff(tgt))


class _MLPHead(nn.Module):
    """DETR's heads: a linear class head and a 3-layer MLP for the 4 box deltas."""

    def __init__(self, d: int, n_logits: int) -> None:
        super().__init__()
        self.cls = nn.Linear(d, n_logits)
        self.box = nn.Sequential(
            nn.Linear(d, d), nn.ReLU(), nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4)
        )

    def forward(self, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.box(h), self.cls(h)


class ZRDETR(nn.Module):
    r"""ZR-DETR, or DETR-lite with ``use_zoom=False, use_relation=False, head="mlp"``.

    Args:
        n_classes: K anatomical structures (each present at most once per image).
        d_model: width d (paper-scale here: 64).
        n_extra_queries: generic queries beside the K class-specific ones (4).
        use_zoom: the zoom embedding (FiLM on tokens + added to queries) and the zoom regressor.
        use_relation: the learned relation bias in query self-attention (and, in
            :class:`~zrdetr.criterion.ZRDETRCriterion`, the relation loss).
        head: ``"gp"`` (:class:`~zrdetr.gp_head.SVGPHead`) or ``"mlp"``.
        class_queries: the first K queries may only be matched to their own class; None: as
            ``use_relation``.
        n_inducing, feat_dim: of the GP head (32, 16).
        n_heads, enc_layers, dec_layers, ff_dim: transformer sizes (4, 2, 3, 2d).
        mc_samples: Monte-Carlo samples of the GP class logits (8).
        in_channels: image channels (1).
        gp_mean: the GP head's prior mean, ``"linear"`` or ``"zero"``.
        zoom_estimator: how the zoom is predicted when it is not given: ``"boxes"`` (a first,
            zoom-free decoder pass and :class:`~zrdetr.zoom.BoxZoomEstimator` on its boxes) or
            ``"tokens"`` (:class:`~zrdetr.zoom.ZoomRegressor` on the pooled encoder tokens).

    forward(images (B, C, H, W), zoom (B,) or None) returns a dict: ``logits`` (B, Q, K+1)
    (for the GP head: log of the MC-averaged softmax), ``boxes`` (B, Q, 4) ``(cx, cy, w, h)`` in
    [0, 1], ``box_var`` (B, Q, 4) (the GP variance carried to box coordinates by the delta method,
    :math:`\sigma^2_{box}=(s(1-s))^2\sigma^2_{\delta}`; zeros for the MLP head), ``log_zoom``
    (B,) (the predicted zoom; zeros without zoom), ``aux``: the same dicts for the earlier
    decoder layers, and ``first_pass``: those of the zoom-free pass (``zoom_estimator="boxes"``;
    empty otherwise); all of them get the loss (deep supervision).
    """

    def __init__(
        self,
        n_classes: int,
        d_model: int = 64,
        n_extra_queries: int = 4,
        use_zoom: bool = True,
        use_relation: bool = True,
        head: str = "gp",
        class_queries: bool | None = None,
        n_inducing: int = 32,
        feat_dim: int = 16,
        n_heads: int = 4,
        enc_layers: int = 2,
        dec_layers: int = 3,
        ff_dim: int | None = None,
        mc_samples: int = 8,
        in_channels: int = 1,
        gp_mean: str = "linear",
        zoom_estimator: str = "boxes",
    ) -> None:
        super().__init__()
        owner = "ZRDETR"
        K = self.n_classes = check_int("n_classes", owner, n_classes, low=1, high=1024)
        d = self.d_model = check_int("d_model", owner, d_model, low=8, high=4096)
        self.n_extra_queries = check_int(
            "n_extra_queries", owner, n_extra_queries, low=0, high=4096
        )
        self.use_zoom = _check_bool("use_zoom", use_zoom)
        self.use_relation = _check_bool("use_relation", use_relation)
        self.head_kind = check_choice("head", owner, head, ("gp", "mlp"))
        gp_mean = check_choice("gp_mean", owner, gp_mean, ("linear", "zero"))
        self.zoom_estimator = check_choice(
            "zoom_estimator", owner, zoom_estimator, ("boxes", "tokens")
        )
        cq = (
            self.use_relation
            if class_queries is None
            else _check_bool("class_queries", class_queries)
        )
        self.class_queries = cq
        n_heads = check_int("n_heads", owner, n_heads, low=1, high=d)
        if d % 4:
            raise param_error("d_model", owner, "a multiple of 4", d)
        if d % n_heads:
            raise param_error("n_heads", owner, f"a divisor of 'd_model' ({d})", n_heads)
        enc_layers = check_int("enc_layers", owner, enc_layers, low=0, high=64)
        self.dec_layers = check_int("dec_layers", owner, dec_layers, low=1, high=64)
        ff = check_int("ff_dim", owner, 2 * d if ff_dim is None else ff_dim, low=1, high=1 << 16)
        self.mc_samples = check_int("mc_samples", owner, mc_samples, low=1, high=1024)
        self.in_channels = check_int("in_channels", owner, in_channels, low=1, high=64)
        self.n_queries = K + self.n_extra_queries
        Q = self.n_queries
        c = max(8, d // 2)
        self.backbone = nn.Sequential(
            nn.Conv2d(in_channels, c, 3, 2, 1),
            nn.GroupNorm(4, c),
            nn.ReLU(),
            nn.Conv2d(c, d, 3, 2, 1),
            nn.GroupNorm(4, d),
            nn.ReLU(),
            nn.Conv2d(d, d, 3, 2, 1),
            nn.GroupNorm(4, d),
            nn.ReLU(),
            nn.Conv2d(d, d, 1),
        )
        layer = nn.TransformerEncoderLayer(d, n_heads, ff, dropout=0.0, batch_first=True)
        self.encoder = nn.ModuleList([_clone(layer) for _ in range(enc_layers)])
        self.decoder = nn.ModuleList([_DecoderLayer(d, n_heads, ff) for _ in range(dec_layers)])
        self.query_embed = nn.Parameter(torch.randn(Q, d) * 0.1)
        self.query_pos = nn.Parameter(torch.randn(Q, d) * 0.1)
        g = torch.Generator().manual_seed(1)
        ref = torch.cat([torch.rand(Q, 2, generator=g) * 0.6 + 0.2, torch.full((Q, 2), 0.2)], 1)
        self.reference = nn.Parameter(torch.logit(ref))
        if self.use_zoom:
            self.zoom_embed = ZoomEmbedding(d)
            self.film = ZoomFiLM(d)
            if self.zoom_estimator == "boxes":
                self.zoom_regressor: nn.Module = BoxZoomEstimator(K)
            else:
                self.zoom_regressor = ZoomRegressor(d)
        if self.use_relation:
            self.relation_bias = RelationBias(K)
        if self.head_kind == "gp":
            self.head = SVGPHead(
                d, 4 + K + 1, n_inducing=n_inducing, feat_dim=feat_dim, mean_function=gp_mean
            )
        else:
            self.head = _MLPHead(d, K + 1)
        self._pos_cache: dict[tuple[int, int], torch.Tensor] = {}

    def _pos(self, h: int, w: int, device, dtype) -> torch.Tensor:
        if (h, w) not in self._pos_cache:
            self._pos_cache[(h, w)] = sine_position_encoding(h, w, self.d_model)
        return self._pos_cache[(h, w)].to(device, dtype)

    def forward(self, images: torch.Tensor, zoom: torch.Tensor | None = None) -> dict:
        owner = "ZRDETR"
        check_tensor("images", owner, images, shape=("B", self.in_channels, "H", "W"))
        if images.shape[-1] < 8 or images.shape[-2] < 8:
            raise param_error("images", owner, "at least 8 x 8 pixels", tuple(images.shape))
        check_dtype("images", owner, images, self)
        if zoom is not None:
            check_zoom(owner, zoom, images.shape[0])
        B = images.shape[0]
        feat = self.backbone(images)
        h, w = feat.shape[-2:]
        tokens = feat.flatten(2).transpose(1, 2)
        pos = self._pos(h, w, tokens.device, tokens.dtype)[None]
        x = tokens + pos
        for layer in self.encoder:
            x = layer(x)
        memory = x
        tgt = self.query_embed[None].expand(B, -1, -1)
        mask = None
        if self.use_relation:
            mask = self.relation_bias(self.n_queries).to(memory.dtype)
        qpos = self.query_pos[None].expand(B, -1, -1)
        first: list[dict] = []
        if not self.use_zoom:
            log_zoom = memory.new_zeros(B)
        elif self.zoom_estimator == "boxes":
            first = self._decode(tgt, qpos, memory, pos, mask)
            probs = first[-1]["logits"].float().softmax(-1)[..., : self.n_classes]
            log_zoom = self.zoom_regressor.estimate(first[-1]["boxes"], probs).to(memory.dtype)
        else:
            log_zoom = self.zoom_regressor(memory)
        if self.use_zoom:
            lz = torch.log(zoom) if zoom is not None else log_zoom.detach()
            e = self.zoom_embed.embed_log(lz).to(memory.dtype)
            memory = self.film(memory, e)
            tgt = tgt + e[:, None]
        outs = self._decode(tgt, qpos, memory, pos, mask)
        out = outs[-1]
        out["log_zoom"] = log_zoom
        out["has_zoom"] = self.use_zoom
        out["aux"] = outs[:-1]
        out["first_pass"] = first
        if self.head_kind == "gp":
            out["kl"] = self.head.kl()
        return out

    def _decode(self, tgt, qpos, memory, pos, mask) -> list[dict]:
        outs = []
        for layer in self.decoder:
            tgt = layer(tgt, qpos, memory, pos, mask)
            outs.append(self._predict(tgt))
        return outs

    def _predict(self, hs: torch.Tensor) -> dict:
        if self.head_kind == "gp":
            mean, var = self.head(hs)
            delta, delta_var = mean[..., :4], var[..., :4]
            lmean, lvar = mean[..., 4:], var[..., 4:]
            if self.training:
                eps = torch.randn(
                    (self.mc_samples, *lmean.shape), device=lmean.device, dtype=lmean.dtype
                )
            else:  # fixed draws: evaluation is deterministic
                g = torch.Generator(device=lmean.device).manual_seed(0)
                eps = torch.randn(
                    (self.mc_samples, *lmean.shape),
                    generator=g,
                    device=lmean.device,
                    dtype=lmean.dtype,
                )
            probs = torch.softmax(lmean + lvar.sqrt() * eps, -1).mean(0)
            logits = torch.log(probs.clamp(min=1e-12))
        else:
            delta, logits = self.head(hs)
            delta_var = None
            lmean, lvar = logits, torch.zeros_like(logits)
        boxes = torch.sigmoid(self.reference.to(delta.dtype) + delta)
        if delta_var is None:
            box_var = torch.zeros_like(boxes)
        else:
            box_var = (boxes * (1 - boxes)).pow(2) * delta_var
        return {
            "logits": logits,
            "boxes": boxes,
            "box_var": box_var,
            "logit_mean": lmean,
            "logit_var": lvar,
        }


def _clone(layer: nn.Module) -> nn.Module:
    return copy.deepcopy(layer)


def _check_bool(name: str, value: object) -> bool:
    return check_bool(name, "ZRDETR", value)
