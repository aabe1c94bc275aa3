r"""Compare mvou with the authors' released code on the same inputs.

Usage::

    uv run python packages/mvou/scripts/compare_official.py CHECKOUT

``CHECKOUT`` is a clone of the paper's repository (``github.com/zsteve/nonequilibriumSBP``); its
``src/fm.py`` is imported, not copied. That module needs ``torchdiffeq`` only to integrate
:math:`\int_0^t e^{sA}e^{sA^\top}ds` and :math:`\int_0^t e^{-sA}e^{-sA^\top}ds` on its time grid;
when ``torchdiffeq`` is not installed, a stand-in ``odeint`` integrates these integrands, which
depend on s only, by 16-point Gauss-Legendre quadrature per grid interval (exact to float64
rounding for these smooth integrands). Everything runs in float64 (``torch.set_default_dtype``).

Compared, for an asymmetric A (d = 3), m != 0, scalar sigma = 0.5 (the released code takes a
scalar sigma), at times on the released code's grid (so its linear interpolation is exact):

* bridge mean and covariance (the paper's Theorem 2: ``_bridge_mean``, ``sigma^2 _bridge_cov``)
  against :meth:`mvou.MvOU.bridge`;
* score and probability-flow velocity at the released code's own bridge samples
  (``sample_bridge_and_flow``: s, u) against :math:`-S_t^{-1}(x - M_t)` and
  :math:`u_t(x \mid x_1) + \tfrac12 D S_t^{-1}(x - M_t)`;
* the control term (Theorem 1, ``_bridge_ctrl``) against the h-transform part of
  :meth:`mvou.MvOU.bridge_drift`;
* the entropic plan between two point clouds (``LinearEntropicOTFM``: POT's
  ``sinkhorn_epsilon_scaling``, reg 1, returned in float32) against :func:`mvou.entropic_plan`;
* the Gaussian SB (Theorem 3, ``GaussianOUSB.evaluate``): mean, covariance and the affine
  drift :math:`\dot m_t + S_t^\top \Sigma_t^{-1}(x - m_t)` against :class:`mvou.GaussianSB`.

The released code regularises its inverses with ``1e-5 I`` (``_eps``), so agreement is at the
1e-5 level where an inverse enters and at rounding level elsewhere.
"""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path

import numpy as np
import torch

from mvou import GaussianSB, MvOU, entropic_plan

NODES, WEIGHTS = np.polynomial.legendre.leggauss(16)


def _odeint_standin(func, y0, t, method=None, **_):
    """Cumulative integral of func(s, y) (independent of y here) on the grid t."""
    out = [y0]
    for a, b in zip(t[:-1].tolist(), t[1:].tolist(), strict=True):
        acc = torch.zeros_like(y0)
        for node, w in zip(NODES, WEIGHTS, strict=True):
            s = torch.tensor(0.5 * (b - a) * node + 0.5 * (a + b), dtype=y0.dtype)
            acc = acc + 0.5 * (b - a) * w * func(s, y0)
        out.append(out[-1] + acc)
    return torch.stack(out)


def _load_official(checkout: Path):
    try:
        import torchdiffeq  # noqa: F401
    except ImportError:
        stub = types.ModuleType("torchdiffeq")
        stub.odeint = _odeint_standin
        sys.modules["torchdiffeq"] = stub
    sys.path.insert(0, str(checkout / "src"))
    import fm  # the released module

    return fm


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a - b).abs().max() / b.abs().max())


