"""A CLT for polynomial GNNs on community-based graphs (Vinas, Amini, NeurIPS 2025).

On a sparse contextual stochastic block model (average degree nu -> infinity, nu / n -> 0), the
node embeddings ``H = p(A) X`` of a k-layer polynomial GNN, normalised by ``a_k nu^k``, have
centred fluctuations ``sqrt(nu)(h_i - E[h_i | z_i])`` converging in W1 to a mixture of centred
Gaussians, one per community; the uncentred embeddings are close to a Gaussian mixture with means
``M^k U`` and covariances ``Gamma^{(k)} / nu``. As k grows the means collapse onto one line
(oversmoothing), and cross-entropy training on the embeddings is training on that mixture.
This package simulates the model, computes the limits and compares the two.

>>> import numpy as np
>>> from gnnclt import CSBMParams, limit_means, sample_csbm, poly_gnn_embed
>>> p = CSBMParams([0.5, 0.5], [[3.0, 1.0], [1.0, 3.0]], [[1.0], [-1.0]], [[1.0]])
>>> A, X, z = sample_csbm(p, 20_000, 50.0, seed=0)
>>> h = poly_gnn_embed(A, X, [0.0, 1.0]) / 50.0
>>> means = np.array([h[z == c].mean(0) for c in range(2)])
>>> bool(np.abs(means - limit_means(p, 1)).max() < 0.05)
True

The public names are imported on first use (importing ``gnnclt`` imports no scikit-learn).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CSBMParams": "params",
        "GaussianMixtureSpec": "limits",
        "PolyGNNClassifier": "classifier",
        "clt_experiment": "experiment",
        "collapse_ratio": "limits",
        "limit_covariances": "limits",
        "limit_means": "limits",
        "limit_mixture": "limits",
        "poly_gnn_embed": "embedding",
        "predicted_collapse": "limits",
        "sample_csbm": "sampling",
        "spectral_gap_ratio": "limits",
        "w1_distance": "wasserstein",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from gnnclt.classifier import PolyGNNClassifier as PolyGNNClassifier
    from gnnclt.embedding import poly_gnn_embed as poly_gnn_embed
    from gnnclt.experiment import clt_experiment as clt_experiment
    from gnnclt.limits import GaussianMixtureSpec as GaussianMixtureSpec
    from gnnclt.limits import collapse_ratio as collapse_ratio
    from gnnclt.limits import limit_covariances as limit_covariances
    from gnnclt.limits import limit_means as limit_means
    from gnnclt.limits import limit_mixture as limit_mixture
    from gnnclt.limits import predicted_collapse as predicted_collapse
    from gnnclt.limits import spectral_gap_ratio as spectral_gap_ratio
    from gnnclt.params import CSBMParams as CSBMParams
    from gnnclt.sampling import sample_csbm as sample_csbm
    from gnnclt.wasserstein import w1_distance as w1_distance
