"""st360d: ST²360D, training-free 360° monocular depth through spatial-to-temporal consistency.

A panorama is turned into a video of perspective views (spherical-uniform sampling, ordered by
latitude-guided scanning), a video depth model predicts it with one consistent scale, and the
frames are merged back into an equirectangular range map. The public names are imported on first
use (importing ``st360d`` imports no torch).

>>> from st360d import sus_views
>>> len(sus_views(90.0))
22
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CameraBatch": "geometry",
        "OracleDepth": "models",
        "ST360D": "pipeline",
        "ScaleDriftDepth": "models",
        "Scene": "scene",
        "SequentialAlign": "models",
        "VideoDepthModel": "models",
        "cubemap_depth": "pipeline",
        "cubemap_views": "sampling",
        "depth_metrics": "metrics",
        "erp_to_perspective": "geometry",
        "frame_overlap": "models",
        "latlon_grid_views": "sampling",
        "lgs_order": "sampling",
        "per_patch_depth": "pipeline",
        "perspective_to_erp": "geometry",
        "render_room": "scene",
        "solve_disparity_shift": "pipeline",
        "sus_views": "sampling",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from st360d.geometry import CameraBatch as CameraBatch
    from st360d.geometry import erp_to_perspective as erp_to_perspective
    from st360d.geometry import perspective_to_erp as perspective_to_erp
    from st360d.metrics import depth_metrics as depth_metrics
    from st360d.models import OracleDepth as OracleDepth
    from st360d.models import ScaleDriftDepth as ScaleDriftDepth
    from st360d.models import SequentialAlign as SequentialAlign
    from st360d.models import VideoDepthModel as VideoDepthModel
    from st360d.models import frame_overlap as frame_overlap
    from st360d.pipeline import ST360D as ST360D
    from st360d.pipeline import cubemap_depth as cubemap_depth
    from st360d.pipeline import per_patch_depth as per_patch_depth
    from st360d.pipeline import solve_disparity_shift as solve_disparity_shift
    from st360d.sampling import cubemap_views as cubemap_views
    from st360d.sampling import latlon_grid_views as latlon_grid_views
    from st360d.sampling import lgs_order as lgs_order
    from st360d.sampling import sus_views as sus_views
    from st360d.scene import Scene as Scene
    from st360d.scene import render_room as render_room
