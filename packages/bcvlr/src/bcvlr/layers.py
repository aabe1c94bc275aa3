"""Convolutional building blocks: IMPALA residual blocks and conv sequences (Espeholt et al.,
2018), as used by the encoder, the inverse dynamics model and the policy of BCV-LR."""

from __future__ import annotations

import math

import torch
from torch import nn

__all__ = ["ConvSequence", "ImpalaCNN", "ResidualBlock"]


class ResidualBlock(nn.Module):
    """:math:`x + \\mathrm{conv}(\\mathrm{relu}(\\mathrm{conv}(\\mathrm{relu}(x))))`, 3x3 convs,
    channels and size kept."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv0 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv1(torch.relu(self.conv0(torch.relu(x))))


class ConvSequence(nn.Sequential):
    """3x3 conv, max-pool 3x3 stride 2, two residual blocks: halves the spatial size."""

    def __init__(self, in_channels: int, out_channels: int) -> None:
        super().__init__(
            nn.Conv2d(in_channels, out_channels, 3, padding=1),
            nn.MaxPool2d(3, stride=2, padding=1),
            ResidualBlock(out_channels),
            ResidualBlock(out_channels),
        )


class ImpalaCNN(nn.Module):
    """IMPALA CNN: conv sequences with ``channels`` (x ``scale``), flatten, ReLU, linear to
    ``features``, ReLU, linear to ``out_dim``."""

    def __init__(
        self,
        in_shape: tuple[int, int, int],
        channels: tuple[int, ...],
        scale: int,
        features: int,
        out_dim: int,
    ) -> None:
        super().__init__()
        c, h, w = in_shape
        seqs = []
        for ch in channels:
            seqs.append(ConvSequence(c, ch * scale))
            c, h, w = ch * scale, math.ceil(h / 2), math.ceil(w / 2)
        self.convs = nn.Sequential(*seqs, nn.Flatten(), nn.ReLU())
        self.fc = nn.Linear(c * h * w, features)
        self.head = nn.Linear(features, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.fc(self.convs(x))))
