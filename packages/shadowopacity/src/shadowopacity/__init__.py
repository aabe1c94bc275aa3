"""shadowopacity: fine-grained shadow detection as per-pixel opacity prediction.

"Under the Shadow: Exploiting Opacity Variation for Fine-grained Shadow Detection" (NeurIPS 2025)
predicts an opacity map alpha in [0, 1] instead of a binary mask, with Shadow Opacity Augmentation,
Shadow Feature Separation and Opacity Mask Prediction. The public names are imported on first use.

>>> import torch
>>> from shadowopacity import render_shadow
>>> render_shadow(torch.ones(1, 3, 4, 4), torch.ones(1, 1, 4, 4), torch.full((1, 3), 0.5)).max()
tensor(0.5000)
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BinaryShadowNet": "model",
        "DirectOpacityNet": "model",
        "METHODS": "training",
        "OpacityShadowNet": "model",
        "SeparationLoss": "losses",
        "ShadowOpacityAugment": "augment",
        "UNetEncoder": "model",
        "ber": "metrics",
        "binarize_dataset": "data",
        "binned_mae": "metrics",
        "decorrelation_loss": "losses",
        "edit_shadow": "applications",
        "estimate_rho": "physics",
        "evaluate": "training",
        "instance_opacities": "metrics",
        "instance_opacity_kendall": "metrics",
        "invariance_loss": "losses",
        "make_shadow_scenes": "data",
        "opacity_loss": "losses",
        "opacity_mae": "metrics",
        "opacity_rmse": "metrics",
        "polygon_mask": "data",
        "position_loss": "losses",
        "rank_loss": "losses",
        "remove_predicted_shadow": "applications",
        "remove_shadow": "physics",
        "removal_psnr": "metrics",
        "render_shadow": "physics",
        "sobel": "losses",
        "train_method": "training",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from shadowopacity.applications import edit_shadow as edit_shadow
    from shadowopacity.applications import remove_predicted_shadow as remove_predicted_shadow
    from shadowopacity.augment import ShadowOpacityAugment as ShadowOpacityAugment
    from shadowopacity.data import binarize_dataset as binarize_dataset
    from shadowopacity.data import make_shadow_scenes as make_shadow_scenes
    from shadowopacity.data import polygon_mask as polygon_mask
    from shadowopacity.losses import SeparationLoss as SeparationLoss
    from shadowopacity.losses import decorrelation_loss as decorrelation_loss
    from shadowopacity.losses import invariance_loss as invariance_loss
    from shadowopacity.losses import opacity_loss as opacity_loss
    from shadowopacity.losses import position_loss as position_loss
    from shadowopacity.losses import rank_loss as rank_loss
    from shadowopacity.losses import sobel as sobel
    from shadowopacity.metrics import ber as ber
    from shadowopacity.metrics import binned_mae as binned_mae
    from shadowopacity.metrics import instance_opacities as instance_opacities
    from shadowopacity.metrics import instance_opacity_kendall as instance_opacity_kendall
    from shadowopacity.metrics import opacity_mae as opacity_mae
    from shadowopacity.metrics import opacity_rmse as opacity_rmse
    from shadowopacity.metrics import removal_psnr as removal_psnr
    from shadowopacity.model import BinaryShadowNet as BinaryShadowNet
    from shadowopacity.model import DirectOpacityNet as DirectOpacityNet
    from shadowopacity.model import OpacityShadowNet as OpacityShadowNet
    from shadowopacity.model import UNetEncoder as UNetEncoder
    from shadowopacity.physics import estimate_rho as estimate_rho
    from shadowopacity.physics import remove_shadow as remove_shadow
    from shadowopacity.physics import render_shadow as render_shadow
    from shadowopacity.training import METHODS as METHODS
    from shadowopacity.training import evaluate as evaluate
    from shadowopacity.training import train_method as train_method
