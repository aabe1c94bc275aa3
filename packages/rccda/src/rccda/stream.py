"""Drifting streams (no downloads) and the prequential runner :func:`run_stream`.

At each step t a batch B_t ~ D_t arrives; the model predicts on it first (prequential loss l_t
and accuracy), the policy decides pi_t from l_t, and pi_t = 1 makes ``local_steps`` SGD steps on
B_t (the paper's Sec. 3 setting).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
from scipy.ndimage import rotate

from paperkit import check_array, check_choice, check_int, check_real
from rccda.models import LogisticModel, MLPModel
from rccda.policies import Policy

__all__ = [
    "DOMAINS",
    "DriftingDigitsStream",
    "GaussianDriftStream",
    "calibrate_threshold",
    "recovery_times",
    "run_stream",
    "stationary_twin",
]

#: The digit domains: image transforms of sklearn's 8x8 digits and one pure concept shift.
DOMAINS = ("identity", "rotate30", "rotate60", "invert", "noise4", "permute")
#: Domain order of the abrupt and gradual schedules (one segment per ``period`` steps).
ORDER = ("identity", "rotate30", "invert", "permute", "rotate60", "noise4")
#: The two alternating domains of the recurrent schedule (A, B, A, B, ...).
RECURRENT = ("identity", "invert")
MAX_T, MAX_BATCH = 10**6, 10**4


@lru_cache(maxsize=1)
def _digit_domains() -> tuple[dict[str, np.ndarray], np.ndarray]:
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    imgs = X.reshape(-1, 8, 8)
    noise = np.random.default_rng(12345).normal(0.0, 4.0, imgs.shape)
    out = {
        "identity": imgs,
        "rotate30": rotate(imgs, 30, axes=(1, 2), reshape=False, order=1),
        "rotate60": rotate(imgs, 60, axes=(1, 2), reshape=False, order=1),
        "invert": 16.0 - imgs,
        "noise4": imgs + noise,
        "permute": imgs,
    }
    return {k: (v.reshape(len(v), 64) / 16.0) for k, v in out.items()}, y


class DriftingDigitsStream:
    """sklearn digits (8x8, pixels / 16) under a drift schedule over ``T`` steps.

    Domains (:data:`DOMAINS`): identity, rotation by 30 and 60 degrees, pixel inversion 16 - x,
    additive Gaussian noise sd 4 (fixed per image), and the label permutation y -> (y + 1) mod 10
    (a pure concept shift). Schedules (``period`` = 400 steps):

    - ``"abrupt"``: the domain switches every ``period`` steps along :data:`ORDER`;
    - ``"gradual"``: the same order, mixing linearly from the previous domain over the first
      ``ramp`` = 200 steps of each segment;
    - ``"recurrent"``: A, B, A, B, ... with (A, B) = :data:`RECURRENT`.

    A batch of ``batch`` examples is drawn with replacement; each example comes from the new
    domain with probability w_t (the mixing weight) and from the previous one otherwise. The
    same ``seed`` gives the same batches.

    >>> s = DriftingDigitsStream("abrupt", T=1200, batch=4)
    >>> s.domain(0), s.domain(400), s.drift_points
    (('identity', 'identity', 1.0), ('identity', 'rotate30', 1.0), [400, 800])
    """

    n_features, n_classes = 64, 10

    def __init__(
        self,
        schedule: str = "abrupt",
        T: int = 2000,
        batch: int = 32,
        seed: int = 0,
        period: int = 400,
        ramp: int = 200,
    ) -> None:
        owner = "DriftingDigitsStream"
        self.schedule = check_choice(
            "schedule", owner, schedule, ("abrupt", "gradual", "recurrent")
        )
        self.T = check_int("T", owner, T, low=1, high=MAX_T)
        self.batch = check_int("batch", owner, batch, low=1, high=MAX_BATCH)
        self.seed = check_int("seed", owner, seed, low=0)
        self.period = check_int("period", owner, period, low=1, high=MAX_T)
        self.ramp = check_int("ramp", owner, ramp, low=1, high=self.period)
        self._rng = np.random.default_rng(self.seed)
        self._cache: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    @property
    def drift_points(self) -> list[int]:
        """The steps where a new domain starts (multiples of ``period`` below T)."""
        return list(range(self.period, self.T, self.period))

    def _segment(self, k: int) -> str:
        if self.schedule == "recurrent":
            return RECURRENT[k % 2]
        return ORDER[k % len(ORDER)]

    def domain(self, t: int) -> tuple[str, str, float]:
        """(previous domain, current domain, weight w_t of the current one) at step t."""
        t = check_int("t", "DriftingDigitsStream.domain", t, low=0, high=self.T - 1)
        k, offset = divmod(t, self.period)
        prev, cur = self._segment(max(k - 1, 0)), self._segment(k)
        w = min(1.0, (offset + 1) / self.ramp) if self.schedule == "gradual" and k > 0 else 1.0
        return prev, cur, w

    def batch_at(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """The batch (X (batch, 64), y (batch,)) of step t, a pure function of (seed, t)."""
        prev, cur, w = self.domain(t)
        data, labels = _digit_domains()
        rng = np.random.default_rng([self.seed, t])
        idx = rng.integers(0, len(labels), self.batch)
        from_cur = rng.random(self.batch) < w
        names = np.where(from_cur, cur, prev)
        X = np.empty((self.batch, 64))
        y = labels[idx].copy()
        for name in set(names.tolist()):
            rows = names == name
            X[rows] = data[name][idx[rows]]
            if name == "permute":
                y[rows] = (y[rows] + 1) % 10
        return X, y


class GaussianDriftStream:
    """Two Gaussian classes in R^d whose means +-r u_t rotate in a plane at angular speed
    ``speed`` (radians per step; smooth drift), with a jump of ``jump_angle`` every
    ``jump_every`` steps (abrupt drift): u_t = cos(phi_t) e_1 + sin(phi_t) e_2,
    phi_t = speed t + jump_angle floor(t / jump_every); x = +-r u_t + N(0, I_d).

    >>> s = GaussianDriftStream(T=1000, batch=8)
    >>> s.batch_at(3)[0].shape, s.drift_points
    ((8, 10), [500])
    """

    n_classes = 2

    def __init__(
        self,
        T: int = 2000,
        batch: int = 32,
        seed: int = 0,
        dim: int = 10,
        radius: float = 1.5,
        speed: float = 0.001,
        jump_every: int = 500,
        jump_angle: float = 2.0,
    ) -> None:
        owner = "GaussianDriftStream"
        self.T = check_int("T", owner, T, low=1, high=MAX_T)
        self.batch = check_int("batch", owner, batch, low=1, high=MAX_BATCH)
        self.seed = check_int("seed", owner, seed, low=0)
        self.dim = self.n_features = check_int("dim", owner, dim, low=2, high=10**4)
        self.radius = check_real("radius", owner, radius, low=0, low_open=True)
        self.speed = check_real("speed", owner, speed)
        self.jump_every = check_int("jump_every", owner, jump_every, low=1, high=MAX_T)
        self.jump_angle = check_real("jump_angle", owner, jump_angle)

    @property
    def drift_points(self) -> list[int]:
        """The steps of the jumps."""
        return list(range(self.jump_every, self.T, self.jump_every))

    def angle(self, t: int) -> float:
        """phi_t."""
        return self.speed * t + self.jump_angle * (t // self.jump_every)

    def batch_at(self, t: int) -> tuple[np.ndarray, np.ndarray]:
        """The batch (X (batch, dim), y (batch,) in {0, 1}) of step t."""
        t = check_int("t", "GaussianDriftStream.batch_at", t, low=0, high=self.T - 1)
        rng = np.random.default_rng([self.seed, t])
        y = rng.integers(0, 2, self.batch)
        u = np.zeros(self.dim)
        u[0], u[1] = np.cos(self.angle(t)), np.sin(self.angle(t))
        X = rng.standard_normal((self.batch, self.dim)) + np.outer(2 * y - 1, self.radius * u)
        return X, y


def recovery_times(
    acc: np.ndarray, drift_points: list[int], before: int = 50, smooth: int = 10, level: float = 0.9
) -> np.ndarray:
    """Steps after each drift point d until the ``smooth``-step moving average of the accuracy
    regains ``level`` x the mean accuracy of the ``before`` steps before d; a drift not recovered
    before the next one (or the end) counts the steps to it (censored). No drift point gives an
    empty array.

    NaN policy: NaN accuracies are refused with a ValueError naming ``acc``.

    >>> recovery_times([1.0] * 60 + [0.0] * 5 + [1.0] * 35, [60]).tolist()
    [14]
    """
    owner = "recovery_times"
    acc = check_array("acc", owner, acc, shape=("T",)).astype(float)
    if acc.size and (acc.min() < 0 or acc.max() > 1):
        raise ValueError(f"The 'acc' parameter of {owner} must hold accuracies in [0, 1].")
    before = check_int("before", owner, before, low=1)
    smooth = check_int("smooth", owner, smooth, low=1)
    level = check_real("level", owner, level, low=0, low_open=True, high=1)
    drift_points = [
        check_int("drift_points", owner, d, low=1, high=len(acc) - 1) for d in drift_points
    ]
    if any(b <= a for a, b in zip(drift_points, drift_points[1:], strict=False)):
        raise ValueError(f"The 'drift_points' parameter of {owner} must be increasing.")
    ends = [*drift_points[1:], len(acc)]
    out = []
    for d, end in zip(drift_points, ends[: len(drift_points)], strict=True):
        target = level * acc[max(d - before, 0) : d].mean()
        ma = np.convolve(acc[d:end], np.ones(smooth) / smooth, mode="full")[: end - d]
        counts = np.minimum(np.arange(1, end - d + 1), smooth)
        ma = ma * smooth / counts
        hit = np.flatnonzero(ma >= target)
        out.append(int(hit[0]) + 1 if hit.size else end - d)
    return np.array(out, dtype=int)


def _check_stream(stream: Any, owner: str) -> None:
    if not isinstance(stream, (DriftingDigitsStream, GaussianDriftStream)):
        raise TypeError(
            f"The 'stream' parameter of {owner} must be a DriftingDigitsStream or "
            f"GaussianDriftStream. Got {type(stream).__name__} instead."
        )


def run_stream(
    stream: DriftingDigitsStream | GaussianDriftStream,
    model: str = "logreg",
    policy: Policy | None = None,
    lr: float = 0.05,
    local_steps: int = 1,
    seed: int = 0,
) -> dict[str, Any]:
    """Run ``policy`` prequentially over ``stream`` with a fresh ``model`` (``"logreg"``,
    ``"mlp"``); the policy is reset first.

    Returns ``dict(acc (T,), loss (T,), updates (T,) bool, avg_cost, mean_acc, recovery_times)``:
    avg_cost = (1/T) sum_t c_t pi_t, mean_acc the mean prequential accuracy, recovery times as in
    :func:`recovery_times` at the stream's drift points. NaN policy: none can arise (losses are
    finite cross-entropies).
    """
    owner = "run_stream"
    _check_stream(stream, owner)
    model = check_choice("model", owner, model, ("logreg", "mlp"))
    if not isinstance(policy, Policy):
        raise TypeError(
            f"The 'policy' parameter of {owner} must be a rccda policy. "
            f"Got {type(policy).__name__} instead."
        )
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    local_steps = check_int("local_steps", owner, local_steps, low=1, high=1000)
    seed = check_int("seed", owner, seed, low=0)
    net = (LogisticModel if model == "logreg" else MLPModel)(
        stream.n_features, stream.n_classes, seed=seed
    )
    policy.reset()
    T = stream.T
    acc, loss, upd = np.empty(T), np.empty(T), np.zeros(T, bool)
    for t in range(T):
        X, y = stream.batch_at(t)
        loss[t], acc[t] = net.evaluate(X, y)
        if policy.step(loss[t]):
            upd[t] = True
            for _ in range(local_steps):
                net.sgd_step(X, y, lr)
    return {
        "acc": acc,
        "loss": loss,
        "updates": upd,
        "avg_cost": policy.rate_,
        "mean_acc": float(acc.mean()),
        "recovery_times": recovery_times(acc, stream.drift_points),
    }


def stationary_twin(
    stream: DriftingDigitsStream | GaussianDriftStream, T: int = 400, seed: int = 10**6
) -> DriftingDigitsStream | GaussianDriftStream:
    """The stream's first domain without drift, over ``T`` steps, from another ``seed``: the
    calibration stream of :func:`calibrate_threshold`."""
    if isinstance(stream, DriftingDigitsStream):
        return DriftingDigitsStream("abrupt", T=T, batch=stream.batch, seed=seed, period=T, ramp=1)
    return GaussianDriftStream(
        T=T,
        batch=stream.batch,
        seed=seed,
        dim=stream.dim,
        radius=stream.radius,
        speed=0.0,
        jump_every=T,
    )


def calibrate_threshold(
    stream: DriftingDigitsStream | GaussianDriftStream,
    model: str = "logreg",
    lr: float = 0.05,
    seed: int = 0,
    factor: float = 2.0,
) -> float:
    """The drift threshold tau of one stream, by one fixed rule (never tuned on the test stream):
    ``factor`` x the standard deviation of the batch loss over steps 200-399 of a 400-step
    stationary calibration run (:func:`stationary_twin`, another seed) that updates every step.
    tau thus sits above the batch-loss noise of a fitted model, the condition under which RCCDA
    saves budget in stationary phases."""
    from rccda.policies import AlwaysPolicy

    _check_stream(stream, "calibrate_threshold")
    factor = check_real("factor", "calibrate_threshold", factor, low=0)
    twin = stationary_twin(
        stream, seed=10**6 + check_int("seed", "calibrate_threshold", seed, low=0)
    )
    res = run_stream(twin, model, AlwaysPolicy(), lr=lr, seed=seed)
    return factor * float(np.std(res["loss"][200:]))
