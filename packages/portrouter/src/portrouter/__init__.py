"""PORT: training-free online routing of queries to LLMs under per-model budgets (NeurIPS 2025).

Per-query quality and cost are estimated from approximate nearest neighbours among historical
queries; one vector of per-model prices γ is learned once, from the dual of the budgeted assignment
LP over the first queries; later queries go to argmax_i (α d̂_ij − γ_i ĝ_ij).
"""

from portrouter.ann import ANNIndex, normalize, recall_at_k
from portrouter.baselines import (
    ExactKNNIndex,
    batch_split_router,
    greedy_router,
    knn_router,
    offline_opt,
    predictor_router,
    random_router,
    relaxed_assignment,
)
from portrouter.budget import split_budget, total_budget
from portrouter.dual import dual_objective, resolve_alpha, solve_dual
from portrouter.features import estimate_features
from portrouter.router import PORTRouter
from portrouter.serving import ServingResult, simulate_serving
from portrouter.synthetic import (
    ROUTERBENCH_COST,
    ROUTERBENCH_MODELS,
    ROUTERBENCH_PERF,
    RouterData,
    SyntheticRouterBench,
    load_router_table,
    minilm_embedder,
)

__all__ = [
    "ROUTERBENCH_COST",
    "ROUTERBENCH_MODELS",
    "ROUTERBENCH_PERF",
    "ANNIndex",
    "ExactKNNIndex",
    "PORTRouter",
    "RouterData",
    "ServingResult",
    "SyntheticRouterBench",
    "batch_split_router",
    "dual_objective",
    "estimate_features",
    "greedy_router",
    "knn_router",
    "load_router_table",
    "minilm_embedder",
    "normalize",
    "offline_opt",
    "predictor_router",
    "random_router",
    "recall_at_k",
    "relaxed_assignment",
    "resolve_alpha",
    "simulate_serving",
    "solve_dual",
    "split_budget",
    "total_budget",
]
