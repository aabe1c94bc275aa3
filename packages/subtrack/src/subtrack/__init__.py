"""SubTrack++: Grassmannian gradient-subspace tracking for memory-efficient training (NeurIPS 2025,
arXiv 2502.01586).

>>> import torch
>>> from subtrack import SubTrackAdamW, make_param_groups, tiny_llama
>>> model = tiny_llama(vocab=29, dim=32, layers=1, heads=2)  # a transformers LlamaForCausalLM
>>> opt = SubTrackAdamW(make_param_groups(model, rank=8, update_interval=10), lr=1e-3)
>>> len(opt.param_groups)
2
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "ALPHABET": "data",
        "METHODS": "optimizer",
        "SubTrackAdamW": "optimizer",
        "grassmann_step": "grassmann",
        "make_param_groups": "optimizer",
        "optimizer_state_bytes": "optimizer",
        "principal_angles": "grassmann",
        "projection_error": "grassmann",
        "rotate_adam_moments": "grassmann",
        "synthetic_corpus": "data",
        "tiny_llama": "model",
    },
)

if TYPE_CHECKING:  # the names for static tools; at run time they load lazily
    from subtrack.data import ALPHABET, synthetic_corpus  # noqa: F401
    from subtrack.grassmann import (  # noqa: F401
        grassmann_step,
        principal_angles,
        projection_error,
        rotate_adam_moments,
    )
    from subtrack.model import tiny_llama  # noqa: F401
    from subtrack.optimizer import (  # noqa: F401
        METHODS,
        SubTrackAdamW,
        make_param_groups,
        optimizer_state_bytes,
    )
