r"""The two small networks AD-TP adds to the encoder: the per-layer importance predictor, trained
to imitate the teacher's Integrated-Gradients token ranking, and the token retainer, which reads a
sequence and predicts how many tokens to keep at each pruning layer.

* Importance predictor (one per pruning layer :math:`p`):
  :math:`a^{(p)}_i = W_2\,\mathrm{GELU}(W_1\,\mathrm{LN}(h^{(p)}_i) + b_1) + b_2`,
  :math:`D\to 64\to 1`.
* Token retainer: features :math:`f` (mean embedding, the [CLS] state entering the first pruning
  layer, :math:`\log n`, the entropy of the first predictor's softmax) go through
  :math:`\mathrm{LN}\to 64\to K` to logits :math:`\rho`; the keep ratios are
  :math:`r_k = \max(r_{\min}, \prod_{j\le k}\sigma(\rho_j))`, non-increasing along layers and
  relative to the original length :math:`n`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperkit import check_int, check_real, check_tensor

__all__ = ["ImportancePredictor", "TokenRetainer"]


def _dtype(module: nn.Module) -> torch.dtype | str:
    """The input dtype a module accepts: its parameters' (any float under autocast)."""
    return "float" if torch.is_autocast_enabled("cpu") else next(module.parameters()).dtype


class ImportancePredictor(nn.Module):
    r"""Token scores :math:`a_i = \mathrm{MLP}(\mathrm{LN}(h_i))` (``dim`` :math:`\to` ``hidden``
    :math:`\to 1`, GELU).

    Shapes: ``forward(hidden)`` maps (B, N, dim) to (B, N). NaN policy: refused.
    """

    def __init__(self, dim: int, hidden: int = 64) -> None:
        super().__init__()
        owner = "ImportancePredictor"
        dim = check_int("dim", owner, dim, low=1, high=65536)
        hidden = check_int("hidden", owner, hidden, low=1, high=65536)
        self.dim = dim
        self.net = nn.Sequential(
            nn.LayerNorm(dim), nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, 1)
        )

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        check_tensor(
            "hidden",
            "ImportancePredictor",
            hidden,
            shape=(None, None, self.dim),
            dtype=_dtype(self),
        )
        return self.score(hidden)

    def score(self, hidden: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the argument checks (the encoder's inner loop)."""
        return self.net(hidden).squeeze(-1)


class TokenRetainer(nn.Module):
    r"""Per-sequence keep ratios :math:`r_k = \max(r_{\min}, \prod_{j\le k}\sigma(\rho_j))`,
    :math:`\rho = \mathrm{MLP}(\mathrm{LN}(f))`, for ``num_prune_layers`` pruning layers.

    ``features`` (B, 2*dim + 2) is built by :meth:`adtp.model.PrunableEncoder.retainer_features`.
    The last bias starts at :math:`\sigma^{-1}(\text{init\_keep})`, so an untrained retainer keeps
    ``init_keep``, ``init_keep**2``, ... of the tokens. Output (B, K), in :math:`[r_{\min}, 1]`,
    non-increasing along K. NaN policy: refused.

    >>> r = TokenRetainer(4, 3)(torch.randn(2, 10))
    >>> r.shape, bool((r[:, 1:] <= r[:, :-1]).all())
    (torch.Size([2, 3]), True)
    """

    def __init__(
        self,
        dim: int,
        num_prune_layers: int,
        hidden: int = 64,
        r_min: float = 0.05,
        init_keep: float = 0.6,
    ) -> None:
        super().__init__()
        owner = "TokenRetainer"
        dim = check_int("dim", owner, dim, low=1, high=65536)
        k = check_int("num_prune_layers", owner, num_prune_layers, low=1, high=1024)
        hidden = check_int("hidden", owner, hidden, low=1, high=65536)
        self.r_min = check_real("r_min", owner, r_min, low=0, high=1, low_open=True, high_open=True)
        init_keep = check_real(
            "init_keep", owner, init_keep, low=0, high=1, low_open=True, high_open=True
        )
        self.features = 2 * dim + 2
        self.net = nn.Sequential(
            nn.LayerNorm(self.features),
            nn.Linear(self.features, hidden),
            nn.GELU(),
            nn.Linear(hidden, k),
        )
        with torch.no_grad():
            self.net[-1].weight.mul_(0.1)
            self.net[-1].bias.fill_(math.log(init_keep / (1 - init_keep)))

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        check_tensor(
            "features", "TokenRetainer", features, shape=(None, self.features), dtype=_dtype(self)
        )
        return self.ratios(features)

    def ratios(self, features: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the argument checks."""
        rho = self.net(features)
        return torch.cumprod(torch.sigmoid(rho), dim=-1).clamp_min(self.r_min)
