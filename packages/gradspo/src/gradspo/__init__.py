"""GradSPO (NeurIPS 2025): stepwise preference optimization as gradient guidance for diffusion.

SPO ranks K candidate next states drawn from the same x_t and applies DPO to their transition
likelihoods; GradSPO reads the winner-minus-loser noise g_t as a reward-gradient estimate and
regresses ε_θ toward the guidance-corrected target ε_ema ∓ γ sqrt(1 − ᾱ_t) g_t, with an EMA
sampler/anchor, K-candidate extreme selection and ratio clipping to reduce the estimate's noise.

The public names are imported on first use (importing ``gradspo`` imports no torch).

>>> import torch
>>> from gradspo import gradspo_loss
>>> e = torch.zeros(3, 2)
>>> float(gradspo_loss(e, e, e, torch.zeros(3, 2), torch.full((3,), 0.5)))  # g = 0: log 2
0.6931471824645996
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DDIMScheduler": "scheduler",
        "GradSPOTrainer": "trainer",
        "LoRALinear": "lora",
        "PairBatch": "collect",
        "add_lora": "lora",
        "cfg_eps": "sampling",
        "collect_stepwise_pairs": "collect",
        "diffusion_dpo_loss": "losses",
        "ema_update": "trainer",
        "gradspo_logit": "losses",
        "gradspo_loss": "losses",
        "implied_step_weights": "losses",
        "mean_reward": "metrics",
        "mmd_rbf": "metrics",
        "mode_coverage": "metrics",
        "sample": "sampling",
        "spo_logit": "losses",
        "spo_loss": "losses",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from gradspo.collect import PairBatch as PairBatch
    from gradspo.collect import collect_stepwise_pairs as collect_stepwise_pairs
    from gradspo.lora import LoRALinear as LoRALinear
    from gradspo.lora import add_lora as add_lora
    from gradspo.losses import diffusion_dpo_loss as diffusion_dpo_loss
    from gradspo.losses import gradspo_logit as gradspo_logit
    from gradspo.losses import gradspo_loss as gradspo_loss
    from gradspo.losses import implied_step_weights as implied_step_weights
    from gradspo.losses import spo_logit as spo_logit
    from gradspo.losses import spo_loss as spo_loss
    from gradspo.metrics import mean_reward as mean_reward
    from gradspo.metrics import mmd_rbf as mmd_rbf
    from gradspo.metrics import mode_coverage as mode_coverage
    from gradspo.sampling import cfg_eps as cfg_eps
    from gradspo.sampling import sample as sample
    from gradspo.scheduler import DDIMScheduler as DDIMScheduler
    from gradspo.trainer import GradSPOTrainer as GradSPOTrainer
    from gradspo.trainer import ema_update as ema_update
