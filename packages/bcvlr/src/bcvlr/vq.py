r"""The VQ-EMA quantiser of the latent action model (Sec. 3.1 of the paper; van den Oord et
al., 2017, with exponential-moving-average codebooks).

A latent action :math:`la \in \mathbb{R}^{D}`, :math:`D = N L E` (``num_codebooks`` N,
``num_latents`` L, ``emb_dim`` E), is read as N x L vectors of width E: codebook n quantises the
vectors :math:`x_{n,l} = la[nE{:}(n+1)E]` strided by L (the layout ``(N, E, L)``). Each is
replaced by its nearest code :math:`e_{n,k^*}`, :math:`k^* = \arg\min_k \|x - e_{n,k}\|^2`. In
training mode the codebooks then (after the codes are read) follow the EMA updates

.. math::
    c_{n,k} \leftarrow \gamma c_{n,k} + (1-\gamma) n_{n,k},\quad
    c \leftarrow \frac{c + \epsilon}{\textstyle\sum_k c + K\epsilon} \sum_k c,\quad
    w_{n,k} \leftarrow \gamma w_{n,k} + (1-\gamma) \textstyle\sum_{i: k^*_i = k} x_i,\quad
    e_{n,k} = w_{n,k} / c_{n,k},

and the loss is the commitment term :math:`\beta \|x - \mathrm{sg}(e_{k^*})\|^2` (mean). The
output uses the straight-through estimator :math:`z_q = x + \mathrm{sg}(e_{k^*} - x)`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_int, check_real, check_tensor

__all__ = ["VQEmbeddingEMA"]


class VQEmbeddingEMA(nn.Module):
    """Vector quantiser with EMA codebooks and a straight-through gradient (module docstring).

    ``forward(x (B, D))`` returns ``(z_q (B, D), loss, perplexity, indices (B, N, L))``;
    perplexity is :math:`\\sum_n \\exp(H(\\bar p_n))` of the batch's code usage. NaN policy:
    refused (``x`` must be finite).

    >>> vq = VQEmbeddingEMA(num_codebooks=2, num_embs=8, emb_dim=4, num_latents=2)
    >>> z_q, loss, perp, idx = vq(torch.randn(5, 16))
    >>> z_q.shape, idx.shape
    (torch.Size([5, 16]), torch.Size([5, 2, 2]))
    """

    def __init__(
        self,
        num_codebooks: int = 2,
        num_embs: int = 64,
        emb_dim: int = 16,
        num_latents: int = 4,
        commitment: float = 0.05,
        decay: float = 0.999,
        epsilon: float = 1e-5,
    ) -> None:
        super().__init__()
        owner = "VQEmbeddingEMA"
        self.num_codebooks = check_int("num_codebooks", owner, num_codebooks, low=1, high=64)
        self.num_embs = check_int("num_embs", owner, num_embs, low=1, high=65536)
        self.emb_dim = check_int("emb_dim", owner, emb_dim, low=1, high=4096)
        self.num_latents = check_int("num_latents", owner, num_latents, low=1, high=256)
        self.commitment = check_real("commitment", owner, commitment, low=0)
        self.decay = check_real("decay", owner, decay, low=0, high=1, high_open=True)
        self.epsilon = check_real("epsilon", owner, epsilon, low=0, low_open=True)
        bound = 5.0 / num_embs
        embedding = torch.empty(num_codebooks, num_embs, emb_dim).uniform_(-bound, bound)
        self.register_buffer("embedding", embedding)
        self.register_buffer("ema_count", torch.ones(num_codebooks, num_embs))
        self.register_buffer("ema_weight", embedding.clone())
        self.register_buffer("initialised", torch.tensor(False))

    @property
    def dim(self) -> int:
        """The input width ``num_codebooks * emb_dim * num_latents``."""
        return self.num_codebooks * self.emb_dim * self.num_latents

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """(B, D) -> (N, B*L, E): the vectors each codebook quantises."""
        B = x.shape[0]
        N, E, L = self.num_codebooks, self.emb_dim, self.num_latents
        return x.reshape(B, N, E, L).permute(1, 0, 3, 2).reshape(N, B * L, E)

    def merge(self, v: torch.Tensor, B: int) -> torch.Tensor:
        """(N, B*L, E) -> (B, D): the inverse of :meth:`split`."""
        N, E, L = self.num_codebooks, self.emb_dim, self.num_latents
        return v.reshape(N, B, L, E).permute(1, 0, 3, 2).reshape(B, N * E * L)

    def forward(self, x: torch.Tensor):
        check_tensor("x", "VQEmbeddingEMA", x, shape=("B", self.dim))
        B, M = x.shape[0], self.num_embs
        flat = self.split(x.detach().to(self.embedding.dtype))
        dist = (
            flat.pow(2).sum(-1, keepdim=True)
            - 2 * flat @ self.embedding.transpose(1, 2)
            + self.embedding.pow(2).sum(-1)[:, None, :]
        )
        idx = dist.argmin(-1)  # (N, B*L)
        onehot = F.one_hot(idx, M).to(flat.dtype)
        if self.training and not self.initialised:
            self._init_from(flat)
            return self.forward(x)
        # the codes are read before this batch's EMA update, as in the released code
        quant = torch.gather(self.embedding, 1, idx[..., None].expand(-1, -1, self.emb_dim))
        if self.training:
            self._ema_update(flat, onehot)
        quant = self.merge(quant, B).to(x.dtype)
        loss = self.commitment * F.mse_loss(x, quant.detach())
        z_q = x + (quant - x).detach()
        probs = onehot.mean(1)
        perplexity = torch.exp(-(probs * torch.log(probs + 1e-10)).sum(-1)).sum()
        indices = idx.reshape(self.num_codebooks, B, self.num_latents).permute(1, 0, 2)
        return z_q, loss, perplexity, indices

    @torch.no_grad()
    def _init_from(self, flat: torch.Tensor) -> None:
        """Data-dependent start: each codebook's codes are distinct vectors of the first
        training batch (drawn with replacement when the batch has fewer than ``num_embs``)."""
        n = flat.shape[1]
        rows = (
            torch.randperm(n)[: self.num_embs]
            if n >= self.num_embs
            else torch.randint(0, n, (self.num_embs,))
        )
        self.embedding.copy_(flat[:, rows])
        self.ema_weight.copy_(self.embedding)
        self.ema_count.fill_(1.0)
        self.initialised.fill_(True)

    @torch.no_grad()
    def _ema_update(self, flat: torch.Tensor, onehot: torch.Tensor) -> None:
        g, M = self.decay, self.num_embs
        count = g * self.ema_count + (1 - g) * onehot.sum(1)
        n = count.sum(-1, keepdim=True)
        count = (count + self.epsilon) / (n + M * self.epsilon) * n
        self.ema_count.copy_(count)
        self.ema_weight.mul_(g).add_((1 - g) * onehot.transpose(1, 2) @ flat)
        self.embedding.copy_(self.ema_weight / self.ema_count[..., None])
