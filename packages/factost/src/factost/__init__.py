"""FactoST: learning to factorize spatio-temporal foundation models (NeurIPS 2025).

Stage 1 pre-trains a space-agnostic temporal backbone (RevIN, patches, domain-aware prompt pool,
Transformer encoder) on univariate windows pooled from many domains, with forecasting and masked
multi-frequency reconstruction objectives. Stage 2 freezes it and trains a small spatio-temporal
adapter (metadata FiLM, top-k pruned spatial attention, CORAL alignment, memory replay) on a few
shots of a new domain.

>>> import torch
>>> from factost import FactoST, STAdapter, TemporalBackbone, count_trainable
>>> f = TemporalBackbone(12, 12, 2, d_model=16, layers=1, heads=2, n_domains=3)
>>> model = FactoST(f, STAdapter(16, n_nodes=6, topk=3))
>>> model(torch.randn(2, 6, 12), torch.rand(6, 2)).shape
torch.Size([2, 6, 12])

The public names are imported on first use (importing ``factost`` imports no torch).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BackboneFinetune": "baselines",
        "BackboneOnly": "baselines",
        "FactoST": "model",
        "HistoricalAverage": "baselines",
        "JointSTTransformer": "baselines",
        "PromptPool": "prompts",
        "ReplayBuffer": "replay",
        "RevIN": "spectral",
        "STAdapter": "adapter",
        "STDomain": "data",
        "STExpert": "baselines",
        "SeasonalNaive": "baselines",
        "TemporalBackbone": "backbone",
        "adapt": "training",
        "band_split": "spectral",
        "coral_loss": "align",
        "count_trainable": "model",
        "evaluate": "training",
        "fit_forecaster": "training",
        "knn_graph": "graph",
        "make_domain_suite": "data",
        "make_st_domain": "data",
        "pretrain_backbone": "training",
        "pretrain_joint": "baselines",
        "prior_mask": "graph",
        "real_series": "data",
        "sparse_attention": "adapter",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from factost.adapter import STAdapter as STAdapter
    from factost.adapter import sparse_attention as sparse_attention
    from factost.align import coral_loss as coral_loss
    from factost.backbone import TemporalBackbone as TemporalBackbone
    from factost.baselines import BackboneFinetune as BackboneFinetune
    from factost.baselines import BackboneOnly as BackboneOnly
    from factost.baselines import HistoricalAverage as HistoricalAverage
    from factost.baselines import JointSTTransformer as JointSTTransformer
    from factost.baselines import SeasonalNaive as SeasonalNaive
    from factost.baselines import STExpert as STExpert
    from factost.baselines import pretrain_joint as pretrain_joint
    from factost.data import STDomain as STDomain
    from factost.data import make_domain_suite as make_domain_suite
    from factost.data import make_st_domain as make_st_domain
    from factost.data import real_series as real_series
    from factost.graph import knn_graph as knn_graph
    from factost.graph import prior_mask as prior_mask
    from factost.model import FactoST as FactoST
    from factost.model import count_trainable as count_trainable
    from factost.prompts import PromptPool as PromptPool
    from factost.replay import ReplayBuffer as ReplayBuffer
    from factost.spectral import RevIN as RevIN
    from factost.spectral import band_split as band_split
    from factost.training import adapt as adapt
    from factost.training import evaluate as evaluate
    from factost.training import fit_forecaster as fit_forecaster
    from factost.training import pretrain_backbone as pretrain_backbone
