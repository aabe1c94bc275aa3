r"""The networks of BCV-LR (Sec. 3 of the paper).

One :class:`Encoder` :math:`f` (3x3 conv + two IMPALA residual blocks) is learned in stage 1a and
then *shared and frozen*: the inverse dynamics model, the forward model and the latent policy hold
the same object and call it under ``torch.no_grad``.

* :class:`InverseDynamics`: :math:`la = \mathrm{IDM}([f(o_{t-1}), f(o_t), f(o_{t+1})])`, an IMPALA
  CNN over the channel-stacked features, then :math:`la_q = \mathrm{VQ}(la)`.
* :class:`ForwardModel`: a UNet predicting :math:`f(o_{t+1})` from
  :math:`[f(o_{t-1}), f(o_t)]` and the broadcast :math:`la_q` (also injected at the bottleneck).
* :class:`LatentPolicy`: :math:`\pi(o_t) \in \mathbb{R}^{d_{la}}`, imitating :math:`la`.
* :class:`ActionDecoder`: :math:`h(la)`, an MLP to action logits (discrete) or an action (box).
"""

from __future__ import annotations

from typing import NamedTuple

import torch
from torch import nn

from bcvlr.config import BCVLRConfig
from bcvlr.layers import ImpalaCNN, ResidualBlock
from bcvlr.vq import VQEmbeddingEMA
from paperkit import check_int, check_tensor

__all__ = [
    "ActionDecoder",
    "Encoder",
    "ForwardModel",
    "InverseDynamics",
    "LatentAction",
    "LatentPolicy",
]


def _config(config: BCVLRConfig | None, owner: str) -> BCVLRConfig:
    if config is None:
        return BCVLRConfig.small()
    if not isinstance(config, BCVLRConfig):
        from paperkit import describe, param_error

        raise param_error("config", owner, "a BCVLRConfig", describe(config), cls=TypeError)
    return config


def _setup(encoder: object, frame_hw: object, config: BCVLRConfig | None, owner: str):
    """Check the shared encoder and the frame size ``(H, W)``; the config or the small preset."""
    from paperkit import describe, param_error

    if not isinstance(encoder, Encoder):
        raise param_error("encoder", owner, "a bcvlr.Encoder", describe(encoder), cls=TypeError)
    ok = (
        isinstance(frame_hw, (tuple, list))
        and len(frame_hw) == 2
        and all(isinstance(s, int) and not isinstance(s, bool) for s in frame_hw)
    )
    if not ok:
        raise param_error(
            "frame_hw", owner, "a pair (H, W) of ints", describe(frame_hw), cls=TypeError
        )
    if not all(8 <= s <= 256 for s in frame_hw):
        raise param_error("frame_hw", owner, "8 <= H, W <= 256", str(tuple(frame_hw)))
    return _config(config, owner), tuple(frame_hw)


class Encoder(nn.Module):
    """:math:`f(o)`: 3x3 conv (``enc_channels``, stride ``enc_stride``) and two IMPALA residual
    blocks; (B, 3, H, W) -> (B, C, H/s, W/s). Paper preset: (B, 16, H, W). NaN policy: refused.

    >>> Encoder().forward(torch.rand(2, 3, 32, 32)).shape
    torch.Size([2, 8, 16, 16])
    """

    def __init__(self, config: BCVLRConfig | None = None) -> None:
        super().__init__()
        cfg = _config(config, "Encoder")
        c = cfg.enc_channels
        self.stride = cfg.enc_stride
        self.channels = c
        self.net = nn.Sequential(
            nn.Conv2d(3, c, 3, stride=cfg.enc_stride, padding=1),
            ResidualBlock(c),
            ResidualBlock(c),
        )

    def out_shape(self, hw: tuple[int, int]) -> tuple[int, int, int]:
        """Feature shape (C, H', W') for frames of size ``hw``."""
        s = self.stride
        return self.channels, (hw[0] - 1) // s + 1, (hw[1] - 1) // s + 1

    def forward(self, o: torch.Tensor) -> torch.Tensor:
        check_tensor("o", "Encoder", o, shape=(None, 3, None, None))
        return self.net(o.to(self.net[0].weight.dtype))


def _frozen_features(encoder: Encoder, frames: torch.Tensor) -> torch.Tensor:
    """f(o) for (B, T, 3, H, W) frames without gradient: (B, T, C, H', W')."""
    B, T = frames.shape[:2]
    with torch.no_grad():
        feats = encoder.net(frames.reshape(B * T, *frames.shape[2:]))
    return feats.reshape(B, T, *feats.shape[1:])


class LatentAction(NamedTuple):
    """The IDM's output: continuous ``la``, quantised ``la_q``, the VQ loss and code indices."""

    la: torch.Tensor
    la_q: torch.Tensor
    vq_loss: torch.Tensor
    indices: torch.Tensor


