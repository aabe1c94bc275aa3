r"""Metrics of a predicted mask distribution against a set of annotations (numpy, binary masks).

With :math:`d(a, b) = 1 - \mathrm{IoU}(a, b)` and :math:`\mathrm{IoU}(\emptyset, \emptyset) = 1`:

* generalised energy distance :math:`D^2_{GED} = 2\,\mathbb E[d(s, y)] - \mathbb E[d(s, s')]
  - \mathbb E[d(y, y')]` (Kohl et al. 2018), the within-set expectations over all ordered pairs
  *including* :math:`i = j` (a V-statistic, so a set's GED to itself is exactly 0);
* HM-IoU: the mean IoU of a Hungarian matching between samples and annotations, the smaller set
  repeated to the size of the larger (Kohl et al. 2019);
* diversity: :math:`\mathbb E_{i \ne j}[d(s_i, s_j)]`;
* component-mode NMI: the normalised mutual information between each sample's mixture
  component and the annotator mode of its nearest annotation.

>>> import numpy as np
>>> a = np.array([[1, 1], [0, 0]], bool); b = np.array([[1, 0], [1, 0]], bool)
>>> iou(a, b)
0.3333333333333333
>>> ged(np.stack([a, b]), np.stack([a, b]))
0.0
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from paperkit import check_array, param_error

__all__ = [
    "component_mode_nmi",
    "diversity",
    "ged",
    "hm_iou",
    "iou",
    "latent_diagnostics",
    "pairwise_iou",
]

#: A latent dimension is active when its mean KL exceeds this many nats.
ACTIVE_KL = 0.01
MAX_SET = 4096


def check_masks(name: str, owner: str, masks: Any, shape, dims: dict) -> np.ndarray:
    """A non-empty, binary (bool or 0/1 integer) array of the given shape, as bool."""
    arr = check_array(name, owner, masks, shape=shape, dims=dims, kind=None)
    if arr.dtype.kind not in "biu":
        raise param_error(
            name, owner, "a boolean or 0/1 integer array", f"dtype {arr.dtype}", cls=TypeError
        )
    if arr.dtype.kind != "b" and not np.isin(arr, (0, 1)).all():
        raise param_error(
            name, owner, "binary (values 0 and 1 only)", f"values {np.unique(arr)[:5]}"
        )
    return arr.astype(bool)


def pairwise_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of every mask of ``a`` (N, H, W) with every mask of ``b`` (M, H, W): (N, M).

    NaN policy: masks are binary, so there is none; non-binary input is refused.
    """
    dims: dict = {}
    a = check_masks("a", "pairwise_iou", a, ("N", "H", "W"), dims)
    b = check_masks("b", "pairwise_iou", b, ("M", "H", "W"), dims)
    fa = a.reshape(len(a), -1).astype(np.float64)
    fb = b.reshape(len(b), -1).astype(np.float64)
    inter = fa @ fb.T
    union = fa.sum(1)[:, None] + fb.sum(1)[None, :] - inter
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(union > 0, inter / np.maximum(union, 1), 1.0)


def iou(a: np.ndarray, b: np.ndarray) -> float:
    r""":math:`|a \cap b| / |a \cup b|` of two masks of one shape; 1 when both are empty, 0 when
    exactly one is. NaN policy: masks are binary; non-binary input is refused."""
    dims: dict = {}
    a = check_masks("a", "iou", a, ("H", "W"), dims)
    b = check_masks("b", "iou", b, ("H", "W"), dims)
    return float(pairwise_iou(a[None], b[None])[0, 0])


def _sets(owner: str, samples: Any, gts: Any) -> tuple[np.ndarray, np.ndarray]:
    dims: dict = {}
    s = check_masks("samples", owner, samples, ("S", "H", "W"), dims)
    g = check_masks("gts", owner, gts, ("G", "H", "W"), dims)
    for name, arr in (("samples", s), ("gts", g)):
        if len(arr) > MAX_SET:
            raise param_error(name, owner, f"at most {MAX_SET} masks", len(arr))
    return s, g


def ged(samples: np.ndarray, gts: np.ndarray) -> float:
    r"""Squared generalised energy distance with :math:`d = 1 - \mathrm{IoU}`.

    :math:`2\,\overline{d(S, G)} - \overline{d(S, S)} - \overline{d(G, G)}`, each bar the mean
    over all ordered pairs, the :math:`i = j` pairs included in the within-set terms (so
    ``ged(A, A) == 0`` and ``ged(A, B) == ged(B, A)``).

    NaN policy: masks are binary; non-binary input is refused.

    Shapes: ``samples`` (S, H, W), ``gts`` (G, H, W).
    """
    s, g = _sets("ged", samples, gts)
    cross = 1 - pairwise_iou(s, g)
    within_s = 1 - pairwise_iou(s, s)
    within_g = 1 - pairwise_iou(g, g)
    return float(2 * cross.mean() - within_s.mean() - within_g.mean())


