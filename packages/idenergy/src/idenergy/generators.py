"""Image generators fitted on the natural train split only: the "generated" test images.

Five families, each leaving a different kind of trace:

- :class:`PCAGaussianGenerator`: a Gaussian in the top-k principal subspace (missing detail);
- :class:`PixelGMMGenerator`: a Gaussian mixture over pixels (correlated pixel noise);
- :class:`TinyVAEGenerator`: a small MLP variational auto-encoder (blur);
- :class:`UpsampleArtifactGenerator`: down-sampling then a stride-``factor`` up-sampling layer
  (``"transposed"``: the checkerboard of an uneven transposed convolution);
- :class:`MixupGenerator`: convex combinations of two natural images (ghosting).

Every generator has ``fit(X)`` and ``sample(n, seed) -> (n, C, H, W)`` in [0, 1], and remembers a
hash of every image it was fitted on (``fitted_hashes_``), so a test can assert it never saw a test
image.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from idenergy._inputs import as_images
from paperkit import check_choice, check_int, check_real, param_error

__all__ = [
    "MixupGenerator",
    "PCAGaussianGenerator",
    "PixelGMMGenerator",
    "TinyVAEGenerator",
    "UpsampleArtifactGenerator",
    "image_hashes",
]


def image_hashes(X: Any) -> frozenset[str]:
    """SHA-1 of every image's float32 bytes: ``(N, C, H, W) -> frozenset`` (for split checks).
    NaN refused.

    >>> len(image_hashes(np.zeros((3, 1, 8, 8))))
    1
    """
    x = as_images("X", "image_hashes", X).numpy()
    return frozenset(hashlib.sha1(np.ascontiguousarray(img).tobytes()).hexdigest() for img in x)


class _Generator:
    """fit/sample plumbing: input checks, the fitted shape and the hashes of the fitted images."""

    def fit(self, X: Any) -> _Generator:
        x = as_images("X", type(self).__name__, X)
        if x.shape[0] < 2:
            raise param_error("X", type(self).__name__, "at least 2 images", f"{x.shape[0]}")
        self.shape_ = tuple(x.shape[1:])
        self.fitted_hashes_ = image_hashes(x)
        self._fit(x)
        return self

    def sample(self, n: int, seed: int = 0) -> np.ndarray:
        """``n`` generated images ``(n, C, H, W)``, float32 in [0, 1]; the same ``seed`` gives the
        same images."""
        owner = f"{type(self).__name__}.sample"
        n = check_int("n", owner, n, low=1, high=1_000_000)
        seed = check_int("seed", owner, seed, low=0)
        if not hasattr(self, "shape_"):
            raise param_error(
                "self", owner, "a fitted generator (call fit first)", "unfitted", cls=TypeError
            )
        out = self._sample(n, seed).reshape(n, *self.shape_)
        return np.clip(out, 0.0, 1.0).astype(np.float32)

    def _fit(self, x: torch.Tensor) -> None:  # pragma: no cover - every generator defines it
        raise NotImplementedError

    def _sample(self, n: int, seed: int) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError


class PCAGaussianGenerator(_Generator):
    """x = mu + sum_j z_j sqrt(lambda_j) u_j, z ~ N(0, I_k), over the top-``k`` principal axes u_j
    (variances lambda_j) of the flattened training images, clipped to [0, 1].

    >>> g = PCAGaussianGenerator(k=4).fit(np.random.default_rng(0).random((50, 1, 8, 8)))
    >>> g.sample(3, seed=1).shape
    (3, 1, 8, 8)
    """

    def __init__(self, k: int = 16) -> None:
        self.k = check_int("k", "PCAGaussianGenerator", k, low=1, high=4096)

    def _fit(self, x: torch.Tensor) -> None:
        from sklearn.decomposition import PCA

        flat = x.reshape(x.shape[0], -1).double().numpy()
        k = min(self.k, *flat.shape)
        pca = PCA(n_components=k, svd_solver="full").fit(flat)
        self.mean_, self.components_ = pca.mean_, pca.components_
        self.std_ = np.sqrt(pca.explained_variance_)

    def _sample(self, n: int, seed: int) -> np.ndarray:
        z = np.random.default_rng(seed).standard_normal((n, self.std_.size))
        return self.mean_ + (z * self.std_) @ self.components_


class PixelGMMGenerator(_Generator):
    """A Gaussian mixture (``n_components``, full covariances + ``reg_covar`` I) over the flattened
    pixels, fitted by EM (scikit-learn); samples drawn component by component.

    >>> g = PixelGMMGenerator(n_components=2).fit(np.random.default_rng(0).random((40, 1, 8, 8)))
    >>> g.sample(5, seed=0).shape
    (5, 1, 8, 8)
    """

    def __init__(
        self, n_components: int = 10, reg_covar: float = 1e-3, max_iter: int = 100
    ) -> None:
        owner = "PixelGMMGenerator"
        self.n_components = check_int("n_components", owner, n_components, low=1, high=1000)
        self.reg_covar = check_real("reg_covar", owner, reg_covar, low=0, low_open=True)
        self.max_iter = check_int("max_iter", owner, max_iter, low=1, high=100_000)

    def _fit(self, x: torch.Tensor) -> None:
        from sklearn.mixture import GaussianMixture

        flat = x.reshape(x.shape[0], -1).double().numpy()
        gmm = GaussianMixture(
            min(self.n_components, flat.shape[0]),
            covariance_type="full",
            reg_covar=self.reg_covar,
            max_iter=self.max_iter,
            random_state=0,
        ).fit(flat)
        self.weights_, self.means_ = gmm.weights_, gmm.means_
        self.chol_ = np.linalg.cholesky(gmm.covariances_)

    def _sample(self, n: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        comp = rng.choice(self.weights_.size, size=n, p=self.weights_ / self.weights_.sum())
        z = rng.standard_normal((n, self.means_.shape[1]))
        return self.means_[comp] + np.einsum("nij,nj->ni", self.chol_[comp], z)


class _VAE(nn.Module):
    def __init__(self, dim: int, latent: int, hidden: int) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, 2 * latent))
        self.dec = nn.Sequential(nn.Linear(latent, hidden), nn.GELU(), nn.Linear(hidden, dim))


class TinyVAEGenerator(_Generator):
    """A VAE with MLP encoder/decoder (``hidden`` units, ``latent`` dims), Bernoulli likelihood on
    pixels: loss ``BCE(x, sigmoid(dec(z))) + KL(q(z|x) || N(0, I))`` (summed per image), Adam for
    ``steps`` batches of 128. Samples are the decoder means sigmoid(dec(z)), z ~ N(0, I).

    >>> g = TinyVAEGenerator(latent=2, steps=5).fit(np.random.default_rng(0).random((20, 1, 8, 8)))
    >>> g.sample(2, seed=0).shape
    (2, 1, 8, 8)
    """

    def __init__(
        self, latent: int = 8, steps: int = 1500, hidden: int = 256, seed: int = 0
    ) -> None:
        owner = "TinyVAEGenerator"
        self.latent = check_int("latent", owner, latent, low=1, high=4096)
        self.steps = check_int("steps", owner, steps, low=1, high=1_000_000)
        self.hidden = check_int("hidden", owner, hidden, low=1, high=65536)
        self.seed = check_int("seed", owner, seed, low=0)

    def _fit(self, x: torch.Tensor) -> None:
        torch.manual_seed(self.seed)
        gen = torch.Generator().manual_seed(self.seed)
        flat = x.reshape(x.shape[0], -1)
        self.model_ = _VAE(flat.shape[1], self.latent, self.hidden)
        opt = torch.optim.Adam(self.model_.parameters(), lr=1e-3)
        for _ in range(self.steps):
            batch = flat[torch.randint(0, flat.shape[0], (128,), generator=gen)]
            mu, logvar = self.model_.enc(batch).chunk(2, dim=1)
            z = mu + torch.exp(0.5 * logvar) * torch.randn(mu.shape, generator=gen)
            rec = F.binary_cross_entropy_with_logits(self.model_.dec(z), batch, reduction="sum")
            kl = -0.5 * torch.sum(1 + logvar - mu**2 - logvar.exp())
            loss = (rec + kl) / batch.shape[0]
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        self.model_.eval()

    @torch.no_grad()
    def _sample(self, n: int, seed: int) -> np.ndarray:
        z = torch.randn(n, self.latent, generator=torch.Generator().manual_seed(seed))
        return torch.sigmoid(self.model_.dec(z)).numpy()


#: Up-sampling layers of :class:`UpsampleArtifactGenerator`.
UPSAMPLERS = ("transposed", "nearest", "bilinear")


class UpsampleArtifactGenerator(_Generator):
    """Natural content through a generator's last layer: a random training image is average-pooled
    by ``factor`` and up-sampled back by a stride-``factor`` layer.

    ``mode="transposed"``: zero insertion then a separable kernel k = b + strength (c - b), where b
    is the bilinear kernel (tent of half-width ``factor``) and c a comb that moves weight from the
    positions that copy an input pixel to those interpolated between two: the uneven overlap of a
    transposed convolution, giving a checkerboard of relative amplitude ``strength`` (mean
    brightness kept). ``"nearest"`` and ``"bilinear"``: plain interpolation.

    >>> g = UpsampleArtifactGenerator().fit(np.random.default_rng(0).random((10, 1, 8, 8)))
    >>> g.sample(2, seed=0).shape
    (2, 1, 8, 8)
    """

    def __init__(self, factor: int = 2, mode: str = "transposed", strength: float = 0.2) -> None:
        owner = "UpsampleArtifactGenerator"
        self.factor = check_int("factor", owner, factor, low=2, high=8)
        self.mode = check_choice("mode", owner, mode, UPSAMPLERS)
        self.strength = check_real("strength", owner, strength, low=0, high=1)

    def _fit(self, x: torch.Tensor) -> None:
        if x.shape[2] % self.factor or x.shape[3] % self.factor:
            raise param_error(
                "X",
                type(self).__name__,
                f"image sides divisible by factor={self.factor}",
                f"shape {tuple(x.shape)}",
            )
        self.images_ = x.clone()

    def kernel(self) -> torch.Tensor:
        """The 1-D kernel, length 2 factor - 1: the tent 1 - |t|/factor with the centre tap set
        to 1 - strength and the others scaled by 1 + strength / (factor - 1) (sum kept at factor).
        """
        f = self.factor
        taps = torch.arange(-(f - 1), f, dtype=torch.float32)
        k = (1 - taps.abs() / f) * (1 + self.strength / (f - 1))
        k[f - 1] = 1 - self.strength
        return k

    def _sample(self, n: int, seed: int) -> np.ndarray:
        gen = torch.Generator().manual_seed(seed)
        x = self.images_[torch.randint(0, self.images_.shape[0], (n,), generator=gen)]
        f = self.factor
        low = F.avg_pool2d(x, f)
        if self.mode != "transposed":
            return F.interpolate(low, scale_factor=f, mode=self.mode).numpy()
        c = x.shape[1]
        k1 = self.kernel()
        k2 = torch.outer(k1, k1).expand(c, 1, -1, -1).contiguous()
        # a transposed conv with stride f and padding f - 1 puts input pixel i at output f i
        up = F.conv_transpose2d(low, k2, stride=f, padding=f - 1, output_padding=f - 1, groups=c)
        return up[..., : x.shape[2], : x.shape[3]].numpy()


class MixupGenerator(_Generator):
    """lambda x_a + (1 - lambda) x_b for two random training images, lambda ~ U[low, high].

    >>> g = MixupGenerator().fit(np.random.default_rng(0).random((10, 1, 8, 8)))
    >>> g.sample(4, seed=0).shape
    (4, 1, 8, 8)
    """

    def __init__(self, low: float = 0.3, high: float = 0.7) -> None:
        self.low = check_real("low", "MixupGenerator", low, low=0, high=1)
        self.high = check_real("high", "MixupGenerator", high, low=self.low, high=1)

    def _fit(self, x: torch.Tensor) -> None:
        self.images_ = x.clone()

    def _sample(self, n: int, seed: int) -> np.ndarray:
        rng = np.random.default_rng(seed)
        a, b = rng.integers(0, self.images_.shape[0], (2, n))
        lam = rng.uniform(self.low, self.high, (n, 1, 1, 1)).astype(np.float32)
        imgs = self.images_.numpy()
        return lam * imgs[a] + (1 - lam) * imgs[b]
