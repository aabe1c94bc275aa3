"""Simulators of the paper's numerical section (Sec. 6): a location-scale SCM over the latents,
the five measurement kinds of the T-MEX demonstration, and the ATE scenario with models A/B/C.

The paper's representations come from multi-view CRL encoders; here the three regimes
(identified, corrupted, poorly identified) are emulated directly. T-MEX consumes only samples of
the representation, so this exercises the score exactly as it is used.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, check_bool, check_choice, check_int
from paperkit.errors import param_error
from tmex._checks import as_rng

MEASUREMENTS = (
    "perfect_linear",
    "perfect_linear_noise",
    "perfect_nonlinear",
    "perfect_nonlinear_noise",
    "mixed",
)
MODELS = ("A", "B", "C")
#: The true total effect of X on Y in :func:`ate_scenario` (direct 1 + through z2 1).
TRUE_ATE = 2.0
HIDDEN = 8


def leaky_tanh(x: np.ndarray) -> np.ndarray:
    """tanh(x) + 0.1 x: bounded curvature, unbounded range (the mechanisms' activation)."""
    return np.tanh(x) + 0.1 * x


class LocationScaleSCM:
    """Latents z_k = μ_k(pa_k) + s_k(pa_k) · ε_k, ε_k ~ N(0, 1), in the order 0..K−1.

    Nonlinear (default): μ_k(p) = w2ᵀ leaky_tanh(W1ᵀ p + b1) with 8 hidden units and
    s_k(p) = exp(0.5 tanh(vᵀ p)); linear: μ_k(p) = aᵀ p, s_k = 1. Weights are N(0, 1) scaled by
    1/√fan-in, drawn from ``seed``. Roots are standard normal.

    Args:
        adjacency: (K, K) strictly lower-triangular 0/1 matrix, adjacency[k, j] = 1 iff j → k.
        linear: linear-Gaussian mechanisms. seed: non-negative integer.

    >>> scm = LocationScaleSCM(np.tril(np.ones((3, 3)), -1), seed=0)
    >>> scm.sample(5).shape
    (5, 3)
    """

    def __init__(self, adjacency: Any, linear: bool = False, seed: int = 0) -> None:
        owner = "LocationScaleSCM"
        A = check_array("adjacency", owner, adjacency, ndim=2, shape=("K", "K"), kind=None)
        if A.dtype.kind not in "biuf" or not np.isin(A, (0, 1)).all():
            raise param_error("adjacency", owner, "a 0/1 matrix", A)
        if np.any(np.triu(A) != 0):
            raise param_error("adjacency", owner, "strictly lower-triangular", A)
        self.adjacency = A.astype(int)
        self.linear = check_bool("linear", owner, linear)
        self.seed = check_int("seed", owner, seed, low=0)
        gen = np.random.default_rng(self.seed)
        self._noise = np.random.default_rng([self.seed, 1])
        self.params: list[dict[str, np.ndarray]] = []
        for k in range(len(A)):
            q = int(self.adjacency[k].sum())
            scale = 1.0 / np.sqrt(max(q, 1))
            self.params.append(
                {
                    "a": gen.standard_normal(q) * scale,
                    "W1": gen.standard_normal((q, HIDDEN)) * scale,
                    "b1": gen.standard_normal(HIDDEN) * 0.5,
                    "w2": gen.standard_normal(HIDDEN) * (2.0 / np.sqrt(HIDDEN)),
                    "v": gen.standard_normal(q) * scale,
                }
            )

    def sample(self, n: int, rng: Any = None) -> np.ndarray:
        """(n, K) samples; noise from ``rng`` (None: the SCM's own stream, seeded by ``seed``).

        NaN policy: no inputs can be NaN; outputs are finite.
        """
        owner = "LocationScaleSCM.sample"
        n = check_int("n", owner, n, low=1)
        gen = self._noise if rng is None else as_rng("rng", owner, rng)
        K = len(self.adjacency)
        eps = gen.standard_normal((n, K))
        Z = np.zeros((n, K))
        for k, p in enumerate(self.params):
            pa = Z[:, self.adjacency[k] == 1]
            if pa.shape[1] == 0:
                Z[:, k] = eps[:, k]
            elif self.linear:
                Z[:, k] = pa @ p["a"] + eps[:, k]
            else:
                mu = leaky_tanh(pa @ p["W1"] + p["b1"]) @ p["w2"]
                Z[:, k] = mu + np.exp(0.5 * np.tanh(pa @ p["v"])) * eps[:, k]
        return Z


def measurement(kind: str, Z: Any, rng: Any = None) -> list[np.ndarray]:
    """Representation blocks Ẑ_1..Ẑ_K (each (n, 1)) measuring Z with W = I:

    * ``perfect_linear``: Ẑ_i = Z_i; ``perfect_linear_noise``: Z_i + N(0, 0.2²);
    * ``perfect_nonlinear``: 0.5 Z_i² + Z_i; ``perfect_nonlinear_noise``: that + N(0, 0.2²);
    * ``mixed``: 0.8 Z_i + 0.2 Σ_k Z_k (every block leaks every latent).

    NaN policy: NaN or inf in Z is refused with a ValueError.

    >>> Z = np.ones((2, 3))
    >>> np.round(measurement("mixed", Z)[0].ravel(), 12).tolist()
    [1.4, 1.4]
    """
    owner = "measurement"
    check_choice("kind", owner, kind, MEASUREMENTS)
    Z = np.asarray(check_array("Z", owner, Z, ndim=2, kind="real"), dtype=float)
    gen = as_rng("rng", owner, rng)
    if kind.startswith("perfect_linear"):
        out = Z.copy()
    elif kind.startswith("perfect_nonlinear"):
        out = 0.5 * Z**2 + Z
    else:
        out = 0.8 * Z + 0.2 * Z.sum(axis=1, keepdims=True)
    if kind.endswith("_noise"):
        out = out + 0.2 * gen.standard_normal(out.shape)
    return [out[:, [i]] for i in range(out.shape[1])]


def ate_scenario(n: int, model: str = "A", seed: int = 0) -> dict[str, Any]:
    """The ATE simulation (all noises N(0, 1)):

        z0, z1 ~ N(0, 1);  X = z0 + z1 + ε_X;  z2 = X + ε_2;  Y = X + 2 z0 + z2 + ε_Y,

    so the total effect of X on Y is 2 and {z0} is a valid adjustment set. The representation
    Ẑ0 is meant to measure z0 (W = [[1, 0, 0]]):

    * model ``"A"``: Ẑ0 = z0 + N(0, 0.05²) (identified);
    * model ``"B"``: Ẑ0 = c · (z0, z1, z2) + N(0, 0.1²), c with entries ±U(0.3, 1) drawn from
      ``seed`` (poorly identified);
    * model ``"C"``: Ẑ0 = Ẑ0_A + 0.2 z1 − 0.1 z2 (A corrupted, leaking the mediator).

    Returns dict(Z (n, 3), X (n,), Y (n,), Z_hat [(n, 1)], W (1, 3), covariates (n, 2) = (X, Y),
    true_ate = 2.0).

    >>> d = ate_scenario(10, "C", seed=0)
    >>> d["Z"].shape, d["Z_hat"][0].shape, d["true_ate"]
    ((10, 3), (10, 1), 2.0)
    """
    owner = "ate_scenario"
    n = check_int("n", owner, n, low=3)
    check_choice("model", owner, model, MODELS)
    seed = check_int("seed", owner, seed, low=0)
    gen = np.random.default_rng(seed)
    z0, z1, ex, e2, ey = gen.standard_normal((5, n))
    X = z0 + z1 + ex
    z2 = X + e2
    Y = X + 2 * z0 + z2 + ey
    Z = np.column_stack([z0, z1, z2])
    zhat_a = z0 + 0.05 * gen.standard_normal(n)
    if model == "A":
        zhat = zhat_a
    elif model == "C":
        zhat = zhat_a + 0.2 * z1 - 0.1 * z2
    else:
        c = gen.uniform(0.3, 1.0, 3) * gen.choice([-1.0, 1.0], 3)
        zhat = Z @ c + 0.1 * gen.standard_normal(n)
    return {
        "Z": Z,
        "X": X,
        "Y": Y,
        "Z_hat": [zhat[:, None]],
        "W": np.array([[1, 0, 0]]),
        "covariates": np.column_stack([X, Y]),
        "true_ate": TRUE_ATE,
    }
