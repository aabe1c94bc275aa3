"""gspn2: GSPN-2, generalized spatial propagation with one fused 2-D CUDA kernel (NeurIPS 2025).

Each column of a feature map mixes the previous column's states through a 3-neighbour,
row-stochastic tridiagonal affinity, in four directions; GSPN-2 shares the propagation weights
across channels in a compact proxy space and runs the whole scan in one kernel launch.

>>> import torch
>>> from gspn2 import GSPN2Mixer
>>> GSPN2Mixer(32)(torch.randn(2, 32, 8, 8)).shape
torch.Size([2, 32, 8, 8])
"""

from gspn2.mixers import GSPN1Mixer, GSPN2Mixer, SoftmaxMixer
from gspn2.models import GSPNClassifier
from gspn2.ops import DIRECTIONS, gspn_4dir, gspn_affinity, gspn_scan, normalize_weights

__all__ = [
    "DIRECTIONS",
    "GSPN1Mixer",
    "GSPN2Mixer",
    "GSPNClassifier",
    "SoftmaxMixer",
    "gspn_4dir",
    "gspn_affinity",
    "gspn_scan",
    "normalize_weights",
]