def compare(fm, sigma: float = 0.5, offset: bool = True) -> dict[str, float]:
    """Max relative differences, released code against mvou, on one random problem."""
    g = torch.Generator().manual_seed(0)
    d, T = 3, 101
    G = torch.randn(d, d, generator=g)
    A = -torch.eye(d) + 1.5 * (G - G.T) / torch.linalg.matrix_norm(G - G.T, ord=2)
    m = torch.tensor([0.5, -1.0, 0.3]) if offset else torch.zeros(d)
    ref = MvOU(A, m, sigma)
    bm = fm.LinearBridgeMatcher(A, m, T=T)
    B = 64
    t = torch.randint(1, T - 1, (B,), generator=g).double() / (T - 1)
    x0 = torch.randn(B, d, generator=g)
    x1 = torch.randn(B, d, generator=g) + 1.0
    res: dict[str, float] = {}

    M, S = ref.bridge(t, x0, x1)
    res["bridge mean (Thm 2)"] = _rel(M, bm._bridge_mean(t, x0, x1))
    res["bridge covariance (Thm 2)"] = _rel(S, sigma**2 * bm._bridge_cov(t, x0, x1))

    torch.manual_seed(1)
    _, _, x, s_off, u_off = bm.sample_bridge_and_flow(x0, x1, t, sigma)
    score = -torch.linalg.solve(S, (x - M)[..., None])[..., 0]
    v = ref.bridge_drift(t, x, x1) - 0.5 * score @ ref.D.T
    res["score target"] = _rel(score, s_off)
    res["probability-flow velocity target"] = _rel(v, u_off)
    ctrl = ref.bridge_drift(t, x, x1) - (x - m) @ A.T
    res["bridge control (Thm 1)"] = _rel(ctrl, bm._bridge_ctrl(x, t, x0, x1))

    n0, n1 = 120, 150
    y0 = torch.randn(n0, d, generator=g)
    y1 = torch.randn(n1, d, generator=g) + 0.5
    otfm = fm.LinearEntropicOTFM(
        torch.cat([y0, y1]),
        torch.cat([torch.zeros(n0), torch.ones(n1)]).long(),
        ts=torch.tensor([0.0, 1.0]),
        sigma=sigma,
        A=A,
        mu=m,
        T=2,
        dim=d,
        device=torch.device("cpu"),
        bm_kwargs={"T": T},
    )
    plan = entropic_plan(y0, y1, ref, reg=1.0)
    res["entropic plan (float32 in the released code)"] = _rel(plan, otfm.Ts[0].double())

    a, b = torch.tensor([2.0, 0.0, -1.0]), torch.tensor([-1.0, 1.5, 0.5])
    Q0, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
    P0 = (Q0 * torch.tensor([0.1, 0.3, 0.5])) @ Q0.T
    Q1, _ = torch.linalg.qr(torch.randn(d, d, generator=g))
    P1 = (Q1 * torch.tensor([0.4, 0.8, 1.5])) @ Q1.T
    sb = GaussianSB(a, P0, b, P1, ref)
    gsb = fm.GaussianOUSB(otfm.bm, otfm)
    tg = torch.arange(1, T - 1, 7).double() / (T - 1)
    means, covs, S_t, dmeans = gsb.evaluate(tg, a, b, P0, P1)
    mean, cov = sb.marginal(tg)
    res["GSB mean (Thm 3)"] = _rel(mean, means[..., 0])
    res["GSB covariance (Thm 3)"] = _rel(cov, covs)
    xq = mean + torch.randn(tg.numel(), d, generator=g)
    gain = S_t.transpose(-1, -2) @ torch.linalg.inv(covs)
    drift_off = dmeans[..., 0] + (gain @ (xq - means[..., 0])[..., None])[..., 0]
    res["GSB drift (affine, Thm 3)"] = _rel(sb.drift(tg, xq), drift_off)
    h = 1e-6
    fd = (gsb.evaluate(tg + h, a, b, P0, P1)[0] - gsb.evaluate(tg - h, a, b, P0, P1)[0]) / (2 * h)
    res["released d(mean)/dt vs its own mean's derivative"] = _rel(dmeans, fd)
    return res


def timing(fm, reps: int = 20) -> dict[str, float]:
    """CPU seconds per call for one batch of 256 bridge targets (d = 3): the released
    ``sample_bridge_and_flow`` (its 101-point grid) against mvou's exact and cached paths."""
    g = torch.Generator().manual_seed(0)
    d, B, sigma = 3, 256, 0.5
    A = -torch.eye(d) + torch.randn(d, d, generator=g)
    m = torch.zeros(d)
    ref, bm = MvOU(A, m, sigma), fm.LinearBridgeMatcher(A, m, T=101)
    t = 0.01 + 0.98 * torch.rand(B, generator=g)
    x0, x1, eps = (torch.randn(B, d, generator=g) for _ in range(3))
    calls = {
        "released sample_bridge_and_flow": lambda: bm.sample_bridge_and_flow(x0, x1, t, sigma),
        "mvou targets, exact matrix_exp": lambda: ref._targets(t, x0, x1, eps, exact=True),
        "mvou targets, cached grid": lambda: ref._targets(t, x0, x1, eps, exact=False),
    }
    out = {}
    for name, call in calls.items():
        call()
        start = time.process_time()
        for _ in range(reps):
            call()
        out[name] = (time.process_time() - start) / reps
    return out


def main(checkout: Path) -> None:
    torch.set_default_dtype(torch.float64)
    fm = _load_official(checkout)
    eps = fm._eps
    runs = {}
    for label, eps_k, sigma, offset in (
        ("as released", eps, 0.5, True),
        ("_eps = 0", 0.0, 0.5, True),
        ("_eps = 0, m = 0", 0.0, 0.5, False),
        ("_eps = 0, sigma = 1, m = 0", 0.0, 1.0, False),
    ):
        fm._eps = eps_k
        runs[label] = compare(fm, sigma, offset)
    fm._eps = eps
    names = list(runs["as released"])
    print("| quantity | " + " | ".join(runs) + " |")
    print("|---" * (len(runs) + 1) + "|")
    for name in names:
        print(f"| {name} | " + " | ".join(f"{r[name]:.1e}" for r in runs.values()) + " |")
    print()
    for name, sec in timing(fm).items():
        print(f"{name}: {1e3 * sec:.2f} ms of CPU per batch of 256")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: compare_official.py CHECKOUT (a clone of zsteve/nonequilibriumSBP)")
    main(Path(sys.argv[1]))
