"""Seeding every random number generator a run touches."""

from __future__ import annotations

import os
import random

import numpy as np

from paperkit.devices import torch_available
from paperkit.errors import param_error

__all__ = ["seed_everything"]


def seed_everything(seed: int, *, deterministic: bool = False) -> np.random.Generator:
    """Seed Python's ``random``, NumPy's global state and torch (CPU and every CUDA device).

    Args:
        seed: a non-negative integer.
        deterministic: also ask torch for deterministic algorithms (``warn_only``), for runs
            that must be bit-identical on the GPU at some cost in speed.

    Returns:
        A fresh ``numpy.random.Generator`` seeded with ``seed``, the preferred way to draw
        numbers in new code.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise param_error("seed", "seed_everything", "a non-negative integer", seed)
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)  # noqa: NPY002 (the legacy global state is still widely used)
    os.environ["PYTHONHASHSEED"] = str(seed)
    if torch_available():
        import torch

        torch.manual_seed(seed)  # also seeds every CUDA device
        if deterministic:
            torch.use_deterministic_algorithms(True, warn_only=True)
    return np.random.default_rng(seed)
