"""Data for the experiments: a Gaussian mixture, sklearn digits with several images per instance,
and a Pl@ntNet-style setting where the number of views per instance varies.

Every generator draws the views of an instance i.i.d. given its class, the exchangeability under
which the class-conditional guarantee holds. Arguments are checked before anything is drawn:
NaN or inf refused, sizes whose arrays would not fit in memory refused (``PAPERKIT_MAX_BYTES``
raises the limit). ``rng`` is a numpy Generator (or a seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from mconformal.pvalues import as_rng
from paperkit import check_array, check_int, check_memory, check_real, param_error

__all__ = ["GaussianMixture", "PlantNetStyle", "digits_split", "same_class_views"]


@dataclass(frozen=True)
class GaussianMixture:
    """Classes :math:`y = 0..K-1` with means :math:`\\mu_y \\sim N(0, \\sigma^2 I_d)`; a view of
    class :math:`y` is :math:`\\mu_y + \\varepsilon`, :math:`\\varepsilon \\sim N(0, I_d)`.

    Build with :meth:`make`; the paper-like default is :math:`K = 10`, :math:`d = 20`,
    :math:`\\sigma = 1.5`.
    """

    means: np.ndarray

    def __post_init__(self) -> None:
        means = check_array("means", "GaussianMixture", self.means, ndim=2).astype(np.float64)
        if means.shape[0] < 2:
            raise param_error(
                "means", "GaussianMixture", "of shape (K, d) with K >= 2", means.shape
            )
        object.__setattr__(self, "means", means)

    @classmethod
    def make(
        cls, n_classes: int = 10, dim: int = 20, spread: float = 1.5, seed: int = 0
    ) -> GaussianMixture:
        """Draw the class means with ``seed``.

        >>> GaussianMixture.make(n_classes=3, dim=2).means.shape
        (3, 2)
        """
        owner = "GaussianMixture.make"
        n_classes = check_int("n_classes", owner, n_classes, low=2)
        dim = check_int("dim", owner, dim, low=1)
        spread = check_real("spread", owner, spread, low=0)
        seed = check_int("seed", owner, seed, low=0)
        check_memory("dim", owner, dim, 8 * n_classes * dim)
        return cls(spread * np.random.default_rng(seed).standard_normal((n_classes, dim)))

    @property
    def n_classes(self) -> int:
        """:math:`K`."""
        return self.means.shape[0]

    def single(
        self, n_per_class: int | np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Single views, ``n_per_class`` of each class (an int or one count per class):
        ``X (n, d)``, ``y (n,)``."""
        owner = "GaussianMixture.single"
        counts = _counts(owner, n_per_class, self.n_classes)
        check_memory("n_per_class", owner, n_per_class, 8 * counts.sum() * self.means.shape[1])
        y = np.repeat(np.arange(self.n_classes), counts)
        return self._views(y, 1, as_rng("rng", owner, rng))[:, 0], y

    def views(self, y: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        """``m`` i.i.d. views of each instance of class ``y``: ``(N, m, d)``."""
        owner = "GaussianMixture.views"
        y = check_array("y", owner, y, ndim=1, kind="int", nonempty=False)
        if y.size and (y.min() < 0 or y.max() >= self.n_classes):
            raise param_error("y", owner, f"labels in [0, {self.n_classes})", y.tolist()[:5])
        m = check_int("m", owner, m, low=1)
        check_memory("m", owner, m, 8 * len(y) * m * self.means.shape[1])
        return self._views(y, m, as_rng("rng", owner, rng))

    def _views(self, y: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        noise = rng.standard_normal((len(y), m, self.means.shape[1]))
        return self.means[y][:, None, :] + noise

    def multi(self, n: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``n`` instances, uniformly drawn classes, ``m`` views each: ``(n, m, d)``, ``y``.

        >>> X, y = GaussianMixture.make(3, 2).multi(4, 5, np.random.default_rng(0))
        >>> X.shape, y.shape
        ((4, 5, 2), (4,))
        """
        owner = "GaussianMixture.multi"
        n, m = check_int("n", owner, n, low=1), check_int("m", owner, m, low=1)
        check_memory("n", owner, n, 8 * n * m * self.means.shape[1])
        rng = as_rng("rng", owner, rng)
        y = rng.integers(self.n_classes, size=n)
        return self._views(y, m, rng), y


def digits_split(
    seed: int = 0, train: float = 0.4, calibration: float = 0.3
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """sklearn's bundled ``load_digits`` (1797 8x8 images, 10 classes), split stratified into
    ``train`` / ``calibration`` / test fractions (default 40 / 30 / 30 %). Pixels in [0, 16]."""
    owner = "digits_split"
    seed = check_int("seed", owner, seed, low=0)
    train = check_real("train", owner, train, low=0, high=1, low_open=True, high_open=True)
    calibration = check_real(
        "calibration", owner, calibration, low=0, high=1 - train, low_open=True, high_open=True
    )
    X, y = load_digits(return_X_y=True)
    X_train, X_rest, y_train, y_rest = train_test_split(
        X, y, train_size=train, stratify=y, random_state=seed
    )
    share = calibration / (1.0 - train)
    X_cal, X_test, y_cal, y_test = train_test_split(
        X_rest, y_rest, train_size=share, stratify=y_rest, random_state=seed + 1
    )
    return {"train": (X_train, y_train), "cal": (X_cal, y_cal), "test": (X_test, y_test)}


def same_class_views(
    X_pool: np.ndarray, y_pool: np.ndarray, m: int, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """``n`` multi-inputs, each ``m`` *distinct* pool images of one class (the class drawn
    uniformly among those with at least ``m`` images): "several photos of the same plant" under
    the i.i.d.-given-class assumption. Returns ``(n, m, d)`` and the labels ``(n,)``."""
    owner = "same_class_views"
    dims: dict = {}
    X_pool = check_array("X_pool", owner, X_pool, shape=("P", "d"), dims=dims)
    y_pool = check_array("y_pool", owner, y_pool, shape=("P",), dims=dims, kind=None)
    m, n = check_int("m", owner, m, low=1), check_int("n", owner, n, low=1)
    check_memory("n", owner, n, 8 * n * m * X_pool.shape[1])
    rng = as_rng("rng", owner, rng)
    classes, counts = np.unique(y_pool, return_counts=True)
    usable = classes[counts >= m]
    if usable.size == 0:
        raise param_error("m", "same_class_views", f"at most {counts.max()} (pool size)", m)
    y = rng.choice(usable, size=n)
    X = np.empty((n, m, X_pool.shape[1]))
    for label in usable:
        rows = np.flatnonzero(y == label)
        members = np.flatnonzero(y_pool == label)
        keys = rng.random((len(rows), len(members)))
        picks = np.argpartition(keys, m - 1, axis=1)[:, :m] if m < len(members) else None
        picks = np.argsort(keys, axis=1)[:, :m] if picks is None else picks
        X[rows] = X_pool[members[picks]]
    return X, y


@dataclass(frozen=True)
class PlantNetStyle:
    """A Pl@ntNet-like setting: many classes with long-tailed frequencies, and observations with a
    varying number of photos, most with one to three.

    - Classes :math:`y = 0..K-1` of a :class:`GaussianMixture`, with frequencies
      :math:`\\pi_y \\propto (y + 1)^{-a}` (``tail`` :math:`= a`).
    - Calibration: single photos, :math:`n_y = \\max(n_{min}, \\mathrm{round}(n_{cal} \\pi_y))`.
    - A test observation has :math:`m = \\min(1 + G, m_{max})` photos, :math:`G` geometric on
      :math:`\\{0, 1, ...\\}` with success probability ``p_more`` (mean about 2 photos).
    - Each photo is :math:`\\mu_y + \\tau \\varepsilon` with a photo-quality scale :math:`\\tau`
      drawn i.i.d. per photo from :math:`\\{1, 2\\}` (sharp or blurry); photos stay i.i.d. given
      the class.
    """

    mixture: GaussianMixture
    tail: float = 1.0
    n_cal: int = 1500
    n_min: int = 15
    p_more: float = 0.5
    m_max: int = 8

    def __post_init__(self) -> None:
        owner = "PlantNetStyle"
        if not isinstance(self.mixture, GaussianMixture):
            raise param_error(
                "mixture", owner, "a GaussianMixture", type(self.mixture).__name__, cls=TypeError
            )
        check_real("tail", owner, self.tail, low=0)
        check_int("n_cal", owner, self.n_cal, low=1)
        check_int("n_min", owner, self.n_min, low=1)
        check_real("p_more", owner, self.p_more, low=0, high=1, low_open=True)
        check_int("m_max", owner, self.m_max, low=1)
        check_memory("n_cal", owner, self.n_cal, 8 * self.n_cal * self.mixture.means.shape[1])

    @classmethod
    def make(
        cls, n_classes: int = 30, dim: int = 20, spread: float = 1.5, seed: int = 0
    ) -> PlantNetStyle:
        """The default setting: 30 classes in dimension 20 (the arguments of
        :meth:`GaussianMixture.make`)."""
        return cls(GaussianMixture.make(n_classes, dim, spread, seed))

    @property
    def frequencies(self) -> np.ndarray:
        """:math:`\\pi_y \\propto (y + 1)^{-a}`."""
        weights = (np.arange(self.mixture.n_classes) + 1.0) ** -self.tail
        return weights / weights.sum()

    def _photos(self, y: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
        scale = rng.choice([1.0, 2.0], size=(len(y), m, 1))
        return self.mixture.means[y][:, None, :] + scale * rng.standard_normal(
            (len(y), m, self.mixture.means.shape[1])
        )

    def calibration_counts(self) -> np.ndarray:
        """:math:`n_y` per class."""
        return np.maximum(self.n_min, np.round(self.n_cal * self.frequencies)).astype(int)

    def single(
        self, n_per_class: np.ndarray, rng: np.random.Generator
    ) -> tuple[np.ndarray, np.ndarray]:
        """Single photos, ``n_per_class[y]`` of class ``y``: ``X (n, d)``, ``y (n,)``."""
        owner = "PlantNetStyle.single"
        counts = _counts(owner, n_per_class, self.mixture.n_classes)
        dim = self.mixture.means.shape[1]
        check_memory("n_per_class", owner, n_per_class, 8 * counts.sum() * dim)
        y = np.repeat(np.arange(self.mixture.n_classes), counts)
        return self._photos(y, 1, as_rng("rng", owner, rng))[:, 0], y

    def observations(self, n: int, rng: np.random.Generator) -> tuple[list[np.ndarray], np.ndarray]:
        """``n`` test observations: a list of ``(m_i, d)`` arrays and the labels ``(n,)``.

        >>> setting = PlantNetStyle.make(n_classes=4, dim=3)
        >>> views, y = setting.observations(5, np.random.default_rng(0))
        >>> len(views), views[0].shape[1], y.shape
        (5, 3, (5,))
        """
        owner = "PlantNetStyle.observations"
        n = check_int("n", owner, n, low=1)
        check_memory("n", owner, n, 8 * n * self.m_max * self.mixture.means.shape[1])
        rng = as_rng("rng", owner, rng)
        y = rng.choice(self.mixture.n_classes, size=n, p=self.frequencies)
        m = np.minimum(rng.geometric(self.p_more, size=n), self.m_max)  # 1 + G, G on {0, 1, ...}
        views: list[np.ndarray] = [np.empty(0)] * n
        for size in np.unique(m):
            idx = np.flatnonzero(m == size)
            for i, photos in zip(idx, self._photos(y[idx], int(size), rng), strict=True):
                views[i] = photos
        return views, y


def _counts(owner: str, n_per_class: object, n_classes: int) -> np.ndarray:
    """One non-negative count per class, from an integer or a (K,) array."""
    counts = check_array("n_per_class", owner, n_per_class, kind="int", ndim=(0, 1))
    if counts.min() < 0 or (counts.ndim == 1 and counts.shape[0] != n_classes):
        raise param_error(
            "n_per_class", owner, f"an integer >= 0 or {n_classes} of them", counts.tolist()
        )
    return np.broadcast_to(counts, (n_classes,))
