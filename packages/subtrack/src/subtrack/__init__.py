"""SubTrack++: Grassmannian gradient-subspace tracking for memory-efficient training (NeurIPS 2025,
arXiv 2502.01586).

>>> import torch
>>> from subtrack import SubTrackAdamW, TinyLlama, make_param_groups
>>> model = TinyLlama(vocab=29, dim=32, layers=1, heads=2)
>>> opt = SubTrackAdamW(make_param_groups(model, rank=8, update_interval=10), lr=1e-3)
>>> len(opt.param_groups)
2
"""

from subtrack.data import ALPHABET, synthetic_corpus
from subtrack.grassmann import (
    grassmann_step,
    principal_angles,
    projection_error,
    rotate_adam_moments,
)
from subtrack.model import TinyLlama
from subtrack.optimizer import METHODS, SubTrackAdamW, make_param_groups, optimizer_state_bytes

__all__ = [
    "ALPHABET",
    "METHODS",
    "SubTrackAdamW",
    "TinyLlama",
    "grassmann_step",
    "make_param_groups",
    "optimizer_state_bytes",
    "principal_angles",
    "projection_error",
    "rotate_adam_moments",
    "synthetic_corpus",
]
