"""adtp: Attribution-Driven Adaptive Token Pruning for Transformers (AD-TP, NeurIPS 2025).

Token importance from Integrated Gradients of a fine-tuned teacher, distilled into per-layer
importance predictors; a token retainer that picks each sequence's keep ratios; a BERT-like
encoder that prunes tokens softly in training and by top-k gather at inference. The public names
are imported on first use (importing ``adtp`` imports no torch).

>>> import torch
>>> from adtp import PrunableEncoder, needle_task
>>> x = needle_task(4, max_len=32, seed=0)
>>> model = PrunableEncoder(200, 16, 4, 2, 32, 32, 2, [1, 2, 3])
>>> out = model(x.input_ids, x.attention_mask, mode="hard", keep_ratios=[0.5, 0.3, 0.2])
>>> out["logits"].shape, bool((out["flops"] < model(x.input_ids, x.attention_mask)["flops"]).all())
(torch.Size([4, 2]), True)
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "ADTPConfig": "train",
        "FixedRatioPruner": "baselines",
        "ImportancePredictor": "modules",
        "PrunableEncoder": "model",
        "TokenRetainer": "modules",
        "attention_importance": "attribution",
        "encoder_flops": "flops",
        "evaluate": "metrics",
        "geometric_schedule": "baselines",
        "ig_targets": "train",
        "integrated_gradients": "attribution",
        "make_loader": "train",
        "match_flops": "baselines",
        "needle_task": "data",
        "normalise_importance": "attribution",
        "paired_bootstrap": "metrics",
        "precision_at_k": "metrics",
        "train_adtp": "train",
        "train_teacher": "train",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from adtp.attribution import attention_importance as attention_importance
    from adtp.attribution import integrated_gradients as integrated_gradients
    from adtp.attribution import normalise_importance as normalise_importance
    from adtp.baselines import FixedRatioPruner as FixedRatioPruner
    from adtp.baselines import geometric_schedule as geometric_schedule
    from adtp.baselines import match_flops as match_flops
    from adtp.data import needle_task as needle_task
    from adtp.flops import encoder_flops as encoder_flops
    from adtp.metrics import evaluate as evaluate
    from adtp.metrics import paired_bootstrap as paired_bootstrap
    from adtp.metrics import precision_at_k as precision_at_k
    from adtp.model import PrunableEncoder as PrunableEncoder
    from adtp.modules import ImportancePredictor as ImportancePredictor
    from adtp.modules import TokenRetainer as TokenRetainer
    from adtp.train import ADTPConfig as ADTPConfig
    from adtp.train import ig_targets as ig_targets
    from adtp.train import make_loader as make_loader
    from adtp.train import train_adtp as train_adtp
    from adtp.train import train_teacher as train_teacher
