"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite), including negative energies and m² < 0 in ``leaves``."""

import numpy as np
import torch

import treegen
from paperkit.testing import BadInputs, Call

MODEL = treegen.GinkgoLike()
LEAVES, TREE = MODEL.sample_jets(1, seed=4, n_min=5, n_max=5)[0]
NEG_E = LEAVES.copy()
NEG_E[0, 0] = -1.0  # negative energy
SPACELIKE = LEAVES.copy()
SPACELIKE[1, 0] = 0.5 * np.linalg.norm(LEAVES[1, 1:])  # m² < 0
BIG = LEAVES[np.arange(9) % 5] * 1.0  # nine particles: more than n_max / the enumeration limit
LEAF_BAD = {"leaves": [NEG_E, SPACELIKE]}
X = torch.nn.functional.one_hot(torch.tensor([0, 2, 1]), 3).double()
T = torch.tensor([0.2, 0.5, 0.9], dtype=torch.float64)
THETA = torch.full((3, 3), 1 / 3, dtype=torch.float64)
SMALL = {"d_model": 8, "layers": 1, "heads": 2, "n_max": 6, "scheduler": "quadratic", "beta1": 3.0}
JETS = [(LEAVES, TREE)]


def _bfn():
    return treegen.CategoricalBFN(treegen.QuadraticScheduler(3, beta1=2.0))


