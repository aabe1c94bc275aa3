r"""Bayesian Flow Networks for categorical variables with different class counts.

Following Graves et al. (2023, §6), a categorical variable with :math:`K` classes and data class
:math:`x` has the sender distribution :math:`y \sim \mathcal N(\alpha (K e_x - 1), \alpha K I)`;
the Bayesian update of the input distribution is
:math:`\theta' = \mathrm{softmax}(y + \log\theta)` (so updates commute and accumulate accuracy),
and after accuracy :math:`\beta(t)` from the uniform prior the *flow distribution* is
:math:`\theta = \mathrm{softmax}(y)`, :math:`y \sim \mathcal N(\beta(t)(K e_x - 1), \beta(t) K I)`.
The network maps :math:`(\theta, t)` to output distributions :math:`p_O(\cdot\mid\theta, t)`;
the continuous-time loss is
:math:`L^\infty = \mathbb E_{t \sim U(0,1)} \sum_v \tfrac{K_v}{2}\beta_{K_v}'(t)\,
\|e_{x_v} - \hat e_v\|^2` with :math:`\hat e_v = \mathbb E_{p_O}[e_k]`.

Variables of one object may have different :math:`K`; they are stored padded to
:math:`K_\max` classes, class :math:`k` of variable :math:`v` being admissible iff
:math:`k < K_v`, and each uses its own schedule :math:`\beta_{K_v}(t)`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from paperkit import check_callable, check_choice, check_int, check_tensor, param_error

__all__ = ["CategoricalBFN", "class_mask", "masked_softmax"]


def class_mask(K: torch.Tensor, k_max: int) -> torch.Tensor:
    """``(..., k_max)`` booleans: class ``k`` admissible for a variable with ``K`` classes."""
    return torch.arange(k_max, device=K.device) < K[..., None]


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the admissible classes only; inadmissible ones get exactly 0."""
    return logits.masked_fill(~mask, float("-inf")).softmax(-1)


def _as_counts(K: Any, shape: torch.Size, k_max: int, owner: str) -> torch.Tensor:
    if isinstance(K, torch.Tensor):
        K = check_tensor("K", owner, K, dtype="int", nonempty=False)
    elif isinstance(K, Sequence) and not isinstance(K, str):
        K = torch.tensor([check_int("K", owner, k) for k in K])
    else:
        K = torch.tensor(check_int("K", owner, K))
    if ((K < 1) | (k_max < K)).any():
        raise param_error("K", owner, f"class counts in [1, {k_max}] (the last axis)", K.tolist())
    try:
        return torch.broadcast_to(K, shape)
    except RuntimeError as exc:
        raise param_error("K", owner, f"broadcastable to {tuple(shape)}", tuple(K.shape)) from exc


def _broadcastable(
    name: str, owner: str, value: torch.Tensor, shape: torch.Size, other: str = "x_onehot"
) -> None:
    try:
        ok = torch.broadcast_shapes(value.shape, shape) == shape
    except RuntimeError:
        ok = False
    if not ok:
        raise param_error(
            name,
            owner,
            f"broadcastable to the leading shape {tuple(shape)} of '{other}'",
            tuple(value.shape),
        )


def _check_onehot(name: str, owner: str, x: torch.Tensor, counts: torch.Tensor) -> None:
    mask = class_mask(counts, x.shape[-1])
    ok = ((x == 0) | (x == 1)).all() and (x.sum(-1) == 1).all() and (x[~mask] == 0).all()
    if not ok:
        raise param_error(name, owner, "one-hot rows over each variable's first K classes", x)


