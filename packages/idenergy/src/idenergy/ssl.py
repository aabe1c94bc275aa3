"""DINO-lite: a small self-supervised student/teacher CNN trained on natural images only.

The paper scores images with a self-supervised model trained on natural images (DINOv2); no
pretrained weights can be downloaded here, so this module trains a small DINO on the natural train
split. Architecture: 4 conv blocks of 64 channels (3x3 conv, GroupNorm, GELU; strides 1, 2, 2, 1)
and average pooling to a 4x4 grid give the features phi(x) in R^1024; a projection MLP
(1024 -> 128 -> 32),
L2-normalised, is compared with P = 256 unit-norm prototypes w_k, and the pattern logits are

    g_k(x) = <w_k, z(x)> / tau_s,    z(x) = proj(phi(x)) / ||proj(phi(x))||,   tau_s = 0.1,

the logits of the student's softmax over prototypes (the self-supervised "labels"); for a teacher
trained with centring the centre is part of its output, g_k(x) = (<w_k, z(x)> - c_k) / tau_s.

Training (DINO): two random-resized crops with flips and brightness/contrast jitter per image;
the student sees both views, the EMA teacher (momentum 0.996) gives targets
softmax((g_t - c) / tau_t) with tau_t = 0.04 and a running centre c (momentum 0.9), and the loss is
the cross-entropy between each teacher view and the other student view. ``balance="sinkhorn"``
replaces centring by Sinkhorn-Knopp equipartitioned targets (SwAV; 3 iterations, eps = 0.05),
which rules out the one-prototype collapse.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from idenergy._inputs import as_images
from paperkit import check_choice, check_int, check_real, param_error

__all__ = ["BALANCES", "ConvEncoder", "DinoLite", "augment", "collapse_stats", "train_dino_lite"]

#: How the teacher's targets are kept from collapsing.
BALANCES = ("center", "sinkhorn")
#: Collapse thresholds: prototype-usage entropy (nats) and mean per-dimension feature std.
MIN_USAGE_ENTROPY = math.log(16)
MIN_FEATURE_STD = 1e-3
#: Side of the pooled feature grid of :class:`ConvEncoder`.
GRID = 4


class ConvEncoder(nn.Module):
    """phi: 4 blocks (3x3 conv, GroupNorm(8), GELU) of ``width`` channels, strides 1, 2, 2, 1,
    then average pooling to a 4x4 grid, flattened: ``(B, C, H, W) -> (B, 16 width)``.

    The 4x4 grid keeps the layout of the patterns (global pooling of a randomly initialised
    GroupNorm network maps every image to nearly the same vector, a collapsed start)."""

    def __init__(self, in_ch: int = 1, width: int = 64) -> None:
        super().__init__()
        in_ch = check_int("in_ch", "ConvEncoder", in_ch, low=1, high=4)
        width = check_int("width", "ConvEncoder", width, low=8, high=1024)
        layers: list[nn.Module] = []
        for i, stride in enumerate((1, 2, 2, 1)):
            layers += [
                nn.Conv2d(in_ch if i == 0 else width, width, 3, stride=stride, padding=1),
                nn.GroupNorm(8, width),
                nn.GELU(),
            ]
        self.body = nn.Sequential(*layers)
        self.in_ch, self.width = in_ch, width

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.adaptive_avg_pool2d(self.body(x), GRID).flatten(1)


class DinoLite(nn.Module):
    """Encoder phi, projection head and P prototypes; ``logits(x) = <w_k, z(x)> / tau_s``.

    Methods take image batches ``(B, C, H, W)`` (tensors; pixels in [0, 1] for the public
    :meth:`collapse_stats`). ``forward`` is ``logits``. The network methods (``features``,
    ``embed``, ``cosines``, ``logits``) are the model's forward pass and propagate NaN; the checked
    entry points are :meth:`collapse_stats`, :func:`idenergy.differential_energy` and the detectors.

    >>> m = DinoLite(1, n_prototypes=32)
    >>> m.logits(torch.rand(2, 1, 16, 16)).shape, m.features(torch.rand(2, 1, 16, 16)).shape
    (torch.Size([2, 32]), torch.Size([2, 1024]))
    """

    def __init__(
        self,
        in_ch: int = 1,
        n_prototypes: int = 256,
        *,
        width: int = 64,
        hidden: int = 128,
        bottleneck: int = 32,
        tau_student: float = 0.1,
    ) -> None:
        super().__init__()
        owner = "DinoLite"
        in_ch = check_int("in_ch", owner, in_ch, low=1, high=4)
        n_prototypes = check_int("n_prototypes", owner, n_prototypes, low=2, high=65536)
        width = check_int("width", owner, width, low=8, high=1024)
        hidden = check_int("hidden", owner, hidden, low=1, high=8192)
        bottleneck = check_int("bottleneck", owner, bottleneck, low=2, high=4096)
        self.tau_student = check_real("tau_student", owner, tau_student, low=0, low_open=True)
        self.encoder = ConvEncoder(in_ch, width)
        self.projector = nn.Sequential(
            nn.Linear(width * GRID * GRID, hidden), nn.GELU(), nn.Linear(hidden, bottleneck)
        )
        for layer in self.projector[::2]:  # zero biases: z(x) starts from the image, not a constant
            nn.init.zeros_(layer.bias)
        self.prototypes = nn.Parameter(
            torch.randn(n_prototypes, bottleneck) / math.sqrt(bottleneck)
        )
        #: The teacher's running centre c (cosine units; zero until set by training).
        self.register_buffer("center", torch.zeros(n_prototypes))

    def features(self, x: torch.Tensor) -> torch.Tensor:
        """phi(x): ``(B, 16 width)``."""
        return self.encoder(x)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """z(x): the L2-normalised projection, ``(B, bottleneck)``."""
        return F.normalize(self.projector(self.encoder(x)), dim=1)

    def cosines(self, x: torch.Tensor) -> torch.Tensor:
        """<w_k, z(x)> with unit-norm prototypes: ``(B, P)`` in [-1, 1]."""
        return self.embed(x) @ F.normalize(self.prototypes, dim=1).T

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """The pattern logits g(x) = (cosines - c) / tau_s: ``(B, P)`` (c: the centre of the
        teacher's outputs, zero for an untrained model and for ``balance="sinkhorn"``)."""
        return (self.cosines(x) - self.center) / self.tau_student

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits(x)

    def collapse_stats(self, X: Any, batch_size: int = 512) -> dict[str, Any]:
        """:func:`collapse_stats` of this model on ``X``."""
        return collapse_stats(self, X, batch_size)


@torch.no_grad()
def collapse_stats(backbone: Any, X: Any, batch_size: int = 512) -> dict[str, Any]:
    """Collapse diagnostics of a backbone on natural images ``X (N, C, H, W)``.

    ``usage_entropy``: entropy (nats) of the histogram of argmax_k g_k(x) over X (log P when every
    prototype is used equally, 0 when one prototype wins or the outputs are uniform);
    ``feat_std``: mean over dimensions of the std of phi(x) over X. ``collapsed`` when
    usage_entropy < log 16 or feat_std < 1e-3. NaN refused.

    >>> stats = collapse_stats(DinoLite(1), torch.rand(64, 1, 16, 16))
    >>> sorted(stats)
    ['collapsed', 'feat_std', 'usage_entropy']
    """
    owner = "collapse_stats"
    for method in ("logits", "features"):
        if not callable(getattr(backbone, method, None)):
            raise param_error(
                "backbone",
                owner,
                f"a backbone with a {method}(x) method",
                type(backbone).__name__,
                cls=TypeError,
            )
    x = as_images("X", owner, X)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=1 << 20)
    winners, feats = [], []
    for chunk in x.split(batch_size):
        winners.append(backbone.logits(chunk).argmax(dim=1))
        feats.append(backbone.features(chunk))
    win = torch.cat(winners)
    usage = torch.bincount(win).double() / win.numel()
    usage = usage[usage > 0]
    entropy = float(-(usage * usage.log()).sum())
    feat_std = float(torch.cat(feats).double().std(dim=0).mean())
    collapsed = entropy < MIN_USAGE_ENTROPY or feat_std < MIN_FEATURE_STD
    return {"usage_entropy": entropy, "feat_std": feat_std, "collapsed": bool(collapsed)}


