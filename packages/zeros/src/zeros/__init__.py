"""ZeroS: zero-sum linear attention for efficient transformers (NeurIPS 2025, arXiv 2602.05230).

>>> import torch
>>> from zeros import ZeroSAttention
>>> layer = ZeroSAttention(dim=64, num_heads=4)
>>> layer(torch.randn(2, 100, 64)).shape
torch.Size([2, 100, 64])
"""

from zeros.baselines import LinearAttention, SoftmaxAttention
from zeros.data import contrast, mqar
from zeros.layers import ZeroSAttention
from zeros.models import TinyLM
from zeros.ops import zero_sum_weights, zeros_attention

__all__ = [
    "LinearAttention",
    "SoftmaxAttention",
    "TinyLM",
    "ZeroSAttention",
    "contrast",
    "mqar",
    "zero_sum_weights",
    "zeros_attention",
]
