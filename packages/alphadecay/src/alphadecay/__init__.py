"""AlphaDecay: module-wise weight decay for heavy-tailed balancing in LLMs (NeurIPS 2025,
arXiv 2506.14562).

Heavier-tailed modules (smaller power-law exponent of their weight's spectrum) get weaker decay:

>>> from alphadecay import assign_weight_decay, pl_alpha_hill
>>> alphas = {"attn": pl_alpha_hill([1.0, 2.0, 4.0, 8.0])}  # heavy tail: alpha 3.89
>>> alphas["mlp"] = pl_alpha_hill([1.0, 1.5, 2.0, 3.0])  # lighter tail: alpha 5.93
>>> decays = assign_weight_decay(alphas, base_wd=0.1)
>>> decays["attn"] < decays["mlp"]
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from alphadecay.assign import assign_weight_decay as assign_weight_decay
    from alphadecay.assign import module_alphas as module_alphas
    from alphadecay.assign import tracked_modules as tracked_modules
    from alphadecay.baselines import AdaDecayAdamW as AdaDecayAdamW
    from alphadecay.baselines import AWDAdamW as AWDAdamW
    from alphadecay.data import ALPHABET as ALPHABET
    from alphadecay.data import synthetic_corpus as synthetic_corpus
    from alphadecay.data import synthetic_text as synthetic_text
    from alphadecay.esd import PowerLawFit as PowerLawFit
    from alphadecay.esd import esd_eigenvalues as esd_eigenvalues
    from alphadecay.esd import pl_alpha_hill as pl_alpha_hill
    from alphadecay.esd import pl_fit as pl_fit
    from alphadecay.model import tiny_llama as tiny_llama
    from alphadecay.optim import AlphaDecayAdam as AlphaDecayAdam
    from alphadecay.optim import AlphaDecayAdamW as AlphaDecayAdamW
    from alphadecay.optim import AlphaDecayScheduler as AlphaDecayScheduler
    from alphadecay.optim import module_param_groups as module_param_groups

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "ALPHABET": "data",
        "AWDAdamW": "baselines",
        "AdaDecayAdamW": "baselines",
        "AlphaDecayAdam": "optim",
        "AlphaDecayAdamW": "optim",
        "AlphaDecayScheduler": "optim",
        "PowerLawFit": "esd",
        "tiny_llama": "model",
        "assign_weight_decay": "assign",
        "esd_eigenvalues": "esd",
        "module_alphas": "assign",
        "module_param_groups": "optim",
        "pl_alpha_hill": "esd",
        "pl_fit": "esd",
        "synthetic_corpus": "data",
        "synthetic_text": "data",
        "tracked_modules": "assign",
    },
)
