"""AlphaDecay: module-wise weight decay for heavy-tailed balancing in LLMs (NeurIPS 2025,
arXiv 2506.14562)."""

from alphadecay.assign import assign_weight_decay, module_alphas, tracked_modules
from alphadecay.baselines import AdaDecayAdamW, AWDAdamW
from alphadecay.data import ALPHABET, synthetic_corpus, synthetic_text
from alphadecay.esd import PowerLawFit, esd_eigenvalues, pl_alpha_hill, pl_fit
from alphadecay.model import TinyLlama
from alphadecay.optim import (
    AlphaDecayAdam,
    AlphaDecayAdamW,
    AlphaDecayScheduler,
    module_param_groups,
)

__all__ = [
    "ALPHABET",
    "AWDAdamW",
    "AdaDecayAdamW",
    "AlphaDecayAdam",
    "AlphaDecayAdamW",
    "AlphaDecayScheduler",
    "PowerLawFit",
    "TinyLlama",
    "assign_weight_decay",
    "esd_eigenvalues",
    "module_alphas",
    "module_param_groups",
    "pl_alpha_hill",
    "pl_fit",
    "synthetic_corpus",
    "synthetic_text",
    "tracked_modules",
]