class InverseDynamics(nn.Module):
    """:math:`la = \\mathrm{IDM}(o_{t-1}, o_t, o_{t+1})` and its quantisation :math:`la_q`.

    ``forward(clip (B, 3, 3, H, W))`` -> :class:`LatentAction`. The encoder is shared and frozen.
    NaN policy: refused.
    """

    def __init__(
        self, encoder: Encoder, frame_hw: tuple[int, int], config: BCVLRConfig | None = None
    ) -> None:
        super().__init__()
        cfg, frame_hw = _setup(encoder, frame_hw, config, "InverseDynamics")
        self.encoder, self.frame_hw = encoder, frame_hw
        c, h, w = encoder.out_shape(frame_hw)
        self.cnn = ImpalaCNN(
            (3 * c, h, w), cfg.impala_channels, cfg.impala_scale, cfg.features, cfg.d_la
        )
        self.vq = VQEmbeddingEMA(
            cfg.num_codebooks, cfg.num_embs, cfg.emb_dim, cfg.num_latents, cfg.commitment, cfg.decay
        )

    def trainable(self) -> list[nn.Parameter]:
        """The IDM's own parameters (the shared encoder excluded)."""
        return list(self.cnn.parameters())

    def forward(self, clip: torch.Tensor) -> LatentAction:
        check_tensor("clip", "InverseDynamics", clip, shape=(None, 3, 3, *self.frame_hw))
        feats = _frozen_features(self.encoder, clip.to(self.cnn.fc.weight.dtype))
        la = self.cnn(feats.flatten(1, 2))
        la_q, vq_loss, _, indices = self.vq(la)
        return LatentAction(la, la_q, vq_loss, indices)


class _Down(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(
            nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), ResidualBlock(cout), nn.MaxPool2d(2)
        )


class _Up(nn.Sequential):
    def __init__(self, cin: int, cout: int) -> None:
        super().__init__(nn.ConvTranspose2d(cin, cout, 2, stride=2), nn.ReLU(), ResidualBlock(cout))


class ForwardModel(nn.Module):
    """UNet :math:`\\hat f_{t+1} = \\mathrm{FM}([f(o_{t-1}), f(o_t)], la_q)`.

    ``la_q`` is broadcast over the input's spatial grid and again at the bottleneck; down path
    ``unet_base * 2^i`` channels for ``unet_levels`` levels, skip connections, and a final conv
    on the up path concatenated with the input features. ``forward(feats_prev (B, 2, C, h, w),
    la_q (B, D))`` -> (B, C, h, w). NaN policy: refused.
    """

    def __init__(
        self, encoder: Encoder, frame_hw: tuple[int, int], config: BCVLRConfig | None = None
    ) -> None:
        super().__init__()
        cfg, frame_hw = _setup(encoder, frame_hw, config, "ForwardModel")
        self.encoder, self.frame_hw = encoder, frame_hw
        c, h, w = encoder.out_shape(frame_hw)
        levels, D, b = cfg.unet_levels, cfg.d_la, cfg.unet_base
        if h % 2**levels or w % 2**levels:
            from paperkit import param_error

            raise param_error(
                "config", "ForwardModel", f"unet_levels with 2^levels dividing {h}x{w}", levels
            )
        ch = [b * 2**i for i in range(levels)]
        self.down = nn.ModuleList(
            _Down(cin, cout) for cin, cout in zip([2 * c + D, *ch[:-1]], ch, strict=True)
        )
        ins = [2 * ch[i] if i < levels - 1 else ch[i] + D for i in range(levels)]
        outs = [ch[i - 1] if i else b for i in range(levels)]
        self.up = nn.ModuleList(_Up(ins[i], outs[i]) for i in range(levels))
        self.final = nn.Sequential(
            nn.Conv2d(b + 2 * c, b, 3, padding=1), ResidualBlock(b), nn.ReLU(), nn.Conv2d(b, c, 1)
        )
        self.feat_shape, self.d_la = (c, h, w), D
        self.register_buffer("scale", torch.tensor(1.0))

    def trainable(self) -> list[nn.Parameter]:
        """The UNet's own parameters (the shared encoder excluded)."""
        return [*self.down.parameters(), *self.up.parameters(), *self.final.parameters()]

    def forward(self, feats_prev: torch.Tensor, la_q: torch.Tensor) -> torch.Tensor:
        c, h, w = self.feat_shape
        dims: dict = {}
        check_tensor("feats_prev", "ForwardModel", feats_prev, shape=("B", 2, c, h, w), dims=dims)
        check_tensor("la_q", "ForwardModel", la_q, shape=("B", self.d_la), dims=dims)
        dtype = self.final[-1].weight.dtype
        state, la_q = feats_prev.to(dtype).flatten(1, 2), la_q.to(dtype)
        x = torch.cat([state, la_q[:, :, None, None].expand(-1, -1, h, w)], 1)
        skips = []
        for layer in self.down:
            x = layer(x)
            skips.append(x)
        x = torch.cat([x, la_q[:, :, None, None].expand(-1, -1, *x.shape[2:])], 1)
        for i in reversed(range(len(self.up))):
            x = self.up[i](x)
            if i:
                x = torch.cat([x, skips[i - 1]], 1)
        return self.final(torch.cat([x, state], 1))

    def set_scale(self, frames: torch.Tensor) -> None:
        """Fix :attr:`scale` to the standard deviation of the frozen features of ``frames``."""
        self.scale.fill_(float(_frozen_features(self.encoder, frames[:, None]).std()))

    def loss(self, clip: torch.Tensor, la_q: torch.Tensor) -> torch.Tensor:
        """:math:`\\|\\mathrm{FM}([\\bar f_{t-1}, \\bar f_t], la_q) - \\bar f_{t+1}\\|^2` (mean) on
        the features divided by :attr:`scale` (their standard deviation over video frames)."""
        feats = _frozen_features(self.encoder, clip) / self.scale
        return torch.nn.functional.mse_loss(self(feats[:, :2], la_q), feats[:, 2])


