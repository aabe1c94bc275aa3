"""Expert videos and the clips (o_{t-1}, o_t, o_{t+1}) drawn from them.

Videos of different lengths share one tensor (N, T, 3, H, W) in [0, 1]: the frames after a
video's end are NaN (whole frames). A clip at step t is :math:`(o_{\\max(t-1,0)}, o_t, o_{t+1})`
for :math:`0 \\le t \\le \\mathrm{len}-2`: the first frame is repeated before the start, so the
policy also learns the first action of an episode (as at the start of an online episode).
"""

from __future__ import annotations

from typing import NamedTuple

import gymnasium as gym
import numpy as np
import torch

from bcvlr import envs as _envs  # registers the environments
from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["ExpertData", "VideoClips", "expert_dataset", "make_expert_videos", "to_frames"]

EXPERTS = {
    _envs.GRID_ENV_ID: _envs.grid_expert_action,
    _envs.POINT_ENV_ID: _envs.point_expert_action,
}


def to_frames(obs) -> torch.Tensor:
    """uint8 images (..., H, W, 3) -> float32 frames (..., 3, H, W) in [0, 1]."""
    t = torch.as_tensor(np.asarray(obs))
    return t.movedim(-1, -3).float().div_(255.0)


class ExpertData(NamedTuple):
    """Expert episodes: ``videos`` (N, T, 3, H, W), NaN after each end; ``actions`` (N, T-1)
    (discrete, -1 after the end) or (N, T-1, A) (box, NaN after the end); ``lengths`` (N,) the
    number of frames of each video."""

    videos: torch.Tensor
    actions: torch.Tensor
    lengths: torch.Tensor


def expert_dataset(env_id: str, episodes: int, seed: int = 0, **env_kwargs) -> ExpertData:
    """Roll out the scripted expert (BFS for the grid, P-controller for the point) for
    ``episodes`` episodes (episode i reset with seed ``seed + i``); frames and actions.

    >>> data = expert_dataset("bcvlr/PixelGridReach-v0", 3, seed=0)
    >>> data.videos.shape[0], data.videos.shape[2:]
    (3, torch.Size([3, 32, 32]))
    """
    if env_id not in EXPERTS:
        raise param_error("env_id", "expert_dataset", f"one of {sorted(EXPERTS)}", describe(env_id))
    episodes = check_int("episodes", "expert_dataset", episodes, low=1, high=100_000)
    seed = check_int("seed", "expert_dataset", seed, low=0)
    env = gym.make(env_id, **env_kwargs).unwrapped
    expert = EXPERTS[env_id]
    runs = []
    for i in range(episodes):
        obs, _ = env.reset(seed=seed + i)
        frames, acts, done = [obs], [], False
        while not done:
            a = expert(env)
            obs, _, term, trunc, _ = env.step(a)
            frames.append(obs)
            acts.append(a)
            done = term or trunc
        runs.append((np.stack(frames), np.asarray(acts)))
    T = max(len(f) for f, _ in runs)
    H, W = runs[0][0].shape[1:3]
    videos = torch.full((episodes, T, 3, H, W), float("nan"))
    discrete = isinstance(env.action_space, gym.spaces.Discrete)
    if discrete:
        actions = torch.full((episodes, T - 1), -1, dtype=torch.long)
    else:
        actions = torch.full((episodes, T - 1, *env.action_space.shape), float("nan"))
    for i, (f, a) in enumerate(runs):
        videos[i, : len(f)] = to_frames(f)
        actions[i, : len(a)] = torch.as_tensor(a)
    lengths = torch.tensor([len(f) for f, _ in runs])
    return ExpertData(videos, actions, lengths)


def make_expert_videos(env_id: str, episodes: int, seed: int = 0) -> torch.Tensor:
    """Expert videos only (no actions, no rewards): ``expert_dataset(...).videos``."""
    return expert_dataset(env_id, episodes, seed).videos


class VideoClips:
    """Every clip (o_{t-1}, o_t, o_{t+1}) of NaN-padded videos (module docstring).

    ``videos``: (N, T, 3, H, W) with T >= 3; frames are finite or wholly NaN (the padding after
    a video's end), each video has >= 2 frames; inf refused.
    """

    def __init__(self, videos: torch.Tensor, owner: str = "VideoClips") -> None:
        check_tensor("videos", owner, videos, shape=(None, None, 3, None, None), finite=False)
        if videos.shape[1] < 3:
            raise param_error(
                "videos", owner, "clips of at least 3 frames (T >= 3)", describe(videos)
            )
        frame_nan = videos.isnan().flatten(2)
        whole = frame_nan.all(-1)
        if (frame_nan.any(-1) & ~whole).any() or videos.isinf().any():
            raise param_error(
                "videos",
                owner,
                "finite frames (NaN only as whole padding frames)",
                describe(videos),
            )
        lengths = (~whole).sum(1)
        if (whole[:, :-1] & ~whole[:, 1:]).any() or (lengths < 2).any():
            raise param_error(
                "videos",
                owner,
                "videos of >= 2 frames padded with NaN frames at the end",
                describe(videos),
            )
        self.videos = videos.float()
        self.lengths = lengths
        n, t = torch.meshgrid(
            torch.arange(videos.shape[0]), torch.arange(videos.shape[1] - 1), indexing="ij"
        )
        keep = t < (lengths[:, None] - 1)
        self.index = torch.stack([n[keep], t[keep]], 1)  # (clips, 2): video, step t

    def __len__(self) -> int:
        return len(self.index)

    def clips(self, rows: torch.Tensor) -> torch.Tensor:
        """Clips (B, 3, 3, H, W) at rows of :attr:`index`."""
        n, t = self.index[rows].unbind(1)
        steps = torch.stack([(t - 1).clamp(min=0), t, t + 1], 1)
        return self.videos[n[:, None], steps]

    def sample(self, batch: int, generator: torch.Generator | None = None):
        """``batch`` random rows of :attr:`index` and their clips."""
        rows = torch.randint(0, len(self), (batch,), generator=generator)
        return rows, self.clips(rows)
