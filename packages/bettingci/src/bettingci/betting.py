"""Wealth processes of the betting tests and their inversion over the grid of candidate means.

For every candidate mean :math:`m` of a grid :math:`M`, the test of :math:`H_0: \\mu \\le m`
plays :math:`n` rounds. In round :math:`t` it bets :math:`\\lambda_t(m) \\ge 0`, chosen from
:math:`x_1..x_{t-1}` only, and its log-wealth grows by

.. math:: \\log(1 + \\lambda_t(m)(x_t - m))
   \\quad\\text{(product form)}\\quad\\text{or}\\quad
   \\lambda_t(m)(x_t - m) - \\lambda_t(m)^2/8 \\quad\\text{(exponential form)}.

Under :math:`H_0` both are nonnegative supermartingales, so :math:`P(W_n(m) \\ge 1/\\delta) \\le
\\delta`. Everything is vectorised over the grid and over samples: the state has shape (R, K).

Bet rules (:math:`g_t = \\max(\\log(1/\\delta) - \\log W_{t-1}, 0)`, :math:`r_t = n - t + 1`):

- ``star``: :math:`\\lambda_t = \\mathrm{clip}(\\sqrt{2 g_t / (r_t S_t)}, 0, 1/(m+\\varepsilon))`,
  :math:`S_t = \\min(V_{t-1}/(t-1) + c(m+\\varepsilon)n/(t-1)^2,\\ m(1-m)+\\varepsilon)`,
  :math:`V_{t-1} = \\sum_{s<t}(x_s-m)^2`, :math:`S_1 = m(1-m)+\\varepsilon`.
- ``bets``: as ``star`` with the fixed target, :math:`\\sqrt{2\\log(1/\\delta)/(n S_t)}`.
- ``star_hoeffding``: exponential form, :math:`\\lambda_t = \\sqrt{8 g_t / r_t}`.
- ``hoeffding_bet``: exponential form, :math:`\\lambda = \\sqrt{8\\log(1/\\delta)/n}`.
- ``hedged`` (Waudby-Smith & Ramdas): product form,
  :math:`\\lambda_t = \\min(\\sqrt{2\\log(1/\\delta)/(n\\hat\\sigma^2_{t-1})}, \\text{cap}(m))`.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "ABSORBING",
    "BETTING_METHODS",
    "EPS",
    "HEDGED_EPS",
    "final_log_wealth",
    "first_kept",
    "invert",
    "trace",
    "wsr_variance",
]

#: Methods that test every grid point with a wealth process.
BETTING_METHODS = ("star", "bets", "star_hoeffding", "hoeffding_bet", "hedged")
#: The :math:`\varepsilon` of the STaR/Bets variance bound and bet cap (paper: 1e-4).
EPS = 1e-4
#: The hedged capital's one-sided bet cap :math:`1/(m + 10^{-3})`.
HEDGED_EPS = 1e-3


def wsr_variance(X: np.ndarray) -> np.ndarray:
    """The WSR predictable variance :math:`\\hat\\sigma^2_{t-1}` for t = 1..n, shape (R, n).

    :math:`\\hat\\mu_t = (1/2 + \\sum_{s\\le t}x_s)/(t+1)`,
    :math:`\\hat\\sigma^2_t = (1/4 + \\sum_{s\\le t}(x_s-\\hat\\mu_s)^2)/(t+1)`,
    :math:`\\hat\\sigma^2_0 = 1/4`.
    """
    t = np.arange(1, X.shape[1] + 1)
    mu = (0.5 + np.cumsum(X, axis=1)) / (t + 1)
    sigma2 = (0.25 + np.cumsum((X - mu) ** 2, axis=1)) / (t + 1)
    return np.concatenate([np.full((X.shape[0], 1), 0.25), sigma2[:, :-1]], axis=1)


def _hedged_cap(ms: np.ndarray, two_sided: bool) -> np.ndarray:
    if two_sided:  # WSR's truncation 1/(2m) of the two-sided hedged capital
        with np.errstate(divide="ignore"):
            return 0.5 / ms
    return 1.0 / (ms + HEDGED_EPS)


#: Methods whose bet is 0 once :math:`\log W_{t-1} \ge \log(1/\delta)`, so that a rejection,
#: once reached, is final: their grid points can leave the computation there.
ABSORBING = ("star", "star_hoeffding")
#: Rounds between two looks for absorbed grid points in :func:`first_kept`.
CHECK_EVERY = 8


def _run(
    X: np.ndarray,
    ms: np.ndarray,
    log_inv_delta: float,
    method: str,
    c: float,
    two_sided: bool,
    record: bool,
    rows: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    r"""Play the n rounds for every row of X (R, n) and grid point of ms (K,).

    Returns the final log-wealth (R, K) and, with ``record``, the bets (n, R, K) and the
    log-wealth trajectories (n + 1, R, K).

    With ``rows`` (P,), the state is a flat list of (row, mean) pairs instead: pair i tests
    ``ms[i]`` on ``X[rows[i]]`` and the result is (P,). For the :data:`ABSORBING` methods, pairs
    whose log-wealth has reached :math:`\log(1/\delta)` are dropped every
    :data:`CHECK_EVERY` rounds (their bets would be 0 from then on, so their wealth is final).
    Both layouts do the same floating-point operations per pair, so they agree bit for bit.
    """
    R, n = X.shape
    L = log_inv_delta
    pairs = rows is not None
    shape = ms.shape if pairs else (R, ms.size)
    logw = np.zeros(shape)
    bets = np.empty((n, *shape)) if record else None
    path = np.zeros((n + 1, *shape)) if record else None
    lam, dev, tmp = np.empty(shape), np.empty(shape), np.empty(shape)
    if method in ("star", "bets"):
        V = np.zeros(shape)
        m_eps = ms + EPS
        var_max = ms * (1.0 - ms) + EPS
        cap = 1.0 / m_eps
    elif method == "hedged":
        cap = _hedged_cap(ms, two_sided)
        lam_rows = np.sqrt(2.0 * L / (n * wsr_variance(X)))  # (R, n)
    if pairs:
        columns = np.ascontiguousarray(X.T)
        hedge_columns = np.ascontiguousarray(lam_rows.T) if method == "hedged" else None
        x, hedge = np.empty(shape), np.empty(shape)
        final, index = np.empty(shape), np.arange(shape[0])
        absorb = method in ABSORBING
    for t in range(1, n + 1):
        if pairs:
            np.take(columns[t - 1], rows, out=x)
        else:
            x = X[:, t - 1 : t]
        r = n - t + 1
        np.subtract(x, ms, out=dev)
        if method in ("star", "bets"):
            if t == 1:
                S = var_max
            else:
                np.multiply(V, 1.0 / (t - 1), out=tmp)
                tmp += m_eps * (c * n / (t - 1) ** 2)
                S = np.minimum(tmp, var_max, out=tmp)
            if method == "star":
                np.subtract(L, logw, out=lam)
                np.maximum(lam, 0.0, out=lam)
                lam *= 2.0 / r
            else:
                lam.fill(2.0 * L / n)
            lam /= S
            np.sqrt(lam, out=lam)
            np.minimum(lam, cap, out=lam)
        elif method == "hedged":
            if pairs:
                np.take(hedge_columns[t - 1], rows, out=hedge)
            else:
                hedge = lam_rows[:, t - 1 : t]
            np.minimum(hedge, cap, out=lam)
        elif method == "star_hoeffding":
            np.subtract(L, logw, out=lam)
            np.maximum(lam, 0.0, out=lam)
            lam *= 8.0 / r
            np.sqrt(lam, out=lam)
        else:  # hoeffding_bet
            lam.fill(np.sqrt(8.0 * L / n))
        if record:
            bets[t - 1] = lam
        if method in ("star_hoeffding", "hoeffding_bet"):
            np.multiply(lam, dev, out=tmp)
            logw += tmp
            np.square(lam, out=tmp)
            tmp *= 0.125
            logw -= tmp
        else:
            np.multiply(lam, dev, out=tmp)
            np.log1p(tmp, out=tmp)
            logw += tmp
            if method in ("star", "bets"):
                np.square(dev, out=tmp)
                V += tmp
        if record:
            path[t] = logw
        if pairs and absorb and t % CHECK_EVERY == 0:
            alive = logw < L
            n_alive = int(np.count_nonzero(alive))
            if n_alive < 0.75 * alive.size:
                final[index[~alive]] = logw[~alive]
                if n_alive == 0:
                    return final, None, None
                logw, rows, ms, index = logw[alive], rows[alive], ms[alive], index[alive]
                if method == "star":
                    V, m_eps, var_max, cap = V[alive], m_eps[alive], var_max[alive], cap[alive]
                lam, dev, tmp, x = (np.empty(n_alive) for _ in range(4))
    if pairs:
        final[index] = logw
        return final, None, None
    return logw, bets, path


def first_kept(
    X: np.ndarray,
    ms: np.ndarray,
    log_inv_delta: float,
    threshold: np.ndarray,
    method: str,
    *,
    c: float = 1.0,
    two_sided: bool = False,
    block: int = 256,
) -> np.ndarray:
    r"""Index of the smallest grid point each row does not reject, or ``ms.size`` when it
    rejects them all: ``argmax(final_log_wealth(...) < threshold[:, None])`` without computing
    the whole grid.

    The grid is played in blocks of ``block`` means in increasing order; a row leaves once a
    block holds a point it keeps, so the points above its bound are never played, and with the
    :data:`ABSORBING` methods the points below leave as soon as they are rejected for good.
    ``threshold`` (R,) must be at most :math:`\log(1/\delta)` (the deterministic or the
    randomized threshold), so an absorbed point is rejected. Same results as the full grid, bit
    for bit; cost O(sum over rows of the rounds each kept-or-nearly-kept point plays).
    """
    R, K = X.shape[0], ms.size
    first = np.full(R, K)
    active = np.arange(R)
    for start in range(0, K, block):
        if active.size == 0:
            break
        grid_block = ms[start : start + block]
        rows = np.repeat(active, grid_block.size)
        lw = _run(
            X, np.tile(grid_block, active.size), log_inv_delta, method, c, two_sided, False, rows
        )[0]
        kept = (lw < threshold[rows]).reshape(active.size, grid_block.size)
        hit = kept.any(axis=1)
        first[active[hit]] = start + np.argmax(kept[hit], axis=1)
        active = active[~hit]
    return first


def final_log_wealth(
    X: np.ndarray,
    ms: np.ndarray,
    log_inv_delta: float,
    method: str,
    *,
    c: float = 1.0,
    two_sided: bool = False,
) -> np.ndarray:
    """Final log-wealth :math:`\\log W_n(m)` of the test of :math:`H_0: \\mu \\le m`, (R, K).

    ``X`` is (R, n) in [0, 1], ``ms`` the (K,) candidate means, ``log_inv_delta`` the target
    :math:`\\log(1/\\delta)`. ``two_sided`` switches the hedged cap to WSR's two-sided
    truncation :math:`1/(2m)`. Cost O(R n K) time, O(R K) memory.
    """
    return _run(X, ms, log_inv_delta, method, c, two_sided, record=False)[0]


def trace(
    x: np.ndarray, ms: np.ndarray, log_inv_delta: float, method: str, *, c: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """Bets :math:`\\lambda_t(m)` (n, K) and log-wealth trajectories (n + 1, K) of one sample."""
    _, bets, path = _run(x[None, :], ms, log_inv_delta, method, c, False, record=True)
    return bets[:, 0], path[:, 0]


def invert(log_wealth: np.ndarray, threshold: np.ndarray | float, grid: int) -> np.ndarray:
    """Lower confidence bounds from final log-wealth (R, G + 1) over the grid :math:`m_k = k/G`.

    A grid point is rejected when :math:`\\log W_n(m) \\ge` ``threshold`` (scalar or (R,)):
    :math:`\\log(1/\\delta)`, or :math:`\\log(U/\\delta)` for the randomized test.
    :math:`\\mathrm{LCB} = \\max(0, \\min\\{m : \\text{not rejected}\\} - h)`, :math:`h = 1/G`,
    and 1 when every grid point is rejected.
    """
    thr = np.reshape(threshold, (-1, 1)) if np.ndim(threshold) else threshold
    kept = log_wealth < thr
    first = np.argmax(kept, axis=1)
    lcb = np.maximum(first / grid - 1.0 / grid, 0.0)
    return np.where(kept.any(axis=1), lcb, 1.0)
