"""robin: ROBIN, diffusion-based hierarchical GNNs for nonlinear solid mechanics (NeurIPS 2025,
arXiv 2506.06045): an AMG-hierarchical message-passing network (AMPN) inside a DDPM next-step
simulator, rolled out with Rolling Diffusion-Batched Inference (ROBI).

>>> from robin import make_bending_beam_dataset
>>> trajs = make_bending_beam_dataset(2, 5, nx=20, ny=4)
>>> trajs[0].u.shape
torch.Size([6, 80, 2])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from robin.baselines import AMPNNextStep as AMPNNextStep
    from robin.baselines import MGNDiffusion as MGNDiffusion
    from robin.baselines import MGNNextStep as MGNNextStep
    from robin.data import Mesh as Mesh
    from robin.data import Trajectory as Trajectory
    from robin.data import beam_mesh as beam_mesh
    from robin.data import make_bending_beam_dataset as make_bending_beam_dataset
    from robin.diffusion import ROBIN as ROBIN
    from robin.diffusion import DiffusionSimulator as DiffusionSimulator
    from robin.diffusion import cosine_alpha_bar as cosine_alpha_bar
    from robin.hierarchy import Hierarchy as Hierarchy
    from robin.hierarchy import build_amg_hierarchy as build_amg_hierarchy
    from robin.layers import AMPN as AMPN
    from robin.layers import MGNProcessor as MGNProcessor
    from robin.metrics import rollout_rmse as rollout_rmse
    from robin.rollout import robi_rollout as robi_rollout
    from robin.rollout import sequential_rollout as sequential_rollout
    from robin.simulator import Cond as Cond
    from robin.simulator import NextStepSimulator as NextStepSimulator
    from robin.simulator import StepBatch as StepBatch
    from robin.simulator import edge_dim as edge_dim
    from robin.simulator import node_dim as node_dim
    from robin.simulator import step_batch as step_batch
    from robin.training import fit as fit

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AMPN": "layers",
        "AMPNNextStep": "baselines",
        "Cond": "simulator",
        "DiffusionSimulator": "diffusion",
        "Hierarchy": "hierarchy",
        "MGNDiffusion": "baselines",
        "MGNNextStep": "baselines",
        "MGNProcessor": "layers",
        "Mesh": "data",
        "NextStepSimulator": "simulator",
        "ROBIN": "diffusion",
        "StepBatch": "simulator",
        "Trajectory": "data",
        "beam_mesh": "data",
        "build_amg_hierarchy": "hierarchy",
        "cosine_alpha_bar": "diffusion",
        "edge_dim": "simulator",
        "fit": "training",
        "make_bending_beam_dataset": "data",
        "node_dim": "simulator",
        "robi_rollout": "rollout",
        "rollout_rmse": "metrics",
        "sequential_rollout": "rollout",
        "step_batch": "simulator",
    },
)
