"""LION: bidirectional linear attention in full, RNN and chunkwise forms (NeurIPS 2025,
arXiv 2502.16249).

The three equivalent forms are the backends of one op and one layer: ``"reference"`` (the full
masked attention), ``"chunk"``, ``"rnn"`` and ``"triton"`` (the chunkwise form as a Triton kernel).

>>> import torch
>>> from lion import LionAttention
>>> layer = LionAttention(32, 4, decay="s")
>>> x = torch.randn(2, 10, 32)
>>> y = layer(x)
>>> torch.allclose(layer.set_backend("chunk")(x), y, atol=1e-5)
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CausalLinearAttention": "baselines",
        "CausalLinearViT": "models",
        "LionAttention": "attention",
        "LionViT": "models",
        "SequenceTagger": "models",
        "SoftmaxAttention": "baselines",
        "SoftmaxViT": "models",
        "feature_map": "attention",
        "lion_attention": "ops",
        "lion_mask": "reference",
        "snake_orders": "orders",
    },
)

if TYPE_CHECKING:  # the names for static tools; at run time they load lazily
    from lion.attention import (  # noqa: F401
        LionAttention,
        feature_map,
    )
    from lion.baselines import (  # noqa: F401
        CausalLinearAttention,
        SoftmaxAttention,
    )
    from lion.models import (  # noqa: F401
        CausalLinearViT,
        LionViT,
        SequenceTagger,
        SoftmaxViT,
    )
    from lion.ops import lion_attention  # noqa: F401
    from lion.orders import snake_orders  # noqa: F401
    from lion.reference import lion_mask  # noqa: F401
