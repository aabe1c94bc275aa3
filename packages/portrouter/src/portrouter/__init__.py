"""PORT: training-free online routing of queries to LLMs under per-model budgets (NeurIPS 2025).

Per-query quality and cost are estimated from approximate nearest neighbours among historical
queries; one vector of per-model prices γ is learned once, from the dual of the budgeted assignment
LP over the first queries; later queries go to argmax_i (α d̂_ij − γ_i ĝ_ij).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "ANNIndex": "ann",
        "ExactKNNIndex": "baselines",
        "PORTRouter": "router",
        "ROUTERBENCH_COST": "synthetic",
        "ROUTERBENCH_MODELS": "synthetic",
        "ROUTERBENCH_PERF": "synthetic",
        "RouterData": "synthetic",
        "ServingResult": "serving",
        "SyntheticRouterBench": "synthetic",
        "batch_split_router": "baselines",
        "dual_objective": "dual",
        "estimate_features": "features",
        "greedy_router": "baselines",
        "knn_router": "baselines",
        "load_router_table": "synthetic",
        "minilm_embedder": "synthetic",
        "normalize": "ann",
        "offline_opt": "baselines",
        "predictor_router": "baselines",
        "random_router": "baselines",
        "recall_at_k": "ann",
        "relaxed_assignment": "baselines",
        "resolve_alpha": "dual",
        "simulate_serving": "serving",
        "solve_dual": "dual",
        "split_budget": "budget",
        "total_budget": "budget",
    },
)

if TYPE_CHECKING:  # the names for static tools; at run time they load lazily
    from portrouter.ann import (  # noqa: F401
        ANNIndex,
        normalize,
        recall_at_k,
    )
    from portrouter.baselines import (  # noqa: F401
        ExactKNNIndex,
        batch_split_router,
        greedy_router,
        knn_router,
        offline_opt,
        predictor_router,
        random_router,
        relaxed_assignment,
    )
    from portrouter.budget import (  # noqa: F401
        split_budget,
        total_budget,
    )
    from portrouter.dual import (  # noqa: F401
        dual_objective,
        resolve_alpha,
        solve_dual,
    )
    from portrouter.features import (  # noqa: F401
        estimate_features,
    )
    from portrouter.router import (  # noqa: F401
        PORTRouter,
    )
    from portrouter.serving import (  # noqa: F401
        ServingResult,
        simulate_serving,
    )
    from portrouter.synthetic import (  # noqa: F401
        ROUTERBENCH_COST,
        ROUTERBENCH_MODELS,
        ROUTERBENCH_PERF,
        RouterData,
        SyntheticRouterBench,
        load_router_table,
        minilm_embedder,
    )
