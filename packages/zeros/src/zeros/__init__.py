"""ZeroS: zero-sum linear attention for efficient transformers (NeurIPS 2025, arXiv 2602.05230).

>>> import torch
>>> from zeros import ZeroSAttention
>>> layer = ZeroSAttention(dim=64, num_heads=4)
>>> layer(torch.randn(2, 100, 64)).shape
torch.Size([2, 100, 64])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from zeros.baselines import LinearAttention as LinearAttention
    from zeros.baselines import SoftmaxAttention as SoftmaxAttention
    from zeros.data import contrast as contrast
    from zeros.data import mqar as mqar
    from zeros.layers import ZeroSAttention as ZeroSAttention
    from zeros.models import TinyLM as TinyLM
    from zeros.ops import zero_sum_weights as zero_sum_weights
    from zeros.ops import zeros_attention as zeros_attention

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "LinearAttention": "baselines",
        "SoftmaxAttention": "baselines",
        "TinyLM": "models",
        "ZeroSAttention": "layers",
        "contrast": "data",
        "mqar": "data",
        "zero_sum_weights": "ops",
        "zeros_attention": "ops",
    },
)
