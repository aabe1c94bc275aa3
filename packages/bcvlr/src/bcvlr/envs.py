r"""Pixel environments for video imitation (gymnasium ``Env`` API, rendered offline).

``PixelGridReach-v0``: an agent (red) and a goal (green) on an 8x8 grid drawn on 32x32 RGB, with
optional wall cells (grey). Five discrete actions (stay, up, down, left, right) reach the moves
through a fixed random permutation :data:`GRID_PERMUTATION`, so the motion seen in a video does
not reveal the action index (the latent actions of BCV-LR must be *aligned* with real actions
online, Sec. 3.2 of the paper). Reward 1 on reaching the goal (then ``terminated``), horizon 40.
The expert walks a BFS shortest path.

``PixelPointReach-v0``: a point (red) moves with a velocity action :math:`a \in [-1, 1]^2`,
:math:`p_{t+1} = \mathrm{clip}(p_t + 0.1\,a_t, 0, 1)`, towards a target (green); success when
:math:`\|p - g\| < 0.08`. The expert is the clipped proportional controller
:math:`a = \mathrm{clip}(10 (g - p), -1, 1)`.

These stand in for the paper's Procgen and DMC suites (Sec. 4), which need downloads and hours.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from paperkit import check_int, check_real, describe, param_error

__all__ = [
    "GRID_ENV_ID",
    "GRID_PERMUTATION",
    "check_env_id",
    "POINT_ENV_ID",
    "PixelGridReach",
    "PixelPointReach",
    "grid_expert_action",
    "make_vector_env",
    "point_expert_action",
]

GRID_ENV_ID = "bcvlr/PixelGridReach-v0"
POINT_ENV_ID = "bcvlr/PixelPointReach-v0"
#: Moves (d_row, d_col) of stay, up, down, left, right.
MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]])
#: Action index i performs move ``MOVES[GRID_PERMUTATION[i]]`` (a fixed draw, seed 2025).
GRID_PERMUTATION = np.random.default_rng(2025).permutation(5)
AGENT = np.array([230, 40, 40], dtype=np.uint8)
GOAL = np.array([40, 200, 60], dtype=np.uint8)
WALL = np.array([120, 120, 120], dtype=np.uint8)


class PixelGridReach(gym.Env):
    """Reach the goal cell on a pixel grid; actions permuted (see the module docstring).

    Observations are ``uint8`` images of shape ``(size, size, 3)``; ``size = grid * cell``.
    """

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self, grid: int = 8, cell: int = 4, walls: int = 0, horizon: int = 40, render_mode=None
    ) -> None:
        self.grid = check_int("grid", "PixelGridReach", grid, low=3, high=64)
        self.cell = check_int("cell", "PixelGridReach", cell, low=1, high=16)
        self.walls = check_int("walls", "PixelGridReach", walls, low=0, high=grid * grid // 4)
        self.horizon = check_int("horizon", "PixelGridReach", horizon, low=1, high=100_000)
        self.render_mode = render_mode
        size = grid * cell
        self.observation_space = spaces.Box(0, 255, (size, size, 3), dtype=np.uint8)
        self.action_space = spaces.Discrete(5)
        self.agent = np.zeros(2, dtype=np.int64)
        self.goal = np.zeros(2, dtype=np.int64)
        self.wall = np.zeros((grid, grid), dtype=bool)
        self.t = 0

    def _free(self, cell: np.ndarray) -> bool:
        r, c = int(cell[0]), int(cell[1])
        return 0 <= r < self.grid and 0 <= c < self.grid and not self.wall[r, c]

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        rng = self.np_random
        while True:
            self.wall[:] = False
            cells = rng.choice(self.grid * self.grid, size=self.walls + 2, replace=False)
            rows, cols = np.divmod(cells, self.grid)
            self.wall[rows[2:], cols[2:]] = True
            self.agent = np.array([rows[0], cols[0]])
            self.goal = np.array([rows[1], cols[1]])
            if self.shortest_path_length() is not None:
                break
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        move = MOVES[GRID_PERMUTATION[int(action)]]
        target = self.agent + move
        if self._free(target):
            self.agent = target
        self.t += 1
        reached = bool((self.agent == self.goal).all())
        return self._obs(), float(reached), reached, self.t >= self.horizon and not reached, {}

    def render(self) -> np.ndarray:
        return self._obs()

    def _obs(self) -> np.ndarray:
        k = self.cell
        img = np.zeros((self.grid, self.grid, 3), dtype=np.uint8)
        img[self.wall] = WALL
        img[self.goal[0], self.goal[1]] = GOAL
        img[self.agent[0], self.agent[1]] = AGENT
        return np.repeat(np.repeat(img, k, axis=0), k, axis=1)

    def bfs_distances(self) -> np.ndarray:
        """Shortest-path length from every cell to the goal (-1 where unreachable)."""
        dist = np.full((self.grid, self.grid), -1, dtype=np.int64)
        dist[tuple(self.goal)] = 0
        queue = deque([tuple(self.goal)])
        while queue:
            r, c = queue.popleft()
            for dr, dc in MOVES[1:]:
                n = (r + dr, c + dc)
                if self._free(np.array(n)) and dist[n] < 0:
                    dist[n] = dist[r, c] + 1
                    queue.append(n)
        return dist

    def shortest_path_length(self) -> int | None:
        """BFS distance from the agent to the goal (None when walls cut them apart)."""
        d = int(self.bfs_distances()[tuple(self.agent)])
        return None if d < 0 else d


def grid_expert_action(env: PixelGridReach) -> int:
    """The action index whose move descends the BFS distance field (an optimal action).

    >>> env = PixelGridReach()
    >>> _ = env.reset(seed=0)
    >>> steps = env.shortest_path_length()
    >>> for _ in range(steps):
    ...     _, r, term, trunc, _ = env.step(grid_expert_action(env))
    >>> term, r
    (True, 1.0)
    """
    dist = env.unwrapped.bfs_distances()
    here = env.unwrapped.agent
    best, best_d = 0, dist[tuple(here)]
    for move_index in range(1, 5):
        n = here + MOVES[move_index]
        if env.unwrapped._free(n) and 0 <= dist[tuple(n)] < best_d:
            best, best_d = move_index, dist[tuple(n)]
    return int(np.flatnonzero(best == GRID_PERMUTATION)[0])


class PixelPointReach(gym.Env):
    """Steer a point to a target with a 2-D velocity action (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self,
        size: int = 32,
        speed: float = 0.1,
        radius: float = 0.08,
        horizon: int = 40,
        render_mode=None,
    ) -> None:
        self.size = check_int("size", "PixelPointReach", size, low=8, high=256)
        self.speed = check_real("speed", "PixelPointReach", speed, low=0, low_open=True, high=1)
        self.radius = check_real("radius", "PixelPointReach", radius, low=0, low_open=True, high=1)
        self.horizon = check_int("horizon", "PixelPointReach", horizon, low=1, high=100_000)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0, 255, (size, size, 3), dtype=np.uint8)
        self.action_space = spaces.Box(-1.0, 1.0, (2,), dtype=np.float32)
        self.pos = np.zeros(2)
        self.goal = np.zeros(2)
        self.t = 0

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        while True:
            self.pos, self.goal = self.np_random.uniform(0.05, 0.95, size=(2, 2))
            if np.linalg.norm(self.pos - self.goal) > 2 * self.radius:
                break
        self.t = 0
        return self._obs(), {}

    def step(self, action):
        a = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        self.pos = np.clip(self.pos + self.speed * a, 0.0, 1.0)
        self.t += 1
        reached = bool(np.linalg.norm(self.pos - self.goal) < self.radius)
        return self._obs(), float(reached), reached, self.t >= self.horizon and not reached, {}

    def render(self) -> np.ndarray:
        return self._obs()

    def _obs(self) -> np.ndarray:
        img = np.zeros((self.size, self.size, 3), dtype=np.uint8)
        for point, colour in ((self.goal, GOAL), (self.pos, AGENT)):
            r, c = np.minimum((point * self.size).astype(int), self.size - 2)
            img[r : r + 2, c : c + 2] = colour
        return img


