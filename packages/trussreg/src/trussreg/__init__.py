"""trussreg: k-truss outlier rejection for correspondence-based point cloud registration
(NeurIPS 2025).

>>> from trussreg import TrussRegistration, make_synthetic_pair, registration_metrics
>>> pair = make_synthetic_pair(n_corr=500, outlier_ratio=0.9, seed=0)
>>> reg = TrussRegistration(tau_c=0.1).fit(pair["P"], pair["Q"])
>>> registration_metrics(reg.R_, reg.t_, pair["R_gt"], pair["t_gt"])["success"]
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "RegistrationResult": "baselines",
        "TrussRegistration": "registration",
        "candidate_sets": "registration",
        "compatibility_graph": "graph",
        "consensus_sample": "graph",
        "edge_support": "graph",
        "inlier_scores": "metrics",
        "kabsch": "geometry",
        "kcore_registration": "baselines",
        "make_synthetic_pair": "data",
        "maximal_clique_registration": "baselines",
        "node_truss": "truss",
        "ransac": "baselines",
        "registration_metrics": "metrics",
        "spatial_distribution_score": "geometry",
        "spectral_registration": "baselines",
        "truss_decomposition": "truss",
        "vote_counts": "graph",
    },
)

if TYPE_CHECKING:  # the same names, for static tools (``X as X``: an explicit re-export)
    from trussreg.baselines import RegistrationResult as RegistrationResult
    from trussreg.baselines import kcore_registration as kcore_registration
    from trussreg.baselines import maximal_clique_registration as maximal_clique_registration
    from trussreg.baselines import ransac as ransac
    from trussreg.baselines import spectral_registration as spectral_registration
    from trussreg.data import make_synthetic_pair as make_synthetic_pair
    from trussreg.geometry import kabsch as kabsch
    from trussreg.geometry import spatial_distribution_score as spatial_distribution_score
    from trussreg.graph import compatibility_graph as compatibility_graph
    from trussreg.graph import consensus_sample as consensus_sample
    from trussreg.graph import edge_support as edge_support
    from trussreg.graph import vote_counts as vote_counts
    from trussreg.metrics import inlier_scores as inlier_scores
    from trussreg.metrics import registration_metrics as registration_metrics
    from trussreg.registration import TrussRegistration as TrussRegistration
    from trussreg.registration import candidate_sets as candidate_sets
    from trussreg.truss import node_truss as node_truss
    from trussreg.truss import truss_decomposition as truss_decomposition
