r"""In-context learners: the protocol VUD needs, a prior-fitted transformer and the Bayes oracle.

VUD (paper §3) only needs an in-context predictor :math:`q(y|x,D)`. In the paper it is an LLM
reading a prompt; here it is any object with ``predict(ctx_x, ctx_y, query_x)`` over a *batch of
stacked contexts*, so that the (1+C)·num_z·P contexts of one decomposition go through the model in
one forward pass.

- :class:`TransformerICL`: a prior-fitted network (PFN, Müller et al., ICLR 2022) standing in for
  the LLM: tokens ``Linear(x) + Linear(onehot(y) | y)`` for context pairs and ``Linear(x)`` for
  queries, pre-LN transformer encoder, no positions; each context token attends to the context,
  each query to the context and itself (so an empty context is defined). ``positional=True`` adds
  learned positions to the context tokens, making the model order-sensitive like an LLM.
- :class:`BayesOracleICL`: the exact posterior predictive of a prior (the predictor VUD assumes).

Shapes: ``ctx_x`` (B, n, d), ``ctx_y`` (B, n) (class indices as numbers for classification),
``query_x`` (B, q, d) → probabilities (B, q, C), or ``(mean, var)`` each (B, q) for regression.
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import torch
from torch import nn

from paperkit import check_bool, check_choice, check_int, check_tensor, describe, param_error

__all__ = [
    "BayesOracleICL",
    "ICLPredictor",
    "TransformerICL",
    "check_context",
    "check_one_context",
]

Task = Literal["classification", "regression"]


@runtime_checkable
class ICLPredictor(Protocol):
    """Any in-context learner: ``task``, ``n_classes`` and a batched ``predict``."""

    task: Task
    n_classes: int | None

    def predict(
        self, ctx_x: torch.Tensor, ctx_y: torch.Tensor, query_x: torch.Tensor
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """ctx_x (B,n,d), ctx_y (B,n), query_x (B,q,d) -> probs (B,q,C) | (mean, var) (B,q)."""
        ...


def check_one_context(
    owner: str, pred: object, ctx_x: torch.Tensor, ctx_y: torch.Tensor, x_star: torch.Tensor
) -> dict:
    """Check a predictor and one context (ctx_x (n, d), ctx_y (n,)) with its query x_star (d,);
    return the named sizes (``n``, ``d``) for the caller's further checks."""
    if not isinstance(pred, ICLPredictor):
        raise param_error(
            "pred",
            owner,
            "an ICLPredictor (task, n_classes, predict)",
            describe(pred),
            cls=TypeError,
        )
    dims: dict = {}
    check_tensor("ctx_x", owner, ctx_x, shape=("n", "d"), dims=dims)
    check_tensor("ctx_y", owner, ctx_y, shape=("n",), dims=dims, dtype=None)
    check_tensor("x_star", owner, x_star, shape=("d",), dims=dims)
    return dims


