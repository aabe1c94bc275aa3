"""Every public entry point against the shared bad-input suite (paperkit.testing.BadInputs)."""

import tempfile
from pathlib import Path

import numpy as np
import pytest

import portrouter
from paperkit.testing import BadInputs, Call, fresh
from portrouter import (
    ANNIndex,
    ExactKNNIndex,
    PORTRouter,
    RouterData,
    SyntheticRouterBench,
    batch_split_router,
    dual_objective,
    estimate_features,
    greedy_router,
    knn_router,
    load_router_table,
    minilm_embedder,
    normalize,
    offline_opt,
    predictor_router,
    random_router,
    recall_at_k,
    relaxed_assignment,
    resolve_alpha,
    simulate_serving,
    solve_dual,
    split_budget,
    total_budget,
)

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

RNG = np.random.default_rng(0)
N_HIST, N, M, P = 20, 8, 3, 6
HE = RNG.standard_normal((N_HIST, P))  # history embeddings
HD = (RNG.random((N_HIST, M)) < 0.5).astype(float)  # quality
HG = RNG.uniform(1e-4, 1e-3, (N_HIST, M))  # cost
TE = RNG.standard_normal((N, P))  # stream embeddings
TD = (RNG.random((N, M)) < 0.5).astype(float)
TG = RNG.uniform(1e-4, 1e-3, (N, M))
B = np.full(M, 2e-3)
INDEX = ANNIndex("exact", dim=P, k=3)
INDEX.add(HE)
HIST = {"hist_d": "n M", "hist_g": "n M"}
BAD_BUDGETS = [np.full(M, np.inf), -B]  # an infinite budget has no price; negatives
TABLE = Path(tempfile.mkdtemp()) / "router.csv"
TABLE.write_text("prompt,m1,m1|total_cost,m2,m2|total_cost\nhi,1.0,0.0001,0.0,0.00002\n")


def _data():
    data = SyntheticRouterBench(12, 6, n_models=M, seed=0).build(lambda t: RNG.random((len(t), P)))
    return {f: getattr(data, f) for f in RouterData.__dataclass_fields__}


def _ann(**kwargs):
    """ANNIndex with the exact back end: Call's own ``method=`` option takes the keyword
    ``method`` (its check is in test_ann.py)."""
    return ANNIndex("exact", **kwargs)


_ann.__name__ = "ANNIndex"