def _matching(s: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Hungarian matching maximising IoU, the smaller set tiled to the larger one's size:
    (matched sample index, matched gt index, IoU) per pair, one per member of the larger set."""
    n = max(len(s), len(g))
    si = np.resize(np.arange(len(s)), n) if len(s) < n else np.arange(n)
    gi = np.resize(np.arange(len(g)), n) if len(g) < n else np.arange(n)
    ious = pairwise_iou(s, g)[np.ix_(si, gi)]
    rows, cols = linear_sum_assignment(ious, maximize=True)
    return si[rows], gi[cols], ious[rows, cols]


def hm_iou(samples: np.ndarray, gts: np.ndarray) -> float:
    """Hungarian-matched IoU: the mean IoU of the best one-to-one matching between the
    samples and the annotations, the smaller set repeated to the larger one's size.

    NaN policy: masks are binary; non-binary input is refused.

    Shapes: ``samples`` (S, H, W), ``gts`` (G, H, W).
    """
    s, g = _sets("hm_iou", samples, gts)
    return float(_matching(s, g)[2].mean())


def diversity(samples: np.ndarray) -> float:
    """Mean :math:`1 - IoU` over the pairs ``i != j`` of the sample set; 0 for one sample.

    NaN policy: masks are binary; non-binary input is refused. Shapes: ``samples`` (S, H, W).
    """
    s = check_masks("samples", "diversity", samples, ("S", "H", "W"), {})
    if len(s) > MAX_SET:
        raise param_error("samples", "diversity", f"at most {MAX_SET} masks", len(s))
    if len(s) < 2:
        return 0.0
    d = 1 - pairwise_iou(s, s)
    return float(d.sum() / (len(s) * (len(s) - 1)))


def component_mode_nmi(
    comps: np.ndarray, samples: np.ndarray, gts: np.ndarray, modes: np.ndarray
) -> float:
    """NMI between each sample's component and the mode of the annotation matched to it.

    Per image, every sample gets the annotator mode of its nearest annotation (highest IoU; the
    first on ties). A balanced Hungarian matching, as in :func:`hm_iou`, would relabel samples
    whenever the samples are not spread over the modes in the annotators' proportions. The NMI
    (arithmetic normalisation, scikit-learn) is
    taken over all (component, mode) pairs of all images. 1: components are the modes.

    NaN policy: masks are binary and ids integer; anything else is refused.

    Shapes: ``comps`` (N, S) int, ``samples`` (N, S, H, W), ``gts`` (N, A, H, W),
    ``modes`` (N, A) int.
    """
    from sklearn.metrics import normalized_mutual_info_score

    owner = "component_mode_nmi"
    dims: dict = {}
    comps = check_array("comps", owner, comps, shape=("N", "S"), dims=dims, kind="int")
    s = check_masks("samples", owner, samples, ("N", "S", "H", "W"), dims)
    g = check_masks("gts", owner, gts, ("N", "A", "H", "W"), dims)
    modes = check_array("modes", owner, modes, shape=("N", "A"), dims=dims, kind="int")
    for name, ids in (("comps", comps), ("modes", modes)):
        if ids.min() < 0:
            raise param_error(name, owner, "non-negative ids", int(ids.min()))
    if dims["S"][0] > MAX_SET or dims["A"][0] > MAX_SET:
        raise param_error("samples", owner, f"at most {MAX_SET} masks per image", s.shape)
    labels_c, labels_m = [], []
    for n in range(len(s)):
        nearest = pairwise_iou(s[n], g[n]).argmax(1)
        labels_c.append(comps[n])
        labels_m.append(modes[n, nearest])
    return float(normalized_mutual_info_score(np.concatenate(labels_m), np.concatenate(labels_c)))


def latent_diagnostics(model: Any, loader: Iterable) -> dict[str, Any]:
    r"""Posterior-collapse diagnostics of a latent-variable model over a data loader.

    ``mean_sigma_prior``: the mean prior standard deviation (mixtures: weighted by
    :math:`\pi_p`); ``kl_per_dim`` (D,): the mean KL of posterior from prior per latent
    dimension (closed form, before any flow); ``active_dims``: dimensions whose mean KL exceeds
    0.01 nats (a collapsed dimension carries no information about ``y``).

    ``loader`` yields ``(x, y)`` batches (x (B, C, H, W) float, y (B, H, W) integer labels).
    NaN policy: as the model's (NaN or inf in ``x`` refused).
    """
    import torch

    owner = "latent_diagnostics"
    if not (hasattr(model, "kl_per_dim") and hasattr(model, "prior_sigma")):
        raise param_error(
            "model", owner, "a ProbUNet or GMMFlowSegNet", type(model).__name__, cls=TypeError
        )
    try:
        batches = iter(loader)
    except TypeError as exc:
        raise param_error(
            "loader", owner, "an iterable of (x, y) batches", type(loader).__name__, cls=TypeError
        ) from exc
    kl_sum, sigma_sum, n = None, 0.0, 0
    with torch.no_grad():
        for batch in batches:
            if not (isinstance(batch, (tuple, list)) and len(batch) == 2):
                raise param_error(
                    "loader",
                    owner,
                    "an iterable of (x, y) batches",
                    type(batch).__name__,
                    cls=TypeError,
                )
            x, y = batch
            kl = model.kl_per_dim(x, y).double()
            kl_sum = kl.sum(0) if kl_sum is None else kl_sum + kl.sum(0)
            sigma_sum += float(model.prior_sigma(x).double().sum())
            n += x.shape[0]
    if n == 0:
        raise param_error("loader", owner, "a non-empty iterable of (x, y) batches", "no batch")
    kl_per_dim = (kl_sum / n).numpy()
    return {
        "mean_sigma_prior": sigma_sum / n,
        "kl_per_dim": kl_per_dim,
        "active_dims": int((kl_per_dim > ACTIVE_KL).sum()),
    }
