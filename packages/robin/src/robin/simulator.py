r"""What every simulator shares: the conditioning state, input features, target normalisation,
and the deterministic next-step simulator (ROBIN Sec. 3).

State at time t: the mesh, node types (normal / clamped / actuator), the displacement
:math:`u_t` and the prescribed displacement of the Dirichlet nodes at t+1. Node inputs
:math:`[x_k, u_t / s_u, \mathrm{onehot}(type), m \odot (BC_{t+1} - u_t) / s_{\Delta}]`
(:math:`x_k` only for diffusion models; :math:`m` masks the Dirichlet nodes); edge inputs
:math:`[X_s - X_t, \lVert\cdot\rVert, x_s - x_t, \lVert\cdot\rVert]` with :math:`x = X + u_t`
the deformed positions. The target is the normalised residual
:math:`y_t = (u_{t+1} - u_t - \mu) / \sigma` (per-dimension statistics of the training data), or
the normalised state with ``predict="state"``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import nn

from paperkit import check_bool, check_choice, check_int, param_error
from robin.data import NORMAL, NUM_TYPES, Mesh, Trajectory

__all__ = ["Cond", "NextStepSimulator", "StepBatch", "edge_dim", "node_dim", "step_batch"]


def node_dim(dim: int, diffusion: bool = True) -> int:
    """Width of the node inputs for a D-dimensional mesh (diffusion models add :math:`x_k`)."""
    dim = check_int("dim", "node_dim", dim, low=1, high=3)
    diffusion = check_bool("diffusion", "node_dim", diffusion)
    return (3 if diffusion else 2) * dim + NUM_TYPES


def edge_dim(dim: int) -> int:
    """Width of the edge inputs: rest and deformed relative positions with their norms."""
    return 2 * check_int("dim", "edge_dim", dim, low=1, high=3) + 2


@dataclass
class Cond:
    """The conditioning of B graphs on one mesh: ``node_type`` (B, N), ``u`` (B, N, D) the
    displacement at t, ``bc`` (B, N, D) the prescribed displacement at t+1."""

    mesh: Mesh
    node_type: torch.Tensor
    u: torch.Tensor
    bc: torch.Tensor

    @property
    def dirichlet(self) -> torch.Tensor:
        return self.node_type != NORMAL

    def with_u(self, u: torch.Tensor, bc: torch.Tensor) -> Cond:
        return Cond(self.mesh, self.node_type, u, bc)


@dataclass
class StepBatch:
    """Training pairs: ``cond`` at t and the true ``u_next`` (B, N, D) at t+1."""

    cond: Cond
    u_next: torch.Tensor


def step_batch(trajs: Sequence[Trajectory], index: Sequence[tuple[int, int]]) -> StepBatch:
    """Stack the pairs ``(trajectory i, step t)`` of ``index`` (all on one mesh) into a batch."""
    owner = "step_batch"
    if not isinstance(trajs, Sequence) or not trajs:
        raise param_error("trajs", owner, "a non-empty list of Trajectory", trajs, cls=TypeError)
    if not all(isinstance(t, Trajectory) and t.mesh is trajs[0].mesh for t in trajs):
        raise param_error("trajs", owner, "Trajectory objects sharing one mesh", "other")
    if not index:
        raise param_error("index", owner, "a non-empty list of (trajectory, step)", index)
    for i, t in index:
        if not (0 <= i < len(trajs) and 0 <= t < trajs[i].steps):
            raise param_error(
                "index", owner, "pairs (i, t) with t < that trajectory's steps", (i, t)
            )
    tr = [trajs[i] for i, _ in index]
    ts = [t for _, t in index]
    cond = Cond(
        trajs[0].mesh,
        torch.stack([x.node_type for x in tr]),
        torch.stack([x.u[t] for x, t in zip(tr, ts, strict=True)]),
        torch.stack([x.bc[t + 1] for x, t in zip(tr, ts, strict=True)]),
    )
    return StepBatch(cond, torch.stack([x.u[t + 1] for x, t in zip(tr, ts, strict=True)]))


class _Base(nn.Module):
    """Normalisation buffers, features and the residual/state target of every simulator."""

    def __init__(self, backbone: nn.Module, predict: str, dim: int) -> None:
        super().__init__()
        self.backbone = backbone
        self.predict = predict
        self.dim = dim
        self.register_buffer("y_mean", torch.zeros(dim))
        self.register_buffer("y_std", torch.ones(dim))
        self.register_buffer("u_scale", torch.ones(()))
        self.register_buffer("du_scale", torch.ones(()))
        self.register_buffer("y_bound", torch.full((), float("inf")))

    @torch.no_grad()
    def set_normalization(self, trajs: Sequence[Trajectory]) -> None:
        """Per-dimension mean/std of the target over the free nodes of the training data."""
        u = torch.cat([t.u for t in trajs])
        du = torch.cat([t.u[1:] - t.u[:-1] for t in trajs])
        free = torch.cat([(~t.dirichlet).expand(t.steps, -1) for t in trajs])
        y = (du if self.predict == "residual" else torch.cat([t.u[1:] for t in trajs]))[free]
        self.y_mean.copy_(y.mean(0))
        self.y_std.copy_(y.std(0).clamp_min(1e-8))
        self.y_bound.copy_(1.1 * ((y - self.y_mean) / self.y_std).abs().max())
        self.u_scale.copy_(u.std().clamp_min(1e-8))
        self.du_scale.copy_(du.std().clamp_min(1e-8))

    def target(self, u: torch.Tensor, u_next: torch.Tensor) -> torch.Tensor:
        base = u_next - u if self.predict == "residual" else u_next
        return (base - self.y_mean) / self.y_std

    def from_target(self, u: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out = y * self.y_std + self.y_mean
        return u + out if self.predict == "residual" else out

    def features(self, cond: Cond, x: torch.Tensor | None = None):
        """Flattened (B*N, F) node and (B*E, 2D+2) edge inputs and the batched hierarchy."""
        B, N, D = cond.u.shape
        hier = cond.mesh.hierarchy.repeat(B).to(cond.u.device)
        mask = cond.dirichlet[..., None].to(cond.u.dtype)
        parts = [] if x is None else [x]
        onehot = nn.functional.one_hot(cond.node_type, NUM_TYPES).to(cond.u.dtype)
        parts += [cond.u / self.u_scale, onehot, mask * (cond.bc - cond.u) / self.du_scale]
        node = torch.cat(parts, dim=-1).reshape(B * N, -1)
        rest = cond.mesh.pos.to(cond.u)
        deformed = (rest + cond.u).reshape(B * N, D)
        s, t = hier.edge_index[0]
        rel0 = rest.repeat(B, 1)
        r0, r1 = rel0[s] - rel0[t], deformed[s] - deformed[t]
        edge = torch.cat(
            [r0, r0.norm(dim=-1, keepdim=True), r1, r1.norm(dim=-1, keepdim=True)], dim=-1
        )
        return node, edge, hier

    def impose(self, u: torch.Tensor, cond_bc: torch.Tensor, dirichlet: torch.Tensor):
        """Set the Dirichlet nodes to their prescribed displacement (exact BCs)."""
        return torch.where(dirichlet[..., None], cond_bc, u)

    def _masked_mse(self, a: torch.Tensor, b: torch.Tensor, cond: Cond) -> torch.Tensor:
        free = (~cond.dirichlet)[..., None].to(a.dtype)
        return ((a - b) ** 2 * free).sum() / (free.sum() * a.shape[-1]).clamp_min(1)


def _check_cond(owner: str, cond) -> Cond:
    if not isinstance(cond, Cond):
        raise param_error("cond", owner, "a Cond", type(cond).__name__, cls=TypeError)
    return cond


class NextStepSimulator(_Base):
    r"""Deterministic next-step simulator: the backbone predicts :math:`y_t` directly, trained
    with the MSE over the free nodes (MeshGraphNets' one-step training)."""

    def __init__(self, backbone: nn.Module, predict: str = "residual", dim: int = 2) -> None:
        if not isinstance(backbone, nn.Module):
            raise param_error(
                "backbone", "NextStepSimulator", "a torch.nn.Module", backbone, cls=TypeError
            )
        predict = check_choice("predict", "NextStepSimulator", predict, ("residual", "state"))
        super().__init__(
            backbone, predict, check_int("dim", "NextStepSimulator", dim, low=1, high=3)
        )
        self.calls_per_step = 1

    def forward(self, cond: Cond) -> torch.Tensor:
        """The normalised prediction :math:`\\hat y_t` (B, N, D)."""
        node, edge, hier = self.features(_check_cond("NextStepSimulator", cond))
        return self.backbone(node, edge, hier).reshape(cond.u.shape)

    def loss(self, batch: StepBatch) -> torch.Tensor:
        """MSE between prediction and normalised target over the free nodes."""
        if not isinstance(batch, StepBatch):
            raise param_error(
                "batch",
                "NextStepSimulator.loss",
                "a StepBatch",
                type(batch).__name__,
                cls=TypeError,
            )
        y = self.target(batch.cond.u, batch.u_next)
        return self._masked_mse(self(batch.cond), y, batch.cond)

    @torch.no_grad()
    def sample_next(self, cond: Cond, generator: torch.Generator | None = None):
        """One network call: :math:`u_{t+1}` (B, N, D) with exact Dirichlet values, and 1."""
        u = self.from_target(cond.u, self(cond))
        return self.impose(u, cond.bc, cond.dirichlet), 1
