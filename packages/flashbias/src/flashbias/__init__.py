"""FlashBias: fast attention with a low-rank bias (NeurIPS 2025, arXiv 2505.12044).

>>> import torch
>>> from flashbias import flash_bias_attention
>>> from flashbias.decompose import alibi_factors
>>> q = k = v = torch.randn(1, 10, 2, 8)
>>> q_b, k_b = alibi_factors(10, 2)
>>> flash_bias_attention(q, k, v, q_b.float(), k_b.float(), causal=True).shape
torch.Size([1, 10, 2, 8])
"""

from flashbias import data, decompose, iocost
from flashbias.attention import dense_bias_attention, flash_bias_attention
from flashbias.layers import BiasedAttention

__all__ = [
    "BiasedAttention",
    "data",
    "decompose",
    "dense_bias_attention",
    "flash_bias_attention",
    "iocost",
]
