r"""The BendingBeam data (ROBIN Sec. 4, "BendingBeam"), generated: a 2-D cantilever under a moving
actuator, solved by linear P1 finite elements.

Beam :math:`[0, 10] \times [0, 1]`, an ``nx`` x ``ny`` vertex grid (interior nodes jittered by up
to 20% of the spacing), each quad cut into two triangles. The left edge is clamped; a patch of
three neighbouring top-surface nodes (its place drawn per trajectory in the right half) follows a
smooth random displacement path :math:`d(t)`, :math:`d(0) = 0`. Each step is a quasi-static
plane-strain solve (E = 1, :math:`\nu = 0.3`) with scipy.sparse: :math:`K_{ff} u_f = -K_{fd} d`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as spla
import torch

from paperkit import check_int, param_error
from robin.hierarchy import Hierarchy, build_amg_hierarchy

__all__ = ["NORMAL", "CLAMPED", "ACTUATOR", "Mesh", "Trajectory", "beam_mesh",
           "make_bending_beam_dataset", "plane_strain_stiffness"]  # fmt: skip

#: Node types (one-hot input of the networks).
NORMAL, CLAMPED, ACTUATOR = 0, 1, 2
NUM_TYPES = 3
LENGTH, HEIGHT = 10.0, 1.0


@dataclass
class Mesh:
    """A triangle mesh with its AMG hierarchy: ``pos`` (N, D) rest positions, ``cells`` (C, 3),
    ``hierarchy`` (level-0 edges = the mesh edges, both directions)."""

    pos: torch.Tensor
    cells: torch.Tensor
    hierarchy: Hierarchy

    @property
    def num_nodes(self) -> int:
        return int(self.pos.shape[0])

    @property
    def edge_index(self) -> torch.Tensor:
        return self.hierarchy.edge_index[0]


@dataclass
class Trajectory:
    """One rollout of the simulator: ``u`` (T+1, N, D) displacements, ``bc`` (T+1, N, D) the
    prescribed displacement of the Dirichlet nodes (zero elsewhere), ``node_type`` (N,)."""

    mesh: Mesh
    node_type: torch.Tensor
    u: torch.Tensor
    bc: torch.Tensor

    @property
    def steps(self) -> int:
        return int(self.u.shape[0]) - 1

    @property
    def dirichlet(self) -> torch.Tensor:
        """(N,) True where the displacement is prescribed (clamped or actuator)."""
        return self.node_type != NORMAL


def beam_mesh(nx: int = 40, ny: int = 6, seed: int = 0, levels: int = 3) -> Mesh:
    """The jittered, triangulated beam mesh and its Ruge-Stüben hierarchy."""
    nx = check_int("nx", "beam_mesh", nx, low=2, high=2000)
    ny = check_int("ny", "beam_mesh", ny, low=2, high=2000)
    if nx * ny > 2_000_000:
        raise param_error("nx", "beam_mesh", "such that nx * ny <= 2e6 nodes", nx)
    levels = check_int("levels", "beam_mesh", levels, low=1, high=20)
    seed = check_int("seed", "beam_mesh", seed, low=0)
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(0, LENGTH, nx), np.linspace(0, HEIGHT, ny), indexing="ij")
    pos = np.stack([x.ravel(), y.ravel()], axis=1)
    inner = ((x > 0) & (x < LENGTH) & (y > 0) & (y < HEIGHT)).ravel()
    h = np.array([LENGTH / (nx - 1), HEIGHT / (ny - 1)])
    pos[inner] += rng.uniform(-0.2, 0.2, size=(int(inner.sum()), 2)) * h
    idx = np.arange(nx * ny).reshape(nx, ny)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    flip = ((np.add.outer(np.arange(nx - 1), np.arange(ny - 1))) % 2).astype(bool)
    t1 = np.where(flip[..., None], np.stack([a, b, d], -1), np.stack([a, b, c], -1))
    t2 = np.where(flip[..., None], np.stack([b, c, d], -1), np.stack([a, c, d], -1))
    cells = np.concatenate([t1.reshape(-1, 3), t2.reshape(-1, 3)])
    edges = np.concatenate([cells[:, [0, 1]], cells[:, [1, 2]], cells[:, [2, 0]]]).T
    hier = build_amg_hierarchy(pos, edges, levels=levels)
    return Mesh(torch.as_tensor(pos, dtype=torch.float32), torch.as_tensor(cells), hier)


def plane_strain_stiffness(pos: np.ndarray, cells: np.ndarray, E: float = 1.0, nu: float = 0.3):
    r"""P1 plane-strain stiffness (2N x 2N, dofs interleaved x, y): :math:`K = \sum_e A_e
    B_e^\top C B_e` with :math:`C` the plane-strain elasticity matrix."""
    lam = E * nu / ((1 + nu) * (1 - 2 * nu))
    mu = E / (2 * (1 + nu))
    C = np.array([[lam + 2 * mu, lam, 0], [lam, lam + 2 * mu, 0], [0, 0, mu]])
    p = pos[cells]
    bx = np.stack([p[:, 1, 1] - p[:, 2, 1], p[:, 2, 1] - p[:, 0, 1], p[:, 0, 1] - p[:, 1, 1]], 1)
    cy = np.stack([p[:, 2, 0] - p[:, 1, 0], p[:, 0, 0] - p[:, 2, 0], p[:, 1, 0] - p[:, 0, 0]], 1)
    area = 0.5 * np.abs(bx[:, 0] * cy[:, 1] - bx[:, 1] * cy[:, 0])
    B = np.zeros((len(cells), 3, 6))
    B[:, 0, 0::2] = bx
    B[:, 1, 1::2] = cy
    B[:, 2, 0::2] = cy
    B[:, 2, 1::2] = bx
    B /= (2 * area)[:, None, None]
    Ke = area[:, None, None] * np.einsum("cia,ij,cjb->cab", B, C, B)
    dofs = np.stack([2 * cells, 2 * cells + 1], axis=-1).reshape(len(cells), 6)
    rows = np.repeat(dofs, 6, axis=1).ravel()
    cols = np.tile(dofs, (1, 6)).ravel()
    n = 2 * pos.shape[0]
    return sp.coo_matrix((Ke.ravel(), (rows, cols)), shape=(n, n)).tocsc()


def _path(rng: np.random.Generator, steps: int) -> np.ndarray:
    """A smooth random actuator path (T+1, 2) with d(0) = 0."""
    s = np.linspace(0, 1, steps + 1)[:, None]
    amp = rng.uniform(-1, 1, size=(2, 2)) * np.array([[0.15], [0.6]])  # (dim, term)
    om = rng.uniform(0.5, 1.5, size=(2, 2))
    return (
        amp[:, 0] * np.sin(np.pi * om[:, 0] * s) + amp[:, 1] * (1 - np.cos(np.pi * om[:, 1] * s))
    ) / 1.5


def make_bending_beam_dataset(
    n_traj: int, steps: int, nx: int = 40, ny: int = 6, seed: int = 0
) -> list[Trajectory]:
    """``n_traj`` trajectories of ``steps`` steps on one jittered ``nx`` x ``ny`` beam (module
    docstring). All share the mesh (and its AMG hierarchy); the actuator patch and path differ."""
    owner = "make_bending_beam_dataset"
    n_traj = check_int("n_traj", owner, n_traj, low=1, high=100_000)
    steps = check_int("steps", owner, steps, low=1, high=100_000)
    nx = check_int("nx", owner, nx, low=4, high=2000)
    ny = check_int("ny", owner, ny, low=2, high=2000)
    if nx * ny * steps * n_traj > 5 * 10**8:
        raise param_error("n_traj", owner, "such that n_traj * steps * nx * ny <= 5e8", n_traj)
    seed = check_int("seed", owner, seed, low=0)
    mesh = beam_mesh(nx, ny, seed)
    pos = mesh.pos.double().numpy()
    K = plane_strain_stiffness(pos, mesh.cells.numpy())
    n = mesh.num_nodes
    clamped = np.flatnonzero(np.isclose(pos[:, 0], 0.0))
    top = np.flatnonzero(np.isclose(pos[:, 1], HEIGHT))
    top = top[np.argsort(pos[top, 0])]
    rng = np.random.default_rng(seed + 1)
    out = []
    for _ in range(n_traj):
        start = rng.integers(len(top) // 2, len(top) - 3, endpoint=True)
        act = top[start : start + 3]
        node_type = np.zeros(n, dtype=np.int64)
        node_type[clamped], node_type[act] = CLAMPED, ACTUATOR
        fixed = np.flatnonzero(np.repeat(node_type != NORMAL, 2))
        free = np.flatnonzero(np.repeat(node_type == NORMAL, 2))
        d = _path(rng, steps)  # (T+1, 2)
        bc = np.zeros((steps + 1, n, 2))
        bc[:, act] = d[:, None, :]
        lu = spla.splu(K[free][:, free].tocsc())
        u = bc.reshape(steps + 1, 2 * n).copy()
        rhs = -(K[free][:, fixed] @ u[:, fixed].T)
        u[:, free] = lu.solve(np.asarray(rhs)).T
        out.append(
            Trajectory(
                mesh,
                torch.as_tensor(node_type),
                torch.as_tensor(u.reshape(steps + 1, n, 2), dtype=torch.float32),
                torch.as_tensor(bc, dtype=torch.float32),
            )
        )
    return out
