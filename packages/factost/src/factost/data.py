"""Data: four synthetic spatio-temporal domains and the real series bundled with statsmodels.

Every synthetic domain is hourly, on ``N`` nodes placed uniformly in the unit square, linked by a
symmetric 4-nearest-neighbour graph. Spatial coupling comes from a latent AR(1) state diffused over
that graph, ``z_t = rho ((1 - alpha) z_{t-1} + alpha A z_{t-1}) + sigma eps_t`` (``A`` the
row-normalised adjacency), so neighbours share their deviations from the seasonal pattern:

* ``traffic``: morning and evening peaks, lower and flatter on weekends (daily + weekly period);
* ``solar``: a diurnal bell (06:00-18:00) dimmed by spatially coupled clouds ``sigmoid(z)``;
* ``air``: a slow AR level (``rho = 0.99``) with spatial diffusion and a mild daily cycle;
* ``bike``: Poisson counts with a commuting pattern and a coupled log-rate.

Splits (by time): train ``[0, 0.7 T)``, validation ``[0.7 T, 0.8 T)``, test ``[0.8 T, T)``;
few-shot adaptation uses the last ``shots`` fraction of the train span. A window's targets lie in
its span; its inputs may reach back before it.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from factost.graph import knn_graph
from paperkit import check_choice, check_int, check_memory, check_real, param_error

__all__ = ["KINDS", "STDomain", "make_domain_suite", "make_st_domain", "real_series"]

KINDS = ("traffic", "solar", "air", "bike")
#: Nodes per kind in the default suite (the paper's small ST benchmarks have tens of nodes).
SUITE_NODES = {"traffic": 40, "solar": 30, "air": 50, "bike": 60}
SPLITS = ("shots", "train", "val", "test")


@dataclass
class STDomain:
    """One spatio-temporal domain.

    Attributes:
        kind: generator name (or any label).
        values: ``(T, N)`` float32 observations.
        coords: ``(N, 2)`` float32 node coordinates.
        edge_index: ``(2, E)`` long tensor of the prior graph.
        time_feat: ``(T, 2)`` float32: time of day in ``[0, 1)``, day of week in ``[0, 7)``.
        period: the dominant period in steps (24 for hourly daily cycles).
    """

    kind: str
    values: np.ndarray
    coords: np.ndarray
    edge_index: torch.Tensor
    time_feat: np.ndarray
    period: int = 24

    @property
    def n_nodes(self) -> int:
        return self.values.shape[1]

    def span(self, split: str, shots: float = 0.1) -> tuple[int, int]:
        """``[start, end)`` of the target steps of a split (see the module docstring)."""
        check_choice("split", "STDomain.span", split, SPLITS)
        T = self.values.shape[0]
        train, val = int(0.7 * T), int(0.8 * T)
        if split == "shots":
            shots = check_real("shots", "STDomain.span", shots, low=0, high=1, low_open=True)
            return train - max(1, round(shots * train)), train
        return {"train": (0, train), "val": (train, val), "test": (val, T)}[split]

    def windows(
        self,
        input_len: int,
        horizon: int,
        split: str = "train",
        shots: float = 0.1,
        stride: int = 1,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sliding windows whose targets lie in ``split``: ``x (n, N, L)``, ``y (n, N, H)`` and
        the time features of each window's last input step ``(n, 2)``."""
        owner = "STDomain.windows"
        L = check_int("input_len", owner, input_len, low=1, high=self.values.shape[0])
        H = check_int("horizon", owner, horizon, low=1, high=self.values.shape[0])
        stride = check_int("stride", owner, stride, low=1)
        start, end = self.span(split, shots)
        t = np.arange(max(start, L), end - H + 1, stride)
        if t.size == 0:
            raise param_error("split", owner, f"a span holding a {L}+{H}-step window", split)
        v = torch.from_numpy(self.values)
        x = torch.stack([v[s - L : s].T for s in t])
        y = torch.stack([v[s : s + H].T for s in t])
        return x, y, torch.from_numpy(self.time_feat[t - 1])


