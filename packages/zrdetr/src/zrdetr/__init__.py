"""zrdetr: ZR-DETR (NeurIPS 2025): zoom-aware probabilistic DETR for anatomical structure
detection.

>>> import torch
>>> from zrdetr import ZRDETR
>>> out = ZRDETR(n_classes=6).eval()(torch.rand(2, 1, 64, 64))
>>> out["boxes"].shape, out["box_var"].shape
(torch.Size([2, 10, 4]), torch.Size([2, 10, 4]))
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from zrdetr.box_ops import box_cxcywh_to_xyxy as box_cxcywh_to_xyxy
    from zrdetr.box_ops import box_iou as box_iou
    from zrdetr.box_ops import box_xyxy_to_cxcywh as box_xyxy_to_cxcywh
    from zrdetr.box_ops import generalized_box_iou as generalized_box_iou
    from zrdetr.criterion import ZRDETRCriterion as ZRDETRCriterion
    from zrdetr.criterion import hungarian_match as hungarian_match
    from zrdetr.data import make_anatomy_scenes as make_anatomy_scenes
    from zrdetr.gp_head import SVGPHead as SVGPHead
    from zrdetr.gp_head import gaussian_nll as gaussian_nll
    from zrdetr.metrics import ap50 as ap50
    from zrdetr.metrics import bootstrap_map as bootstrap_map
    from zrdetr.metrics import ece as ece
    from zrdetr.metrics import mean_ap as mean_ap
    from zrdetr.metrics import uncertainty_error_spearman as uncertainty_error_spearman
    from zrdetr.model import ZRDETR as ZRDETR
    from zrdetr.relation import AnatomicalRelationPrior as AnatomicalRelationPrior
    from zrdetr.relation import RelationBias as RelationBias
    from zrdetr.zoom import BoxZoomEstimator as BoxZoomEstimator
    from zrdetr.zoom import ZoomEmbedding as ZoomEmbedding
    from zrdetr.zoom import ZoomFiLM as ZoomFiLM
    from zrdetr.zoom import ZoomRegressor as ZoomRegressor

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AnatomicalRelationPrior": "relation",
        "BoxZoomEstimator": "zoom",
        "RelationBias": "relation",
        "SVGPHead": "gp_head",
        "ZRDETR": "model",
        "ZRDETRCriterion": "criterion",
        "ZoomEmbedding": "zoom",
        "ZoomFiLM": "zoom",
        "ZoomRegressor": "zoom",
        "ap50": "metrics",
        "bootstrap_map": "metrics",
        "box_cxcywh_to_xyxy": "box_ops",
        "box_iou": "box_ops",
        "box_xyxy_to_cxcywh": "box_ops",
        "ece": "metrics",
        "gaussian_nll": "gp_head",
        "generalized_box_iou": "box_ops",
        "hungarian_match": "criterion",
        "make_anatomy_scenes": "data",
        "mean_ap": "metrics",
        "uncertainty_error_spearman": "metrics",
    },
)
