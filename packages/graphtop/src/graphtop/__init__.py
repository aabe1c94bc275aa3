"""GraphTOP: topology-oriented prompting for a frozen pre-trained GNN.

NeurIPS 2025, arXiv 2510.22451.

For every target node, a learned edge scorer re-decides which nodes of its k-hop subgraph it is
connected to; the discrete choice is relaxed with a binary-concrete sample whose temperature is
annealed, an entropy penalty makes the relaxation tight and a sparsity penalty keeps the rewired
subgraph from becoming dense. Only the scorer and a linear head are trained.

Names are exported lazily (:func:`paperkit.lazy.lazy_exports`): ``import graphtop`` loads neither
torch nor PyG until a name is used.
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "GPF": "baselines",
        "EdgePromptLite": "baselines",
        "FineTune": "baselines",
        "GPFPlus": "baselines",
        "LinearProbe": "baselines",
        "few_shot_split": "data",
        "load_karate_club": "data",
        "load_planetoid": "data",
        "make_csbm": "data",
        "GCNEncoder": "encoder",
        "GraphTOP": "model",
        "info_nce": "pretraining",
        "pretrain": "pretraining",
        "TopologyPrompt": "prompt",
        "entropy_loss": "relaxation",
        "relax_edges": "relaxation",
        "sparsity_loss": "relaxation",
        "tau_schedule": "relaxation",
        "build_target_subgraphs": "subgraphs",
        "num_candidates": "subgraphs",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from graphtop.baselines import GPF as GPF
    from graphtop.baselines import EdgePromptLite as EdgePromptLite
    from graphtop.baselines import FineTune as FineTune
    from graphtop.baselines import GPFPlus as GPFPlus
    from graphtop.baselines import LinearProbe as LinearProbe
    from graphtop.data import few_shot_split as few_shot_split
    from graphtop.data import load_karate_club as load_karate_club
    from graphtop.data import load_planetoid as load_planetoid
    from graphtop.data import make_csbm as make_csbm
    from graphtop.encoder import GCNEncoder as GCNEncoder
    from graphtop.model import GraphTOP as GraphTOP
    from graphtop.pretraining import info_nce as info_nce
    from graphtop.pretraining import pretrain as pretrain
    from graphtop.prompt import TopologyPrompt as TopologyPrompt
    from graphtop.relaxation import entropy_loss as entropy_loss
    from graphtop.relaxation import relax_edges as relax_edges
    from graphtop.relaxation import sparsity_loss as sparsity_loss
    from graphtop.relaxation import tau_schedule as tau_schedule
    from graphtop.subgraphs import build_target_subgraphs as build_target_subgraphs
    from graphtop.subgraphs import num_candidates as num_candidates
