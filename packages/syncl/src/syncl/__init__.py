"""SynCL (NeurIPS 2025, arXiv 2411.06780): synergistic training with instance-aware contrastive
learning for end-to-end multi-camera 3-D tracking, at small scale on BEV rasters.

>>> from syncl import QueryTracker, SynCLCriterion, make_bev_sequences, train_tracker
>>> X, gt = make_bev_sequences(8, seed=0)
>>> model = QueryTracker()
>>> history = train_tracker(model, X, gt, SynCLCriterion(), steps=2)
>>> len(model.run_tracker(X[0]))
10
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from syncl.contrastive import instance_contrastive_loss as instance_contrastive_loss
    from syncl.data import make_bev_sequences as make_bev_sequences
    from syncl.decoder import SharedDecoder as SharedDecoder
    from syncl.matching import DynamicQueryFilter as DynamicQueryFilter
    from syncl.matching import hungarian_one_to_one as hungarian_one_to_one
    from syncl.matching import hybrid_match as hybrid_match
    from syncl.matching import matching_cost as matching_cost
    from syncl.matching import topk_one_to_many as topk_one_to_many
    from syncl.metrics import amota as amota
    from syncl.metrics import clear_mot as clear_mot
    from syncl.metrics import detection_ap as detection_ap
    from syncl.tracker import QueryTracker as QueryTracker
    from syncl.tracker import SynCLCriterion as SynCLCriterion
    from syncl.tracker import train_tracker as train_tracker

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DynamicQueryFilter": "matching",
        "QueryTracker": "tracker",
        "SharedDecoder": "decoder",
        "SynCLCriterion": "tracker",
        "amota": "metrics",
        "clear_mot": "metrics",
        "detection_ap": "metrics",
        "hungarian_one_to_one": "matching",
        "hybrid_match": "matching",
        "instance_contrastive_loss": "contrastive",
        "make_bev_sequences": "data",
        "matching_cost": "matching",
        "topk_one_to_many": "matching",
        "train_tracker": "tracker",
    },
)
