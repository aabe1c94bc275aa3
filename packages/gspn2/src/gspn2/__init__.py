"""gspn2: GSPN-2, generalized spatial propagation with one fused 2-D CUDA kernel (NeurIPS 2025).

Each column of a feature map mixes the previous column's states through a 3-neighbour,
row-stochastic tridiagonal affinity, in four directions; GSPN-2 shares the propagation weights
across channels in a compact proxy space and runs the whole scan in one kernel launch.

>>> import torch
>>> from gspn2 import GSPN2Mixer
>>> GSPN2Mixer(32)(torch.randn(2, 32, 8, 8)).shape
torch.Size([2, 32, 8, 8])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DIRECTIONS": "ops",
        "GSPN1Mixer": "mixers",
        "GSPN2Mixer": "mixers",
        "GSPNClassifier": "models",
        "SoftmaxMixer": "mixers",
        "gspn_4dir": "ops",
        "gspn_affinity": "ops",
        "gspn_scan": "ops",
        "normalize_weights": "ops",
    },
)

if TYPE_CHECKING:  # the same names, for static tools (``X as X``: an explicit re-export)
    from gspn2.mixers import GSPN1Mixer as GSPN1Mixer
    from gspn2.mixers import GSPN2Mixer as GSPN2Mixer
    from gspn2.mixers import SoftmaxMixer as SoftmaxMixer
    from gspn2.models import GSPNClassifier as GSPNClassifier
    from gspn2.ops import DIRECTIONS as DIRECTIONS
    from gspn2.ops import gspn_4dir as gspn_4dir
    from gspn2.ops import gspn_affinity as gspn_affinity
    from gspn2.ops import gspn_scan as gspn_scan
    from gspn2.ops import normalize_weights as normalize_weights
