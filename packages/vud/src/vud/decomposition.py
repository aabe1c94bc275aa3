r"""Variational uncertainty decomposition of one query (paper §3, Algorithm 1).

1. :math:`U = H[q(y^*|x^*,D)]` (permutation-averaged).
2. Candidate probe sets around :math:`x^*` (or the data mean): :func:`vud.probe_candidates`.
3. :math:`V_a(Z)` and :math:`KL_Z` of every candidate: :func:`vud.probe_bound`.
4. Keep the candidates that pass the consistency filter — threshold rule
   :math:`KL_Z\le\delta` or rank rule (the k smallest :math:`KL_Z`) — and report
   :math:`V_a^* = \min V_a`, :math:`V_e^* = U - V_a^*` (optionally :math:`V_a^*\le U` clipped).
   Nothing passing the threshold gives NaN with ``passed=False`` (never a silent fall-back).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import torch

from paperkit import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_real,
    param_error,
)
from vud.predictors import ICLPredictor, check_one_context
from vud.probes import probe_bound, probe_candidates

__all__ = ["VUDResult", "decompose", "select_probe"]


@dataclass(frozen=True)
class VUDResult:
    """One decomposition.

    Attributes:
        total: :math:`U` (entropy in the requested base, or variance).
        aleatoric: :math:`V_a^*`, the upper bound of the aleatoric part (NaN when no candidate
            passed).
        epistemic: :math:`V_e^* = U - V_a^*` (negative when a non-Bayesian predictor gives
            :math:`V_a^* > U` and ``clip=False``).
        z_best: (K, d) the probe set attaining :math:`V_a^*`, or None.
        candidates: ``z`` (m, K, d), ``va``, ``kl`` (nats), ``kept`` per candidate, and
            ``num_candidates`` (the distinct probe sets found).
        passed: some candidate passed the consistency filter.
        clipped: :math:`V_a^*` was above :math:`U` and ``clip=True`` set it to :math:`U`.
    """

    total: float
    aleatoric: float
    epistemic: float
    z_best: np.ndarray | None
    candidates: dict[str, np.ndarray] = field(repr=False)
    passed: bool
    clipped: bool = False


def select_probe(
    va: np.ndarray, kl: np.ndarray, *, kl_threshold: float | None = None, kl_rank: int = 5
) -> tuple[int | None, np.ndarray]:
    r"""The candidate with the smallest :math:`V_a` among those kept, and the kept mask.

    ``kl_threshold`` = δ: keep :math:`KL_Z\le\delta`; None: keep the ``kl_rank`` smallest
    :math:`KL_Z` values (every candidate tied with the k-th smallest is kept too, as the official
    code's ``nsmallest``/``isin`` does). Returns ``(None, kept)`` when nothing is kept.
    NaN policy: NaN/inf in ``va`` or ``kl`` is refused.

    >>> select_probe(np.array([0.3, 0.1, 0.2]), np.array([0.0, 0.5, 0.001]), kl_threshold=0.01)
    (2, array([ True, False,  True]))
    """
    owner = "select_probe"
    dims: dict = {}
    va = check_array("va", owner, va, shape=("m",), dims=dims).astype(float)
    kl = check_array("kl", owner, kl, shape=("m",), dims=dims).astype(float)
    k = check_int("kl_rank", owner, kl_rank, low=1)
    if kl_threshold is not None:
        delta = check_real("kl_threshold", owner, kl_threshold, low=0)
        kept = kl <= delta
    else:
        kept = kl <= np.sort(kl)[min(k, len(kl)) - 1]
    if not kept.any():
        return None, kept
    return int(np.flatnonzero(kept)[np.argmin(va[kept])]), kept


def decompose(
    pred: ICLPredictor,
    ctx_x: torch.Tensor,
    ctx_y: torch.Tensor,
    x_star: torch.Tensor,
    *,
    num_z: int = 15,
    perturbation_std: float = 0.1,
    perturb_about: Literal["x", "data_mean"] = "x",
    decimal_places: int = 1,
    num_bo_z: int = 0,
    kl_threshold: float | None = None,
    kl_rank: int = 5,
    num_permutations: int | Literal["all"] = 10,
    measure: Literal["entropy", "variance"] = "entropy",
    base: float = math.e,
    seed: int = 0,
    num_probes: int = 1,
    clip: bool = False,
    num_u_samples: int = 10,
    batch_size: int | None = None,
) -> VUDResult:
    r"""Decompose the predictive uncertainty of ``pred`` at ``x_star`` given the context.

    Args:
        pred: an :class:`vud.ICLPredictor` (classification or regression).
        ctx_x, ctx_y, x_star: the context D, (n, d) and (n,), and the query (d,).
        num_z, perturbation_std, perturb_about, decimal_places: the candidates
            (:func:`vud.probe_candidates`).
        num_bo_z: Bayesian-optimisation proposals; must be 0 here (they need botorch, which
            this package does not install).
        kl_threshold: δ of the threshold rule; None selects by the rank rule (``kl_rank``).
        num_permutations: context orders averaged (1 suffices for permutation-invariant
            predictors; ``"all"`` for every order of a small context).
        measure: ``"entropy"`` (in ``base``) or ``"variance"`` (law of total variance).
        seed: seeds the candidates, the permutations and the regression samples.
        num_probes: K, probes per candidate set (≤ 3 for classification, 1 for regression).
        clip: report :math:`\min(V_a^*, U)` (flagged by ``clipped``).
        num_u_samples, batch_size: see :func:`vud.probe_bound`.

    NaN policy: NaN/inf inputs are refused; when no candidate passes the threshold rule, the
    aleatoric and epistemic parts are NaN and ``passed`` is False.

    >>> from vud import BayesOracleICL, LogisticPrior
    >>> oracle = BayesOracleICL(LogisticPrior())
    >>> cx, cy = torch.tensor([[-1.0], [0.5], [2.0]]), torch.tensor([0.0, 1.0, 1.0])
    >>> r = decompose(oracle, cx, cy, torch.tensor([2.5]), num_permutations=1)
    >>> r.passed and 0 <= r.epistemic <= r.total
    True
    """
    owner = "decompose"
    check_one_context(owner, pred, ctx_x, ctx_y, x_star)
    if check_int("num_bo_z", owner, num_bo_z, low=0) != 0:
        raise param_error(
            "num_bo_z", owner, "0 (BO proposals need botorch, not installed here)", num_bo_z
        )
    if kl_threshold is not None:
        check_real("kl_threshold", owner, kl_threshold, low=0)
    check_int("kl_rank", owner, kl_rank, low=1)
    check_choice("measure", owner, measure, ("entropy", "variance"))
    seed = check_int("seed", owner, seed, low=0)
    clip = check_bool("clip", owner, clip)
    g = torch.Generator().manual_seed(seed)
    Z = probe_candidates(
        x_star.to(ctx_x.dtype),
        ctx_x,
        num_z,
        perturbation_std,
        perturb_about,
        decimal_places,
        num_probes,
        generator=g,
    )
    bound = probe_bound(
        pred,
        ctx_x,
        ctx_y,
        x_star,
        Z,
        num_permutations,
        g,
        num_u_samples=num_u_samples,
        batch_size=batch_size,
        base=base,
    )
    va = (bound.va if measure == "entropy" else bound.va_var).double().numpy()
    total = bound.total if measure == "entropy" else bound.total_var
    kl = bound.kl.double().numpy()
    best, kept = select_probe(va, kl, kl_threshold=kl_threshold, kl_rank=kl_rank)
    candidates = {
        "z": Z.numpy(),
        "va": va,
        "kl": kl,
        "kept": kept,
        "num_candidates": np.array(len(Z)),
    }
    if best is None:
        return VUDResult(total, math.nan, math.nan, None, candidates, passed=False)
    aleatoric = float(va[best])
    clipped = clip and aleatoric > total
    if clipped:
        aleatoric = total
    return VUDResult(
        total, aleatoric, total - aleatoric, Z[best].numpy(), candidates, True, clipped
    )
