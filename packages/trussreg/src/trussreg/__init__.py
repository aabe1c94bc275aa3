"""trussreg: k-truss outlier rejection for correspondence-based point cloud registration
(NeurIPS 2025).

>>> from trussreg import TrussRegistration, make_synthetic_pair, registration_metrics
>>> pair = make_synthetic_pair(n_corr=500, outlier_ratio=0.9, seed=0)
>>> reg = TrussRegistration(tau_c=0.1).fit(pair["P"], pair["Q"])
>>> registration_metrics(reg.R_, reg.t_, pair["R_gt"], pair["t_gt"])["success"]
True
"""

from trussreg.baselines import (
    RegistrationResult,
    kcore_registration,
    maximal_clique_registration,
    ransac,
    spectral_registration,
)
from trussreg.data import make_synthetic_pair
from trussreg.geometry import kabsch, spatial_distribution_score
from trussreg.graph import compatibility_graph, consensus_sample, edge_support, vote_counts
from trussreg.metrics import inlier_scores, registration_metrics
from trussreg.registration import TrussRegistration, candidate_sets
from trussreg.truss import node_truss, truss_decomposition

__all__ = [
    "RegistrationResult",
    "TrussRegistration",
    "candidate_sets",
    "compatibility_graph",
    "consensus_sample",
    "edge_support",
    "inlier_scores",
    "kabsch",
    "kcore_registration",
    "make_synthetic_pair",
    "maximal_clique_registration",
    "node_truss",
    "ransac",
    "registration_metrics",
    "spatial_distribution_score",
    "spectral_registration",
    "truss_decomposition",
    "vote_counts",
]
