"""Running statistics of a semi-bandit: counts, means and the pairwise covariance estimate.

Per arm :math:`N_i` (observations) and :math:`\\hat\\mu_i`; per pair :math:`N_{ij}` (rounds in
which both arms were observed), and from those rounds only

.. math:: \\hat\\Sigma_{ij} = \\frac{\\sum_s X_{s,i} X_{s,j} - \\frac{1}{N_{ij}}
          (\\sum_s X_{s,i})(\\sum_s X_{s,j})}{N_{ij} - 1} \\quad (N_{ij} \\ge 2),

and the worst case :math:`1/4` (rewards in [0, 1]) while :math:`N_{ij} < 2`. A round costs
:math:`O(m)` (:math:`O(m^2)` with the covariance).
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, check_bool, check_int, param_error

__all__ = ["SemiBanditStats"]

#: Variance bound of a [0, 1]-valued reward, used until a pair has two co-observations.
WORST_VARIANCE = 0.25


class SemiBanditStats:
    """Counts, sums and (``covariance=True``) co-observation sums of ``d`` base arms.

    >>> import numpy as np
    >>> s = SemiBanditStats(3)
    >>> s.update(np.array([0, 2]), np.array([1.0, 0.5]))
    >>> s.counts.tolist(), s.means.tolist()
    ([1, 0, 1], [1.0, 0.0, 0.5])
    """

    def __init__(self, d: int, covariance: bool = False) -> None:
        self.d = check_int("d", "SemiBanditStats", d, low=1)
        self.covariance = check_bool("covariance", "SemiBanditStats", covariance)
        self.counts = np.zeros(self.d, dtype=np.int64)
        self.sums = np.zeros(self.d)
        if self.covariance:
            self.pair_counts = np.zeros((self.d, self.d), dtype=np.int64)
            self.pair_sums = np.zeros((self.d, self.d))  # [i, j]: sum of X_i when i, j observed
            self.cross = np.zeros((self.d, self.d))  # [i, j]: sum of X_i X_j
            self._flat = (
                self.pair_counts.reshape(-1),
                self.pair_sums.reshape(-1),
                self.cross.reshape(-1),
            )
        self._cache: tuple[int, np.ndarray] | None = None

    def update(self, idx: np.ndarray, values: np.ndarray) -> None:
        """Record one round: arms ``idx`` (distinct ints) observed ``values``. Values are the
        environment's (finite by construction); no checks on this per-round path."""
        self.counts[idx] += 1
        self.sums[idx] += values
        if self.covariance:
            if self._cache is None or self._cache[0] is not idx:
                self._cache = (idx, (idx[:, None] * self.d + idx[None, :]).ravel())
            flat = self._cache[1]
            counts, sums, cross = self._flat
            counts[flat] += 1
            sums[flat] += np.repeat(values, len(values))
            cross[flat] += np.outer(values, values).ravel()

    @property
    def means(self) -> np.ndarray:
        """:math:`\\hat\\mu_i` (0 for an arm never observed)."""
        return self.sums / np.maximum(self.counts, 1)

    def covariance_matrix(self) -> np.ndarray:
        """:math:`\\hat\\Sigma` (d, d) from co-observed rounds; 1/4 where :math:`N_{ij} < 2`."""
        if not self.covariance:
            raise param_error("covariance", "SemiBanditStats.covariance_matrix", "True", False)
        n = self.pair_counts.astype(float)
        safe = np.maximum(n, 2.0)
        est = (self.cross - self.pair_sums * self.pair_sums.T / safe) / (safe - 1.0)
        return np.where(self.pair_counts >= 2, est, WORST_VARIANCE)

    @classmethod
    def from_history(cls, masks: np.ndarray, X: np.ndarray, covariance: bool = True):
        """The statistics recomputed from a played history: ``masks`` (n, d) bool, ``X`` (n, d)
        the draws (only the observed entries are used). NaN in observed entries is refused."""
        owner = "SemiBanditStats.from_history"
        dims: dict = {}
        masks = check_array("masks", owner, masks, shape=("n", "d"), dims=dims, kind="bool")
        X = check_array("X", owner, X, shape=("n", "d"), dims=dims)
        stats = cls(masks.shape[1], covariance)
        for mask, x in zip(masks, X, strict=True):
            idx = np.flatnonzero(mask)
            stats.update(idx, x[idx].astype(float))
        return stats
