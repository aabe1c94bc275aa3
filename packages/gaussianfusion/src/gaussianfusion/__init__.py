"""GaussianFusion: Gaussian-based camera-LiDAR fusion for end-to-end driving (NeurIPS 2025,
arXiv 2506.00034).

>>> import torch
>>> from gaussianfusion import init_uniform, splat
>>> g = init_uniform(1, grid=(4, 4), d_e=8, d_m=8)
>>> splat(g, torch.ones(1, 16, 1), bev_hw=(32, 32)).shape
torch.Size([1, 1, 32, 32])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from gaussianfusion.data import make_driving_scenes as make_driving_scenes
    from gaussianfusion.gaussians import Gaussians2D as Gaussians2D
    from gaussianfusion.gaussians import covariance as covariance
    from gaussianfusion.gaussians import init_uniform as init_uniform
    from gaussianfusion.gaussians import splat as splat
    from gaussianfusion.layers import GaussianEncoderLayer as GaussianEncoderLayer
    from gaussianfusion.layers import GaussianFusionEncoder as GaussianFusionEncoder
    from gaussianfusion.metrics import ade as ade
    from gaussianfusion.metrics import collision_rate as collision_rate
    from gaussianfusion.metrics import fde as fde
    from gaussianfusion.metrics import mini_pdms as mini_pdms
    from gaussianfusion.metrics import offroad_rate as offroad_rate
    from gaussianfusion.models import BEVFusionPlanner as BEVFusionPlanner
    from gaussianfusion.models import FlattenFusionPlanner as FlattenFusionPlanner
    from gaussianfusion.models import GaussianFusionPlanner as GaussianFusionPlanner
    from gaussianfusion.planning import CascadePlanningHead as CascadePlanningHead
    from gaussianfusion.planning import cascade_loss as cascade_loss
    from gaussianfusion.planning import kmeans_anchors as kmeans_anchors

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BEVFusionPlanner": "models",
        "CascadePlanningHead": "planning",
        "FlattenFusionPlanner": "models",
        "GaussianEncoderLayer": "layers",
        "GaussianFusionEncoder": "layers",
        "GaussianFusionPlanner": "models",
        "Gaussians2D": "gaussians",
        "ade": "metrics",
        "cascade_loss": "planning",
        "collision_rate": "metrics",
        "covariance": "gaussians",
        "fde": "metrics",
        "init_uniform": "gaussians",
        "kmeans_anchors": "planning",
        "make_driving_scenes": "data",
        "mini_pdms": "metrics",
        "offroad_rate": "metrics",
        "splat": "gaussians",
    },
)