SUITE = BadInputs(
    treegen,
    [
        Call(
            treegen.GinkgoLike,
            t_root=400.0,
            lam=1.5,
            t_cut=16.0,
            p_root=MODEL.p_root.copy(),
            call={"seed": 3},
            method="sample",
            shapes={"p_root": "4"},
            bad={"t_root": [10.0], "lam": [0.0], "t_cut": [0.0], "seed": [-1]},
        ),
        Call(
            treegen.Tree, parents=TREE.parents.copy(), bad={"parents": [np.array([0, 0, 0, -1, 1])]}
        ),
        Call(
            treegen.tree_loglik,
            leaves=LEAVES,
            tree=TREE,
            model=MODEL,
            shapes={"leaves": "n 4"},
            bad=LEAF_BAD,
        ),
        Call(
            treegen.is_valid,
            tree=TREE,
            leaves=LEAVES,
            model=MODEL,
            shapes={"leaves": "n 4"},
            bad=LEAF_BAD,
        ),
        Call(
            treegen.canonicalize,
            tree=TREE,
            leaves=LEAVES,
            shapes={"leaves": "n 4"},
            bad={**LEAF_BAD, "leaves": [*LEAF_BAD["leaves"], LEAVES[:4]]},
        ),
        Call(treegen.enumerate_trees, n=4, bad={"n": [1, 9]}),
        Call(treegen.count_trees, n=5, bad={"n": [1]}),
        Call(
            treegen.exact_posterior,
            leaves=LEAVES,
            model=MODEL,
            shapes={"leaves": "n 4"},
            bad={"leaves": [NEG_E, SPACELIKE, BIG]},
        ),
        Call(
            treegen.posterior_sample,
            leaves=LEAVES,
            model=MODEL,
            size=3,
            seed=0,
            shapes={"leaves": "n 4"},
            bad={**LEAF_BAD, "size": [0], "seed": [-1]},
        ),
        Call(
            treegen.EntropyScheduler,
            k_max=3,
            target="linear",
            eps=0.01,
            n_mc=64,
            seed=0,
            call={"K": 2, "t": T},
            method="beta",
            bad={
                "k_max": [0],
                "eps": [0.0, 0.9],
                "n_mc": [1],
                "seed": [-1],
                "K": [0, 4],
                "t": [torch.tensor([1.5], dtype=torch.float64)],
            },
            accepts={"t": {"rank", "empty"}},
        ),
        Call(
            treegen.QuadraticScheduler,
            k_max=3,
            beta1=2.0,
            call={"K": 3, "t": T},
            method="dbeta",
            bad={"k_max": [0], "beta1": [0.0, -1.0], "K": [0]},
            accepts={"t": {"rank", "empty"}},
        ),
        Call(
            treegen.entropy_curve,
            K=3,
            betas=np.array([0.0, 1.0]),
            n_mc=64,
            seed=0,
            bad={"K": [1], "betas": [np.array([-1.0])], "n_mc": [0], "seed": [-1]},
        ),
        Call(
            treegen.CategoricalBFN,
            scheduler=treegen.QuadraticScheduler(3, beta1=2.0),
            call={"x_onehot": X, "t": T, "K": 3},
            method="flow_sample",
            shapes={"x_onehot": "B 3", "t": "B"},
            bad={"K": [0, 4]},
            accepts={"x_onehot": {"rank"}, "t": {"rank", "empty"}},
        ),
        Call(
            _bfn,
            name="CategoricalBFN.update",
            call={"theta": THETA, "y": X},
            method="update",
            shapes={"theta": "B K", "y": "B K"},
            bad={"theta": [-THETA]},
            accepts={"theta": {"rank"}},
        ),
        Call(
            _bfn,
            name="CategoricalBFN.loss",
            method="loss",
            call={"logits_fn": lambda th, t: th, "x": X[:, None], "t": T, "K": 3},
            shapes={"x": "B V 3", "t": "B"},
            bad={"K": [0], "t": [T + 1]},
            accepts={"x": {"rank"}},
        ),
        Call(
            _bfn,
            name="CategoricalBFN.sample",
            method="sample",
            call={
                "net": lambda th, t: th,
                "shapes": [3, 2],
                "steps": 3,
                "num": 2,
                "final": "argmax",
            },
            bad={"shapes": [[0, 2], []], "steps": [0], "num": [0]},
        ),
        Call(
            treegen.TreeGen,
            **SMALL,
            call={"leaves": LEAVES, "num": 3, "steps": 2, "seed": 0, "final": "sample"},
            method="sample",
            shapes={"leaves": "n 4"},
            bad={
                "d_model": [0, 10**5],
                "layers": [0],
                "heads": [3, 0],
                "n_max": [1],
                "beta1": [0.0],
                "leaves": [NEG_E, SPACELIKE, BIG],
                "num": [0],
                "steps": [0],
            },
        ),
        Call(
            treegen.TreeGen,
            name="TreeGen.fit",
            **SMALL,
            method="fit",
            call={"jets": JETS, "epochs": 1, "lr": 1e-3, "batch": 2, "seed": 0},
            bad={
                "jets": [[], [(NEG_E, TREE)], [(LEAVES, "tree")]],
                "epochs": [0],
                "lr": [0.0],
                "batch": [0],
            },
        ),
        Call(
            treegen.TreeGen,
            name="TreeGen.map_tree",
            **SMALL,
            method="map_tree",
            call={"leaves": LEAVES, "num": 3, "model": MODEL, "steps": 2, "seed": 0},
            shapes={"leaves": "n 4"},
            bad={**LEAF_BAD, "num": [0], "steps": [0]},
        ),
        Call(
            treegen.greedy_cluster,
            leaves=LEAVES,
            model=MODEL,
            shapes={"leaves": "n 4"},
            bad=LEAF_BAD,
        ),
        Call(
            treegen.beam_cluster,
            leaves=LEAVES,
            model=MODEL,
            beam=5,
            shapes={"leaves": "n 4"},
            bad={**LEAF_BAD, "beam": [0]},
        ),
        Call(
            treegen.kt_cluster,
            leaves=LEAVES,
            p=1,
            shapes={"leaves": "n 4"},
            bad={**LEAF_BAD, "p": [2]},
        ),
        Call(
            treegen.random_valid_trees,
            leaves=LEAVES,
            model=MODEL,
            num=3,
            seed=0,
            shapes={"leaves": "n 4"},
            bad={**LEAF_BAD, "num": [0], "seed": [-1]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
