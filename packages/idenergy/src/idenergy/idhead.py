"""Optional "ID fitting" of the prototype head, still from natural images only.

The encoder phi and projection z stay frozen; the prototype matrix W (initialised at the
self-supervised prototypes w_k / tau_s, so the starting logits are the backbone's) is trained with
the energy-bounded loss of energy-based OOD fine-tuning,

    L(W) = E_x [max(0, E(x) - m_in)^2] + E_x [max(0, m_out - E(a(x)))^2],

where x are natural images and a(x) strong corruptions of them (4x4 patch shuffling, or JPEG-like
quantisation of 4x4 block-DCT coefficients), m_in = -8 and m_out = -3: natural patterns are
pushed to low energy, destroyed ones to high energy. No generated image is used.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from idenergy._inputs import as_images
from idenergy.energy import id_energy
from paperkit import check_int, check_real, param_error

__all__ = ["IDHeadBackbone", "corrupt", "fit_id_head"]

#: Side of the patches shuffled and of the DCT blocks quantised by :func:`corrupt`.
BLOCK = 4


def _dct_matrix(n: int) -> torch.Tensor:
    """Orthonormal DCT-II matrix D (n x n): coefficients c = D x, inverse x = D^T c."""
    k = torch.arange(n, dtype=torch.float32)[:, None]
    i = torch.arange(n, dtype=torch.float32)[None, :]
    d = torch.cos(math.pi * (2 * i + 1) * k / (2 * n)) * math.sqrt(2 / n)
    d[0] /= math.sqrt(2)
    return d


def corrupt(x: torch.Tensor, generator: torch.Generator, step: float = 0.25) -> torch.Tensor:
    """Strong corruptions a(x) of ``x (B, C, H, W)`` (sides divisible by 4): the first half of the
    batch gets its 4x4 patches shuffled (one random permutation per image), the second half
    JPEG-like quantisation (4x4 block DCT, coefficients rounded to multiples of ``step``),
    clipped to [0, 1]. NaN propagates (a helper of :func:`fit_id_head`, which refuses it).

    >>> y = corrupt(torch.rand(4, 1, 8, 8), torch.Generator().manual_seed(0))
    >>> y.shape
    torch.Size([4, 1, 8, 8])
    """
    b, c, h, w = x.shape
    p, half = BLOCK, x.shape[0] // 2
    gh, gw = h // p, w // p
    patches = x.reshape(b, c, gh, p, gw, p).permute(0, 2, 4, 1, 3, 5).reshape(b, gh * gw, c, p, p)
    perm = torch.argsort(torch.rand(b, gh * gw, generator=generator), dim=1)
    shuffled = patches[torch.arange(b)[:, None], perm]
    shuffled = shuffled.reshape(b, gh, gw, c, p, p).permute(0, 3, 1, 4, 2, 5).reshape(b, c, h, w)
    d = _dct_matrix(p)
    blocks = x.reshape(b, c, gh, p, gw, p).transpose(3, 4)  # (b, c, gh, gw, p, p)
    coef = d @ blocks @ d.T
    quant = d.T @ (torch.round(coef / step) * step) @ d
    quant = quant.transpose(3, 4).reshape(b, c, h, w)
    return torch.cat([shuffled[:half], quant[half:]]).clamp(0.0, 1.0)


class IDHeadBackbone(nn.Module):
    """A frozen backbone with a trainable prototype matrix: ``logits(x) = z(x) W^T``.

    ``base`` must provide ``embed(x)`` (the unit-norm projection z), ``features(x)``, and the
    prototypes and ``tau_student`` W starts from. ``features`` is the base's phi. Like the
    base's, the network methods propagate NaN (the detectors check their inputs).
    """

    def __init__(self, base: Any) -> None:
        super().__init__()
        for method in ("embed", "features"):
            if not callable(getattr(base, method, None)):
                raise param_error(
                    "backbone",
                    "IDHeadBackbone",
                    f"a backbone with {method}(x)",
                    type(base).__name__,
                    cls=TypeError,
                )
        self.base = base.requires_grad_(False).eval()
        w0 = F.normalize(base.prototypes.detach(), dim=1) / base.tau_student
        self.W = nn.Parameter(w0.clone())

    def features(self, x: torch.Tensor) -> torch.Tensor:
        return self.base.features(x)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        return self.base.embed(x) @ self.W.T

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.logits(x)


def fit_id_head(
    backbone: Any,
    X_natural: Any,
    steps: int = 300,
    seed: int = 0,
    m_in: float = -8.0,
    m_out: float = -3.0,
    *,
    lr: float = 1e-2,
    corruptions: int = 2,
) -> IDHeadBackbone:
    """Fit W by the energy-bounded loss on natural images ``X_natural (N, C, H, W)`` (in [0, 1],
    sides divisible by 4) and ``corruptions`` corrupted copies of each; returns the
    :class:`IDHeadBackbone`. The frozen embeddings are computed once; Adam on W for ``steps`` full
    passes. Seeded. NaN refused.
    """
    owner = "fit_id_head"
    if not hasattr(backbone, "prototypes") or not callable(getattr(backbone, "embed", None)):
        raise param_error(
            "backbone",
            owner,
            "a DinoLite backbone (embed, prototypes)",
            type(backbone).__name__,
            cls=TypeError,
        )
    x = as_images("X_natural", owner, X_natural)
    if x.shape[2] % BLOCK or x.shape[3] % BLOCK:
        raise param_error(
            "X_natural", owner, f"image sides divisible by {BLOCK}", f"shape {tuple(x.shape)}"
        )
    steps = check_int("steps", owner, steps, low=1, high=1_000_000)
    seed = check_int("seed", owner, seed, low=0)
    m_in = check_real("m_in", owner, m_in)
    m_out = check_real("m_out", owner, m_out, low=m_in)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=10)
    corruptions = check_int("corruptions", owner, corruptions, low=1, high=64)
    gen = torch.Generator().manual_seed(seed)
    head = IDHeadBackbone(backbone)
    with torch.no_grad():
        z_in = torch.cat([head.base.embed(c) for c in x.split(512)])
        bad = torch.cat(
            [corrupt(x[torch.randperm(x.shape[0], generator=gen)], gen) for _ in range(corruptions)]
        )
        z_out = torch.cat([head.base.embed(c) for c in bad.split(512)])
    opt = torch.optim.Adam([head.W], lr=lr)
    for _ in range(steps):
        e_in, e_out = id_energy(z_in @ head.W.T), id_energy(z_out @ head.W.T)
        loss = F.relu(e_in - m_in).pow(2).mean() + F.relu(m_out - e_out).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return head.eval()
