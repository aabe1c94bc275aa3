r"""Autoregressive rollouts: sequential DDPM and Rolling Diffusion-Batched Inference (ROBI, ROBIN
Sec. 3.3).

ROBI keeps up to W frames in flight, frame w being the future step t+1+w at its own noise level.
Frame w is conditioned on
:math:`\hat u_{t+w} = u_t + \sum_{w' < w} \mathrm{denorm}(\hat x_0^{(w')})`
(earlier frames supply their current clean estimate; frame 0 the emitted state :math:`u_t`),
Dirichlet nodes set to their known values, and on the boundary condition at t+1+w. One iteration
is ONE batched network call over all frames, then one reverse step per frame; when frame 0
reaches level 0 it is emitted (:math:`u_{t+1}`), and a new frame at level K (pure noise) is
appended while fewer than W frames are in flight. Start-up fills the pipeline (levels K; K-1, K;
...); in the steady state the levels before a call are 1, 2, ..., K. Every frame gets K updates and
a T-step rollout costs T + K - 1 calls instead of T K. With W < K (K divisible by W) each call
moves a frame K/W levels down with the strided q-posterior step, for T + W - 1 calls.
"""

from __future__ import annotations

import time

import torch

from paperkit import check_int, param_error
from robin.data import Trajectory
from robin.diffusion import DiffusionSimulator
from robin.simulator import Cond, NextStepSimulator

__all__ = ["robi_rollout", "sequential_rollout"]


def _check(owner: str, sim, traj0, steps: int, diffusion: bool = False) -> int:
    kinds = (DiffusionSimulator,) if diffusion else (DiffusionSimulator, NextStepSimulator)
    if not isinstance(sim, kinds):
        what = "a DiffusionSimulator" if diffusion else "a DiffusionSimulator or NextStepSimulator"
        raise param_error("sim", owner, what, type(sim).__name__, cls=TypeError)
    if not isinstance(traj0, Trajectory):
        raise param_error("traj0", owner, "a Trajectory", type(traj0).__name__, cls=TypeError)
    return check_int("steps", owner, steps, low=1, high=traj0.steps)


def _cond(traj0: Trajectory, u: torch.Tensor, t: int) -> Cond:
    """Conditioning of one graph at time t with state u (N, D)."""
    return Cond(traj0.mesh, traj0.node_type[None], u[None], traj0.bc[t + 1][None])


@torch.no_grad()
def sequential_rollout(
    sim, traj0: Trajectory, steps: int, generator: torch.Generator | None = None
) -> tuple[torch.Tensor, dict]:
    """Roll ``sim`` out for ``steps`` steps from ``traj0.u[0]`` under the prescribed BCs of
    ``traj0``: one :meth:`sample_next` per step (K sequential calls for a diffusion model, one for
    a next-step model). Returns the states (T+1, N, D) and ``{"nfe", "wall_s", "batch_sizes"}``."""
    steps = _check("sequential_rollout", sim, traj0, steps)
    was = sim.training
    sim.eval()
    start = time.perf_counter()
    u = traj0.u[0]
    out, nfe = [u], 0
    for t in range(steps):
        nxt, calls = sim.sample_next(_cond(traj0, u, t), generator=generator)
        u = nxt[0]
        out.append(u)
        nfe += calls
    sim.train(was)
    wall = time.perf_counter() - start
    return torch.stack(out), {"nfe": nfe, "wall_s": wall, "batch_sizes": [1] * nfe}


@torch.no_grad()
def robi_rollout(
    sim: DiffusionSimulator,
    traj0: Trajectory,
    steps: int,
    window: int | None = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, dict]:
    """ROBI rollout (module docstring): states (T+1, N, D) and ``{"nfe", "wall_s",
    "batch_sizes", "levels"}`` where ``nfe`` counts batched calls, ``batch_sizes`` the frames per
    call and ``levels`` the frames' levels before each call."""
    owner = "robi_rollout"
    steps = _check(owner, sim, traj0, steps, diffusion=True)
    K = sim.num_steps
    W = K if window is None else check_int("window", owner, window, low=1, high=K)
    if K % W:
        raise param_error("window", owner, f"a divisor of num_steps={K}", W)
    stride = K // W
    was = sim.training
    sim.eval()
    start = time.perf_counter()
    dirichlet = traj0.dirichlet[:, None]
    emitted = [traj0.u[0]]
    levels: list[int] = []
    xs: list[torch.Tensor] = []
    x0s: list[torch.Tensor | None] = []
    nfe, sizes, history = 0, [], []
    while len(emitted) <= steps:
        t = len(emitted) - 1
        if len(levels) < W and t + len(levels) < steps:
            levels.append(K)
            xs.append(torch.randn(traj0.u[0].shape, generator=generator).to(traj0.u))
            x0s.append(None)
        conds, u_hat = [], emitted[-1]
        for w in range(len(levels)):
            if w > 0:  # the clean estimate of the earlier frame, Dirichlet nodes exact
                u_hat = torch.where(dirichlet, traj0.bc[t + w], sim.from_target(u_hat, x0s[w - 1]))
            conds.append(u_hat)
        n = len(levels)
        cond = Cond(
            traj0.mesh,
            traj0.node_type.expand(n, -1),
            torch.stack(conds),
            traj0.bc[t + 1 : t + 1 + n],
        )
        k = torch.tensor(levels, dtype=torch.long)
        x, x0 = sim.denoise_step(torch.stack(xs), k, cond, k - stride, generator=generator)
        nfe += 1
        sizes.append(n)
        history.append(list(levels))
        levels = [lv - stride for lv in levels]
        xs, x0s = list(x.unbind(0)), list(x0.unbind(0))
        if levels[0] == 0:
            u = sim.from_target(emitted[-1], xs[0])
            emitted.append(torch.where(dirichlet, traj0.bc[t + 1], u))
            levels, xs, x0s = levels[1:], xs[1:], x0s[1:]
    sim.train(was)
    wall = time.perf_counter() - start
    return torch.stack(emitted), {
        "nfe": nfe,
        "wall_s": wall,
        "batch_sizes": sizes,
        "levels": history,
    }
