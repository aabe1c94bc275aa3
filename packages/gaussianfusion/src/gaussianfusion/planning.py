"""The cascade planning head (paper Sec. 3.4): anchor trajectories refined in stages by querying
the Gaussians.

A = ``n_anchors`` anchors (k-means of expert trajectories, :meth:`CascadePlanningHead.set_anchors`)
start stage 1. In stage s every trajectory a becomes a query

    t_a = MLP(waypoints_a / 32) + E_ego(ego) + E_cmd(command),

which cross-attends to the Gaussian tokens [f^e_i; f^m_i] with the additive geometric bias

    bias_{a,i} = log(eps + sum_w G_i(w_{a,w})),
    G_i(p) = exp(-1/2 (p - mu_i)^T Sigma_i^-1 (p - mu_i)),

so Gaussians along the trajectory weigh more. The stage outputs waypoint offsets (its last layer
is zero-initialised, so an untrained head returns the anchors) and a score per trajectory; the
refined trajectories (gradient stopped) start stage s + 1. The output is the highest-scoring
trajectory of the last stage. Loss per stage (winner takes all): L1 between the trajectory with
the least ADE to the expert and the expert, plus the cross-entropy of the scores with that winner.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from gaussianfusion.gaussians import Gaussians2D, check_dtype, check_gaussians, mahalanobis_sq
from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["CascadePlanningHead", "cascade_loss", "kmeans_anchors"]

#: eps of the geometric attention bias log(eps + sum_w G).
BIAS_EPS = 0.05
N_COMMANDS = 3
#: metres per unit of the (zero-initialised) offset layer's output
OFFSET_SCALE = 5.0


def kmeans_anchors(trajs: torch.Tensor, k: int, seed: int = 0) -> torch.Tensor:
    """k-means (scipy's ``kmeans2``, k-means++ init, seeded) of trajectories (M, T, 2).

    Returns the k centres, (k, T, 2)."""
    from scipy.cluster.vq import kmeans2

    owner = "kmeans_anchors"
    check_tensor("trajs", owner, trajs, shape=(None, None, 2))
    k = check_int("k", owner, k, low=1, high=trajs.shape[0])
    seed = check_int("seed", owner, seed, low=0)
    flat = trajs.detach().double().cpu().reshape(trajs.shape[0], -1).numpy()
    centres, _ = kmeans2(flat, k, minit="++", seed=np.random.default_rng(seed), iter=50)
    return torch.from_numpy(centres).to(trajs.dtype).reshape(k, *trajs.shape[1:])


class _Stage(nn.Module):
    def __init__(self, d: int, d_gauss: int, n_waypoints: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.traj_enc = nn.Sequential(
            nn.Linear(2 * n_waypoints + 4 + N_COMMANDS, d), nn.GELU(), nn.Linear(d, d)
        )
        self.kv = nn.Linear(d_gauss, d)
        self.attn = nn.MultiheadAttention(d, n_heads, batch_first=True)
        self.norm1 = nn.LayerNorm(d)
        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.norm_ffn = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.offset = nn.Linear(d, 2 * n_waypoints)
        self.score = nn.Linear(d, 1)
        nn.init.zeros_(self.offset.weight)
        nn.init.zeros_(self.offset.bias)

    def forward(self, trajs, cond, state, tokens, bias):
        b, a, t, _ = trajs.shape
        code = torch.cat([trajs.reshape(b, a, -1) / 32.0, state[:, None].expand(b, a, -1)], -1)
        q = self.traj_enc(code) + cond[:, None]
        kv = self.kv(tokens)
        mask = bias.repeat_interleave(self.n_heads, 0) if bias is not None else None
        # pre-norm residual blocks: the trajectory code stays in the residual stream, so the
        # scores can tell the trajectories apart (post-norm let the attention output drown it)
        h = self.norm1(q)
        x = q + self.attn(h, kv, kv, attn_mask=mask, need_weights=False)[0]
        x = self.norm2(x + self.ffn(self.norm_ffn(x)))
        offsets = OFFSET_SCALE * self.offset(x).reshape(b, a, t, 2)
        return trajs + offsets, self.score(x)[..., 0]


class CascadePlanningHead(nn.Module):
    """Cascade planning head (module docstring).

    Args:
        n_anchors: A anchor trajectories (16).
        n_waypoints: waypoints per trajectory (8, every 0.5 s).
        n_stages: refinement stages S (3; 1 is the single-stage ablation).
        d: query width.
        d_gauss: width of the Gaussian tokens [f^e; f^m] (default 2 d).
        n_heads: attention heads.
        geometric_bias: add log(eps + sum_w G_i) to the attention logits (True in the paper).

    forward(g, ego (B, 4), command (B,) in {0, 1, 2}) -> dict(trajs (B, S, A, T, 2),
    scores (B, S, A), best (B, T, 2)).
    """

    def __init__(
        self,
        n_anchors: int = 16,
        n_waypoints: int = 8,
        n_stages: int = 3,
        d: int = 64,
        *,
        d_gauss: int | None = None,
        n_heads: int = 4,
        geometric_bias: bool = True,
    ) -> None:
        super().__init__()
        owner = "CascadePlanningHead"
        self.n_anchors = check_int("n_anchors", owner, n_anchors, low=1, high=1024)
        self.n_waypoints = check_int("n_waypoints", owner, n_waypoints, low=1, high=256)
        self.n_stages = check_int("n_stages", owner, n_stages, low=1, high=16)
        self.d = check_int("d", owner, d, low=1, high=4096)
        self.n_heads = check_int("n_heads", owner, n_heads, low=1, high=64)
        if d % n_heads:
            raise param_error("d", owner, f"a multiple of n_heads={n_heads}", d)
        self.d_gauss = check_int("d_gauss", owner, d_gauss or 2 * d, low=1, high=8192)
        if not isinstance(geometric_bias, bool):
            raise param_error(
                "geometric_bias", owner, "True or False", repr(geometric_bias), cls=TypeError
            )
        self.geometric_bias = geometric_bias
        self.ego_enc = nn.Sequential(nn.Linear(4, d), nn.GELU(), nn.Linear(d, d))
        self.cmd_emb = nn.Embedding(N_COMMANDS, d)
        nn.init.normal_(self.cmd_emb.weight, std=0.1)  # N(0, 1) would drown the trajectory code
        self.stages = nn.ModuleList(
            _Stage(d, self.d_gauss, n_waypoints, n_heads) for _ in range(n_stages)
        )
        # a fan of straight lines until set_anchors is called
        speeds = torch.linspace(0.0, 12.0, n_anchors)
        t = 0.5 * torch.arange(1, n_waypoints + 1)
        anchors = torch.stack([speeds[:, None] * t, torch.zeros(n_anchors, n_waypoints)], -1)
        self.register_buffer("anchors", anchors)

    def set_anchors(self, trajs: torch.Tensor, seed: int = 0) -> CascadePlanningHead:
        """Set the anchors to the k-means centres of expert trajectories ``trajs`` (M, T, 2)."""
        owner = "CascadePlanningHead.set_anchors"
        check_tensor("trajs", owner, trajs, ndim=3)
        if trajs.shape[1] != self.n_waypoints or trajs.shape[2] != 2:
            raise param_error(
                "trajs",
                owner,
                f"of shape (M, {self.n_waypoints}, 2) (n_waypoints of the head)",
                f"a tensor of shape {tuple(trajs.shape)}",
            )
        if trajs.shape[0] < self.n_anchors:
            raise param_error(
                "trajs",
                owner,
                f"at least n_anchors={self.n_anchors} trajectories",
                f"{trajs.shape[0]}",
            )
        self.anchors.copy_(kmeans_anchors(trajs, self.n_anchors, seed).to(self.anchors))
        return self

    def bias(self, g: Gaussians2D, trajs: torch.Tensor) -> torch.Tensor:
        """log(eps + sum_w G_i(w_{a,w})) for trajectories (B, A, T, 2): shape (B, A, N)."""
        b, a, t, _ = trajs.shape
        m2 = mahalanobis_sq(trajs.reshape(b, a * t, 2), g)  # (B, N, A*T)
        dens = torch.exp(-0.5 * m2).reshape(b, -1, a, t).sum(-1)
        return torch.log(BIAS_EPS + dens).transpose(1, 2)

    def forward(self, g: Gaussians2D, ego: torch.Tensor, command: torch.Tensor) -> dict:
        owner = type(self).__name__
        g = check_gaussians("g", owner, g)
        dims = {"B": (g.batch, "g")}
        check_tensor("ego", owner, ego, shape=("B", 4), dims=dims)
        check_tensor("command", owner, command, shape=("B",), dims=dims, dtype="int")
        check_dtype("g", owner, g.mean, self)
        check_dtype("ego", owner, ego, self)
        if bool(((command < 0) | (command >= N_COMMANDS)).any()):
            raise param_error("command", owner, "entries in {0, 1, 2}", "other values")
        tokens = torch.cat([g.explicit, g.implicit], -1)
        if tokens.shape[-1] != self.d_gauss:
            raise param_error(
                "g", owner, f"features with d_e + d_m = {self.d_gauss}", str(tokens.shape[-1])
            )
        cond = self.ego_enc(ego / 10.0) + self.cmd_emb(command)
        # the ego state and command also enter each trajectory's code, so that the query can
        # compare a trajectory with the current speed (see Deviations in the README)
        state = torch.cat([ego / 10.0, F.one_hot(command, N_COMMANDS).to(ego)], -1)
        trajs = self.anchors.to(g.mean.dtype).expand(g.batch, -1, -1, -1)
        all_trajs, all_scores = [], []
        for stage in self.stages:
            bias = self.bias(g, trajs).to(tokens.dtype) if self.geometric_bias else None
            trajs, scores = stage(trajs, cond, state, tokens, bias)
            all_trajs.append(trajs)
            all_scores.append(scores)
            trajs = trajs.detach()
        trajs_out = torch.stack(all_trajs, 1)
        scores_out = torch.stack(all_scores, 1)
        pick = scores_out[:, -1].argmax(-1)
        best = trajs_out[torch.arange(g.batch), -1, pick]
        return {"trajs": trajs_out, "scores": scores_out, "best": best}


def cascade_loss(out: dict, expert: torch.Tensor, score_weight: float = 1.0) -> torch.Tensor:
    """sum_s [ L1(traj_{s, a*} - expert) + w CE(scores_s, a*) ], a* = argmin_a ADE(traj_{s,a},
    expert): the winner-takes-all loss of each stage (Sec. 3.4)."""
    owner = "cascade_loss"
    if not isinstance(out, dict) or "trajs" not in out or "scores" not in out:
        raise param_error(
            "out",
            owner,
            "the dict a CascadePlanningHead returns",
            type(out).__name__,
            cls=TypeError,
        )
    trajs, scores = out["trajs"], out["scores"]
    b, s, a, t, _ = trajs.shape
    check_tensor("expert", owner, expert, shape=(b, t, 2))
    score_weight = check_real("score_weight", owner, score_weight, low=0)
    err = (trajs - expert[:, None, None]).norm(dim=-1).mean(-1)  # (B, S, A)
    win = err.argmin(-1)  # (B, S)
    chosen = torch.gather(trajs, 2, win[:, :, None, None, None].expand(b, s, 1, t, 2))[:, :, 0]
    l1 = (chosen - expert[:, None]).abs().mean((-1, -2)).sum(1).mean()
    ce = F.cross_entropy(scores.reshape(b * s, a), win.reshape(-1), reduction="mean") * s
    return l1 + score_weight * ce
