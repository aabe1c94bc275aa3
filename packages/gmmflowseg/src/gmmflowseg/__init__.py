"""gmmflowseg: GMM+NF CVAE (NeurIPS 2025): stochastic segmentation with a constrained
Gaussian-mixture latent and a normalizing flow on the posterior.

The public names are imported on first use (importing ``gmmflowseg`` imports no torch).

>>> import torch
>>> from gmmflowseg import GMMFlowSegNet
>>> net = GMMFlowSegNet(1, 2, base=4, depth=2, flow="coupling")
>>> logits, comps = net.sample(torch.randn(1, 1, 8, 8), n_samples=3)
>>> tuple(logits.shape), int(comps.max()) < 4
((3, 1, 2, 8, 8), True)
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AffineCoupling": "flows",
        "ConvEncoder": "backbone",
        "DeterministicUNet": "models",
        "Fcomb": "backbone",
        "FlowSequence": "flows",
        "GMMFlowSegNet": "models",
        "GMMHead": "latent",
        "GMMParams": "latent",
        "MixtureLatent": "latent",
        "PlanarFlow": "flows",
        "ProbUNet": "models",
        "UNetBackbone": "backbone",
        "component_mode_nmi": "metrics",
        "diversity": "metrics",
        "ged": "metrics",
        "hm_iou": "metrics",
        "iou": "metrics",
        "kl_joint": "latent",
        "kl_marginal": "latent",
        "latent_diagnostics": "metrics",
        "make_ambiguous_lesions": "data",
        "make_cracks": "data",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from gmmflowseg.backbone import ConvEncoder as ConvEncoder
    from gmmflowseg.backbone import Fcomb as Fcomb
    from gmmflowseg.backbone import UNetBackbone as UNetBackbone
    from gmmflowseg.data import make_ambiguous_lesions as make_ambiguous_lesions
    from gmmflowseg.data import make_cracks as make_cracks
    from gmmflowseg.flows import AffineCoupling as AffineCoupling
    from gmmflowseg.flows import FlowSequence as FlowSequence
    from gmmflowseg.flows import PlanarFlow as PlanarFlow
    from gmmflowseg.latent import GMMHead as GMMHead
    from gmmflowseg.latent import GMMParams as GMMParams
    from gmmflowseg.latent import MixtureLatent as MixtureLatent
    from gmmflowseg.latent import kl_joint as kl_joint
    from gmmflowseg.latent import kl_marginal as kl_marginal
    from gmmflowseg.metrics import component_mode_nmi as component_mode_nmi
    from gmmflowseg.metrics import diversity as diversity
    from gmmflowseg.metrics import ged as ged
    from gmmflowseg.metrics import hm_iou as hm_iou
    from gmmflowseg.metrics import iou as iou
    from gmmflowseg.metrics import latent_diagnostics as latent_diagnostics
    from gmmflowseg.models import DeterministicUNet as DeterministicUNet
    from gmmflowseg.models import GMMFlowSegNet as GMMFlowSegNet
    from gmmflowseg.models import ProbUNet as ProbUNet
