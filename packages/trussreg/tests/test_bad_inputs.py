"""The shared bad-input suite over every public name of trussreg (paperkit.testing.BadInputs)."""

import numpy as np

import trussreg
from paperkit.testing import BadInputs, Call
from trussreg import (
    TrussRegistration,
    candidate_sets,
    compatibility_graph,
    consensus_sample,
    edge_support,
    inlier_scores,
    kabsch,
    kcore_registration,
    make_synthetic_pair,
    maximal_clique_registration,
    node_truss,
    ransac,
    registration_metrics,
    spatial_distribution_score,
    spectral_registration,
    truss_decomposition,
    vote_counts,
)

# 40 correspondences in a 4 m scene (integer casts of the points stay non-collinear)
pair = make_synthetic_pair(n_corr=40, outlier_ratio=0.5, seed=0)
P, Q = 2 * pair["P"], 2 * pair["Q"]
A = compatibility_graph(P, Q, 0.2)
edges, levels = truss_decomposition(A)
mask = pair["inlier_gt"]
PAIR = {"P": "N 3", "Q": "N 3"}
LEVELS = {"edges": "E 2", "levels": "E"}

SUITE = BadInputs(
    trussreg,
    [
        Call(
            TrussRegistration,
            tau_c=0.2,
            tau_in=0.2,
            m=30,
            delta_k=3,
            n_seeds=10,
            sds_weight=1.0,
            refine_iters=3,
            backend="reference",
            structure="truss",
            call={"P": P, "Q": Q},
            method="fit",
            shapes=PAIR,
            bad={
                "tau_c": [0.0, -1.0],
                "tau_in": [0.0],
                "m": [2, 0],
                "delta_k": [-1],
                "n_seeds": [-1],
                "sds_weight": [-1.0],
                "refine_iters": [-1],
                "backend": ["numpy", "cupy"],
                "P": [np.zeros((40, 3)), P[:2]],
            },
        ),
        Call(
            TrussRegistration,
            call={"X": P[:5]},
            method="transform",
            prepare=lambda reg: reg.fit(P, Q),
            shapes={"X": "M 3"},
            accepts={"X": ["empty"]},  # no points map to no points
            name="TrussRegistration.transform",
        ),
        Call(
            compatibility_graph,
            P=P,
            Q=Q,
            tau=0.2,
            soft=True,
            shapes=PAIR,
            bad={"tau": [0.0, -0.1], "P": [P[:2]]},
        ),
        Call(consensus_sample, A=A, m=10, bad={"m": [2, 0], "A": [A.toarray(), A[:5]]}),
        Call(vote_counts, A=A, bad={"A": [A.toarray(), A[:, :5]]}),
        Call(edge_support, A=A, bad={"A": ["graph", A[:5]]}),
        Call(truss_decomposition, A=A, backend="reference", bad={"backend": ["numpy", "cupy"]}),
        Call(
            node_truss,
            edges=edges,
            levels=levels,
            n=40,
            shapes=LEVELS,
            bad={"n": [0, 10, 10**13], "edges": [edges + 40], "levels": [levels[:, None]]},
        ),
        Call(
            candidate_sets,
            edges=edges,
            levels=levels,
            n=40,
            delta_k=3,
            n_seeds=5,
            shapes=LEVELS,
            bad={"n": [0, 10**13], "delta_k": [-1], "n_seeds": [-1], "edges": [edges + 40]},
        ),
        Call(
            kabsch,
            P=P,
            Q=Q,
            w=np.linspace(1.0, 2.0, 40),
            shapes={**PAIR, "w": "N"},
            bad={
                "w": [np.full(40, -1.0), np.zeros(40)],
                "P": [np.outer(np.arange(40.0), [1, 2, 3])],
            },
        ),
        Call(
            spatial_distribution_score,
            P_all=P,
            inlier_mask=mask,
            voxel_size=0.5,
            shapes={"P_all": "N 3", "inlier_mask": "N"},
            bad={"voxel_size": [0.0, -1.0]},
        ),
        Call(
            make_synthetic_pair,
            n_corr=30,
            outlier_ratio=0.5,
            noise=0.01,
            clustered_outlier_frac=0.1,
            scene="room",
            overlap=0.6,
            seed=1,
            bad={
                "n_corr": [2, 10**12],
                "outlier_ratio": [1.5, -0.1],
                "noise": [-1.0],
                "clustered_outlier_frac": [1.5, 0.6],
                "overlap": [0.0, 1.5],
                "seed": [-1],
            },
        ),
        Call(
            registration_metrics,
            R=np.eye(3),
            t=np.zeros(3),
            R_gt=pair["R_gt"],
            t_gt=pair["t_gt"],
            re_thresh_deg=15.0,
            te_thresh=0.3,
            shapes={"R": "3 3", "t": "3", "R_gt": "3 3", "t_gt": "3"},
            bad={"re_thresh_deg": [-1.0], "te_thresh": [-1.0]},
        ),
        Call(
            inlier_scores,
            pred=mask.copy(),
            truth=mask,
            shapes={"pred": "N", "truth": "N"},
        ),
        Call(
            ransac,
            P=P,
            Q=Q,
            iters=200,
            tau=0.2,
            seed=0,
            confidence=0.99,
            shapes=PAIR,
            bad={"iters": [0], "tau": [0.0], "seed": [-1], "confidence": [0.0, 1.0]},
        ),
        Call(
            kcore_registration, P=P, Q=Q, tau=0.2, m=20, shapes=PAIR, bad={"tau": [0.0], "m": [2]}
        ),
        Call(spectral_registration, P=P, Q=Q, tau=0.2, shapes=PAIR, bad={"tau": [-1.0]}),
        Call(
            maximal_clique_registration,
            P=P,
            Q=Q,
            tau=0.2,
            m=20,
            max_cliques=100,
            shapes=PAIR,
            bad={"tau": [0.0], "m": [2, 301], "max_cliques": [0]},
        ),
    ],
    exempt={
        "RegistrationResult": "a plain record the baselines return (R, t, inliers, success, "
        "seconds), built from their checked outputs; it takes no user input",
    },
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
