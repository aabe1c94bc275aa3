"""The small CNN of the reproduction and batch-norm folding.

:class:`SmallCNN`: four 3x3 convolutions (16-32-32-64 channels) with batch norm and ReLU, a 2x2
max-pool after the second, global average pooling and a linear classifier; five quantisable
layers ``conv1..conv4, fc``. :func:`fold_batchnorm` folds each batch norm into the convolution
before it, :math:`W' = W \\gamma / \\sqrt{\\sigma^2 + \\epsilon}`,
:math:`b' = (b - \\mu)\\gamma/\\sqrt{\\sigma^2 + \\epsilon} + \\beta`, so that a quantisable layer's
output followed by ReLU is the network's post-activation feature map.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
from torch import nn

from paperkit import check_int, param_error

__all__ = ["SmallCNN", "fold_batchnorm", "small_cnn"]


class SmallCNN(nn.Module):
    """conv1-bn1-relu, conv2-bn2-relu, maxpool 2x2, conv3-bn3-relu, conv4-bn4-relu, global average
    pool, fc. Input ``(B, in_channels, H, W)`` with even H, W; output logits ``(B, num_classes)``.
    """

    def __init__(
        self,
        num_classes: int = 10,
        in_channels: int = 1,
        channels: Sequence[int] = (16, 32, 32, 64),
    ) -> None:
        super().__init__()
        owner = "SmallCNN"
        check_int("num_classes", owner, num_classes, low=2, high=10_000)
        check_int("in_channels", owner, in_channels, low=1, high=64)
        if not isinstance(channels, (list, tuple)) or len(channels) != 4:
            raise param_error(
                "channels", owner, "a sequence of 4 integers", channels, cls=TypeError
            )
        chans = [check_int("channels", owner, c, low=1, high=1024) for c in channels]
        widths = [in_channels, *chans]
        for i in range(4):
            setattr(self, f"conv{i + 1}", nn.Conv2d(widths[i], widths[i + 1], 3, padding=1))
            setattr(self, f"bn{i + 1}", nn.BatchNorm2d(widths[i + 1]))
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(chans[-1], num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.bn1(self.conv1(x)))
        x = torch.relu(self.bn2(self.conv2(x)))
        x = self.pool(x)
        x = torch.relu(self.bn3(self.conv3(x)))
        x = torch.relu(self.bn4(self.conv4(x)))
        return self.fc(x.mean(dim=(2, 3)))


def small_cnn(num_classes: int = 10, in_channels: int = 1) -> SmallCNN:
    """The reproduction's CNN (:class:`SmallCNN`, channels 16-32-32-64), untrained, with batch
    norm; fold it with :func:`fold_batchnorm` after training.

    >>> small_cnn()(torch.zeros(2, 1, 16, 16)).shape
    torch.Size([2, 10])
    """
    return SmallCNN(num_classes, in_channels)


def fold_batchnorm(model: SmallCNN) -> SmallCNN:
    """A copy of ``model`` in eval mode with every batch norm folded into its convolution (the
    batch norms become identities); the outputs are unchanged up to rounding.

    >>> m = small_cnn().eval()
    >>> x = torch.randn(3, 1, 16, 16)
    >>> bool(torch.allclose(m(x), fold_batchnorm(m)(x), atol=1e-5))
    True
    """
    if not isinstance(model, SmallCNN):
        raise param_error(
            "model", "fold_batchnorm", "a SmallCNN", type(model).__name__, cls=TypeError
        )
    folded = copy.deepcopy(model).eval()
    with torch.no_grad():
        for i in range(1, 5):
            conv, bn = getattr(folded, f"conv{i}"), getattr(folded, f"bn{i}")
            if not isinstance(bn, nn.BatchNorm2d):
                continue
            scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            conv.weight.mul_(scale[:, None, None, None])
            conv.bias.copy_((conv.bias - bn.running_mean) * scale + bn.bias)
            setattr(folded, f"bn{i}", nn.Identity())
    return folded
