"""LION: bidirectional linear attention in full, RNN and chunkwise forms (NeurIPS 2025,
arXiv 2502.16249).

>>> import torch
>>> from lion import LionAttention
>>> layer = LionAttention(32, 4, decay="s")
>>> x = torch.randn(2, 10, 32)
>>> y = layer(x)
>>> torch.allclose(layer.set_form("rnn")(x), y, atol=1e-5)
True
"""

from lion import data, models, ops
from lion.attention import LionAttention, feature_map
from lion.baselines import CausalLinearAttention, SoftmaxAttention
from lion.models import CausalLinearViT, LionViT, SequenceTagger, SoftmaxViT
from lion.ops import lion_chunk, lion_full, lion_mask, lion_rnn
from lion.orders import snake_orders

__all__ = [
    "CausalLinearAttention",
    "CausalLinearViT",
    "LionAttention",
    "LionViT",
    "SequenceTagger",
    "SoftmaxAttention",
    "SoftmaxViT",
    "data",
    "feature_map",
    "lion_chunk",
    "lion_full",
    "lion_mask",
    "lion_rnn",
    "models",
    "ops",
    "snake_orders",
]
