r"""mvou: Schrödinger bridges with a multivariate Ornstein–Uhlenbeck reference (NeurIPS 2025,
arXiv 2505.16644): the exact Gaussian SB (mvOU-GSB) and simulation-free mvOU-OTFM.

The public names are imported on first use (importing ``mvou`` imports no torch).

>>> import torch
>>> from mvou import MvOU
>>> ref = MvOU(torch.tensor([[-1.0, 3.0], [-3.0, -1.0]]), sigma=0.5)
>>> M, S = ref.bridge(0.5, torch.zeros(1, 2), torch.ones(1, 2))
>>> M.shape, S.shape
(torch.Size([1, 2]), torch.Size([1, 2, 2]))
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "GaussianSB": "gsb",
        "MvOU": "ou",
        "MvOUOTFM": "otfm",
        "bures_w2": "metrics",
        "energy_distance": "metrics",
        "entropic_plan": "coupling",
        "estimate_drift_matrix": "otfm",
        "fit_iterated": "otfm",
        "sample_w2": "metrics",
        "sb_cost_matrix": "coupling",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from mvou.coupling import entropic_plan as entropic_plan
    from mvou.coupling import sb_cost_matrix as sb_cost_matrix
    from mvou.gsb import GaussianSB as GaussianSB
    from mvou.metrics import bures_w2 as bures_w2
    from mvou.metrics import energy_distance as energy_distance
    from mvou.metrics import sample_w2 as sample_w2
    from mvou.otfm import MvOUOTFM as MvOUOTFM
    from mvou.otfm import estimate_drift_matrix as estimate_drift_matrix
    from mvou.otfm import fit_iterated as fit_iterated
    from mvou.ou import MvOU as MvOU