def augment(x: torch.Tensor, generator: torch.Generator, min_area: float = 0.4) -> torch.Tensor:
    """One random view per image: a random-resized crop (area fraction in [min_area, 1], aspect
    ratio in [3/4, 4/3], bilinear resampling back to the full size), a horizontal flip with
    probability 1/2, and brightness/contrast jitter (``(x - mean) c + mean + b``, c in
    [0.8, 1.2], b in [-0.1, 0.1]), clipped to [0, 1]. ``x (B, C, H, W)`` as given (no checks:
    a training helper)."""
    b = x.shape[0]

    def u(lo: float, hi: float) -> torch.Tensor:
        return lo + (hi - lo) * torch.rand(b, generator=generator)

    area = u(min_area, 1.0)
    aspect = torch.exp(u(math.log(3 / 4), math.log(4 / 3)))
    sx = torch.sqrt(area * aspect).clamp(max=1.0)
    sy = torch.sqrt(area / aspect).clamp(max=1.0)
    tx, ty = (1 - sx) * u(-1, 1), (1 - sy) * u(-1, 1)
    flip = torch.where(torch.rand(b, generator=generator) < 0.5, -1.0, 1.0)
    theta = torch.zeros(b, 2, 3)
    theta[:, 0, 0], theta[:, 0, 2] = sx * flip, tx
    theta[:, 1, 1], theta[:, 1, 2] = sy, ty
    grid = F.affine_grid(theta, list(x.shape), align_corners=False)
    view = F.grid_sample(x, grid, mode="bilinear", padding_mode="border", align_corners=False)
    mean = view.mean(dim=(1, 2, 3), keepdim=True)
    c, shift = u(0.8, 1.2).view(b, 1, 1, 1), u(-0.1, 0.1).view(b, 1, 1, 1)
    return ((view - mean) * c + mean + shift).clamp(0.0, 1.0)


