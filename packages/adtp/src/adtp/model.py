r"""The prunable encoder: a BERT-like classifier that drops tokens at its pruning layers.

Layer :math:`p\in P` first scores the tokens entering it (importance predictor,
:math:`a^{(p)}`), then keeps :math:`k_k = \max(2, \lceil r_k n\rceil)` of the valid tokens, [CLS]
and [SEP] included and always kept; :math:`r_k` comes from the token retainer (AD-TP) or a fixed
schedule (the baselines). Three modes:

* ``"full"``: no pruning (the teacher; also returns the predictor scores on the full states).
* ``"soft"`` (training, LTP-style): mask :math:`m_i = \sigma((a_i-\theta_k)/T_m)` with
  :math:`\theta_k` midway between the :math:`(k_k-2)`-th and :math:`(k_k-1)`-th largest score
  among the live content tokens (those whose every earlier mask was :math:`> 0.5`; [CLS] and
  [SEP] keep mask 1), so that exactly the tokens hard pruning keeps have :math:`m_i > 0.5`.
  :math:`\theta_k` is straight-through to a linear interpolation of the sorted scores at the
  continuous rank :math:`r_kn - 1.5`, so that the retainer gets a gradient. Masks multiply across
  layers; the attention logits get :math:`+\log(M_j + 10^{-6})` for key :math:`j`. When every
  live token is to be kept the layer keeps them with mask exactly 1.
* ``"hard"`` (inference): top-:math:`k_k` gather, order preserved, padding never kept, the batch
  re-padded to its largest kept count. This is where the FLOPs and wall-time saving comes from.

FLOPs per sequence: :func:`adtp.flops.encoder_flops` of the per-layer token counts (the
per-sequence counts, not the re-padded batch width); ``"soft"`` also returns the expected FLOPs
with the soft counts :math:`\max(2, r_kn)`, differentiable in :math:`r`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import nn

from adtp.attribution import attention_importance
from adtp.flops import layer_flops
from adtp.layers import EncoderLayer, key_bias
from adtp.modules import ImportancePredictor, TokenRetainer
from paperkit import check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["PrunableEncoder", "check_keep_ratios", "keep_counts"]

MODES = ("full", "soft", "hard")
SCORES = ("predictor", "attention", "random")


def keep_counts(ratios: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    r""":math:`k = \max(2, \lceil r\,n\rceil)` (B, K) for ratios (B, K) and lengths (B,).

    >>> keep_counts(torch.tensor([[0.5, 0.01]]), torch.tensor([41])).tolist()
    [[21, 2]]
    """
    raw = torch.ceil(ratios.double() * lengths[:, None].double() - 1e-9).long()
    return raw.clamp_min(2)


def check_keep_ratios(
    keep_ratios: Any, batch: int, k: int, owner: str, name: str = "keep_ratios"
) -> torch.Tensor:
    """Keep ratios as a float64 (B, K) tensor in (0, 1]; a (K,) schedule or a sequence of
    floats is broadcast over the batch."""
    if not isinstance(keep_ratios, torch.Tensor):
        if isinstance(keep_ratios, (str, bytes)) or not isinstance(keep_ratios, Sequence):
            raise param_error(
                name, owner, "a tensor or a sequence of floats", type(keep_ratios).__name__
            )
        try:
            keep_ratios = torch.tensor([float(r) for r in keep_ratios], dtype=torch.float64)
        except (TypeError, ValueError) as exc:
            raise param_error(
                name, owner, "a sequence of floats", "non-numbers", cls=TypeError
            ) from exc
    check_tensor(name, owner, keep_ratios, ndim=(1, 2))
    if keep_ratios.shape[-1] != k or (keep_ratios.ndim == 2 and keep_ratios.shape[0] != batch):
        raise param_error(
            name, owner, f"of shape ({k},) or ({batch}, {k})", f"shape {tuple(keep_ratios.shape)}"
        )
    if bool(((keep_ratios <= 0) | (keep_ratios > 1)).any()):
        raise param_error(name, owner, "ratios in (0, 1]", "a ratio outside (0, 1]")
    return keep_ratios.expand(batch, k)


class PrunableEncoder(nn.Module):
    r"""A pre-LN transformer encoder classifier with AD-TP's importance predictors and retainer.

    Args:
        vocab, dim, depth, heads, ffn, max_len, num_classes: the encoder (token and learned
            position embeddings, ``depth`` layers, a linear head on the final [CLS] state).
        prune_layers: the pruning layers :math:`P\subset[1, \text{depth})` (layer 0 always sees
            every token), strictly increasing.
        predictor_hidden, retainer_hidden, r_min: sizes of the predictors and the retainer, and
            the retainer's smallest ratio.

    ``forward(input_ids (B, N) long, attention_mask (B, N) bool, mode, keep_ratios)`` returns a
    dict with ``logits`` (B, C), ``cls_hidden`` (B, D), ``kept_counts`` (B, K) long, ``flops``
    (B,) long, ``keep_ratios`` (B, K) and, by mode, ``scores`` (predictor scores per pruning
    layer, "full"/"soft"), ``masks`` and ``expected_flops`` ("soft"), ``kept_index`` (original
    positions kept at each pruning layer, -1 padded, "hard"). The first token of every row is
    [CLS] and the last valid one [SEP]. ``score`` picks the ranking used by "hard" mode:
    ``"predictor"``, ``"attention"`` (accumulated attention of the previous layer) or
    ``"random"`` (seeded by ``seed``). NaN policy: no float inputs; ``keep_ratios`` with NaN are
    refused.
    """

    def __init__(
        self,
        vocab: int,
        dim: int,
        depth: int,
        heads: int,
        ffn: int,
        max_len: int,
        num_classes: int,
        prune_layers: Sequence[int],
        *,
        predictor_hidden: int = 64,
        retainer_hidden: int = 64,
        r_min: float = 0.05,
    ) -> None:
        super().__init__()
        owner = "PrunableEncoder"
        self.vocab = check_int("vocab", owner, vocab, low=4, high=10**7)
        self.dim = check_int("dim", owner, dim, low=1, high=16384)
        self.depth = check_int("depth", owner, depth, low=2, high=256)
        heads = check_int("heads", owner, heads, low=1, high=dim)
        if dim % heads:
            raise param_error("heads", owner, f"a divisor of dim={dim}", heads)
        self.ffn = check_int("ffn", owner, ffn, low=1, high=65536)
        self.max_len = check_int("max_len", owner, max_len, low=2, high=65536)
        num_classes = check_int("num_classes", owner, num_classes, low=2, high=10**6)
        if (
            isinstance(prune_layers, (str, bytes))
            or not isinstance(prune_layers, Sequence)
            or not prune_layers
        ):
            raise param_error(
                "prune_layers", owner, "a non-empty sequence of layer indices", prune_layers
            )
        layers = [
            check_int("prune_layers", owner, p, low=1, high=self.depth - 1) for p in prune_layers
        ]
        if any(b <= a for a, b in zip(layers, layers[1:], strict=False)):
            raise param_error("prune_layers", owner, "strictly increasing", list(prune_layers))
        self.prune_layers = tuple(layers)
        self.tok_emb = nn.Embedding(vocab, dim)
        self.pos_emb = nn.Embedding(max_len, dim)
        self.layers = nn.ModuleList(EncoderLayer(dim, heads, ffn) for _ in range(depth))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, num_classes)
        self.predictors = nn.ModuleList(ImportancePredictor(dim, predictor_hidden) for _ in layers)
        self.retainer = TokenRetainer(dim, len(layers), retainer_hidden, r_min)

    # -- inputs ---------------------------------------------------------------------------
    def _check_inputs(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, owner: str
    ) -> None:
        dims: dict = {}
        check_tensor("input_ids", owner, input_ids, shape=("B", "N"), dims=dims, dtype="int")
        check_tensor(
            "attention_mask", owner, attention_mask, shape=("B", "N"), dims=dims, dtype="bool"
        )
        if input_ids.shape[1] > self.max_len:
            raise param_error(
                "input_ids",
                owner,
                f"at most max_len={self.max_len} columns",
                f"{input_ids.shape[1]}",
            )
        if bool(((input_ids < 0) | (input_ids >= self.vocab)).any()):
            raise param_error(
                "input_ids", owner, f"token ids in [0, {self.vocab})", "an id outside"
            )
        lengths = attention_mask.sum(1)
        if bool((lengths < 2).any()) or not bool(attention_mask[:, 0].all()):
            raise param_error(
                "attention_mask",
                owner,
                "rows starting with [CLS] and >= 2 valid tokens",
                "a row without",
            )
        contiguous = (
            torch.arange(attention_mask.shape[1], device=lengths.device)[None] < lengths[:, None]
        )
        if not bool((contiguous == attention_mask).all()):
            raise param_error("attention_mask", owner, "valid tokens first, padding last", "a gap")

    def embed(self, input_ids: torch.Tensor) -> torch.Tensor:
        """Token embeddings :math:`E` (B, N, D), before the position embeddings (IG's input)."""
        return self.tok_emb(input_ids)

    @property
    def pad_embedding(self) -> torch.Tensor:
        """The [PAD] (id 0) token embedding: IG's default baseline."""
        return self.tok_emb.weight[0]

    # -- forward --------------------------------------------------------------------------
    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor,
        mode: str = "full",
        keep_ratios: torch.Tensor | Sequence[float] | None = None,
        *,
        score: str = "predictor",
        temperature: float = 1.0,
        seed: int = 0,
    ) -> dict[str, Any]:
        owner = "PrunableEncoder"
        self._check_inputs(input_ids, attention_mask, owner)
        check_choice("mode", owner, mode, MODES)
        check_choice("score", owner, score, SCORES)
        temperature = check_real("temperature", owner, temperature, low=0, low_open=True)
        check_int("seed", owner, seed, low=0)
        if keep_ratios is not None:
            keep_ratios = check_keep_ratios(
                keep_ratios, input_ids.shape[0], len(self.prune_layers), owner
            )
        return self.forward_embeddings(
            self.embed(input_ids),
            attention_mask,
            mode,
            keep_ratios,
            score=score,
            temperature=temperature,
            seed=seed,
        )

    def forward_embeddings(
        self,
        embeds: torch.Tensor,
        attention_mask: torch.Tensor,
        mode: str = "full",
        keep_ratios: torch.Tensor | None = None,
        *,
        score: str = "predictor",
        temperature: float = 1.0,
        seed: int = 0,
    ) -> dict[str, Any]:
        """:meth:`forward` from token embeddings (B, N, D), without the argument checks (the IG
        path calls it with interpolated embeddings)."""
        N = embeds.shape[1]
        x = embeds + self.pos_emb.weight[:N]
        if mode == "hard":
            return self._hard(x, embeds, attention_mask, keep_ratios, score, seed)
        return self._dense(x, embeds, attention_mask, keep_ratios, mode == "soft", temperature)

    def retainer_features(
        self,
        embeds: torch.Tensor,
        hidden: torch.Tensor,
        attention_mask: torch.Tensor,
        scores: torch.Tensor,
    ) -> torch.Tensor:
        r""":math:`f = [\bar E, h_{\mathrm{CLS}}^{(p_1-1)}, \log n, H(\mathrm{softmax}(a^{(p_1)}))]`
        (B, 2D+2): mean token embedding over the valid tokens, the [CLS] state entering the
        first pruning layer, the log length and the entropy of the first predictor's softmax
        over the valid tokens."""
        m = attention_mask.to(embeds.dtype)
        n = m.sum(1)
        mean = (embeds * m[..., None]).sum(1) / n[:, None]
        logp = torch.log_softmax(scores.masked_fill(~attention_mask, float("-inf")), -1)
        entropy = -(logp.exp() * logp.masked_fill(~attention_mask, 0)).sum(-1)
        return torch.cat([mean, hidden[:, 0], torch.log(n)[:, None], entropy[:, None]], -1)

    def _finish(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        cls = self.norm(x[:, 0])
        return self.head(cls), cls

    def _flops(self, tokens: torch.Tensor) -> torch.Tensor:
        """Per-row FLOPs (B,) from the per-layer token counts (B, L)."""
        return layer_flops(tokens.long(), self.dim, self.ffn).sum(1)

    def _dense(
        self,
        x: torch.Tensor,
        embeds: torch.Tensor,
        attention_mask: torch.Tensor,
        keep_ratios: torch.Tensor | None,
        soft: bool,
        temperature: float,
    ) -> dict[str, Any]:
        B, N = attention_mask.shape
        lengths = attention_mask.sum(1)
        positions = torch.arange(N, device=x.device)[None]
        special = (positions == 0) | (positions == lengths[:, None] - 1)
        content = attention_mask & ~special
        cum = attention_mask.to(x.dtype)
        alive = content
        bias = key_bias(attention_mask, None, x.dtype)
        scores, masks, soft_counts = [], [], []
        ratios = keep_ratios
        for layer_index, layer in enumerate(self.layers):
            if layer_index in self.prune_layers:
                k = self.prune_layers.index(layer_index)
                a = self.predictors[k].score(x)
                scores.append(a)
                if soft:
                    if ratios is None:
                        ratios = self.retainer.ratios(
                            self.retainer_features(embeds, x, attention_mask, a)
                        )
                    r = ratios[:, k].to(x.dtype)
                    m = self._soft_mask(a, r, lengths, alive, temperature)
                    alive = alive & (m > 0.5)
                    cum = cum * torch.where(special, torch.ones_like(m), m) * attention_mask
                    masks.append(cum)
                    bias = key_bias(attention_mask, cum, x.dtype)
                    soft_counts.append(torch.clamp_min(r * lengths.to(x.dtype), 2.0))
            x, _ = layer(x, bias)
        logits, cls = self._finish(x)
        out: dict[str, Any] = {"logits": logits, "cls_hidden": cls, "scores": scores}
        K = len(self.prune_layers)
        if soft:
            counts = keep_counts(ratios.detach(), lengths)
            tokens = self._tokens_per_layer(lengths, counts)
            out.update(
                masks=masks, keep_ratios=ratios, kept_counts=counts, flops=self._flops(tokens)
            )
            out["expected_flops"] = self._expected_flops(lengths.to(x.dtype), soft_counts)
        else:
            counts = lengths[:, None].expand(B, K)
            out.update(
                keep_ratios=None,
                kept_counts=counts,
                flops=self._flops(lengths[:, None].expand(B, self.depth)),
            )
        return out

    @staticmethod
    def _soft_mask(
        a: torch.Tensor,
        r: torch.Tensor,
        lengths: torch.Tensor,
        live: torch.Tensor,
        temperature: float,
    ) -> torch.Tensor:
        """Soft masks of one pruning layer over the live content tokens (module docstring)."""
        n_live = live.sum(1)
        keep = (keep_counts(r.detach()[:, None], lengths)[:, 0] - 2).clamp(max=n_live)
        ordered = a.masked_fill(~live, float("-inf")).sort(-1, descending=True).values
        ordered = torch.where(torch.isfinite(ordered), ordered, torch.zeros_like(ordered))
        last = (n_live - 1).clamp_min(0)[:, None]

        def at(rank: torch.Tensor) -> torch.Tensor:  # the sorted score at a 1-based rank
            return ordered.gather(1, torch.minimum((rank - 1).clamp_min(0), last))[:, 0:1]

        hard = 0.5 * (at(keep[:, None]) + at(keep[:, None] + 1))[:, 0]
        rank = (r * lengths.to(a.dtype) - 1.5).clamp(min=1.0)
        floor = rank.detach().floor().long()[:, None]
        frac = rank - rank.detach().floor()
        smooth = (at(floor) + frac[:, None] * (at(floor + 1) - at(floor)))[:, 0]
        theta = hard + smooth - smooth.detach()
        m = torch.sigmoid((a - theta[:, None]) / temperature)
        m = torch.where((keep >= n_live)[:, None], torch.ones_like(m), m)
        return torch.where((keep <= 0)[:, None], torch.zeros_like(m), m) * live

    def _tokens_per_layer(self, lengths: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
        """(B, L) token counts: n before the first pruning layer, then the kept counts."""
        tokens = lengths[:, None].repeat(1, self.depth)
        for k, p in enumerate(self.prune_layers):
            tokens[:, p:] = torch.minimum(tokens[:, p:], counts[:, k : k + 1])
        return tokens

    def _expected_flops(
        self, lengths: torch.Tensor, soft_counts: list[torch.Tensor]
    ) -> torch.Tensor:
        total = torch.zeros_like(lengths)
        for layer_index in range(self.depth):
            n = lengths
            for k, p in enumerate(self.prune_layers):
                if layer_index >= p:
                    n = soft_counts[k]
            total = total + layer_flops(n, self.dim, self.ffn)
        return total

    def _hard(
        self,
        x: torch.Tensor,
        embeds: torch.Tensor,
        attention_mask: torch.Tensor,
        keep_ratios: torch.Tensor | None,
        score: str,
        seed: int,
    ) -> dict[str, Any]:
        B, N = attention_mask.shape
        lengths = attention_mask.sum(1)
        index = torch.arange(N, device=x.device)[None].expand(B, N)
        mask = attention_mask
        bias = key_bias(mask, None, x.dtype)
        ratios, attn = keep_ratios, None
        generator = torch.Generator().manual_seed(seed)
        counts, kept_index = [], []
        tokens = lengths[:, None].repeat(1, self.depth)
        for layer_index, layer in enumerate(self.layers):
            if layer_index in self.prune_layers:
                k = self.prune_layers.index(layer_index)
                a = self.predictors[k].score(x)
                if ratios is None:
                    ratios = self.retainer.ratios(
                        self.retainer_features(embeds, x, attention_mask, a)
                    )
                if score == "attention":
                    a = attention_importance([attn], mask)
                elif score == "random":
                    a = torch.rand(a.shape, generator=generator).to(a)
                count = torch.minimum(keep_counts(ratios[:, k : k + 1], lengths)[:, 0], mask.sum(1))
                special = (index == 0) | (index == lengths[:, None] - 1)
                key = a.float().masked_fill(special, float("inf")).masked_fill(~mask, float("-inf"))
                width = int(count.max())
                top = key.topk(width, dim=1).indices
                slot = torch.arange(width, device=x.device)[None]
                new_mask = slot < count[:, None]
                chosen = torch.where(new_mask, top, N).sort(1).values.clamp(max=x.shape[1] - 1)
                x = x.gather(1, chosen[..., None].expand(-1, -1, x.shape[-1]))
                index = torch.where(new_mask, index.gather(1, chosen), -1)
                mask = new_mask
                bias = key_bias(mask, None, x.dtype)
                counts.append(count)
                kept_index.append(index)
                tokens[:, layer_index:] = count[:, None]
            x, attn = layer(x, bias, need_attn=score == "attention")
        logits, cls = self._finish(x)
        return {
            "logits": logits,
            "cls_hidden": cls,
            "kept_counts": torch.stack(counts, 1),
            "flops": self._flops(tokens),
            "keep_ratios": ratios,
            "kept_index": kept_index,
        }

    # -- pieces for layer-wise attribution -------------------------------------------------
    def hidden_states(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> list[torch.Tensor]:
        """The states entering each layer (``depth`` tensors (B, N, D)) of the full model."""
        self._check_inputs(input_ids, attention_mask, "PrunableEncoder.hidden_states")
        return self._states(self.embed(input_ids), attention_mask)

    def _states(self, embeds: torch.Tensor, attention_mask: torch.Tensor) -> list[torch.Tensor]:
        x = embeds + self.pos_emb.weight[: embeds.shape[1]]
        bias = key_bias(attention_mask, None, x.dtype)
        states = []
        for layer in self.layers:
            states.append(x)
            x, _ = layer(x, bias)
        return states

    def attention_maps(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor
    ) -> list[torch.Tensor]:
        """The full model's attention probabilities, one (B, H, N, N) tensor per layer."""
        self._check_inputs(input_ids, attention_mask, "PrunableEncoder.attention_maps")
        x = self.embed(input_ids) + self.pos_emb.weight[: input_ids.shape[1]]
        bias = key_bias(attention_mask, None, x.dtype)
        maps = []
        for layer in self.layers:
            x, attn = layer(x, bias, need_attn=True)
            maps.append(attn)
        return maps

    def run_from(
        self, hidden: torch.Tensor, attention_mask: torch.Tensor, start: int
    ) -> torch.Tensor:
        """Logits of the full model run from the state entering layer ``start`` (no checks)."""
        x = hidden
        bias = key_bias(attention_mask, None, x.dtype)
        for layer in self.layers[start:]:
            x, _ = layer(x, bias)
        return self._finish(x)[0]
