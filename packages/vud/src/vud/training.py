r"""Prior-fitting: train :class:`vud.TransformerICL` to be the posterior predictive of a prior.

Minimising the expected negative log-likelihood of query labels over tasks drawn from the prior,

.. math:: \min_q E_{\theta\sim p(\theta)} E_{D, (x^*, y^*)\sim p(\cdot|\theta)}[-\log q(y^*|x^*,D)],

is minimised by :math:`q = p(y^*|x^*,D)` (Müller et al., ICLR 2022), so the trained network is
approximately Bayesian for that prior: the premise of the paper's bounds holds measurably.
Each step draws one context length :math:`n\sim U\{0..\text{max\_ctx}\}` for the batch,
``n_query`` queries per task; Adam with a fixed learning rate.
"""

from __future__ import annotations

import math

import torch

from paperkit import check_bool, check_int, check_real, describe, param_error, progress
from vud.predictors import TransformerICL

__all__ = ["train_pfn"]


def train_pfn(
    prior,
    steps: int = 1500,
    batch: int = 64,
    max_ctx: int = 30,
    seed: int = 0,
    progress: bool = True,
    *,
    positional: bool = False,
    n_query: int = 8,
    lr: float = 1e-3,
) -> TransformerICL:
    """Train a :class:`TransformerICL` (default size) on tasks from ``prior``; return it in eval
    mode, float32.

    Regression uses the Gaussian NLL of ``(mean, log-variance)``. ``positional`` trains the
    order-sensitive variant (positions up to ``max_ctx``). NaN policy: not applicable (no tensor
    inputs); a non-finite loss stops training with a RuntimeError.

    >>> from vud.priors import BernoulliArmsPrior
    >>> model = train_pfn(BernoulliArmsPrior(3), steps=2, batch=4, max_ctx=5, progress=False)
    >>> model.task
    'classification'
    """
    from vud.priors import BernoulliArmsPrior, LinearGaussianPrior, LogisticPrior

    owner = "train_pfn"
    if not isinstance(prior, (LogisticPrior, LinearGaussianPrior, BernoulliArmsPrior)):
        raise param_error("prior", owner, "a vud prior", describe(prior), cls=TypeError)
    steps = check_int("steps", owner, steps, low=1, high=1_000_000)
    batch = check_int("batch", owner, batch, low=1, high=65_536)
    max_ctx = check_int("max_ctx", owner, max_ctx, low=0, high=4096)
    seed = check_int("seed", owner, seed, low=0)
    show = check_bool("progress", owner, progress)
    positional = check_bool("positional", owner, positional)
    n_query = check_int("n_query", owner, n_query, low=1, high=4096)
    lr = check_real("lr", owner, lr, low=0, low_open=True)

    torch.manual_seed(seed)
    g = torch.Generator().manual_seed(seed)
    model = TransformerICL(
        prior.d_x,
        prior.task,
        n_classes=prior.n_classes or 2,
        positional=positional,
        max_len=max(max_ctx, 1),
    )
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in _steps(steps, show):
        n = int(torch.randint(0, max_ctx + 1, (1,), generator=g))
        cx, cy, qx, qy = prior.sample_tasks(batch, n, n_query, g)
        out = model(cx, cy, qx)
        if prior.task == "classification":
            loss = torch.nn.functional.cross_entropy(
                out.reshape(-1, out.shape[-1]), qy.long().ravel()
            )
        else:
            mean, log_var = out[..., 0], out[..., 1]
            loss = 0.5 * (log_var + (qy - mean) ** 2 / log_var.exp() + math.log(2 * math.pi)).mean()
        if not torch.isfinite(loss):
            raise RuntimeError("train_pfn: the loss became non-finite; lower lr")
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    model.trained_max_ctx = max_ctx
    return model.eval()


def _steps(steps: int, show: bool):
    return progress(range(steps), "training the PFN", disable=not show)
