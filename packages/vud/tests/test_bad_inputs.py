import numpy as np
import torch

import vud
from paperkit.testing import BadInputs, Call

G = torch.Generator().manual_seed(0)
CX = torch.rand(6, 1, generator=G, dtype=torch.float64) * 6 - 3
CY = torch.tensor([0.0, 1.0, 1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
XS = torch.tensor([0.3], dtype=torch.float64)
Z = torch.tensor([[[0.1]], [[0.5]]], dtype=torch.float64)
BX = CX[None].float()
BY = CY[None].float()
BQ = torch.tensor([[[0.0], [1.0]]])
ORACLE = vud.BayesOracleICL(vud.LogisticPrior())
ARMS = vud.BayesOracleICL(vud.BernoulliArmsPrior(3))
ONEHOT = torch.eye(3)[[0, 1, 1, 2]]
REWARDS = torch.tensor([1.0, 0.0, 1.0, 1.0])
P = torch.tensor([0.2, 0.3, 0.5])
Q = torch.tensor([0.4, 0.4, 0.2])
BATCH = {"ctx_x": "B n d", "ctx_y": "B n", "query_x": "B q d"}
NOT_A_PREDICTOR = ["not a predictor"]

SUITE = BadInputs(
    vud,
    [
        Call(
            vud.decompose,
            pred=ORACLE,
            ctx_x=CX,
            ctx_y=CY,
            x_star=XS,
            num_z=3,
            perturbation_std=0.1,
            perturb_about="x",
            decimal_places=1,
            num_bo_z=0,
            kl_threshold=0.5,
            kl_rank=2,
            num_permutations=1,
            measure="entropy",
            base=2.0,
            seed=0,
            num_probes=1,
            clip=False,
            num_u_samples=4,
            shapes={"ctx_x": "n d", "ctx_y": "n", "x_star": "d"},
            bad={
                "pred": NOT_A_PREDICTOR,
                "num_z": [0],
                "perturbation_std": [0.0, -0.1],
                "decimal_places": [-1],
                "num_bo_z": [-1, 2],
                "kl_threshold": [-0.01],
                "kl_rank": [0],
                "num_permutations": [0],
                "base": [1.0, 0.5],
                "seed": [-1],
                "num_probes": [0, 4],
                "num_u_samples": [1],
                "ctx_y": [torch.tensor([0.0, 1.0, 2.0, 0.0, 1.0, 1.0], dtype=torch.float64)],
            },
        ),
        Call(
            vud.probe_bound,
            pred=ORACLE,
            ctx_x=CX,
            ctx_y=CY,
            x_star=XS,
            Z=Z,
            num_permutations=2,
            num_u_samples=3,
            batch_size=4,
            base=2.0,
            shapes={"ctx_x": "n d", "ctx_y": "n", "x_star": "d", "Z": "m K d"},
            bad={
                "pred": NOT_A_PREDICTOR,
                "num_permutations": [0, "some"],
                "batch_size": [0],
                "base": [1.0],
                "Z": [torch.zeros(2, 4, 1, dtype=torch.float64)],
            },
        ),
        Call(
            vud.probe_candidates,
            x_star=XS,
            ctx_x=CX,
            num_z=4,
            perturbation_std=0.1,
            perturb_about="data_mean",
            decimal_places=2,
            num_probes=2,
            shapes={"x_star": "d", "ctx_x": "n d"},
            bad={
                "num_z": [0],
                "perturbation_std": [0.0],
                "decimal_places": [-1],
                "num_probes": [4],
            },
        ),
        Call(
            vud.select_probe,
            va=np.array([0.3, 0.1, 0.2]),
            kl=np.array([0.0, 0.5, 0.001]),
            kl_threshold=0.01,
            kl_rank=2,
            shapes={"va": "m", "kl": "m"},
            bad={"kl_threshold": [-1.0], "kl_rank": [0]},
        ),
        Call(
            vud.TransformerICL,
            d_x=1,
            task="classification",
            n_classes=2,
            d_model=8,
            n_layers=1,
            n_heads=2,
            positional=True,
            max_len=10,
            call={"ctx_x": BX, "ctx_y": BY, "query_x": BQ},
            method="predict",
            shapes=BATCH,
            bad={
                "d_x": [0],
                "n_classes": [1],
                "d_model": [0],
                "n_layers": [0],
                "n_heads": [3, 0],
                "max_len": [0],
                "ctx_y": [torch.full((1, 6), 2.0), torch.full((1, 6), 0.5)],
            },
        ),
        Call(
            vud.BayesOracleICL,
            prior=vud.LogisticPrior(),
            call={"ctx_x": BX, "ctx_y": BY, "query_x": BQ},
            method="predict",
            shapes=BATCH,
            bad={"prior": ["logistic"], "query_x": [torch.zeros(1, 2, 2)]},
        ),
        Call(
            vud.LogisticPrior,
            d=1,
            w_std=2.0,
            b_std=2.0,
            call={"ctx_x": BX, "ctx_y": BY, "x_star": BQ},
            method="true_decomposition",
            shapes={"ctx_x": "B n d", "ctx_y": "B n", "x_star": "B q d"},
            bad={"d": [0, 3], "w_std": [0.0], "b_std": [-1.0]},
        ),
        Call(
            vud.LinearGaussianPrior,
            d=1,
            a0=2.0,
            b0=1.0,
            lam=1.0,
            known_noise=0.5,
            call={"ctx_x": BX, "ctx_y": BY, "x_star": BQ, "measure": "variance"},
            method="true_decomposition",
            shapes={"ctx_x": "B n d", "ctx_y": "B n", "x_star": "B q d"},
            bad={"d": [0], "a0": [1.0], "b0": [0.0], "lam": [0.0], "known_noise": [0.0]},
        ),
        Call(
            vud.BernoulliArmsPrior,
            k=3,
            call={"batch": 2, "n_ctx": 3, "n_query": 1},
            method="sample_tasks",
            bad={"k": [0], "batch": [0], "n_ctx": [-1], "n_query": [0]},
        ),
        Call(
            vud.arm_epistemic,
            pred=ARMS,
            ctx_x=ONEHOT,
            ctx_y=REWARDS,
            shapes={"ctx_x": "n K", "ctx_y": "n"},
            bad={"pred": [ORACLE.prior, vud.BayesOracleICL(vud.LinearGaussianPrior())]},
        ),
        Call(
            vud.run_bandit,
            policy="vud",
            predictor=vud.BayesOracleICL(vud.BernoulliArmsPrior(5)),
            n_arms=5,
            midpoint=0.5,
            gap=0.2,
            trials=5,
            random_trials=2,
            exploration=2.0,
            seed=0,
            bad={
                "predictor": [None, ORACLE],
                "n_arms": [1],
                "midpoint": [0.05, 0.95],
                "gap": [-0.1, 1.5],
                "trials": [0],
                "random_trials": [-1, 6],
                "exploration": [-1.0],
                "seed": [-1],
            },
        ),
        Call(
            vud.train_pfn,
            prior=vud.BernoulliArmsPrior(2),
            steps=1,
            batch=2,
            max_ctx=3,
            seed=0,
            progress=False,
            positional=False,
            n_query=2,
            lr=1e-3,
            bad={
                "prior": ["arms"],
                "steps": [0],
                "batch": [0],
                "max_ctx": [-1],
                "n_query": [0],
                "lr": [0.0],
            },
        ),
        Call(vud.categorical_entropy, p=P, base=2.0, accepts={"p": ["rank"]}, bad={"base": [1.0]}),
        Call(
            vud.categorical_kl,
            p=P,
            q=Q,
            base=2.0,
            shapes={"p": "C", "q": "C"},
            accepts={"p": ["rank"], "q": ["rank"]},
            bad={"q": [torch.tensor([0.5, 0.6, 0.1])]},
        ),
        Call(
            vud.gaussian_entropy,
            var=torch.tensor([0.5, 2.0]),
            base=2.0,
            accepts={"var": ["rank", "empty"]},
            bad={"var": [torch.tensor([0.5, 0.0])]},
        ),
        Call(
            vud.gaussian_kl,
            mean1=torch.zeros(2),
            var1=torch.ones(2),
            mean2=torch.ones(2),
            var2=torch.full((2,), 2.0),
            base=2.0,
            shapes={"mean1": "N", "var1": "N", "mean2": "N", "var2": "N"},
            bad={"var2": [torch.tensor([1.0, -1.0])]},
        ),
    ],
    exempt={
        "ICLPredictor": "a typing.Protocol (the interface), nothing to call",
        "ProbeBound": "a result record returned by probe_bound",
        "VUDResult": "a result record returned by decompose",
        "BanditTrace": "a result record returned by run_bandit",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
