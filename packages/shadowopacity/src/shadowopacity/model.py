"""Shadow Feature Separation and Opacity Mask Prediction (the paper's Sec. 3, modules 2 and 3),
and the two baselines on the same backbone.

A small U-Net E maps an image to features F at full resolution. Two branches, each led by a 1x1
convolution, give position features P = B_pos(F) and opacity features O = B_op(F) (d channels).
Heads: ``pos_logit = head_pos(P)`` (where the shadow is), ``head_o(O)`` (how strong, a scalar
map used by the ordering loss) and ``head_a([P, O])``; the opacity map is

    alpha_hat = sigmoid(head_pos(P)) * sigmoid(head_a([P, O]))     ("where" x "how much").
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_int
from shadowopacity import _inputs
from shadowopacity.physics import T_MASK

__all__ = ["BinaryShadowNet", "DirectOpacityNet", "OpacityShadowNet", "UNetEncoder"]


def _block(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1),
        nn.GroupNorm(1, c_out),
        nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1),
        nn.GroupNorm(1, c_out),
        nn.ReLU(inplace=True),
    )


class UNetEncoder(nn.Module):
    """The shared backbone E: a 3-level U-Net (widths base, 2 base, 4 base; two 2x poolings),
    decoded back to full resolution with skip connections; ``(B, 3, H, W) -> (B, base, H, W)``,
    H and W multiples of 4."""

    def __init__(self, base: int = 16) -> None:
        super().__init__()
        self.base = check_int("base", type(self).__name__, base, low=1, high=256)
        b = self.base
        self.enc1, self.enc2, self.enc3 = _block(3, b), _block(b, 2 * b), _block(2 * b, 4 * b)
        self.up2 = nn.ConvTranspose2d(4 * b, 2 * b, 2, stride=2)
        self.dec2 = _block(4 * b, 2 * b)
        self.up1 = nn.ConvTranspose2d(2 * b, b, 2, stride=2)
        self.dec1 = _block(2 * b, b)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e1 = self.enc1(x)
        e2 = self.enc2(F.max_pool2d(e1, 2))
        e3 = self.enc3(F.max_pool2d(e2, 2))
        d2 = self.dec2(torch.cat([self.up2(e3), e2], 1))
        return self.dec1(torch.cat([self.up1(d2), e1], 1))


def _check_input(module: nn.Module, image: torch.Tensor) -> torch.Tensor:
    """The checked image batch, cast to the module's parameter dtype (a documented cast)."""
    owner = type(module).__name__
    image = _inputs.image("image", owner, image).to(next(module.parameters()).dtype)
    if image.shape[-1] % 4 or image.shape[-2] % 4:
        raise ValueError(
            f"The 'image' parameter of {owner} must have H and W multiples of 4. "
            f"Got shape {tuple(image.shape)} instead."
        )
    return image


def _branch(c_in: int, d: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, d, 1), nn.ReLU(inplace=True), nn.Conv2d(d, d, 3, padding=1)
    )


class OpacityShadowNet(nn.Module):
    """The full model: shared encoder, position and opacity branches (SFS), opacity head (OMP).

    Args:
        base: width of the U-Net backbone.
        d_branch: channels d of the position and opacity features.

    ``forward(image (B, 3, H, W))`` returns a dict: ``alpha`` (B, 1, H, W) in [0, 1],
    ``pos_logit`` (B, 1, H, W), ``op_logit`` (B, 1, H, W) = head_o(O), ``P`` and ``O``
    (B, d, H, W), and the binary mask ``mask`` = pos_logit > 0.
    """

    def __init__(self, base: int = 16, d_branch: int = 32) -> None:
        super().__init__()
        owner = type(self).__name__
        d = check_int("d_branch", owner, d_branch, low=1, high=512)
        self.encoder = UNetEncoder(check_int("base", owner, base, low=1, high=256))
        self.branch_pos, self.branch_op = _branch(base, d), _branch(base, d)
        self.head_pos, self.head_o = nn.Conv2d(d, 1, 1), nn.Conv2d(d, 1, 1)
        self.head_a = nn.Conv2d(2 * d, 1, 1)

    def forward(self, image: torch.Tensor) -> dict[str, torch.Tensor]:
        feats = self.encoder(_check_input(self, image))
        P, O = self.branch_pos(feats), self.branch_op(feats)  # noqa: E741, N806
        pos_logit = self.head_pos(P)
        a_logit = self.head_a(torch.cat([P, O], 1))
        alpha = torch.sigmoid(pos_logit) * torch.sigmoid(a_logit)
        return {
            "alpha": alpha,
            "pos_logit": pos_logit,
            "mask": pos_logit > 0,
            "op_logit": self.head_o(O),
            "P": P,
            "O": O,
        }


class BinaryShadowNet(nn.Module):
    """Baseline: a binary shadow detector (the same backbone, one 1x1 head), trained with BCE +
    Dice on binarised labels; its probability map sigmoid(logit) serves as alpha.
    ``forward`` returns ``alpha``, ``pos_logit`` and ``mask`` (logit > 0)."""

    def __init__(self, base: int = 16) -> None:
        super().__init__()
        self.encoder = UNetEncoder(check_int("base", type(self).__name__, base, low=1, high=256))
        self.head = nn.Conv2d(base, 1, 1)

    def forward(self, image: torch.Tensor) -> dict[str, torch.Tensor]:
        logit = self.head(self.encoder(_check_input(self, image)))
        return {"alpha": torch.sigmoid(logit), "pos_logit": logit, "mask": logit > 0}


class DirectOpacityNet(nn.Module):
    """Baseline: opacity regression alpha_hat = sigmoid(head(E(I))) with the same backbone and
    the same opacity loss, without augmentation and without feature separation.
    ``forward`` returns ``alpha``, ``pos_logit`` (the logit of alpha_hat) and ``mask``
    (alpha_hat > 0.05, the position-mask threshold)."""

    def __init__(self, base: int = 16) -> None:
        super().__init__()
        self.encoder = UNetEncoder(check_int("base", type(self).__name__, base, low=1, high=256))
        self.head = nn.Conv2d(base, 1, 1)

    def forward(self, image: torch.Tensor) -> dict[str, torch.Tensor]:
        logit = self.head(self.encoder(_check_input(self, image)))
        alpha = torch.sigmoid(logit)
        return {"alpha": alpha, "pos_logit": logit, "mask": alpha > T_MASK}