def point_expert_action(env: PixelPointReach) -> np.ndarray:
    """The clipped proportional controller :math:`\\mathrm{clip}(10 (g - p), -1, 1)`."""
    e = env.unwrapped
    return np.clip(10.0 * (e.goal - e.pos), -1.0, 1.0).astype(np.float32)


def check_env_id(env_id: object, owner: str, name: str = "env") -> str:
    """One of the registered ids ``bcvlr/PixelGridReach-v0``, ``bcvlr/PixelPointReach-v0``."""
    ids = (GRID_ENV_ID, POINT_ENV_ID)
    if not isinstance(env_id, str):
        raise param_error(name, owner, f"one of {ids}", describe(env_id), cls=TypeError)
    if env_id not in ids:
        raise param_error(name, owner, f"one of {ids}", repr(env_id))
    return env_id


def make_vector_env(env_id: str, num_envs: int, **kwargs: Any) -> gym.vector.VectorEnv:
    """``num_envs`` copies in a ``SyncVectorEnv`` that resets a finished copy in the same step
    (``AutoresetMode.SAME_STEP``: the last frame of an episode is in ``info["final_obs"]``)."""
    check_env_id(env_id, "make_vector_env", "env_id")
    num_envs = check_int("num_envs", "make_vector_env", num_envs, low=1, high=4096)
    return gym.make_vec(
        env_id,
        num_envs=num_envs,
        vectorization_mode="sync",
        vector_kwargs={"autoreset_mode": gym.vector.AutoresetMode.SAME_STEP},
        **kwargs,
    )


for _id, _cls in ((GRID_ENV_ID, PixelGridReach), (POINT_ENV_ID, PixelPointReach)):
    if _id not in gym.registry:
        gym.register(_id, entry_point=_cls)
