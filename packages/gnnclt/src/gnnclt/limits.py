"""The limits of normalised poly-GNN embeddings on a sparse CSBM (leading order in nu, walk
expansion of ``A^k X``; the paper's CLT and its Gaussian-mixture limit).

With ``M = B diag(pi)`` and the normalised embedding ``h_i = H_i / (a_k nu^k)``:

* class means ``m^{(k)} = M^k U`` (row c), since a class-c node has on average
  ``nu M[c, c']`` class-c' neighbours;
* second moments ``S^{(0)}_c = mu_c mu_c^T + Sigma`` and ``S^{(j)}_c = m^{(j)}_c m^{(j)T}_c``
  (j >= 1);
* covariances ``Gamma^{(k)}_c = sum_{c'} M[c, c'] S^{(k-1)}_{c'}``: the first-hop edge noise
  dominates, and the feature noise Sigma survives only for k = 1;
* centred CLT: ``sqrt(nu) (h_i - E[h_i | z_i])`` -> ``sum_c pi_c N(0, Gamma^{(k)}_c)``;
  uncentred: ``(h_i, z_i)`` ~ ``sum_c pi_c delta_c x N(m^{(k)}_c, Gamma^{(k)}_c / nu)``;
* oversmoothing: M is similar to the symmetric ``diag(pi)^{1/2} B diag(pi)^{1/2}`` with
  eigenvalues ``lambda_1 > |lambda_2| >= ...``; ``M^k U / lambda_1^k`` tends to a rank-one
  matrix and the spread of the class means off that line decays like ``(|lambda_2|/lambda_1)^k``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gnnclt._validate import check_k, check_params
from gnnclt.params import CSBMParams
from gnnclt.sampling import sqrt_psd
from paperkit import param_error
from paperkit.checks import check_array, check_bool, check_int, check_real, describe

__all__ = [
    "GaussianMixtureSpec",
    "collapse_ratio",
    "limit_covariances",
    "limit_means",
    "limit_mixture",
    "predicted_collapse",
    "spectral_gap_ratio",
]


def limit_means(params: CSBMParams, k: int) -> np.ndarray:
    """Limit class means of ``h = H / (a_k nu^k)``: ``M^k U``, shape ``(K, d)``.

    ``k >= 1`` (ValueError otherwise). No NaN can occur (``params`` is validated).

    >>> p = CSBMParams([1.0], [[2.0]], [[1.0, -1.0]], [[1.0, 0.0], [0.0, 1.0]])
    >>> limit_means(p, 3).tolist()
    [[8.0, -8.0]]
    """
    params = check_params("limit_means", params)
    k = check_k("limit_means", k)
    return np.linalg.matrix_power(params.M, k) @ params.U


def limit_covariances(params: CSBMParams, k: int) -> np.ndarray:
    """Limit class covariances ``Gamma^{(k)}_c = sum_{c'} M[c, c'] S^{(k-1)}_{c'}``, ``(K, d, d)``,
    of ``sqrt(nu) (h_i - E[h_i | z_i])`` (``S`` as in the module docstring). ``k >= 1``.
    No NaN can occur (``params`` is validated).

    >>> p = CSBMParams([1.0], [[2.0]], [[1.0]], [[0.5]])
    >>> limit_covariances(p, 1).tolist(), limit_covariances(p, 2).tolist()
    ([[[3.0]]], [[[8.0]]])
    """
    params = check_params("limit_covariances", params)
    k = check_k("limit_covariances", k)
    if k == 1:
        S = params.U[:, :, None] * params.U[:, None, :] + params.Sigma[None]
    else:
        m = np.linalg.matrix_power(params.M, k - 1) @ params.U
        S = m[:, :, None] * m[:, None, :]
    return np.einsum("ab,bij->aij", params.M, S)


@dataclass(frozen=True)
class GaussianMixtureSpec:
    """A Gaussian mixture ``sum_c weights[c] N(means[c], covs[c])`` (covariances may be singular),
    validated on construction: NaN or inf in any array raises ``ValueError``.

    Attributes:
        weights: ``(K,)`` probabilities. means: ``(K, d)``. covs: ``(K, d, d)`` PSD.
    """

    weights: np.ndarray
    means: np.ndarray
    covs: np.ndarray

    def __post_init__(self) -> None:
        owner, dims = "GaussianMixtureSpec", {}
        w = check_array("weights", owner, self.weights, shape=("K",), dims=dims).astype(float)
        m = check_array("means", owner, self.means, shape=("K", "d"), dims=dims).astype(float)
        C = check_array("covs", owner, self.covs, shape=("K", "d", "d"), dims=dims).astype(float)
        if (w < 0).any() or abs(w.sum() - 1) > 1e-6:
            raise param_error("weights", owner, "a probability vector (>= 0, sum 1)", describe(w))
        scale = max(1.0, float(np.abs(C).max()))
        if not np.allclose(C, C.transpose(0, 2, 1), rtol=0, atol=1e-8 * scale):
            raise param_error("covs", owner, "symmetric matrices", describe(C))
        if np.linalg.eigvalsh((C + C.transpose(0, 2, 1)) / 2).min() < -1e-10 * scale:
            raise param_error("covs", owner, "positive semi-definite matrices", describe(C))
        object.__setattr__(self, "weights", w / w.sum())
        object.__setattr__(self, "means", m)
        object.__setattr__(self, "covs", C)

    def sample(self, n: int, rng: Any = None, labels: Any = None) -> tuple[np.ndarray, np.ndarray]:
        """``n`` draws ``(Y (n, d), z (n,))``; ``rng`` a numpy Generator, a seed or None.

        ``labels`` (optional ``(n,)`` ints in ``[0, K)``): draw component ``labels[i]`` for row
        i instead of i.i.d. labels (a stratified sample with given label counts).
        """
        n = check_int("n", "GaussianMixtureSpec.sample", n, low=1, high=10**8)
        rng = _generator("GaussianMixtureSpec.sample", rng)
        K = len(self.weights)
        if labels is None:
            z = rng.choice(K, size=n, p=self.weights)
        else:
            z = check_array("labels", "GaussianMixtureSpec.sample", labels, shape=(n,), kind="int")
            if (z < 0).any() or (z >= K).any():
                raise param_error("labels", "GaussianMixtureSpec.sample", f"in [0, {K})", z)
        roots = np.stack([sqrt_psd(C) for C in self.covs])
        noise = rng.standard_normal((n, self.means.shape[1]))
        Y = self.means[z] + np.einsum("nj,nij->ni", noise, roots[z])
        return Y, z.astype(np.int64)

    def log_posterior(self, Y: np.ndarray) -> np.ndarray:
        """``log weights[c] + log N(Y; means[c], covs[c])`` up to a per-row constant, ``(n, K)``
        (pseudo-inverse and pseudo-determinant for singular covariances)."""
        Y = check_array(
            "Y", "GaussianMixtureSpec.log_posterior", Y, shape=(None, self.means.shape[1])
        )
        out = np.empty((Y.shape[0], len(self.weights)))
        for c, (w, mu, C) in enumerate(zip(self.weights, self.means, self.covs, strict=True)):
            vals, vecs = np.linalg.eigh(C)
            keep = vals > 1e-12 * max(vals.max(), 1e-300)
            proj = (Y - mu) @ vecs[:, keep]
            out[:, c] = (
                np.log(max(w, 1e-300))
                - 0.5 * (proj**2 / vals[keep]).sum(1)
                - 0.5 * np.log(vals[keep]).sum()
            )
        return out

    def bayes_accuracy(self, n: int = 20_000, rng: Any = None) -> float:
        """Monte Carlo accuracy of the Bayes (QDA with the true parameters) classifier on ``n``
        draws of the mixture."""
        Y, z = self.sample(n, rng)
        return float((self.log_posterior(Y).argmax(1) == z).mean())


def _generator(owner: str, rng: Any) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    return np.random.default_rng(check_int("rng", owner, rng, low=0))


def limit_mixture(
    params: CSBMParams, k: int, nu: float | None = None, centered: bool = True
) -> GaussianMixtureSpec:
    """The limiting Gaussian mixture of the embeddings.

    ``centered=True``: law of ``sqrt(nu) (h_i - E[h_i | z_i])``, ``sum_c pi_c N(0, Gamma_c)``
    (``nu`` unused). ``centered=False``: law of ``h_i``, ``sum_c pi_c N(m^{(k)}_c, Gamma_c / nu)``
    (``nu > 0`` required, ValueError if None). NaN or inf ``nu`` raises ``ValueError``.

    >>> p = CSBMParams([0.5, 0.5], [[2.0, 1.0], [1.0, 2.0]], [[1.0], [-1.0]], [[0.25]])
    >>> mix = limit_mixture(p, 1, nu=100.0, centered=False)
    >>> mix.means.ravel().tolist(), round(float(mix.covs[0, 0, 0]), 6)
    ([0.5, -0.5], 0.01875)
    """
    owner = "limit_mixture"
    params = check_params(owner, params)
    k = check_k(owner, k)
    centered = check_bool("centered", owner, centered)
    if nu is not None:
        nu = check_real("nu", owner, nu, low=0, low_open=True)
    covs = limit_covariances(params, k)
    if centered:
        return GaussianMixtureSpec(params.pi.copy(), np.zeros((params.K, params.d)), covs)
    if nu is None:
        raise param_error("nu", owner, "a positive number when centered=False", nu)
    return GaussianMixtureSpec(params.pi.copy(), limit_means(params, k), covs / nu)


def spectral_gap_ratio(params: CSBMParams) -> float:
    """``|lambda_2| / lambda_1`` of ``M = B diag(pi)`` (eigenvalues of the similar symmetric
    ``diag(pi)^{1/2} B diag(pi)^{1/2}``, ordered by modulus); 0 when K = 1. No NaN can occur
    (``params`` is validated).

    >>> p = CSBMParams([0.5, 0.5], [[2.0, 1.0], [1.0, 2.0]], [[1.0], [-1.0]], [[0.25]])
    >>> round(spectral_gap_ratio(p), 12)
    0.333333333333
    """
    params = check_params("spectral_gap_ratio", params)
    r = np.sqrt(params.pi)
    lam = np.sort(np.abs(np.linalg.eigvalsh(r[:, None] * params.B * r[None, :])))[::-1]
    return float(lam[1] / lam[0]) if len(lam) > 1 else 0.0


def predicted_collapse(params: CSBMParams, k: int) -> float:
    """The predicted decay of the class means' spread off the Perron line:
    ``(|lambda_2| / lambda_1)^k``. ``k >= 1``; no NaN can occur (``params`` is validated)."""
    k = check_k("predicted_collapse", k)
    return spectral_gap_ratio(params) ** k


def collapse_ratio(means: Any) -> float:
    """``sigma_2 / sigma_1`` of the centred mean matrix ``means - mean over rows``, ``(K, d)``,
    K >= 2: 0 when the class means lie on one line (complete 1-D collapse).

    NaN or inf raise ``ValueError``, as do means that are all equal (no direction at all).

    >>> collapse_ratio([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]])
    0.0
    """
    owner = "collapse_ratio"
    m = check_array("means", owner, means, shape=("K", "d")).astype(float)
    if m.shape[0] < 2:
        raise param_error("means", owner, "of shape (K, d) with K >= 2", describe(m))
    s = np.linalg.svd(m - m.mean(0), compute_uv=False)
    if s[0] <= 1e-300:
        raise param_error("means", owner, "not all equal (no direction to collapse onto)", m)
    return float(s[1] / s[0]) if len(s) > 1 else 0.0
