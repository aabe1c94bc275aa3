r"""The three experiments of the reproduction, each returning plain numbers.

* :func:`synthetic_allocation` (a): six "layers" of points with chosen spectra; the Gaussian
  kernel :math:`g` approximated by positive random features
  :math:`\phi(x) = e^{w^\top x - \|x\|^2}/\sqrt m`, :math:`w \sim N(0, I)`
  (:math:`E[\phi(x)\cdot\phi(y)] = g(x, y)`), at the uniform and the DoF dims of one budget.
* :func:`minilm_experiment` (b): all-MiniLM-L6-v2 distilled layer by layer with both
  allocations from the same caches and seeds; held-out per-layer error, embedding cosine and
  top-1 neighbour agreement.
* :func:`causal_experiment` (c): a 4-layer causal :class:`TinySoftmaxEncoder` trained on
  :func:`periodic_tokens`, distilled with both allocations; next-token accuracy gap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from doflinattn.data import periodic_tokens, spectral_keys, stdlib_sentences
from doflinattn.distill import LayerCache, layerwise_distill, relative_output_error
from doflinattn.dof import allocate_dims, kernel_gram, layer_spectra, uniform_dims
from doflinattn.teachers import MiniLMTeacher, TinySoftmaxEncoder

__all__ = ["cache_spectra", "causal_experiment", "minilm_experiment", "synthetic_allocation"]


def cache_spectra(
    caches: Sequence[LayerCache], max_points: int, seed: int, scale: float | None = None
) -> list[torch.Tensor]:
    """Per-layer (H, n) spectra from the real (non-padded) tokens of each cache (points scaled
    by ``scale``, default :math:`d^{-1/4}`)."""
    out = []
    for l, c in enumerate(caches):
        q, k = c.q.transpose(1, 2), c.k.transpose(1, 2)  # (S, N, H, d)
        if c.mask is not None:
            q, k = q[~c.mask], k[~c.mask]
        else:
            q, k = q.reshape(-1, *q.shape[2:]), k.reshape(-1, *k.shape[2:])
        out.append(layer_spectra(q, k, max_points=max_points, seed=seed + l, scale=scale))
    return out


def layer_dofs(spectra: Sequence[torch.Tensor], lam: float) -> list[float]:
    """:math:`d_l(\\lambda)` of every layer (mean over heads)."""
    return [float((s / (s + lam)).sum(-1).mean()) for s in spectra]


def rf_expected_error(x: torch.Tensor, m: int, kind: str = "positive") -> float:
    r"""Root expected squared relative Frobenius error :math:`\sqrt{E\|\hat K - K\|_F^2} /
    \|K\|_F` of m random features for the Gaussian Gram of x, in closed form from the variance
    of one feature's product :math:`v_{ij}`, :math:`E\|\hat K - K\|_F^2 = \frac1m\sum_{ij}
    v_{ij}`:

    * ``"positive"``: :math:`\phi(x) = e^{w^\top x - \|x\|^2}`, :math:`w \sim N(0, I)`;
      :math:`E e^{2w\cdot(x+y)} = e^{2\|x+y\|^2}` gives :math:`v = e^{4x\cdot y} - K^2`;
    * ``"fourier"``: :math:`\phi(x) = \sqrt2\cos(w^\top x + b)`, :math:`b \sim U[0, 2\pi]`;
      :math:`\phi(x)\phi(y) = \cos(w\cdot\delta) + \cos(w\cdot(x+y) + 2b)` gives
      :math:`v = 1 + g(2\delta)/2 - K^2` with :math:`\delta = x - y`.
    """
    k = kernel_gram(x)
    if kind == "positive":
        var = torch.exp(4.0 * (x @ x.T)) - k**2
    else:
        var = 1.0 + 0.5 * k**4 - k**2  # g(2 delta) = exp(-2 |delta|^2) = K^4
    return float((var.sum() / (m * (k**2).sum())).sqrt())


def positive_random_features(x: torch.Tensor, m: int, g: torch.Generator) -> torch.Tensor:
    """:math:`\\phi(x) = e^{w^\top x - \\|x\\|^2}/\\sqrt m`, :math:`w \\sim N(0, I)`."""
    w = torch.randn(m, x.shape[1], generator=g, dtype=x.dtype)
    return torch.exp(x @ w.T - (x * x).sum(1, keepdim=True)) / m**0.5


def leverage_nystrom_error(
    fit: torch.Tensor, test: torch.Tensor, m: int, lam: float, draws: int, g: torch.Generator
) -> float:
    r"""Mean relative Frobenius error on ``test`` of the Nystrom approximation
    :math:`\hat K = K_{tL} K_{LL}^+ K_{Lt}` with m landmarks drawn from ``fit`` by ridge
    leverage scores :math:`\ell_i(\lambda) = (K (K + n\lambda I)^{-1})_{ii}` (they sum to
    :math:`d(\lambda)`): the sampling for which :math:`m \gtrsim d(\lambda)\log d(\lambda)`
    features suffice (Bach 2013; Rudi & Rosasco 2017)."""
    n = fit.shape[0]
    k = kernel_gram(fit)
    mu, u = torch.linalg.eigh(k / n)
    lev = (u**2 * (mu.clamp_min(0) / (mu.clamp_min(0) + lam))).sum(1)
    k_tt = kernel_gram(test)
    errs = []
    for _ in range(draws):
        idx = torch.multinomial(lev, m, replacement=False, generator=g)
        k_tl = kernel_gram(test, fit[idx])
        approx = k_tl @ torch.linalg.pinv(k[idx][:, idx], hermitian=True) @ k_tl.T
        errs.append(float(torch.linalg.norm(approx - k_tt) / torch.linalg.norm(k_tt)))
    return sum(errs) / draws


def synthetic_allocation(
    decays: Sequence[float], *, d: int, n: int, budget: int, scale: float, draws: int, seed: int
) -> dict[str, Any]:
    """(a): DoF vs uniform dims on points with spectra ``decays``; the expected kernel error of
    positive random features per layer (:func:`rf_expected_error`) on held-out points."""
    points = [spectral_keys(2 * n, d, a, scale=scale, seed=seed + i) for i, a in enumerate(decays)]
    fit, test = [x[:n] for x in points], [x[n:] for x in points]
    spectra = [layer_spectra(x[:, None], x[:, None], max_points=n, scale=1.0) for x in fit]
    dims_dof, lam = allocate_dims(spectra, budget)
    dims_uni = uniform_dims(budget, len(decays))
    g = torch.Generator().manual_seed(seed)
    err = {}
    for name, dims in (("uniform", dims_uni), ("dof", dims_dof)):
        err[f"leverage_{name}"] = [
            leverage_nystrom_error(a, b, m, lam, draws, g)
            for a, b, m in zip(fit, test, dims, strict=True)
        ]
    for kind in ("fourier", "positive"):
        for name, dims in (("uniform", dims_uni), ("dof", dims_dof)):
            err[f"{kind}_{name}"] = [
                rf_expected_error(x, m, kind) for x, m in zip(test, dims, strict=True)
            ]
    return {
        "decays": list(decays),
        "dof": layer_dofs(spectra, lam),
        "lam": lam,
        "dims_uniform": dims_uni,
        "dims_dof": dims_dof,
        "error": err,
    }


def _top1(emb: torch.Tensor) -> torch.Tensor:
    sim = emb @ emb.T
    sim.fill_diagonal_(-2.0)
    return sim.argmax(1)


def minilm_experiment(
    *,
    sentences: int,
    budget_per_layer: int,
    steps: int,
    seeds: Sequence[int],
    max_points: int,
    loss: str = "mse",
    feature_map: str = "hedgehog",
    oversample: float = 1.0,
    held_out: float = 0.25,
    tick: Callable[[], None] = lambda: None,
    teacher: MiniLMTeacher | None = None,
) -> dict[str, Any]:
    """(b): caches computed once; both allocations distilled with the same seeds and steps."""
    teacher = MiniLMTeacher() if teacher is None else teacher
    text = stdlib_sentences(sentences, seed=0)
    n_test = max(2, int(round(held_out * sentences)))
    train, test = text[n_test:], text[:n_test]
    caches = teacher.collect(train)
    test_caches = teacher.collect(test)
    ref = teacher.embed(test)
    ref_nn = _top1(ref)
    spectra = cache_spectra(caches, max_points, seed=0)
    L = teacher.num_layers
    budget = L * budget_per_layer
    dims = {"uniform": uniform_dims(budget, L)}
    dims["dof"], lam = allocate_dims(spectra, budget, oversample=oversample)
    tick()
    runs: dict[str, list[dict[str, Any]]] = {"uniform": [], "dof": []}
    for seed in seeds:
        for name in ("uniform", "dof"):
            maps = layerwise_distill(
                caches, dims[name], steps=steps, seed=seed, loss=loss, feature_map=feature_map
            )
            errs = torch.stack(
                [relative_output_error(m, c) for m, c in zip(maps, test_caches, strict=True)]
            )
            with torch.no_grad():
                emb = teacher.swap_attention(maps).embed(test)
            runs[name].append(
                {
                    "layer_error": errs.mean(1).tolist(),  # per layer, mean over sentences
                    "sentence_error": errs.sum(0).tolist(),  # per sentence, summed over layers
                    "cosine": (emb * ref).sum(1).tolist(),  # per sentence
                    "nn_agree": float((_top1(emb) == ref_nn).double().mean()),
                }
            )
            tick()
    return {
        "train_sentences": len(train),
        "test_sentences": len(test),
        "tokens_per_layer": int((~caches[0].mask).sum()),
        "lam": lam,
        "dof": layer_dofs(spectra, lam),
        "dims": dims,
        "runs": runs,
    }


def _next_token_accuracy(model: TinySoftmaxEncoder, tokens: torch.Tensor, start: int) -> float:
    with torch.no_grad():
        pred = model(tokens[:, :-1]).argmax(-1)
    return float((pred[:, start - 1 :] == tokens[:, start:]).double().mean())


def causal_experiment(
    *,
    budget_per_layer: int,
    steps: int,
    seeds: Sequence[int],
    teacher_steps: int,
    max_points: int,
    tick: Callable[[], None] = lambda: None,
) -> dict[str, Any]:
    """(c): a causal TinySoftmaxEncoder trained on periodic_tokens, then both allocations."""
    vocab, length, max_period = 16, 33, 8
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(1234)
        teacher = TinySoftmaxEncoder(
            vocab=vocab, dim=64, num_heads=4, num_layers=4, max_len=length, causal=True
        )
    opt = torch.optim.Adam(teacher.parameters(), lr=3e-3)
    for step in range(teacher_steps):
        x = periodic_tokens(64, length, vocab, max_period=max_period, seed=10_000 + step)
        logits = teacher(x[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, vocab), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    teacher.eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    tick()
    train = periodic_tokens(256, length, vocab, max_period=max_period, seed=1)
    test = periodic_tokens(512, length, vocab, max_period=max_period, seed=2)
    caches = teacher.collect(train[:, :-1])
    spectra = cache_spectra(caches, max_points, seed=0)
    L = teacher.num_layers
    budget = L * budget_per_layer
    dims = {"uniform": uniform_dims(budget, L)}
    dims["dof"], lam = allocate_dims(spectra, budget)
    teacher_acc = _next_token_accuracy(teacher, test, max_period)
    acc: dict[str, list[float]] = {"uniform": [], "dof": []}
    for seed in seeds:
        for name in ("uniform", "dof"):
            maps = layerwise_distill(caches, dims[name], steps=steps, seed=seed)
            acc[name].append(_next_token_accuracy(teacher.swap_attention(maps), test, max_period))
            tick()
    return {
        "lam": lam,
        "dof": layer_dofs(spectra, lam),
        "dims": dims,
        "teacher_accuracy": teacher_acc,
        "accuracy": acc,
    }
