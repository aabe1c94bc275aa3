"""bcvlr: BCV-LR (NeurIPS 2025, arXiv 2512.21586), behaviour cloning from videos via latent
representations: learn latent actions from action-free expert videos, align them with real
actions from a small reward-free interaction budget.
"""

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "ActionDecoder": "models",
        "BCO": "baselines",
        "BCVLR": "agent",
        "BCVLRConfig": "config",
        "BCWithActions": "baselines",
        "Encoder": "models",
        "EvalPoint": "online",
        "EvalResult": "online",
        "ExpertData": "data",
        "ForwardModel": "models",
        "InverseDynamics": "models",
        "LAPO": "agent",
        "LatentAction": "models",
        "LatentPolicy": "models",
        "PPO": "baselines",
        "PixelGridReach": "envs",
        "PixelPointReach": "envs",
        "VQEmbeddingEMA": "vq",
        "contrastive_loss": "ssl",
        "evaluate_policy": "online",
        "expert_dataset": "data",
        "make_expert_videos": "data",
        "make_vector_env": "envs",
        "random_policy": "baselines",
        "random_shift": "ssl",
    },
)