def _hour_week(T: int) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(T)
    return t % 24, (t // 24) % 7


def _latent(
    adj: np.ndarray, T: int, rho: float, alpha: float, sigma: float, rng: np.random.Generator
) -> np.ndarray:
    """Latent AR(1) states diffused over the graph, ``(T, N)``."""
    N = adj.shape[0]
    z = np.zeros((T, N))
    state = rng.standard_normal(N) * sigma / np.sqrt(1 - rho**2)
    for t in range(T):
        state = rho * ((1 - alpha) * state + alpha * adj @ state) + sigma * rng.standard_normal(N)
        z[t] = state
    return z


def make_st_domain(kind: str, n_nodes: int, n_steps: int, seed: int = 0) -> STDomain:
    """One synthetic hourly spatio-temporal domain (see the module docstring for the kinds).

    Args:
        kind: one of ``"traffic"``, ``"solar"``, ``"air"``, ``"bike"``.
        n_nodes: nodes ``N`` (>= 5).
        n_steps: hourly steps ``T`` (>= 48).
        seed: random seed (>= 0).

    >>> d = make_st_domain("traffic", 10, 24 * 14, seed=0)
    >>> d.values.shape, d.coords.shape, d.edge_index.shape[0], d.period
    ((336, 10), (10, 2), 2, 24)
    """
    owner = "make_st_domain"
    check_choice("kind", owner, kind, KINDS)
    N = check_int("n_nodes", owner, n_nodes, low=5, high=100_000)
    T = check_int("n_steps", owner, n_steps, low=48, high=10_000_000)
    check_memory("n_steps", owner, n_steps, 8.0 * 4 * N * T)
    seed = check_int("seed", owner, seed, low=0)
    rng = np.random.default_rng([seed, KINDS.index(kind)])
    coords = rng.uniform(0, 1, size=(N, 2)).astype(np.float32)
    edge_index = knn_graph(torch.from_numpy(coords), 4)
    adj = np.zeros((N, N))
    adj[edge_index[1].numpy(), edge_index[0].numpy()] = 1.0
    adj /= adj.sum(1, keepdims=True)
    hour, dow = _hour_week(T)
    weekend = dow >= 5
    noise = rng.standard_normal((T, N))
    if kind == "traffic":
        z = _latent(adj, T, 0.95, 0.7, 0.3, rng)
        day = np.exp(-((hour - 13) ** 2) / 32)
        peaks = 0.6 * np.exp(-((hour - 8) ** 2) / 4.5) + 0.5 * np.exp(-((hour - 17.5) ** 2) / 8)
        daily = 0.2 + np.where(weekend, 0.7 * day, day + peaks)
        level = rng.uniform(50, 150, N)
        values = level * (daily[:, None] * (1 + 0.3 * z) + 0.1 * z) + 2.0 * noise
    elif kind == "solar":
        z = _latent(adj, T, 0.9, 0.7, 0.5, rng)
        bell = np.clip(np.sin(np.pi * (hour - 6) / 12), 0, None) * (hour >= 6) * (hour <= 18)
        cloud = 1 / (1 + np.exp(-1.5 * z))
        capacity = rng.uniform(30, 70, N)
        values = capacity * bell[:, None] * (1 - 0.7 * cloud) * (1 + 0.03 * noise)
    elif kind == "air":
        z = _latent(adj, T, 0.99, 0.7, 0.15, rng)
        daily = np.cos(2 * np.pi * (hour - 14) / 24)
        values = 50 + 12 * z + 6 * daily[:, None] + rng.uniform(-10, 10, N) + 1.0 * noise
    else:  # bike
        z = _latent(adj, T, 0.9, 0.7, 0.3, rng)
        day = np.exp(-((hour - 13) ** 2) / 32)
        commute = day + 0.5 * np.exp(-((hour - 8) ** 2) / 3) + 0.5 * np.exp(-((hour - 18) ** 2) / 4)
        rate = np.exp(1.0 + 1.5 * commute[:, None] * np.where(weekend, 0.4, 1.0)[:, None] + 0.6 * z)
        values = rng.poisson(rate * rng.uniform(1, 3, N)).astype(float)
    time_feat = np.stack([hour / 24.0, dow.astype(float)], axis=1).astype(np.float32)
    return STDomain(kind, values.astype(np.float32), coords, edge_index, time_feat)


def make_domain_suite(
    n_nodes: int | None = None, days: int = 60, seed: int = 0
) -> dict[str, STDomain]:
    """The four synthetic domains, hourly over ``days`` days.

    Args:
        n_nodes: nodes of every domain, or None for 40 / 30 / 50 / 60 (traffic, solar, air, bike).
        days: length in days (>= 7).
        seed: random seed (>= 0).

    >>> suite = make_domain_suite(n_nodes=8, days=7)
    >>> sorted(suite), suite["bike"].values.shape
    (['air', 'bike', 'solar', 'traffic'], (168, 8))
    """
    owner = "make_domain_suite"
    if n_nodes is not None:
        check_int("n_nodes", owner, n_nodes, low=5, high=100_000)
    days = check_int("days", owner, days, low=7, high=100_000)
    check_int("seed", owner, seed, low=0)
    return {
        kind: make_st_domain(kind, n_nodes or SUITE_NODES[kind], 24 * days, seed) for kind in KINDS
    }


def _statsmodels_csv(name: str) -> np.ndarray:
    """A dataset's CSV shipped inside the installed statsmodels, read without importing it
    (importing statsmodels.datasets costs seconds); a structured array with named columns."""
    spec = importlib.util.find_spec("statsmodels")
    if spec is None or spec.origin is None:  # pragma: no cover - a declared dependency
        raise ImportError("factost.real_series needs statsmodels (a declared dependency)")
    path = Path(spec.origin).parent / "datasets" / name / f"{name}.csv"
    return np.genfromtxt(path, delimiter=",", names=True, dtype=float, encoding="utf-8")


def _interpolate(x: np.ndarray) -> np.ndarray:
    gaps = np.isnan(x)
    x = x.copy()
    x[gaps] = np.interp(np.flatnonzero(gaps), np.flatnonzero(~gaps), x[~gaps])
    return x


def real_series() -> dict[str, np.ndarray]:
    """The univariate real series bundled with statsmodels (no download): weekly Mauna Loa
    ``co2`` (gaps linearly interpolated), yearly ``sunspots``, monthly ``elnino`` sea surface
    temperatures (1950-2010, flattened) and yearly ``nile`` flow.

    >>> {k: v.shape for k, v in real_series().items()}["nile"]
    (100,)
    """
    elnino = _statsmodels_csv("elnino")
    months = [name for name in elnino.dtype.names if name != "YEAR"]
    series = {
        "co2": _interpolate(_statsmodels_csv("co2")["co2"]),
        "sunspots": _statsmodels_csv("sunspots")["SUNACTIVITY"],
        "elnino": np.stack([elnino[m] for m in months], axis=1).ravel(),
        "nile": _statsmodels_csv("nile")["volume"],
    }
    return {name: np.asarray(s, dtype=np.float32) for name, s in series.items()}
