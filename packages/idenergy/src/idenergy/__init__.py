"""idenergy: generated-image detection as out-of-distribution detection by in-distribution energy.

DEnD (Differential Energy-based Detection; "Towards Generalizable Detector for Generated Image",
NeurIPS 2025) scores an image by how much the ID energy E(x) = -T logsumexp(g(x)/T) of a
self-supervised model fitted to natural images changes under small perturbations; it is
training-free given the backbone and never sees a generated image. The public names are imported
on first use (importing ``idenergy`` imports no torch).

>>> import torch
>>> from idenergy import DinoLite, id_energy
>>> id_energy(DinoLite(1).logits(torch.rand(2, 1, 16, 16))).shape
torch.Size([2])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DEnDDetector": "detectors",
        "DinoLite": "ssl",
        "EnergyDetector": "detectors",
        "IDHeadBackbone": "idhead",
        "KNNDetector": "detectors",
        "MSPDetector": "detectors",
        "MixupGenerator": "generators",
        "PCAGaussianGenerator": "generators",
        "PCAReconDetector": "detectors",
        "PixelGMMGenerator": "generators",
        "RigidDetector": "detectors",
        "SupervisedDetector": "detectors",
        "TinyVAEGenerator": "generators",
        "UpsampleArtifactGenerator": "generators",
        "auroc": "metrics",
        "average_precision": "metrics",
        "collapse_stats": "ssl",
        "differential_energy": "energy",
        "fit_id_head": "idhead",
        "fpr_at_tpr": "metrics",
        "gaussian_blur": "energy",
        "id_energy": "energy",
        "image_hashes": "generators",
        "load_digits_images": "data",
        "make_dead_leaves": "data",
        "train_dino_lite": "ssl",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from idenergy.data import load_digits_images as load_digits_images
    from idenergy.data import make_dead_leaves as make_dead_leaves
    from idenergy.detectors import DEnDDetector as DEnDDetector
    from idenergy.detectors import EnergyDetector as EnergyDetector
    from idenergy.detectors import KNNDetector as KNNDetector
    from idenergy.detectors import MSPDetector as MSPDetector
    from idenergy.detectors import PCAReconDetector as PCAReconDetector
    from idenergy.detectors import RigidDetector as RigidDetector
    from idenergy.detectors import SupervisedDetector as SupervisedDetector
    from idenergy.energy import differential_energy as differential_energy
    from idenergy.energy import gaussian_blur as gaussian_blur
    from idenergy.energy import id_energy as id_energy
    from idenergy.generators import MixupGenerator as MixupGenerator
    from idenergy.generators import PCAGaussianGenerator as PCAGaussianGenerator
    from idenergy.generators import PixelGMMGenerator as PixelGMMGenerator
    from idenergy.generators import TinyVAEGenerator as TinyVAEGenerator
    from idenergy.generators import UpsampleArtifactGenerator as UpsampleArtifactGenerator
    from idenergy.generators import image_hashes as image_hashes
    from idenergy.idhead import IDHeadBackbone as IDHeadBackbone
    from idenergy.idhead import fit_id_head as fit_id_head
    from idenergy.metrics import auroc as auroc
    from idenergy.metrics import average_precision as average_precision
    from idenergy.metrics import fpr_at_tpr as fpr_at_tpr
    from idenergy.ssl import DinoLite as DinoLite
    from idenergy.ssl import collapse_stats as collapse_stats
    from idenergy.ssl import train_dino_lite as train_dino_lite
