"""The paper's baselines (ROBIN Sec. 4): a flat MeshGraphNet predicting the next step
(``MGNNextStep``), the hierarchical AMPN without diffusion (``AMPNNextStep``) and a diffusion
model without hierarchy (``MGNDiffusion``)."""

from __future__ import annotations

from paperkit import check_int
from robin.diffusion import DiffusionSimulator
from robin.layers import AMPN, MGNProcessor
from robin.simulator import NextStepSimulator, edge_dim, node_dim

__all__ = ["AMPNNextStep", "MGNDiffusion", "MGNNextStep"]


class MGNNextStep(NextStepSimulator):
    """Flat MeshGraphNet (``blocks`` MGN blocks), deterministic normalised-residual target."""

    def __init__(self, dim: int = 2, latent: int = 128, blocks: int = 10) -> None:
        dim = check_int("dim", "MGNNextStep", dim, low=1, high=3)
        net = MGNProcessor(node_dim(dim, diffusion=False), edge_dim(dim), dim, latent, blocks)
        super().__init__(net, dim=dim)


class AMPNNextStep(NextStepSimulator):
    """AMPN (hierarchical message passing), deterministic normalised-residual target."""

    def __init__(
        self,
        dim: int = 2,
        latent: int = 128,
        blocks_per_level: int = 2,
        levels: int = 3,
        share_levels: bool = True,
    ) -> None:
        dim = check_int("dim", "AMPNNextStep", dim, low=1, high=3)
        net = AMPN(
            node_dim(dim, diffusion=False), edge_dim(dim), dim, latent, blocks_per_level,
            levels, share_levels, dim,
        )  # fmt: skip
        super().__init__(net, dim=dim)


class MGNDiffusion(DiffusionSimulator):
    """DDPM next-step simulator on a flat MeshGraphNet (diffusion without hierarchy)."""

    def __init__(
        self, dim: int = 2, latent: int = 128, blocks: int = 10, num_steps: int = 20
    ) -> None:
        dim = check_int("dim", "MGNDiffusion", dim, low=1, high=3)
        net = MGNProcessor(node_dim(dim), edge_dim(dim), dim, latent, blocks)
        super().__init__(net, num_steps=num_steps)