class LatentPolicy(nn.Module):
    """:math:`\\pi(o_t) \\in \\mathbb{R}^{d_{la}}`: frozen shared encoder, IMPALA CNN, linear.

    ``forward(o (B, 3, H, W))`` -> (B, d_la). NaN policy: refused.
    """

    def __init__(
        self, encoder: Encoder, frame_hw: tuple[int, int], config: BCVLRConfig | None = None
    ) -> None:
        super().__init__()
        cfg, frame_hw = _setup(encoder, frame_hw, config, "LatentPolicy")
        self.encoder, self.frame_hw = encoder, frame_hw
        self.cnn = ImpalaCNN(
            encoder.out_shape(frame_hw),
            cfg.impala_channels,
            cfg.impala_scale,
            cfg.features,
            cfg.d_la,
        )

    def trainable(self) -> list[nn.Parameter]:
        """The policy's own parameters (the shared encoder excluded)."""
        return list(self.cnn.parameters())

    def forward(self, o: torch.Tensor) -> torch.Tensor:
        check_tensor("o", "LatentPolicy", o, shape=(None, 3, *self.frame_hw))
        o = o.to(self.cnn.fc.weight.dtype)
        return self.cnn(_frozen_features(self.encoder, o[:, None])[:, 0])


class ActionDecoder(nn.Module):
    """:math:`h: \\mathbb{R}^{d_{la}} \\to` action logits or an action: an MLP with ReLU and
    ``hidden`` widths (paper: 192, 128, 64) on the standardised input :math:`(la-\\mu)/\\sigma`
    (:meth:`standardise`; identity until set). NaN policy: refused.

    >>> ActionDecoder(32, 5)(torch.zeros(4, 32)).shape
    torch.Size([4, 5])
    """

    def __init__(self, d_la: int, out_dim: int, hidden: tuple[int, ...] = (192, 128, 64)) -> None:
        super().__init__()
        self.d_la = check_int("d_la", "ActionDecoder", d_la, low=1, high=65536)
        out_dim = check_int("out_dim", "ActionDecoder", out_dim, low=1, high=65536)
        ok = isinstance(hidden, (tuple, list)) and all(
            isinstance(h, int) and not isinstance(h, bool) and 1 <= h <= 65536 for h in hidden
        )
        if not ok:
            from paperkit import describe, param_error

            raise param_error(
                "hidden", "ActionDecoder", "a tuple of widths in [1, 65536]", describe(hidden)
            )
        widths = [self.d_la, *hidden]
        layers: list[nn.Module] = []
        for a, b in zip(widths[:-1], widths[1:], strict=True):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.net = nn.Sequential(*layers, nn.Linear(widths[-1], out_dim))
        self.register_buffer("shift", torch.zeros(self.d_la))
        self.register_buffer("scale", torch.ones(self.d_la))

    def standardise(self, la: torch.Tensor) -> None:
        """Fix the input standardisation :math:`(la - \\mu) / \\sigma` to the mean and standard
        deviation of the latent actions ``la`` (N, d_la) (of the video clips)."""
        self.shift.copy_(la.mean(0))
        self.scale.copy_(la.std(0) + 1e-6)

    def forward(self, la: torch.Tensor) -> torch.Tensor:
        check_tensor("la", "ActionDecoder", la, shape=(None, self.d_la))
        return self.net((la.to(self.shift.dtype) - self.shift) / self.scale)
