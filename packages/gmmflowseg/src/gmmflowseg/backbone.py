r"""The shared backbone: a small U-Net, the PU-Net's conv encoders and the Fcomb decoder head.

Every method of the comparison uses these same parts (PU-Net, Kohl et al. 2018, Sec. 2): the
U-Net gives features :math:`F` (B, base, H, W) once per image; the prior (posterior) encoder maps
:math:`x` (:math:`[x, \mathrm{onehot}(y)]`) to a global-average-pooled code :math:`h`; Fcomb
tiles a latent :math:`z` over the image, concatenates it with :math:`F` and applies three 1x1
convolutions. Only Fcomb runs once per sample.

>>> import torch
>>> net = UNetBackbone(1, base=4, depth=2)
>>> feat = net(torch.randn(2, 1, 8, 8))
>>> Fcomb(4, 6, 2)(feat, torch.randn(5, 2, 6)).shape
torch.Size([5, 2, 2, 8, 8])
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_int, check_tensor, param_error

__all__ = ["ConvEncoder", "Fcomb", "UNetBackbone"]


def _block(c_in: int, c_out: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1),
        nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1),
        nn.ReLU(inplace=True),
    )


def check_image(name: str, owner: str, x: torch.Tensor, in_ch: int, depth: int, dims: dict):
    """A finite (B, in_ch, H, W) image whose H and W divide by ``2**(depth-1)``."""
    check_tensor(name, owner, x, shape=("B", in_ch, "H", "W"), dims=dims)
    step = 2 ** (depth - 1)
    if x.shape[-1] % step or x.shape[-2] % step:
        raise param_error(name, owner, f"of height and width divisible by {step}", tuple(x.shape))


class UNetBackbone(nn.Module):
    """U-Net with ``depth`` levels of ``base * 2**i`` channels (two 3x3 convs each, average
    pooling down, nearest upsampling and skip concatenation up).

    NaN policy: NaN or inf in ``x`` is refused.

    Shapes: ``x`` (B, in_ch, H, W), H and W divisible by ``2**(depth-1)`` -> (B, base, H, W).
    """

    def __init__(self, in_ch: int, base: int = 16, depth: int = 3) -> None:
        super().__init__()
        owner = "UNetBackbone"
        self.in_ch = check_int("in_ch", owner, in_ch, low=1, high=1024)
        self.base = check_int("base", owner, base, low=1, high=1024)
        self.depth = check_int("depth", owner, depth, low=1, high=8)
        chs = [base * 2**i for i in range(depth)]
        self.down = nn.ModuleList(
            [_block(in_ch if i == 0 else chs[i - 1], chs[i]) for i in range(depth)]
        )
        self.up = nn.ModuleList([_block(chs[i + 1] + chs[i], chs[i]) for i in range(depth - 1)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_image("x", "UNetBackbone", x, self.in_ch, self.depth, {})
        x = x.to(self.down[0][0].weight.dtype)
        skips = []
        for i, block in enumerate(self.down):
            x = block(x if i == 0 else F.avg_pool2d(x, 2))
            skips.append(x)
        for i in reversed(range(self.depth - 1)):
            x = F.interpolate(x, scale_factor=2, mode="nearest")
            x = self.up[i](torch.cat([x, skips[i]], dim=1))
        return x


class ConvEncoder(nn.Module):
    """The PU-Net's prior/posterior net: the U-Net's down path, then global average pooling.

    NaN policy: NaN or inf in ``x`` is refused.

    Shapes: ``x`` (B, in_ch, H, W) -> (B, base * 2**(depth-1)).
    """

    def __init__(self, in_ch: int, base: int = 16, depth: int = 3) -> None:
        super().__init__()
        owner = "ConvEncoder"
        self.in_ch = check_int("in_ch", owner, in_ch, low=1, high=1024)
        base = check_int("base", owner, base, low=1, high=1024)
        self.depth = check_int("depth", owner, depth, low=1, high=8)
        chs = [base * 2**i for i in range(depth)]
        self.out_dim = chs[-1]
        self.blocks = nn.ModuleList(
            [_block(in_ch if i == 0 else chs[i - 1], chs[i]) for i in range(depth)]
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_image("x", "ConvEncoder", x, self.in_ch, self.depth, {})
        x = x.to(self.blocks[0][0].weight.dtype)
        for i, block in enumerate(self.blocks):
            x = block(x if i == 0 else F.avg_pool2d(x, 2))
        return x.mean(dim=(-2, -1))


class Fcomb(nn.Module):
    r"""Three 1x1 convolutions on :math:`[F, \mathrm{tile}(z)]` (PU-Net's Fcomb).

    The first convolution is split as :math:`W_F F + W_z z`: the feature part is computed once
    per image and the latent part (a vector) is broadcast over the image, which is the same map
    as convolving the concatenation and makes each extra sample cost two 1x1 convolutions.

    NaN policy: NaN or inf in ``feat`` or ``z`` is refused (``feat`` is cast to the head's
    dtype; ``z`` must have it).

    Shapes: ``feat`` (B, feat_ch, H, W), ``z`` (..., B, latent_dim) -> (..., B, n_classes, H, W).
    """

    def __init__(self, feat_ch: int, latent_dim: int, n_classes: int) -> None:
        super().__init__()
        owner = "Fcomb"
        self.feat_ch = check_int("feat_ch", owner, feat_ch, low=1, high=4096)
        self.latent_dim = check_int("latent_dim", owner, latent_dim, low=1, high=1024)
        self.n_classes = check_int("n_classes", owner, n_classes, low=2, high=1024)
        self.feat_in = nn.Conv2d(feat_ch, feat_ch, 1)
        self.z_in = nn.Linear(latent_dim, feat_ch, bias=False)
        self.mid = nn.Conv2d(feat_ch, feat_ch, 1)
        self.out = nn.Conv2d(feat_ch, n_classes, 1)

    def forward(self, feat: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        dims: dict = {}
        check_tensor("feat", "Fcomb", feat, shape=("B", self.feat_ch, "H", "W"), dims=dims)
        feat = feat.to(self.feat_in.weight.dtype)
        if not isinstance(z, torch.Tensor) or z.ndim < 2:
            raise param_error(
                "z",
                "Fcomb",
                "a tensor of shape (..., B, latent_dim)",
                getattr(z, "shape", type(z).__name__),
                cls=TypeError,
            )
        check_tensor(
            "z",
            "Fcomb",
            z,
            shape=(*([None] * (z.ndim - 2)), "B", self.latent_dim),
            dims=dims,
            dtype=feat.dtype,
        )
        return self.decode(self.feat_in(feat), z)

    def decode(self, feat_term: torch.Tensor, z: torch.Tensor) -> torch.Tensor:
        """The head from the precomputed ``feat_in(feat)`` (unchecked; used by the models)."""
        lead = z.shape[:-2]
        h = F.relu(feat_term + self.z_in(z)[..., None, None])  # (..., B, C, H, W)
        h = h.reshape(-1, *feat_term.shape[1:])
        out = self.out(F.relu(self.mid(h)))
        return out.view(*lead, *feat_term.shape[:1], self.n_classes, *feat_term.shape[2:])