@torch.no_grad()
def sinkhorn(scores: torch.Tensor, eps: float = 0.05, iters: int = 3) -> torch.Tensor:
    """Equipartitioned soft assignments (SwAV's Sinkhorn-Knopp): ``Q = exp(scores / eps)``,
    then ``iters`` alternations normalising every prototype's total to 1/P and every sample's to
    1/B; returns rows summing to 1, ``(B, P)``."""
    q = torch.exp((scores - scores.max()) / eps).T
    q /= q.sum()
    k, b = q.shape
    for _ in range(iters):
        q /= q.sum(dim=1, keepdim=True) * k
        q /= q.sum(dim=0, keepdim=True) * b
    return (q * b).T


def train_dino_lite(
    X_natural: Any,
    steps: int = 300,
    seed: int = 0,
    balance: str = "center",
    *,
    n_prototypes: int = 256,
    batch_size: int = 64,
    lr: float = 3e-3,
    tau_teacher: float = 0.04,
    momentum: float = 0.996,
    center_momentum: float = 0.9,
) -> DinoLite:
    """Train DINO-lite on natural images ``X_natural (N, C, H, W)`` in [0, 1]; return the teacher.

    Per step: a batch of ``batch_size`` images, two :func:`augment` views each; loss
    ``sum_{i != j} CE(target_t(view_i), softmax(g_s(view_j)))`` averaged, with teacher targets
    ``softmax((cos_t - c) / tau_t)`` (``balance="center"``) or Sinkhorn assignments of cos_t
    (``balance="sinkhorn"``); AdamW (weight decay 0.04); teacher = EMA of the student with
    ``momentum``. Seeded: the same ``seed`` gives the same weights (on one thread). NaN refused.
    """
    owner = "train_dino_lite"
    x = as_images("X_natural", owner, X_natural)
    steps = check_int("steps", owner, steps, low=1, high=1_000_000)
    seed = check_int("seed", owner, seed, low=0)
    check_choice("balance", owner, balance, BALANCES)
    n_prototypes = check_int("n_prototypes", owner, n_prototypes, low=2, high=65536)
    batch_size = check_int("batch_size", owner, batch_size, low=2, high=1 << 16)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=1)
    tau_teacher = check_real("tau_teacher", owner, tau_teacher, low=0, low_open=True)
    momentum = check_real("momentum", owner, momentum, low=0, high=1)
    center_momentum = check_real("center_momentum", owner, center_momentum, low=0, high=1)
    if x.shape[0] < 2:
        raise param_error("X_natural", owner, "at least 2 images", f"{x.shape[0]}")
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    student = DinoLite(x.shape[1], n_prototypes)
    teacher = copy.deepcopy(student).requires_grad_(False)
    opt = torch.optim.AdamW(student.parameters(), lr=lr, weight_decay=0.04)
    center = torch.zeros(n_prototypes)
    tau_s = student.tau_student
    for _ in range(steps):
        idx = torch.randint(0, x.shape[0], (min(batch_size, x.shape[0]),), generator=gen)
        batch = x[idx]
        views = torch.cat([augment(batch, gen), augment(batch, gen)])
        with torch.no_grad():
            cos_t = teacher.cosines(views)
            if balance == "center":
                targets = F.softmax((cos_t - center) / tau_teacher, dim=1)
                center = center_momentum * center + (1 - center_momentum) * cos_t.mean(dim=0)
            else:
                half = cos_t.shape[0] // 2
                targets = torch.cat([sinkhorn(cos_t[:half]), sinkhorn(cos_t[half:])])
        log_p = F.log_softmax(student.cosines(views) / tau_s, dim=1)
        half = views.shape[0] // 2
        t1, t2 = targets[:half], targets[half:]
        loss = -0.5 * ((t1 * log_p[half:]).sum(1).mean() + (t2 * log_p[:half]).sum(1).mean())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pt, ps in zip(teacher.parameters(), student.parameters(), strict=True):
                pt.mul_(momentum).add_(ps.detach(), alpha=1 - momentum)
    if balance == "center":
        teacher.center.copy_(center)
    return teacher.eval()