SUITE = BadInputs(
    portrouter,
    [
        Call(
            _ann,
            dim=P,
            k=3,
            M=16,
            ef_construction=40,
            ef=20,
            seed=0,
            threads=1,
            prepare=lambda index: index.add(HE),
            method="search",
            call={"q": TE},
            shapes={"q": f"b {P}"},
            bad={"dim": [0], "k": [0], "threads": [0, -2]},
            accepts={"q": {"rank"}},  # one query may be given as a (dim,) row
        ),
        Call(
            ExactKNNIndex,
            emb=HE,
            k=3,
            method="search",
            call={"q": TE},
            shapes={"emb": "n p", "q": "b p"},
            bad={"k": [0, N_HIST + 1]},
            accepts={"q": {"rank"}},
        ),
        Call(
            PORTRouter,
            index=INDEX,
            hist_d=HD,
            hist_g=HG,
            budgets=B,
            n_queries=N,
            eps=0.25,
            alpha=1e-4,
            solver="lp",
            allow_skip=False,
            seed=0,
            method="route_batch",
            call={"q": TE},
            shapes={**HIST, "budgets": "M", "q": "b p"},
            bad={
                "budgets": [*BAD_BUDGETS, np.zeros(M)],
                "eps": [0.0, 1.0],
                "n_queries": [0],
                "alpha": [0.0, "median"],
                "hist_g": [-HG],
                "q": [TE[:, :2]],
            },
            accepts={"q": {"rank"}},
        ),
        Call(
            estimate_features,
            index=INDEX,
            hist_d=HD,
            hist_g=HG,
            q=TE,
            shapes={**HIST, "q": "b p"},
            bad={"index": [object()], "q": [TE[:, :2]]},
            accepts={"q": {"rank"}},
        ),
        Call(
            recall_at_k,
            found=np.arange(6).reshape(2, 3),
            truth=np.arange(6).reshape(2, 3)[:, ::-1].copy(),
            shapes={"found": "b k", "truth": "b k"},
        ),
        Call(normalize, x=HE),
        Call(
            dual_objective,
            gamma=np.full(M, 0.5),
            d_hat=HD,
            g_hat=HG,
            budgets=B,
            eps=0.1,
            alpha=1e-4,
            allow_skip=False,
            shapes={"d_hat": "L M", "g_hat": "L M", "budgets": "M", "gamma": "M"},
            bad={"eps": [0.0, 1.5], "alpha": [0.0], "budgets": BAD_BUDGETS},
        ),
        Call(
            solve_dual,
            d_hat=HD,
            g_hat=HG,
            budgets=B,
            eps=0.1,
            alpha=1e-4,
            solver="lp",
            allow_skip=True,
            shapes={"d_hat": "L M", "g_hat": "L M", "budgets": "M"},
            bad={"eps": [0.0, 2.0], "alpha": [-1.0, "max"], "budgets": BAD_BUDGETS},
        ),
        Call(
            resolve_alpha,
            alpha=1e-4,
            d_hat=HD,
            g_hat=HG,
            shapes={"d_hat": "L M", "g_hat": "L M"},
            bad={"alpha": [0.0, "median"]},
        ),
        Call(total_budget, stream_g=TG, factor=1.0, bad={"factor": [0.0], "stream_g": [-TG]}),
        Call(
            split_budget,
            total=1.0,
            perf=np.array([0.4, 0.6, 0.8]),
            cost=np.array([1e-4, 5e-4, 3e-3]),
            strategy="weighted",
            shapes={"perf": "M", "cost": "M"},
            bad={"total": [0.0], "cost": [np.array([1e-4, 0.0, 1e-3])], "rng": ["seed"]},
            rng=None,
        ),
        Call(
            simulate_serving,
            choices_fn=fresh(lambda: random_router(M)),
            stream_d=TD,
            stream_g=TG,
            emb=TE,
            budgets=B,
            segment=4,
            shapes={"stream_d": "N M", "stream_g": "N M", "emb": "N p", "budgets": "M"},
            bad={"segment": [0], "budgets": BAD_BUDGETS},
        ),
        Call(
            simulate_serving,
            name="simulate_serving-offline",
            choices_fn=np.arange(N) % (M + 1),
            stream_d=TD,
            stream_g=TG,
            emb=None,
            budgets=B,
            segment=4,
            shapes={"stream_d": "N M", "stream_g": "N M", "budgets": "M", "choices_fn": "N"},
            bad={"choices_fn": [np.full(N, M + 1)]},
        ),
        Call(random_router, n_models=M, seed=0, bad={"n_models": [0]}),
        Call(
            greedy_router,
            index=INDEX,
            hist_d=HD,
            hist_g=HG,
            budgets=B,
            kind="cost",
            shapes={**HIST, "budgets": "M"},
            bad={"budgets": BAD_BUDGETS, "index": ["index"]},
        ),
        Call(
            knn_router,
            hist_emb=HE,
            hist_d=HD,
            hist_g=HG,
            budgets=B,
            kind="perf",
            k=3,
            shapes={"hist_emb": "n p", **HIST, "budgets": "M"},
            bad={"budgets": BAD_BUDGETS, "k": [0, N_HIST + 1]},
        ),
        Call(
            batch_split_router,
            index=INDEX,
            hist_d=HD,
            hist_g=HG,
            budgets=B,
            n_queries=N,
            shapes={**HIST, "budgets": "M"},
            bad={"budgets": BAD_BUDGETS, "n_queries": [0]},
        ),
        Call(
            predictor_router,
            hist_emb=HE,
            hist_d=HD,
            hist_g=HG,
            budgets=B,
            kind="perf",
            seed=0,
            max_iter=3,
            shapes={"hist_emb": "n p", **HIST, "budgets": "M"},
            bad={"budgets": BAD_BUDGETS, "max_iter": [0]},
        ),
        Call(
            offline_opt,
            d=TD,
            g=TG,
            budgets=B,
            shapes={"d": "N M", "g": "N M", "budgets": "M"},
            bad={"budgets": BAD_BUDGETS, "g": [-TG]},
        ),
        Call(
            relaxed_assignment,
            d=TD,
            g=TG,
            budgets=B,
            shapes={"d": "N M", "g": "N M", "budgets": "M"},
            bad={"budgets": BAD_BUDGETS},
        ),
        Call(
            SyntheticRouterBench,
            n_history=12,
            n_test=6,
            n_models=M,
            seed=0,
            method="build",
            call={"embedder": lambda t: RNG.random((len(t), P))},
            bad={
                "n_history": [0, 10**12],
                "n_test": [0, 10**12],
                "n_models": [0, 12],
                "embedder": ["minilm", lambda t: np.full((len(t), P), np.nan)],
            },
        ),
        Call(
            RouterData,
            **_data(),
            shapes={
                "hist_emb": "h p",
                "hist_d": "h M",
                "hist_g": "h M",
                "hist_domain": "h",
                "test_emb": "t p",
                "test_d": "t M",
                "test_g": "t M",
                "test_domain": "t",
            },
            bad={"models": ["abc"], "embed_seconds": [-1.0]},
        ),
        Call(minilm_embedder, batch_size=8, cache=False, bad={"batch_size": [0]}),
        Call(load_router_table, path=str(TABLE), bad={"path": [str(TABLE.with_name("none.csv"))]}),
    ],
    exempt={"ServingResult": "the record simulate_serving returns; users read it, not build it"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
