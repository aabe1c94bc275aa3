"""CBSA: contract-and-broadcast self-attention (NeurIPS 2025, arXiv 2509.16875).

Attention derived as one gradient step on the coding rate of a few representatives: contract
the representatives, broadcast the contraction back to every token through the same assignment,
O(N m) per head. The public names are imported on first use (``import cbsa`` imports no torch);
the submodules ``cbsa.functional``, ``cbsa.rate``, ``cbsa.data`` and ``cbsa.flops`` are reachable
as attributes too.

>>> import torch
>>> from cbsa import CBSA
>>> layer = CBSA(64, heads=4, dim_head=16, num_reps=4)
>>> layer(torch.randn(2, 1 + 64, 64)).shape     # cls + an 8 x 8 patch grid
torch.Size([2, 65, 64])
"""

import importlib
from typing import TYPE_CHECKING, Any

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

_getattr, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CBSA": "layers",
        "CBT": "model",
        "ISTA": "model",
        "MSSA": "baselines",
        "SoftmaxAttention": "baselines",
        "TSSA": "baselines",
        "attention_flops": "flops",
        "coding_rate": "rate",
        "contract_broadcast": "functional",
        "count_flops": "flops",
        "digits_images": "data",
        "principal_angles": "rate",
        "subspace_compression": "rate",
        "union_of_subspaces": "data",
    },
)
_SUBMODULES = ("functional", "rate", "data", "flops")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    return _getattr(name)


if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from cbsa.baselines import MSSA as MSSA
    from cbsa.baselines import TSSA as TSSA
    from cbsa.baselines import SoftmaxAttention as SoftmaxAttention
    from cbsa.data import digits_images as digits_images
    from cbsa.data import union_of_subspaces as union_of_subspaces
    from cbsa.flops import attention_flops as attention_flops
    from cbsa.flops import count_flops as count_flops
    from cbsa.functional import contract_broadcast as contract_broadcast
    from cbsa.layers import CBSA as CBSA
    from cbsa.model import CBT as CBT
    from cbsa.model import ISTA as ISTA
    from cbsa.rate import coding_rate as coding_rate
    from cbsa.rate import principal_angles as principal_angles
    from cbsa.rate import subspace_compression as subspace_compression
