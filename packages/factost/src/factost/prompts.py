"""The domain-aware prompt pool of Stage 1 (a key-query pool in the style of L2P).

Each pre-training domain ``m`` owns ``n_p`` prompt tokens ``Pi_m`` (``n_p x d``) and a key
``k_m`` (``d``). A series' query ``q`` (the mean of its un-prompted token embeddings) weighs the
domains by ``a = softmax(<q, k_m> / sqrt(d))``; the prompt ``sum_m a_m Pi_m`` is prepended to the
tokens. During pre-training the key-matching loss ``-log a_{true domain}`` teaches the keys, so a
series from an unseen domain draws the prompts of the domains it resembles.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["PromptPool"]


class PromptPool(nn.Module):
    r"""Keys and prompts of ``n_domains`` domains.

    .. math:: a = \mathrm{softmax}(q K^\top/\sqrt d),\qquad P = \sum_m a_m \Pi_m

    Args:
        n_domains: number of pre-training domains ``M`` (>= 1).
        prompt_tokens: prompt tokens per domain ``n_p`` (>= 1).
        d_model: token width ``d``.

    ``forward(q (B, d))`` returns ``(prompt (B, n_p, d), weights (B, M))``; NaN/inf in ``q`` are
    refused.

    >>> pool = PromptPool(3, 4, 8)
    >>> prompt, a = pool(torch.randn(5, 8))
    >>> prompt.shape, bool(torch.allclose(a.sum(-1), torch.ones(5)))
    (torch.Size([5, 4, 8]), True)
    """

    def __init__(self, n_domains: int, prompt_tokens: int, d_model: int) -> None:
        super().__init__()
        owner = "PromptPool"
        self.n_domains = check_int("n_domains", owner, n_domains, low=1, high=10_000)
        self.prompt_tokens = check_int("prompt_tokens", owner, prompt_tokens, low=1, high=1024)
        self.d_model = check_int("d_model", owner, d_model, low=1, high=65_536)
        self.keys = nn.Parameter(torch.randn(n_domains, d_model) / math.sqrt(d_model))
        self.prompts = nn.Parameter(0.02 * torch.randn(n_domains, prompt_tokens, d_model))

    def weights(self, q: Tensor) -> Tensor:
        """Domain weights ``a`` ``(B, M)`` of queries ``q`` ``(B, d)``; rows sum to 1."""
        check_tensor("q", "PromptPool", q, shape=(None, self.d_model))
        q = q.to(self.keys.dtype)
        return torch.softmax(q @ self.keys.T / math.sqrt(self.d_model), dim=-1)

    def forward(self, q: Tensor) -> tuple[Tensor, Tensor]:
        """``(prompt (B, n_p, d), weights (B, M))`` for queries ``q`` ``(B, d)``."""
        a = self.weights(q)
        return torch.einsum("bm,mpd->bpd", a, self.prompts), a

    def key_loss(self, weights: Tensor, domain: Tensor) -> Tensor:
        r"""Key-matching loss :math:`-\frac1B\sum_i \log a_{i, m_i}` for true domains ``domain``."""
        check_tensor(
            "domain", "PromptPool.key_loss", domain, shape=(weights.shape[0],), dtype="int"
        )
        if bool((domain < 0).any()) or bool((domain >= self.n_domains).any()):
            raise param_error(
                "domain", "PromptPool.key_loss", f"ids in [0, {self.n_domains})", describe(domain)
            )
        picked = weights.gather(1, domain[:, None]).squeeze(1)
        return -torch.log(picked.clamp_min(1e-12)).mean()
