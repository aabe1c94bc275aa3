import pytest
import torch

from gspn2.ops import DIRECTIONS, normalize_weights


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


def make_scan(B=2, C=4, H=5, W=7, G=1, *, dtype=torch.float64, seed=0, axis=-2, device="cpu"):
    """x (B, C, H, W), normalised weights (B, G, H, W) x 3, lam in [0, 1]."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, C, H, W, generator=g, dtype=torch.float64)
    raw = torch.randn(3, B, G, H, W, generator=g, dtype=torch.float64)
    w = normalize_weights(*raw, axis=axis)
    lam = torch.rand(B, C, H, W, generator=g, dtype=torch.float64)
    return tuple(t.to(device=device, dtype=dtype) for t in (x, *w, lam))


def make_4dir(B=2, C=4, H=5, W=6, G=1, *, dtype=torch.float64, seed=0, device="cpu"):
    """Keyword arguments of gspn_4dir: per-direction weights, (B, 4, C, H, W) lam, u, d, mix."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(B, C, H, W, generator=g, dtype=torch.float64)
    raw = torch.randn(4, 3, B, G, H, W, generator=g, dtype=torch.float64)
    weights = {
        d: normalize_weights(*raw[k], axis=-2 if d in ("lr", "rl") else -1)
        for k, d in enumerate(DIRECTIONS)
    }
    lam, u, d = (torch.rand(B, 4, C, H, W, generator=g, dtype=torch.float64) for _ in range(3))
    mix = torch.rand(4, generator=g, dtype=torch.float64)

    def cast(t):
        return t.to(device=device, dtype=dtype)

    return {
        "x": cast(x),
        "weights": {k: tuple(cast(w) for w in v) for k, v in weights.items()},
        "lam": cast(lam),
        "u": cast(u),
        "d": cast(d),
        "mix": cast(mix),
    }


@pytest.fixture
def scan_inputs():
    return make_scan


@pytest.fixture
def four_dir_inputs():
    return make_4dir