class CategoricalBFN:
    r"""Flow, sender, update, loss and sampler of a categorical BFN with per-K schedules.

    Args:
        scheduler: an object with ``beta(K, t)`` and ``dbeta(K, t)``
            (:class:`treegen.EntropyScheduler` or :class:`treegen.QuadraticScheduler`).

    Tensors carry the classes on the last axis (``K_max``); ``K`` gives each variable's count
    (an int or an integer tensor broadcasting with the leading axes). NaN/inf inputs are refused.

    >>> from treegen import EntropyScheduler
    >>> bfn = CategoricalBFN(EntropyScheduler(4, n_mc=1024))
    >>> x = torch.nn.functional.one_hot(torch.tensor([0, 2]), 4).double()
    >>> theta = bfn.flow_sample(x, torch.tensor([1.0, 1.0], dtype=torch.float64), 4)
    >>> bool((theta.argmax(-1) == torch.tensor([0, 2])).all())  # entropy ~1% of log 4 at t = 1
    True
    """

    def __init__(self, scheduler: Any) -> None:
        if not (hasattr(scheduler, "beta") and hasattr(scheduler, "dbeta")):
            raise param_error(
                "scheduler",
                "CategoricalBFN",
                "a schedule with beta(K, t) and dbeta(K, t)",
                type(scheduler).__name__,
                cls=TypeError,
            )
        self.scheduler = scheduler

    def sender_sample(
        self,
        x_onehot: torch.Tensor,
        alpha: torch.Tensor,
        K: Any,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r""":math:`y \sim \mathcal N(\alpha(K e_x - 1), \alpha K I)` on the admissible classes
        (0 elsewhere); ``alpha`` broadcasts with ``x_onehot.shape[:-1]``."""
        owner = "CategoricalBFN.sender_sample"
        x_onehot = check_tensor("x_onehot", owner, x_onehot, ndim=range(1, 8))
        alpha = check_tensor("alpha", owner, alpha, nonempty=False)
        counts = _as_counts(K, x_onehot.shape[:-1], x_onehot.shape[-1], owner)
        _broadcastable("alpha", owner, alpha, counts.shape)
        _check_onehot("x_onehot", owner, x_onehot, counts)
        if (alpha < 0).any():
            raise param_error("alpha", owner, "non-negative accuracies", float(alpha.min()))
        return self._sender(x_onehot, alpha, counts, generator)

    @staticmethod
    def _sender(x, alpha, counts, generator):
        mask = class_mask(counts, x.shape[-1])
        k = counts.to(x.dtype)[..., None]
        a = torch.broadcast_to(alpha, counts.shape).to(x.dtype)[..., None]
        noise = torch.randn(x.shape, generator=generator, dtype=x.dtype, device=x.device)
        y = a * (k * x - 1.0) + (a * k).sqrt() * noise
        return y.masked_fill(~mask, 0.0)

    def flow_sample(
        self,
        x_onehot: torch.Tensor,
        t: torch.Tensor,
        K: Any,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""A draw of :math:`\theta \sim p_F(\cdot \mid x; t)`: softmax of the sender sample at
        accuracy :math:`\beta_K(t)`; ``t`` broadcasts with ``x_onehot.shape[:-1]``."""
        owner = "CategoricalBFN.flow_sample"
        x_onehot = check_tensor("x_onehot", owner, x_onehot, ndim=range(1, 8))
        t = check_tensor("t", owner, t, nonempty=False)
        counts = _as_counts(K, x_onehot.shape[:-1], x_onehot.shape[-1], owner)
        _broadcastable("t", owner, t, counts.shape)
        _check_onehot("x_onehot", owner, x_onehot, counts)
        return self._flow(x_onehot, t, counts, generator)

    def _flow(self, x, t, counts, generator):
        t = torch.broadcast_to(t.to(x.dtype), counts.shape)
        beta = self.scheduler.beta(counts, t)
        y = self._sender(x, beta, counts, generator)
        return masked_softmax(y, class_mask(counts, x.shape[-1]))

    def update(self, theta: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        r"""The Bayesian update :math:`\theta' = \mathrm{softmax}(y + \log\theta)`; classes with
        :math:`\theta = 0` (inadmissible) stay at 0."""
        owner = "CategoricalBFN.update"
        theta = check_tensor("theta", owner, theta, ndim=range(1, 8))
        y = check_tensor("y", owner, y)
        if y.shape != theta.shape:
            raise param_error("y", owner, f"of the shape of 'theta', {tuple(theta.shape)}", y.shape)
        if (theta < 0).any():
            raise param_error("theta", owner, "probabilities (non-negative)", float(theta.min()))
        return self._update(theta, y)

    @staticmethod
    def _update(theta, y):
        return masked_softmax(y + theta.clamp_min(1e-300).log(), theta > 0)

    def loss(
        self,
        logits_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        x: torch.Tensor,
        t: torch.Tensor,
        K: Any = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        r"""The continuous-time loss :math:`\frac1B\sum_b\sum_v \frac{K_v}{2}\beta'_{K_v}(t_b)
        \|e_{x_{bv}} - \hat e_{bv}\|^2`, :math:`\hat e = \mathrm{softmax}(\text{logits})` over the
        admissible classes, for ``x`` one-hot ``(B, ..., K_max)``, ``t`` ``(B,)`` and
        ``logits_fn(theta, t)`` returning logits shaped like ``x``. ``K`` defaults to ``K_max``.
        Non-negative; 0 when the logits put all mass on the data class.
        """
        owner = "CategoricalBFN.loss"
        check_callable("logits_fn", owner, logits_fn)
        x = check_tensor("x", owner, x, ndim=range(2, 8))
        t = check_tensor("t", owner, t)
        if t.shape != (x.shape[0],):
            raise param_error(
                "t", owner, f"of shape ({x.shape[0]},), the first axis of 'x'", t.shape
            )
        if ((t < 0) | (t > 1)).any():
            raise param_error("t", owner, "times in [0, 1]", float(t.min()))
        counts = _as_counts(x.shape[-1] if K is None else K, x.shape[:-1], x.shape[-1], owner)
        _check_onehot("x", owner, x, counts)
        t_b = t.reshape(-1, *([1] * (x.dim() - 2)))
        theta = self._flow(x, t_b, counts, generator)
        logits = logits_fn(theta, t)
        return self._loss_from_logits(logits, x, t_b, counts)

    def _loss_from_logits(self, logits, x, t_b, counts):
        mask = class_mask(counts, x.shape[-1])
        e_hat = masked_softmax(logits, mask)
        t_full = torch.broadcast_to(t_b.to(x.dtype), counts.shape)
        weight = 0.5 * counts.to(x.dtype) * self.scheduler.dbeta(counts, t_full)
        sq = ((x - e_hat) ** 2).masked_fill(~mask, 0.0).sum(-1)
        return (weight * sq).reshape(x.shape[0], -1).sum(1).mean()

    @torch.no_grad()
    def sample(
        self,
        net: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
        shapes: Sequence[int] | torch.Tensor,
        steps: int = 100,
        num: int = 1,
        generator: torch.Generator | None = None,
        final: str = "sample",
    ) -> torch.Tensor:
        r"""Draw ``num`` objects of variables with ``shapes[v]`` classes each: ``steps`` rounds of
        :math:`k \sim p_O(\theta, t_{s-1})`, :math:`\alpha = \beta(t_s) - \beta(t_{s-1})`,
        :math:`y \sim \mathcal N(\alpha(K e_k - 1), \alpha K I)`, :math:`\theta \leftarrow
        \mathrm{softmax}(y + \log\theta)`; then a draw (``final="sample"``) or the mode
        (``"argmax"``) of :math:`p_O(\theta, 1)`. ``net(theta (num, V, K_max), t (num,))``
        returns logits. Returns the classes, ``(num, V)`` int64.
        """
        owner = "CategoricalBFN.sample"
        check_callable("net", owner, net)
        if isinstance(shapes, torch.Tensor):
            shapes = check_tensor("shapes", owner, shapes, ndim=1, dtype="int").tolist()
        if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Sequence) or not shapes:
            raise param_error("shapes", owner, "a non-empty sequence of class counts", shapes)
        counts = torch.tensor([check_int("shapes", owner, k, low=1, high=10**4) for k in shapes])
        steps = check_int("steps", owner, steps, low=1, high=10**5)
        num = check_int("num", owner, num, low=1, high=10**7)
        final = check_choice("final", owner, final, ("sample", "argmax"))
        k_max = int(counts.max())
        return self._sample(net, counts, k_max, steps, num, generator, final)

    def _sample(self, net, counts, k_max, steps, num, generator, final, dtype=torch.float32):
        counts = counts.expand(num, -1)
        mask = class_mask(counts, k_max)
        theta = mask.to(dtype) / counts[..., None].to(dtype)
        for s in range(1, steps + 1):
            t0 = torch.full((num,), (s - 1) / steps, dtype=dtype)
            t1 = torch.full((num,), s / steps, dtype=dtype)
            probs = masked_softmax(net(theta, t0), mask)
            k = torch.multinomial(probs.reshape(-1, k_max), 1, generator=generator)
            e_k = torch.nn.functional.one_hot(k.reshape(counts.shape), k_max).to(dtype)
            alpha = self.scheduler.beta(counts, t1[:, None]) - self.scheduler.beta(
                counts, t0[:, None]
            )
            theta = self._update(theta, self._sender(e_k, alpha, counts, generator))
        probs = masked_softmax(net(theta, torch.ones(num, dtype=dtype)), mask)
        if final == "argmax":
            return probs.argmax(-1)
        return torch.multinomial(probs.reshape(-1, k_max), 1, generator=generator).reshape(
            counts.shape
        )
