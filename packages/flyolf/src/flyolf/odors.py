r"""Odors and their noisy environments (the paper's discrimination task, Sec. 2).

An odor is a vector of ORN firing rates over the glomeruli. Each prototype is

.. math:: r_c = r_0 + \lambda\, b + (1-\lambda)\, u_c,

with spontaneous rate :math:`r_0 = 8` Hz, a background pattern :math:`b` shared by all odors of a
task and an odor-specific pattern :math:`u_c`; a pattern activates a random 30% of the glomeruli
with rates drawn from an exponential distribution of mean 60 Hz (capped so that rates stay at most
200 Hz). :math:`\lambda = 0.4` gives a mean pairwise correlation between prototypes of about 0.3.

Environments (one fresh draw per trial):

* ``"gaussian"``: :math:`r' = \mathrm{clip}(r + \sigma s \xi, 0, 200)`, :math:`\xi \sim N(0, 1)`
  per glomerulus, :math:`s = 50` Hz;
* ``"background"``: :math:`r' = \mathrm{clip}(r + \tfrac{\sigma}{2} d, 0, 200)` with a random
  distractor odor pattern :math:`d`.

PN spiking adds intrinsic (Poisson-like) noise at every level.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch

from paperkit import check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["NOISE_KINDS", "OdorTask", "add_noise", "make_odor_task", "odor_prototypes"]

SPONTANEOUS_HZ = 8.0
MAX_RATE_HZ = 200.0
ACTIVE_FRACTION = 0.3
MEAN_ACTIVE_HZ = 60.0
BACKGROUND_WEIGHT = 0.4
NOISE_SCALE_HZ = 50.0
NOISE_KINDS = ("gaussian", "background")
#: Bound on the number of samples a task may hold (samples x glomeruli floats).
MAX_SAMPLES = 10_000_000


class OdorTask(NamedTuple):
    """A discrimination task: noisy ORN rates (Hz) and labels, plus the clean prototypes.

    ``X_train`` (C*n_train, n_orn), ``y_train`` (C*n_train,), ``X_test`` (C*n_test, n_orn),
    ``y_test`` (C*n_test,), ``prototypes`` (C, n_orn); float32 rates, int64 labels.
    """

    X_train: torch.Tensor
    y_train: torch.Tensor
    X_test: torch.Tensor
    y_test: torch.Tensor
    prototypes: torch.Tensor


def _pattern(rng: np.random.Generator, count: int, n_orn: int) -> np.ndarray:
    active = rng.random((count, n_orn)) < ACTIVE_FRACTION
    rates = np.minimum(
        rng.exponential(MEAN_ACTIVE_HZ, (count, n_orn)), MAX_RATE_HZ - SPONTANEOUS_HZ
    )
    return np.where(active, rates, 0.0)


def odor_prototypes(n_classes: int = 10, n_orn: int = 50, seed: int = 0) -> torch.Tensor:
    r"""Clean odor prototypes :math:`r_c = r_0 + \lambda b + (1-\lambda) u_c` (Hz), (C, n_orn).

    Rates lie in [8, 200] Hz. NaN policy: no array input.

    >>> p = odor_prototypes(4, 50, seed=1)
    >>> tuple(p.shape), bool(p.min() >= 8.0), bool(p.max() <= 200.0)
    ((4, 50), True, True)
    """
    owner = "odor_prototypes"
    n_classes = check_int("n_classes", owner, n_classes, low=1, high=MAX_SAMPLES)
    n_orn = check_int("n_orn", owner, n_orn, low=1, high=10_000)
    seed = check_int("seed", owner, seed, low=0)
    rng = np.random.default_rng(seed)
    background = _pattern(rng, 1, n_orn)
    specific = _pattern(rng, n_classes, n_orn)
    rates = SPONTANEOUS_HZ + BACKGROUND_WEIGHT * background + (1 - BACKGROUND_WEIGHT) * specific
    return torch.as_tensor(rates, dtype=torch.float32)


def _noisy(clean: np.ndarray, noise: float, kind: str, rng: np.random.Generator) -> np.ndarray:
    if kind == "gaussian":
        noisy = clean + noise * NOISE_SCALE_HZ * rng.standard_normal(clean.shape)
    else:
        noisy = clean + 0.5 * noise * _pattern(rng, clean.shape[0], clean.shape[1])
    return np.clip(noisy, 0.0, MAX_RATE_HZ)


def add_noise(
    rates: torch.Tensor, noise: float, noise_kind: str = "gaussian", seed: int = 0
) -> torch.Tensor:
    r"""One noisy trial per row of ``rates`` (B, n_orn) in the environment ``noise_kind`` at
    level :math:`\sigma` = ``noise`` (see the module docstring); rates clipped to [0, 200] Hz.

    NaN policy: NaN, inf and negative rates are refused (ValueError).

    >>> r = odor_prototypes(3, 50)
    >>> bool(torch.equal(add_noise(r, 0.0), r))
    True
    """
    owner = "add_noise"
    check_tensor("rates", owner, rates, ndim=2)
    if bool((rates < 0).any()):
        raise param_error("rates", owner, "non-negative (firing rates in Hz)", "negative rates")
    noise = check_real("noise", owner, noise, low=0, high=100)
    check_choice("noise_kind", owner, noise_kind, NOISE_KINDS)
    seed = check_int("seed", owner, seed, low=0)
    clean = rates.detach().cpu().double().numpy()
    out = _noisy(clean, noise, noise_kind, np.random.default_rng(seed))
    return torch.as_tensor(out, dtype=rates.dtype, device=rates.device)


def make_odor_task(
    n_classes: int = 10,
    n_train: int = 20,
    n_test: int = 50,
    noise: float = 0.5,
    noise_kind: str = "gaussian",
    seed: int = 0,
    n_orn: int = 50,
) -> OdorTask:
    r"""A C-way odor discrimination task: ``n_train`` and ``n_test`` noisy trials per class at
    level :math:`\sigma` = ``noise``, test trials drawn fresh (never seen in training).

    NaN policy: no array input; NaN or inf ``noise`` is refused.

    >>> task = make_odor_task(n_classes=3, n_train=2, n_test=4, noise=1.0, seed=0)
    >>> tuple(task.X_train.shape), tuple(task.X_test.shape), task.y_test.tolist()[:5]
    ((6, 50), (12, 50), [0, 0, 0, 0, 1])
    """
    owner = "make_odor_task"
    n_classes = check_int("n_classes", owner, n_classes, low=2, high=10_000)
    n_train = check_int("n_train", owner, n_train, low=1, high=MAX_SAMPLES)
    n_test = check_int("n_test", owner, n_test, low=1, high=MAX_SAMPLES)
    noise = check_real("noise", owner, noise, low=0, high=100)
    check_choice("noise_kind", owner, noise_kind, NOISE_KINDS)
    seed = check_int("seed", owner, seed, low=0)
    n_orn = check_int("n_orn", owner, n_orn, low=1, high=10_000)
    if n_classes * (n_train + n_test) > MAX_SAMPLES:
        raise param_error(
            "n_train", owner, f"with n_test at most {MAX_SAMPLES} samples in all", n_train
        )
    protos = odor_prototypes(n_classes, n_orn, seed).double().numpy()
    rng = np.random.default_rng([seed, 1])

    def trials(per_class: int) -> tuple[torch.Tensor, torch.Tensor]:
        labels = np.repeat(np.arange(n_classes), per_class)
        rates = _noisy(protos[labels], noise, noise_kind, rng)
        return torch.as_tensor(rates, dtype=torch.float32), torch.as_tensor(labels)

    X_train, y_train = trials(n_train)
    X_test, y_test = trials(n_test)
    return OdorTask(X_train, y_train, X_test, y_test, torch.as_tensor(protos, dtype=torch.float32))
