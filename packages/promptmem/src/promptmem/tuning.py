r"""Part B: prompt tuning, and the search for the shortest prompt that memorises a data set.

:func:`tune_prompt` trains only :math:`P \in \mathbb{R}^{m \times d}` (init
:math:`\mathcal{N}(0, 0.02^2)`) to minimise the cross-entropy
:math:`\frac{1}{nN}\sum_{i,j} -\log \mathrm{softmax}(T([P; X_i])_j)_{Y_{ij}}` of a frozen model
:math:`T`, with Adam on the whole data set as one batch, stopping at 100% train accuracy.

:func:`min_prompt_length` estimates :math:`m^*(n, N)`, the shortest prompt that memorises the
data: doubling over :math:`m = 1, 2, 4, \dots` (up to ``m_max``) until a success, then integer
bisection between the last failure ``lo`` and the first success ``hi`` until
:math:`hi - lo \le \max(1, \rho\, hi)` (``rel_resolution`` :math:`\rho`). A length succeeds when
any of ``seeds`` tuning runs reaches 100%. Optimisation is not monotone in :math:`m`, so
:math:`m^*` is the first success the search finds, an estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from paperkit import check_callable, check_int, check_real, check_tensor, param_error

__all__ = ["min_prompt_length", "tune_prompt"]

#: Most training steps of one tuning run, and the longest prompt searched.
MAX_STEPS = 10**6
MAX_PROMPT = 4096
PROMPT_INIT_STD = 0.02


def _check_data(owner: str, model: Any, X: Any, Y: Any) -> None:
    """X and Y fit the model: shapes, dtypes, token ranges, the real-token width d0."""
    if not isinstance(model, nn.Module) or not hasattr(model, "input_vocab"):
        raise param_error("model", owner, "a FrozenTransformer", type(model).__name__)
    real = isinstance(X, torch.Tensor) and X.is_floating_point()
    dims: dict = {}
    if real:
        if model.d0 is None:
            raise param_error("X", owner, "integer tokens (the model has no d0)", "a float tensor")
        check_tensor("X", owner, X, shape=("n", "N", model.d0), dims=dims)
    else:
        check_tensor("X", owner, X, shape=("n", "N"), dims=dims, dtype="int")
        if int(X.min()) < 0 or int(X.max()) >= model.input_vocab:
            raise param_error("X", owner, f"tokens in [0, {model.input_vocab})", "out-of-range")
    check_tensor("Y", owner, Y, shape=("n", "N"), dims=dims, dtype="int")
    if int(Y.min()) < 0 or int(Y.max()) >= model.vocab:
        raise param_error("Y", owner, f"tokens in [0, {model.vocab})", "out-of-range targets")


def tune_prompt(
    model: nn.Module,
    X: torch.Tensor,
    Y: torch.Tensor,
    m: int,
    steps: int = 2000,
    lr: float = 1e-2,
    seed: int = 0,
) -> tuple[torch.Tensor, float, int]:
    r"""Train a soft prompt of length ``m`` on a frozen model until it memorises ``(X, Y)``.

    Args:
        model: a frozen :class:`promptmem.FrozenTransformer` (its weights are not changed).
        X: inputs ``(n, N)`` tokens or ``(n, N, d0)`` reals. Y: targets ``(n, N)``.
        m: prompt length (0: no prompt, the model is only evaluated).
        steps: most Adam steps. lr: Adam's learning rate.
        seed: seed of the prompt's :math:`\mathcal{N}(0, 0.02^2)` init.

    Returns:
        ``(prompt, train_acc, n_steps)``: the final prompt ``(m, d)`` (detached), the fraction of
        the :math:`nN` output tokens predicted right by it, and the Adam steps taken (the run
        stops at the first evaluation with ``train_acc == 1``).

    NaN policy: NaN or inf in ``X`` is refused.
    """
    owner = "tune_prompt"
    _check_data(owner, model, X, Y)
    m = check_int("m", owner, m, low=0, high=MAX_PROMPT)
    steps = check_int("steps", owner, steps, low=0, high=MAX_STEPS)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=1e3)
    seed = check_int("seed", owner, seed, low=0)
    if m + Y.shape[1] > model.max_len:
        raise param_error(
            "m", owner, f"at most model.max_len - N = {model.max_len - Y.shape[1]}", m
        )
    gen = torch.Generator().manual_seed(seed)
    dtype = next(model.parameters()).dtype
    prompt = (torch.randn(m, model.d, generator=gen) * PROMPT_INIT_STD).to(dtype)
    prompt.requires_grad_(m > 0)
    opt = torch.optim.Adam([prompt], lr=lr) if m > 0 else None
    target = Y.reshape(-1)
    model(prompt, X)  # the model checks X (and the prompt's shape) once
    n_steps = 0
    while True:
        logits = model.logits(prompt, X).reshape(-1, model.vocab)
        acc = float((logits.argmax(-1) == target).float().mean())
        if acc == 1.0 or n_steps == steps or opt is None:
            return prompt.detach(), acc, n_steps
        loss = nn.functional.cross_entropy(logits, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        n_steps += 1


Tuner = Callable[..., tuple[Any, float, int]]


def min_prompt_length(
    model_factory: Callable[[], nn.Module],
    X: torch.Tensor,
    Y: torch.Tensor,
    m_max: int = 64,
    seeds: int = 2,
    rel_resolution: float = 0.0,
    tuner: Tuner = tune_prompt,
) -> int | None:
    r"""The shortest prompt length found to memorise ``(X, Y)``: doubling, then bisection.

    Evaluates :math:`m = 1, 2, 4, \dots` (and ``m_max`` last) until one succeeds, then bisects
    between the last failure ``lo`` and the first success ``hi`` while
    :math:`hi - lo > \max(1, \rho\,hi)`; each length is evaluated once.

    Args:
        model_factory: called once, with no argument, for the frozen model.
        X, Y: the data set (checked by the tuner).
        m_max: longest prompt tried.
        seeds: tuning runs per length (seeds ``0 .. seeds-1``); success if any reaches 100%.
        rel_resolution: :math:`\rho \in [0, 1)`, the relative width at which bisection stops
            (0: down to one token).
        tuner: ``tuner(model, X, Y, m, seed=s) -> (prompt, train_acc, n_steps)``, default
            :func:`tune_prompt` (pass ``functools.partial(tune_prompt, steps=500)`` to change
            its settings).

    Returns:
        ``hi``, the shortest successful length found, or None when even ``m_max`` fails.

    NaN policy: as the tuner's (the default refuses NaN inputs).

    >>> stub = lambda model, X, Y, m, seed=0: (None, float(m >= 5), 0)
    >>> min_prompt_length(lambda: None, None, None, seeds=1, tuner=stub)
    5
    """
    owner = "min_prompt_length"
    check_callable("model_factory", owner, model_factory)
    m_max = check_int("m_max", owner, m_max, low=1, high=MAX_PROMPT)
    seeds = check_int("seeds", owner, seeds, low=1, high=1000)
    rel = check_real("rel_resolution", owner, rel_resolution, low=0, high=1, high_open=True)
    check_callable("tuner", owner, tuner)
    model = model_factory()
    results: dict[int, bool] = {}

    def succeeds(m: int) -> bool:
        if m not in results:
            results[m] = any(tuner(model, X, Y, m, seed=s)[1] == 1.0 for s in range(seeds))
        return results[m]

    lo, hi = 0, None
    m = 1
    while hi is None:
        if succeeds(m):
            hi = m
        elif m == m_max:
            return None
        else:
            lo, m = m, min(2 * m, m_max)
    while hi - lo > max(1, rel * hi):
        mid = (lo + hi) // 2
        if succeeds(mid):
            hi = mid
        else:
            lo = mid
    return hi
