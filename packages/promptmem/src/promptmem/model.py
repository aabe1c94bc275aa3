r"""Part B's backbone: a small frozen pre-LN transformer read through a soft prompt.

The input is the sequence :math:`[P; E(X)] + \mathrm{pos}` of the :math:`m` prompt vectors
:math:`P \in \mathbb{R}^{m \times d}` followed by the embedded inputs (a frozen token embedding,
or a frozen linear map :math:`\mathbb{R}^{d_0} \to \mathbb{R}^d` for real tokens), plus learned
positions. ``layers`` pre-LN blocks :math:`h \leftarrow h + \mathrm{MHA}(\mathrm{LN}(h))`,
:math:`h \leftarrow h + \mathrm{MLP}_{\mathrm{GELU}}(\mathrm{LN}(h))` (torch's
``nn.TransformerEncoderLayer``, ``norm_first=True``, no dropout, bidirectional attention), a
final LayerNorm and a linear head give the logits, read at the last :math:`N` positions (the
paper's prompt-tuning setting, Section 5).

Every weight matrix (embeddings, positions, attention and MLP weights, head) is drawn
:math:`\mathcal{N}(0, \sigma^2)` with ``init_std`` :math:`=\sigma`; biases are 0 and LayerNorm
gains 1. ``init_std="pretrained"`` starts from :math:`\sigma = 0.02` and trains every weight on a
different synthetic task (reversing random token sequences) before freezing. Every parameter has
``requires_grad=False``: only the prompt is trained (:func:`promptmem.tune_prompt`).
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["FrozenTransformer"]

#: Steps, batch size, sequence length and learning rate of the "pretrained" backbone's training.
PRETRAIN = {"steps": 200, "batch": 32, "length": 16, "lr": 1e-3}


class FrozenTransformer(nn.Module):
    r"""A frozen pre-LN transformer encoder with a soft-prompt input.

    Args:
        vocab: output vocabulary :math:`|V|` (at least 2).
        d: model width (divisible by ``heads``).
        layers: number of blocks. heads: attention heads.
        max_len: most positions, prompt included (:math:`m + N \le` ``max_len``).
        init_std: :math:`\sigma > 0` of the weight init, or ``"pretrained"``.
        input_vocab: input token vocabulary (default ``vocab``).
        d0: width of real-valued input tokens (None: token inputs only).
        seed: seed of the init (and of the pretraining).

    Shapes:
        prompt ``(m, d)`` (shared) or ``(B, m, d)``; x ``(B, N)`` integer tokens, or
        ``(B, N, d0)`` real tokens when ``d0`` is set; output logits ``(B, N, vocab)``.

    >>> model = FrozenTransformer(8, d=16, heads=2, max_len=10)
    >>> model(torch.zeros(3, 16), torch.tensor([[1, 2], [3, 4]])).shape
    torch.Size([2, 2, 8])
    >>> any(p.requires_grad for p in model.parameters())
    False
    """

    def __init__(
        self,
        vocab: int,
        d: int = 64,
        layers: int = 2,
        heads: int = 4,
        max_len: int = 128,
        init_std: float | str = 0.02,
        *,
        input_vocab: int | None = None,
        d0: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        owner = "FrozenTransformer"
        self.vocab = check_int("vocab", owner, vocab, low=2, high=10**6)
        self.d = check_int("d", owner, d, low=1, high=4096)
        layers = check_int("layers", owner, layers, low=1, high=64)
        heads = check_int("heads", owner, heads, low=1, high=self.d)
        if self.d % heads:
            raise param_error("heads", owner, f"a divisor of d={self.d}", heads)
        self.max_len = check_int("max_len", owner, max_len, low=1, high=10**5)
        pretrained = init_std == "pretrained"
        if not pretrained:
            init_std = check_real("init_std", owner, init_std, low=0, low_open=True, high=100)
        self.input_vocab = (
            self.vocab
            if input_vocab is None
            else check_int("input_vocab", owner, input_vocab, low=2, high=10**6)
        )
        self.d0 = None if d0 is None else check_int("d0", owner, d0, low=1, high=10**5)
        seed = check_int("seed", owner, seed, low=0)
        self.init_std = init_std
        self.embed = nn.Embedding(self.input_vocab, self.d)
        self.project = None if self.d0 is None else nn.Linear(self.d0, self.d)
        self.pos = nn.Parameter(torch.empty(self.max_len, self.d))
        self.blocks = nn.ModuleList(
            nn.TransformerEncoderLayer(
                self.d,
                heads,
                dim_feedforward=4 * self.d,
                dropout=0.0,
                activation="gelu",
                batch_first=True,
                norm_first=True,
            )
            for _ in range(layers)
        )
        self.norm = nn.LayerNorm(self.d)
        self.head = nn.Linear(self.d, self.vocab)
        gen = torch.Generator().manual_seed(seed)
        self._init(0.02 if pretrained else float(init_std), gen)
        if pretrained:
            _pretrain(self, gen)
        self.requires_grad_(False)
        self.eval()

    def _init(self, std: float, gen: torch.Generator) -> None:
        norms = {
            id(p) for m in self.modules() if isinstance(m, nn.LayerNorm) for p in m.parameters()
        }
        with torch.no_grad():
            for name, p in self.named_parameters():
                if id(p) in norms:
                    p.fill_(1.0 if name.endswith("weight") else 0.0)
                elif p.ndim >= 2:
                    p.copy_(torch.randn(p.shape, generator=gen) * std)
                else:
                    p.zero_()

    def embed_inputs(self, x: torch.Tensor) -> torch.Tensor:
        """The frozen input embedding: ``(B, N)`` tokens or ``(B, N, d0)`` reals to
        ``(B, N, d)``."""
        return (
            self.embed(x) if self.project is None or not x.is_floating_point() else self.project(x)
        )

    def encode(self, h: torch.Tensor) -> torch.Tensor:
        """Add positions and run the blocks and the final LayerNorm on ``(B, L, d)``."""
        h = h + self.pos[: h.shape[1]]
        for block in self.blocks:
            h = block(h)
        return self.norm(h)

    def forward(self, prompt: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        r"""Logits at the last :math:`N` positions of :math:`[P; E(x)]`.

        Args:
            prompt: ``(m, d)`` or ``(B, m, d)`` soft prompt; :math:`m = 0` runs without one.
            x: ``(B, N)`` integer tokens in ``[0, input_vocab)``, or ``(B, N, d0)`` real tokens.

        Returns:
            logits ``(B, N, vocab)`` in the model's dtype.

        NaN policy: NaN or inf in ``prompt`` or ``x`` is refused.
        """
        owner = "FrozenTransformer.forward"
        real = isinstance(x, torch.Tensor) and x.is_floating_point()
        if real and self.d0 is None:
            raise param_error("x", owner, "integer tokens (the model has no d0)", "a float tensor")
        dims: dict[str, Any] = {}
        check_tensor(
            "x",
            owner,
            x,
            shape=("B", "N", self.d0) if real else ("B", "N"),
            dims=dims,
            dtype="float" if real else "int",
        )
        if not real and (int(x.min()) < 0 or int(x.max()) >= self.input_vocab):
            raise param_error(
                "x", owner, f"tokens in [0, {self.input_vocab})", "out-of-range tokens"
            )
        check_tensor("prompt", owner, prompt, ndim=(2, 3), nonempty=False)
        shape = ("B", "m", self.d) if prompt.ndim == 3 else ("m", self.d)
        check_tensor("prompt", owner, prompt, shape=shape, dims=dims, nonempty=False)
        N, m = x.shape[1], prompt.shape[-2]
        if m + N > self.max_len:
            raise param_error(
                "prompt", owner, f"at most max_len - N = {self.max_len - N} tokens long", m
            )
        return self.logits(prompt, x)

    def logits(self, prompt: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the argument checks (for training loops that checked once)."""
        dtype = self.pos.dtype
        B, m = x.shape[0], prompt.shape[-2]
        inputs = self.embed_inputs(x.to(dtype) if x.is_floating_point() else x)
        prompt = prompt.to(dtype)
        if prompt.ndim == 2:
            prompt = prompt.unsqueeze(0).expand(B, m, self.d)
        h = self.encode(torch.cat([prompt, inputs], dim=1))
        return self.head(h[:, m:])


def _pretrain(model: FrozenTransformer, gen: torch.Generator) -> None:
    """Train every weight on sequence reversal (target t = x[L-1-t] mod vocab), no prompt."""
    length = min(PRETRAIN["length"], model.max_len)
    opt = torch.optim.Adam(model.parameters(), lr=PRETRAIN["lr"])
    model.train()
    for _ in range(PRETRAIN["steps"]):
        x = torch.randint(0, model.input_vocab, (PRETRAIN["batch"], length), generator=gen)
        target = x.flip(1) % model.vocab
        logits = model.head(model.encode(model.embed(x)))
        loss = nn.functional.cross_entropy(logits.reshape(-1, model.vocab), target.reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
