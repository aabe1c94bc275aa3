"""FlashBias: fast attention with a low-rank bias (NeurIPS 2025, arXiv 2505.12044).

The public names are imported on first use (importing ``flashbias`` imports no torch).

>>> import torch
>>> from flashbias import alibi_factors, flash_bias_attention
>>> q = k = v = torch.randn(1, 10, 2, 8)
>>> q_b, k_b = alibi_factors(10, 2)
>>> flash_bias_attention(q, k, v, q_b, k_b, causal=True).shape
torch.Size([1, 10, 2, 8])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BiasedAttention": "layers",
        "NeuralFactorizer": "decompose",
        "PairBias": "data",
        "alibi_bias": "decompose",
        "alibi_factors": "decompose",
        "alibi_slopes": "decompose",
        "dense_bias_attention": "attention",
        "distance_factors": "decompose",
        "factors_to_dense": "decompose",
        "flash_bias_attention": "attention",
        "hbm_accesses": "iocost",
        "pair_bias": "data",
        "svd_factors": "decompose",
        "swin_cpb_bias": "data",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from flashbias.attention import dense_bias_attention as dense_bias_attention
    from flashbias.attention import flash_bias_attention as flash_bias_attention
    from flashbias.data import PairBias as PairBias
    from flashbias.data import pair_bias as pair_bias
    from flashbias.data import swin_cpb_bias as swin_cpb_bias
    from flashbias.decompose import NeuralFactorizer as NeuralFactorizer
    from flashbias.decompose import alibi_bias as alibi_bias
    from flashbias.decompose import alibi_factors as alibi_factors
    from flashbias.decompose import alibi_slopes as alibi_slopes
    from flashbias.decompose import distance_factors as distance_factors
    from flashbias.decompose import factors_to_dense as factors_to_dense
    from flashbias.decompose import svd_factors as svd_factors
    from flashbias.iocost import hbm_accesses as hbm_accesses
    from flashbias.layers import BiasedAttention as BiasedAttention
