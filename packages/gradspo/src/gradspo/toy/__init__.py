"""The toy domain of the reproduction: a class-conditional 8-Gaussians DDPM and its rewards.

``EightGaussians`` (data), ``MLPDenoiser`` (ε-prediction with CFG), ``train_ddpm`` (the base
model), ``directional`` (the rewards; also ``gradspo.toy.rewards``).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DirectionalReward": "rewards",
        "EightGaussians": "data",
        "MLPDenoiser": "models",
        "directional": "rewards",
        "train_ddpm": "train",
    },
)

if TYPE_CHECKING:
    from gradspo.toy.data import EightGaussians as EightGaussians
    from gradspo.toy.models import MLPDenoiser as MLPDenoiser
    from gradspo.toy.rewards import DirectionalReward as DirectionalReward
    from gradspo.toy.rewards import directional as directional
    from gradspo.toy.train import train_ddpm as train_ddpm