def check_context(
    owner: str,
    ctx_x: torch.Tensor,
    ctx_y: torch.Tensor,
    query_x: torch.Tensor,
    task: str,
    n_classes: int | None,
    d_x: int | None,
    query_name: str = "query_x",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Validate a batch of contexts and queries; return them with ``ctx_y`` and ``query_x`` cast
    to ``ctx_x``'s dtype. An empty context (n = 0) is allowed, an empty batch or query set is not;
    class labels must be integers in [0, C)."""
    dims: dict = {}
    check_tensor("ctx_x", owner, ctx_x, shape=("B", "n", "d"), dims=dims, nonempty=False)
    if ctx_x.shape[0] == 0 or ctx_x.shape[2] == 0:
        raise param_error("ctx_x", owner, "a non-empty batch (B >= 1, d >= 1)", describe(ctx_x))
    check_tensor("ctx_y", owner, ctx_y, shape=("B", "n"), dims=dims, dtype=None, nonempty=False)
    check_tensor(query_name, owner, query_x, shape=("B", "q", "d"), dims=dims)
    if d_x is not None and ctx_x.shape[-1] != d_x:
        raise param_error("ctx_x", owner, f"of feature size d={d_x}", describe(ctx_x))
    if ctx_y.dtype == torch.bool or ctx_y.is_complex():
        raise param_error("ctx_y", owner, "a real tensor", describe(ctx_y), cls=TypeError)
    ctx_y = ctx_y.to(ctx_x.dtype)
    if not bool(torch.isfinite(ctx_y).all()):
        raise param_error("ctx_y", owner, "finite (no NaN or inf)", describe(ctx_y))
    if task == "classification" and ctx_y.numel():
        ok = (ctx_y == ctx_y.round()) & (ctx_y >= 0) & (ctx_y < n_classes)
        if not bool(ok.all()):
            raise param_error("ctx_y", owner, f"class labels in 0..{n_classes - 1}", "other values")
    return ctx_x, ctx_y, query_x.to(ctx_x.dtype)


class TransformerICL(nn.Module):
    r"""A prior-fitted transformer: :math:`q(y^*|x^*,D)` in one forward pass over the context.

    Args:
        d_x: input dimension.
        task: ``"classification"`` (C logits) or ``"regression"`` (mean and log-variance).
        n_classes: C, for classification.
        d_model, n_layers, n_heads: width, depth (pre-LN encoder layers) and heads.
        positional: add learned positions 0..max_len-1 to the context tokens (order-sensitive).
        max_len: the longest context the positions cover.

    Attention: context ↔ context; query → context and itself (never another query).

    >>> model = TransformerICL(1, "classification")
    >>> model.predict(torch.randn(2, 5, 1), torch.ones(2, 5), torch.randn(2, 3, 1)).shape
    torch.Size([2, 3, 2])
    """

    def __init__(
        self,
        d_x: int,
        task: Task = "classification",
        n_classes: int = 2,
        d_model: int = 64,
        n_layers: int = 3,
        n_heads: int = 4,
        positional: bool = False,
        max_len: int = 256,
    ) -> None:
        super().__init__()
        owner = "TransformerICL"
        self.d_x = check_int("d_x", owner, d_x, low=1, high=4096)
        self.task = check_choice("task", owner, task, ("classification", "regression"))
        n_classes = check_int("n_classes", owner, n_classes, low=2, high=4096)
        self.n_classes = n_classes if self.task == "classification" else None
        d_model = check_int("d_model", owner, d_model, low=1, high=8192)
        n_heads = check_int("n_heads", owner, n_heads, low=1, high=256)
        if d_model % n_heads:
            raise param_error("n_heads", owner, f"a divisor of d_model={d_model}", n_heads)
        n_layers = check_int("n_layers", owner, n_layers, low=1, high=64)
        self.positional = check_bool("positional", owner, positional)
        self.max_len = check_int("max_len", owner, max_len, low=1, high=100_000)
        self.embed_x = nn.Linear(d_x, d_model)
        self.embed_y = nn.Linear(n_classes if self.task == "classification" else 1, d_model)
        self.position = nn.Embedding(self.max_len, d_model) if self.positional else None
        layer = nn.TransformerEncoderLayer(
            d_model, n_heads, 2 * d_model, dropout=0.0, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, n_layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, n_classes if self.task == "classification" else 2)
        #: the longest context seen in training (set by :func:`vud.train_pfn`), or None
        self.trained_max_ctx: int | None = None

    def forward(
        self, ctx_x: torch.Tensor, ctx_y: torch.Tensor, query_x: torch.Tensor
    ) -> torch.Tensor:
        """Raw outputs (B, q, C) logits or (B, q, 2) ``[mean, log-variance]``; no checks (used in
        training); :meth:`predict` is the checked public call."""
        n, q = ctx_x.shape[1], query_x.shape[1]
        if self.task == "classification":
            y = nn.functional.one_hot(ctx_y.long(), self.n_classes).to(ctx_x.dtype)
        else:
            y = ctx_y[..., None]
        ctx = self.embed_x(ctx_x) + self.embed_y(y)
        if self.position is not None:
            ctx = ctx + self.position.weight[:n]
        tokens = torch.cat([ctx, self.embed_x(query_x)], dim=1)
        out = self.encoder(tokens, mask=_mask(n, q, ctx_x.device))
        return self.head(self.norm(out[:, n:]))

    def predict(
        self, ctx_x: torch.Tensor, ctx_y: torch.Tensor, query_x: torch.Tensor
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """Predictive probabilities (B, q, C), or ``(mean, var)`` (B, q), without gradients.

        Inputs are cast to the model's dtype. NaN policy: NaN/inf inputs are refused; a context
        longer than ``max_len`` is refused for a positional model."""
        ctx_x, ctx_y, query_x = check_context(
            "TransformerICL.predict", ctx_x, ctx_y, query_x, self.task, self.n_classes, self.d_x
        )
        if self.position is not None and ctx_x.shape[1] > self.max_len:
            raise param_error(
                "ctx_x",
                "TransformerICL.predict",
                f"at most max_len={self.max_len} long",
                ctx_x.shape[1],
            )
        dtype = self.head.weight.dtype
        with torch.no_grad():
            out = self(ctx_x.to(dtype), ctx_y.to(dtype), query_x.to(dtype))
        if self.task == "classification":
            return out.softmax(-1)
        return out[..., 0], out[..., 1].exp()


def _mask(n: int, q: int, device: torch.device) -> torch.Tensor:
    """Boolean (n+q, n+q) mask, True where attention is *not* allowed."""
    mask = torch.ones(n + q, n + q, dtype=torch.bool, device=device)
    mask[:, :n] = False
    idx = torch.arange(n, n + q, device=device)
    mask[idx, idx] = False
    return mask


class BayesOracleICL:
    """The exact posterior predictive of ``prior`` (a :mod:`vud.priors` class): the Bayesian
    in-context learner the paper's bounds assume.

    >>> from vud.priors import LogisticPrior
    >>> oracle = BayesOracleICL(LogisticPrior())
    >>> p = oracle.predict(torch.zeros(1, 0, 1), torch.zeros(1, 0), torch.zeros(1, 1, 1))
    >>> round(float(p[0, 0, 1]), 4)  # no data, x = 0: symmetric prior
    0.5
    """

    def __init__(self, prior) -> None:
        from vud.priors import BernoulliArmsPrior, LinearGaussianPrior, LogisticPrior

        if not isinstance(prior, (LogisticPrior, LinearGaussianPrior, BernoulliArmsPrior)):
            raise param_error(
                "prior", "BayesOracleICL", "a vud prior", describe(prior), cls=TypeError
            )
        self.prior = prior
        self.task = prior.task
        self.n_classes = prior.n_classes
        self.d_x = prior.d_x

    def predict(
        self, ctx_x: torch.Tensor, ctx_y: torch.Tensor, query_x: torch.Tensor
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """The exact predictive, in ``ctx_x``'s dtype. NaN policy: NaN/inf inputs are refused."""
        return self.prior.predictive(ctx_x, ctx_y, query_x)
