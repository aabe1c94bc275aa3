"""Stage 1: the space-agnostic temporal backbone ``f`` (one univariate series at a time).

RevIN -> non-overlapping patches of length ``P`` (``T_p = L / P`` tokens) -> linear patch
embedding + learnable positional embedding -> optional masking (a learned mask token replaces
``round(mask_ratio * T_p)`` random patches) -> the domain-aware prompt (:class:`PromptPool`)
prepended -> a pre-norm Transformer encoder -> two heads:

* forecasting: flatten the ``T_p`` patch tokens, a linear map to ``H`` steps, de-normalised;
* multi-frequency reconstruction: one linear decoder per band maps each patch token back to its
  ``P`` steps, giving the normalised input split into bands (:func:`factost.band_split`).

Pre-training loss (FactoST, Stage 1): ``MSE_forecast + gamma * sum_b MSE_band + w_key * L_key``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

from factost.prompts import PromptPool
from factost.spectral import RevIN, band_split, check_edges
from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["TemporalBackbone"]


def query(tokens: Tensor) -> Tensor:
    """Prompt-pool query of un-prompted patch embeddings ``(B, T_p, d)``: the token mean of
    ``GELU(tokens)`` (a plain mean of linear patch embeddings of a RevIN-normalised series is
    nearly constant, the patches averaging to about zero)."""
    return nn.functional.gelu(tokens).mean(1)


class TemporalBackbone(nn.Module):
    r"""The temporal backbone of FactoST (Stage 1).

    Args:
        input_len: input steps ``L`` (a multiple of ``patch``).
        horizon: forecast steps ``H`` (>= 1).
        patch: patch length and stride ``P``.
        d_model: token width ``d``.
        layers: Transformer encoder layers.
        heads: attention heads (divides ``d_model``).
        n_domains: pre-training domains of the prompt pool.
        prompt_tokens: prompt tokens per domain ``n_p``.
        dropout: dropout of the encoder.
        band_edges: band edges of the reconstruction target (fractions of ``L``).
        use_prompts: prepend the domain prompt (False drops the pool: ``n_p = 0``).

    ``forward(x (B, L), domain=None, mask_ratio=0.)`` returns a dict with ``forecast`` ``(B, H)``
    (de-normalised), ``bands`` ``(B, n_bands, L)`` (the normalised input's bands, reconstructed),
    ``tokens`` ``(B, n_p + T_p, d)``, ``mask`` ``(B, T_p)`` (masked patches), ``weights``
    ``(B, M)`` (prompt weights) and ``key_loss`` (a scalar when ``domain`` is given, else None).
    NaN/inf in ``x`` are refused; ``x`` is cast to the model's dtype.

    >>> f = TemporalBackbone(24, 12, 4, d_model=16, layers=1, heads=2, n_domains=2)
    >>> out = f(torch.randn(3, 24))
    >>> out["forecast"].shape, out["bands"].shape, out["tokens"].shape
    (torch.Size([3, 12]), torch.Size([3, 3, 24]), torch.Size([3, 10, 16]))
    """

    def __init__(
        self,
        input_len: int,
        horizon: int,
        patch: int,
        d_model: int = 128,
        layers: int = 3,
        heads: int = 4,
        n_domains: int = 1,
        prompt_tokens: int = 4,
        dropout: float = 0.1,
        band_edges: tuple[float, ...] = (1 / 8, 1 / 4),
        use_prompts: bool = True,
    ) -> None:
        super().__init__()
        owner = "TemporalBackbone"
        self.input_len = check_int("input_len", owner, input_len, low=2, high=100_000)
        self.horizon = check_int("horizon", owner, horizon, low=1, high=100_000)
        self.patch = check_int("patch", owner, patch, low=1, high=input_len)
        if input_len % patch:
            raise param_error(
                "input_len", owner, f"divisible by the 'patch' parameter ({patch})", input_len
            )
        self.d_model = check_int("d_model", owner, d_model, low=1, high=8192)
        check_int("layers", owner, layers, low=1, high=64)
        check_int("heads", owner, heads, low=1, high=d_model)
        if d_model % heads:
            raise param_error("heads", owner, f"a divisor of d_model={d_model}", heads)
        check_int("n_domains", owner, n_domains, low=1, high=10_000)
        check_int("prompt_tokens", owner, prompt_tokens, low=1, high=1024)
        check_real("dropout", owner, dropout, low=0, high=1, high_open=True)
        self.band_edges = check_edges("band_edges", owner, band_edges)
        if not isinstance(use_prompts, bool):
            raise param_error("use_prompts", owner, "True or False", use_prompts, cls=TypeError)
        self.n_tokens = input_len // patch
        self.n_bands = len(self.band_edges) + 1
        self.revin = RevIN()
        self.embed = nn.Linear(patch, d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(self.n_tokens, d_model))
        self.mask_token = nn.Parameter(torch.zeros(d_model))
        self.pool = PromptPool(n_domains, prompt_tokens, d_model) if use_prompts else None
        self.n_prompt = prompt_tokens if use_prompts else 0
        layer = nn.TransformerEncoderLayer(
            d_model, heads, 2 * d_model, dropout, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(self.n_tokens * d_model, horizon)
        self.band_heads = nn.ModuleList(nn.Linear(d_model, patch) for _ in range(self.n_bands))
        #: pooled pre-training latents ``(M, d)`` for the alignment loss (set by pre-training)
        self.register_buffer("latent_bank", None)

    def _check_x(self, x: Tensor, owner: str) -> None:
        check_tensor("x", owner, x, shape=(None, self.input_len))

    def embed_patches(self, xn: Tensor, mask_ratio: float = 0.0) -> tuple[Tensor, Tensor]:
        """Patch embeddings ``(B, T_p, d)`` of normalised series and the mask ``(B, T_p)``:
        exactly ``round(mask_ratio * T_p)`` random patches per series replaced by the mask token.
        """
        B = xn.shape[0]
        tokens = self.embed(xn.unfold(-1, self.patch, self.patch)) + self.pos
        n_mask = round(mask_ratio * self.n_tokens)
        mask = torch.zeros(B, self.n_tokens, dtype=torch.bool, device=xn.device)
        if n_mask:
            order = torch.rand(B, self.n_tokens, device=xn.device).argsort(-1)[:, :n_mask]
            mask.scatter_(1, order, True)
            tokens = torch.where(mask[..., None], self.mask_token.to(tokens.dtype), tokens)
        return tokens, mask

    def encode(
        self, x: Tensor, domain: Tensor | None = None, mask_ratio: float = 0.0
    ) -> dict[str, Tensor | None | tuple[Tensor, Tensor]]:
        """Encoder pass: ``z`` ``(B, T_p, d)`` patch tokens, ``tokens`` with the prompt,
        ``stats`` (RevIN), ``mask``, ``weights``, ``key_loss``."""
        xn, stats = self.revin.norm(x)
        emb, mask = self.embed_patches(xn, mask_ratio)
        weights, key_loss = None, None
        if self.pool is not None:
            prompt, weights = self.pool(query(emb))
            emb = torch.cat([prompt, emb], dim=1)
            if domain is not None:
                key_loss = self.pool.key_loss(weights, domain)
        tokens = self.norm(self.encoder(emb))
        return {
            "z": tokens[:, self.n_prompt :],
            "tokens": tokens,
            "xn": xn,
            "stats": stats,
            "mask": mask,
            "weights": weights,
            "key_loss": key_loss,
        }

    def forecast_head(self, z: Tensor) -> Tensor:
        """Normalised forecast ``(..., H)`` from patch tokens ``(..., T_p, d)``."""
        return self.head(z.flatten(-2))

    def reconstruct(self, z: Tensor) -> Tensor:
        """Bands ``(B, n_bands, L)`` of the normalised input from patch tokens ``(B, T_p, d)``."""
        return torch.stack([h(z).flatten(-2) for h in self.band_heads], dim=1)

    def forward(
        self, x: Tensor, domain: Tensor | None = None, mask_ratio: float = 0.0
    ) -> dict[str, Tensor | None]:
        owner = "TemporalBackbone"
        self._check_x(x, owner)
        x = x.to(self.pos.dtype)  # documented cast to the model's dtype
        if domain is not None:
            check_tensor("domain", owner, domain, shape=(x.shape[0],), dtype="int")
        check_real("mask_ratio", owner, mask_ratio, low=0, high=1, high_open=True)
        enc = self.encode(x, domain, mask_ratio)
        return {
            "forecast": self.revin.denorm(self.forecast_head(enc["z"]), enc["stats"]),
            "bands": self.reconstruct(enc["z"]),
            "tokens": enc["tokens"],
            "mask": enc["mask"],
            "weights": enc["weights"],
            "key_loss": enc["key_loss"],
        }

    def pretrain_loss(
        self,
        x: Tensor,
        y: Tensor,
        domain: Tensor,
        mask_ratio: float = 0.4,
        gamma: float = 0.5,
        key_weight: float = 0.1,
    ) -> Tensor:
        r"""Stage-1 loss of a batch: :math:`\mathrm{MSE}(\hat y, \tilde y) + \gamma \sum_b
        \mathrm{MSE}(\hat x_b, \tilde x_b) + w\,L_{key}` in RevIN units (``y`` normalised with
        the input's statistics); the reconstruction pass sees ``mask_ratio`` of patches masked."""
        enc = self.encode(x, domain)
        mean, std = enc["stats"]
        target = (y - mean) / (std + self.revin.eps)
        loss = torch.mean((self.forecast_head(enc["z"]) - target) ** 2)
        if enc["key_loss"] is not None:
            loss = loss + key_weight * enc["key_loss"]
        if gamma > 0:
            masked = self.encode(x, None, mask_ratio)
            bands = band_split(enc["xn"], self.band_edges)
            loss = loss + gamma * self.n_bands * torch.mean(
                (self.reconstruct(masked["z"]) - bands) ** 2
            )
        return loss
