"""symgfm: TS-GNN, a graph foundation model for node classification from the triple symmetry of
"Equivariance Everywhere All At Once: A Recipe for Graph Foundation Models" (NeurIPS 2025,
arXiv 2506.14291): equivariant to node and label permutations, invariant to feature permutations,
so one trained model predicts on graphs of any feature width and class count, from their
labelled nodes, without gradient steps.

The public names are imported on first use (importing ``symgfm`` imports no torch).

>>> import torch
>>> from symgfm import TSGNN, csbm_graph, zero_shot_predict
>>> model = TSGNN(hidden=4)
>>> zero_shot_predict(model, csbm_graph(60, 5, 3, 0.8)).shape
torch.Size([60, 3])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "EndToEndMeanGNN": "baselines",
        "GATCore": "layers",
        "LabelPropagation": "baselines",
        "LinearGNN": "baselines",
        "MeanGNN": "layers",
        "TSGNN": "model",
        "TSLayer": "layers",
        "context_maps": "training",
        "csbm_graph": "data",
        "csbm_pool": "data",
        "fit_foundation": "training",
        "karate_graph": "data",
        "least_squares_maps": "conversions",
        "lp_split": "training",
        "prepare_graph": "prepare",
        "ridge_loo_errors": "ridge",
        "ridge_ls": "ridge",
        "tabular_knn_graph": "data",
        "zero_shot_predict": "training",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from symgfm.baselines import EndToEndMeanGNN as EndToEndMeanGNN
    from symgfm.baselines import LabelPropagation as LabelPropagation
    from symgfm.baselines import LinearGNN as LinearGNN
    from symgfm.conversions import least_squares_maps as least_squares_maps
    from symgfm.data import csbm_graph as csbm_graph
    from symgfm.data import csbm_pool as csbm_pool
    from symgfm.data import karate_graph as karate_graph
    from symgfm.data import tabular_knn_graph as tabular_knn_graph
    from symgfm.layers import GATCore as GATCore
    from symgfm.layers import MeanGNN as MeanGNN
    from symgfm.layers import TSLayer as TSLayer
    from symgfm.model import TSGNN as TSGNN
    from symgfm.prepare import prepare_graph as prepare_graph
    from symgfm.ridge import ridge_loo_errors as ridge_loo_errors
    from symgfm.ridge import ridge_ls as ridge_ls
    from symgfm.training import context_maps as context_maps
    from symgfm.training import fit_foundation as fit_foundation
    from symgfm.training import lp_split as lp_split
    from symgfm.training import zero_shot_predict as zero_shot_predict
