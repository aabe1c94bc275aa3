"""The public API: lower/upper confidence bounds, two-sided intervals, the batched path and the
:class:`BettingCI` estimator.

For data :math:`x_1..x_n \\in [0, 1]` and a level :math:`\\delta`, every method returns a bound
with :math:`P(\\mathrm{LCB} \\le \\mu) \\ge 1 - \\delta` in finite samples (``t_test`` excepted).
Betting methods invert the wealth test over the grid :math:`M = \\{0, h, \\dots, 1\\}`,
:math:`h = 1/G`:
:math:`\\mathrm{LCB} = \\max(0, \\min\\{m \\in M: \\log W_n(m) < \\log(U/\\delta)\\} - h)`,
:math:`U \\sim \\mathrm{Unif}(0, 1]` (randomized) or :math:`U = 1`. The upper bound is
:math:`\\mathrm{UCB}(x) = 1 - \\mathrm{LCB}(1 - x)` and the two-sided interval at level
:math:`\\delta` is :math:`[\\mathrm{LCB}_{\\delta/2}, \\mathrm{UCB}_{\\delta/2}]`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bettingci.baselines import CLOSED_FORMS, binary_only, unit_sample
from bettingci.betting import BETTING_METHODS, final_log_wealth, first_kept, invert, trace
from paperkit import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)

__all__ = [
    "ALTERNATIVES",
    "METHODS",
    "BettingCI",
    "bet_sequence",
    "betting_ci",
    "confidence_interval",
    "log_wealth",
    "lower_bound",
    "lower_bound_batch",
    "upper_bound",
]

#: Every method: the betting tests first, then the closed forms.
METHODS = BETTING_METHODS + tuple(CLOSED_FORMS)
#: The alternatives of :func:`betting_ci` and :class:`BettingCI`.
ALTERNATIVES = ("two-sided", "greater", "less")
#: Elements of one (rows x grid) state array in the batched path; rows are chunked to fit.
CHUNK_ELEMENTS = 2**15
#: Grid points played at once when only the bound is wanted (:func:`first_kept`).
GRID_BLOCK = 128
#: float64 arrays the grid inversion holds per grid point: five (rows x grid) state arrays and
#: the kept mask of one chunk, and six grid-sized vectors (the grid, caps, bounds).
STATE_ARRAYS, GRID_VECTORS = 6, 6

RandomState = int | np.random.Generator | None


# ---------------------------------------------------------------------------- validation
def _level(name: str, owner: str, value: Any) -> float:
    return check_real(name, owner, value, low=0, high=1, low_open=True, high_open=True)


def _work_bytes(grid: int, rows: int, keep_wealth: bool = False) -> float:
    """Bytes the inversion over the grid of ``grid + 1`` means holds at once for ``rows``
    samples: one chunk of state arrays, the grid vectors, and the kept final log-wealth."""
    k = grid + 1
    chunk = min(rows, max(1, CHUNK_ELEMENTS // k))
    return 8.0 * k * (STATE_ARRAYS * chunk + GRID_VECTORS + (2 * rows if keep_wealth else 0))


def _options(
    owner: str,
    method: str,
    grid: Any,
    c: Any,
    randomize: Any,
    random_state: Any,
    rows: int,
    keep_wealth: bool = False,
) -> None:
    """Check the options shared by every entry point, and that the grid fits in memory."""
    check_choice("method", owner, method, METHODS)
    check_int("grid", owner, grid, low=10)
    check_real("c", owner, c, low=0, low_open=True)
    check_bool("randomize", owner, randomize)
    if random_state is not None and not isinstance(random_state, np.random.Generator):
        if not hasattr(random_state, "__index__"):
            expected = "None, a non-negative integer or a numpy Generator"
            raise param_error(
                "random_state", owner, expected, describe(random_state), cls=TypeError
            )
        check_int("random_state", owner, random_state, low=0)
    if method in BETTING_METHODS:
        check_memory("grid", owner, grid, _work_bytes(grid, rows, keep_wealth))


def _bounds(bounds: Any, owner: str) -> tuple[float, float]:
    pair = check_array("bounds", owner, bounds, shape=(2,))
    a, b = float(pair[0]), float(pair[1])
    if not a < b:
        raise param_error("bounds", owner, "a pair (a, b) with a < b", tuple(bounds))
    return a, b


# ---------------------------------------------------------------------------- core
def _grid(grid: int) -> np.ndarray:
    return np.arange(grid + 1) / grid


def _lcb(
    X: np.ndarray,
    delta: float,
    method: str,
    grid: int,
    c: float,
    rng: np.random.Generator | None,
    two_sided: bool = False,
    keep_wealth: bool = False,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Lower bounds (R,) of validated X (R, n) in [0, 1]; the final log-wealth (R, G + 1) too
    when ``keep_wealth``. ``rng`` None means the deterministic threshold."""
    R = X.shape[0]
    if method in CLOSED_FORMS:
        return CLOSED_FORMS[method](X, delta), None
    L = np.log(1.0 / delta)
    thr = L + np.log(1.0 - rng.random(R)) if rng is not None else np.full(R, L)
    ms = _grid(grid)
    if not keep_wealth:  # only the smallest kept point matters: play the grid upwards
        rows = max(1, CHUNK_ELEMENTS // GRID_BLOCK)
        first = np.concatenate(
            [
                first_kept(
                    X[s : s + rows],
                    ms,
                    L,
                    thr[s : s + rows],
                    method,
                    c=c,
                    two_sided=two_sided,
                    block=GRID_BLOCK,
                )
                for s in range(0, R, rows)
            ]
        )
        lcb = np.maximum(first / grid - 1.0 / grid, 0.0)
        return np.where(first < ms.size, lcb, 1.0), None
    rows = max(1, CHUNK_ELEMENTS // ms.size)
    lcb = np.empty(R)
    wealth = np.empty((R, ms.size))
    for s in range(0, R, rows):
        lw = final_log_wealth(X[s : s + rows], ms, L, method, c=c, two_sided=two_sided)
        lcb[s : s + rows] = invert(lw, thr[s : s + rows], grid)
        wealth[s : s + rows] = lw
    return lcb, wealth


def _generator(randomize: bool, random_state: RandomState) -> np.random.Generator | None:
    if not randomize:
        return None
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


# ---------------------------------------------------------------------------- public API
def _one_sided(
    owner: str,
    x: Any,
    delta: Any,
    method: str,
    grid: Any,
    c: Any,
    randomize: Any,
    random_state: Any,
    ndim: int,
) -> np.ndarray:
    """Validated lower bounds (R,) of the rows of x (one row when ``ndim`` is 1)."""
    X = unit_sample("X" if ndim == 2 else "x", owner, x, ndim)
    X = X[None, :] if ndim == 1 else X
    delta = _level("delta", owner, delta)
    _options(owner, method, grid, c, randomize, random_state, X.shape[0])
    if method == "clopper_pearson":
        binary_only("X" if ndim == 2 else "x", owner, X)
    return _lcb(X, delta, method, grid, c, _generator(randomize, random_state))[0]


def lower_bound(
    x: Any,
    delta: float = 0.05,
    method: str = "star",
    *,
    grid: int = 10_000,
    c: float = 1.0,
    randomize: bool = True,
    random_state: RandomState = None,
) -> float:
    """Lower confidence bound at level :math:`\\delta` for the mean of x (n,) in [0, 1].

    :math:`P(\\mathrm{LCB} \\le \\mu) \\ge 1 - \\delta` for i.i.d. data (every method but
    ``t_test``). Betting methods test :math:`H_0: \\mu \\le m` on the grid
    :math:`m = k/G`, ``G = grid``, and return
    :math:`\\max(0, \\min\\{m: \\log W_n(m) < \\log(U/\\delta)\\} - 1/G)`; ``randomize`` draws
    :math:`U \\sim \\mathrm{Unif}(0, 1]` from ``random_state`` (else :math:`U = 1`). ``c`` scales
    the variance-safety term :math:`c(m+\\varepsilon)n/(t-1)^2` of ``star`` and ``bets``.
    Cost O(n G) time and O(G) memory; a ``grid`` whose arrays would not fit in memory is refused
    before any work. NaN or inf in x is refused (ValueError).
    """
    return float(
        _one_sided("lower_bound", x, delta, method, grid, c, randomize, random_state, 1)[0]
    )


def upper_bound(
    x: Any,
    delta: float = 0.05,
    method: str = "star",
    *,
    grid: int = 10_000,
    c: float = 1.0,
    randomize: bool = True,
    random_state: RandomState = None,
) -> float:
    """Upper confidence bound :math:`\\mathrm{UCB}(x) = 1 - \\mathrm{LCB}(1 - x)` at level
    :math:`\\delta`; the arguments are those of :func:`lower_bound`. NaN or inf in x is
    refused (ValueError)."""
    owner = "upper_bound"
    X = unit_sample("x", owner, x, 1)
    return 1.0 - float(
        _one_sided(owner, 1.0 - X, delta, method, grid, c, randomize, random_state, 1)[0]
    )


def confidence_interval(
    x: Any,
    delta: float = 0.05,
    method: str = "star",
    *,
    grid: int = 10_000,
    c: float = 1.0,
    randomize: bool = True,
    random_state: RandomState = None,
) -> tuple[float, float]:
    """Two-sided interval :math:`[\\mathrm{LCB}_{\\delta/2}, \\mathrm{UCB}_{\\delta/2}]`
    covering :math:`\\mu` with probability :math:`\\ge 1-\\delta` for x (n,) in [0, 1]; the
    keywords are those of :func:`lower_bound`. ``hedged`` uses WSR's two-sided hedged capital
    :math:`\\max(K^+/2, K^-/2)`, i.e. the one-sided tests at :math:`\\delta/2` with the cap
    :math:`1/(2m)`. NaN or inf in x is refused (ValueError)."""
    lo, hi = _interval(
        "confidence_interval",
        "delta",
        x,
        delta,
        method,
        ndim=1,
        grid=grid,
        c=c,
        randomize=randomize,
        random_state=random_state,
    )
    return float(lo), float(hi)


def lower_bound_batch(
    X: Any,
    delta: float = 0.05,
    method: str = "star",
    *,
    grid: int = 10_000,
    c: float = 1.0,
    randomize: bool = True,
    random_state: RandomState = None,
) -> np.ndarray:
    """Lower bounds (R,) for the R samples in the rows of X (R, n), vectorised over rows and
    grid (rows chunked so one state array holds at most 2**15 values). Row i equals
    :func:`lower_bound` on ``X[i]`` when the thresholds :math:`U_i` come from the same
    generator stream (``rng.random(R)``). NaN or inf in X is refused (ValueError)."""
    return _one_sided("lower_bound_batch", X, delta, method, grid, c, randomize, random_state, 2)


def betting_ci(
    x: Any,
    alpha: float = 0.05,
    method: str = "star",
    *,
    alternative: str = "two-sided",
    bounds: tuple[float, float] = (0.0, 1.0),
    grid: int = 10_000,
    c: float = 1.0,
    randomize: bool = True,
    random_state: RandomState = None,
) -> tuple[Any, Any]:
    """Confidence interval(s) ``(lo, hi)`` at level :math:`1-\\alpha` for the mean of data in
    ``bounds = (a, b)``; x is one sample (n,) (floats returned) or R samples (R, n) (arrays).

    ``two-sided``: :math:`[\\mathrm{LCB}_{\\alpha/2}, \\mathrm{UCB}_{\\alpha/2}]`; ``greater``:
    :math:`[\\mathrm{LCB}_\\alpha, b]`; ``less``: :math:`[a, \\mathrm{UCB}_\\alpha]`. Data are
    mapped to [0, 1] by :math:`(x-a)/(b-a)` and the bounds mapped back. The lower side's
    thresholds are drawn before the upper side's. NaN or inf in x is refused (ValueError).
    """
    return _interval(
        "betting_ci",
        "alpha",
        x,
        alpha,
        method,
        ndim=(1, 2),
        alternative=alternative,
        bounds=bounds,
        grid=grid,
        c=c,
        randomize=randomize,
        random_state=random_state,
    )


def _interval(
    owner: str,
    level_name: str,
    x: Any,
    alpha: Any,
    method: str,
    *,
    ndim: int | tuple[int, ...],
    alternative: str = "two-sided",
    bounds: Any = (0.0, 1.0),
    grid: Any = 10_000,
    c: Any = 1.0,
    randomize: Any = True,
    random_state: Any = None,
) -> tuple[Any, Any]:
    a, b = _bounds(bounds, owner)
    X = unit_sample("x", owner, x, ndim, (a, b))
    single = X.ndim == 1
    X = np.atleast_2d(X)
    alpha = _level(level_name, owner, alpha)
    check_choice("alternative", owner, alternative, ALTERNATIVES)
    _options(owner, method, grid, c, randomize, random_state, X.shape[0])
    if method == "clopper_pearson":
        binary_only("x", owner, X)
    rng = _generator(randomize, random_state)
    two = alternative == "two-sided"
    level = alpha / 2 if two else alpha
    R = X.shape[0]
    lo = hi = None
    if alternative != "less":
        lo = _lcb(X, level, method, grid, c, rng, two_sided=two)[0]
    if alternative != "greater":
        hi = 1.0 - _lcb(1.0 - X, level, method, grid, c, rng, two_sided=two)[0]
    lo = a + (b - a) * (lo if lo is not None else np.zeros(R))
    hi = a + (b - a) * (hi if hi is not None else np.ones(R))
    if single:
        return float(lo[0]), float(hi[0])
    return lo, hi


def _trace_inputs(owner: str, x: Any, ms: Any, delta: Any, method: str, c: Any):
    X = unit_sample("x", owner, x, 1)
    grid = unit_sample("ms", owner, ms, 1)
    delta = _level("delta", owner, delta)
    check_choice("method", owner, method, BETTING_METHODS)
    check_real("c", owner, c, low=0, low_open=True)
    # the bets and the log-wealth trajectories: two (n + 1) x len(ms) float64 arrays, and the state
    check_memory("ms", owner, ms, 8.0 * (2 * (X.size + 1) + STATE_ARRAYS) * grid.size)
    return X, grid, float(np.log(1.0 / delta))


def log_wealth(
    x: Any, ms: Any, delta: float = 0.05, method: str = "star", *, c: float = 1.0
) -> np.ndarray:
    """Log-wealth trajectories :math:`\\log W_t(m)`, t = 0..n, of the tests of
    :math:`H_0: \\mu \\le m` for each m in ``ms``: shape (n + 1, len(ms)), row 0 is 0.
    ``method`` is one of the betting methods. NaN or inf in x or ms is refused (ValueError)."""
    X, grid, log_inv_delta = _trace_inputs("log_wealth", x, ms, delta, method, c)
    return trace(X, grid, log_inv_delta, method, c=c)[1]


def bet_sequence(
    x: Any, ms: Any, delta: float = 0.05, method: str = "star", *, c: float = 1.0
) -> np.ndarray:
    """The bets :math:`\\lambda_t(m)`, t = 1..n, for each m in ``ms``: shape (n, len(ms)).
    Row t - 1 depends on :math:`x_1..x_{t-1}` only (predictability). NaN or inf in x or ms is
    refused (ValueError)."""
    X, grid, log_inv_delta = _trace_inputs("bet_sequence", x, ms, delta, method, c)
    return trace(X, grid, log_inv_delta, method, c=c)[0]


class BettingCI:
    """Estimator of a confidence interval for the mean of data in ``bounds`` (fit/attributes).

    Parameters are those of :func:`betting_ci` (``delta`` is the miss probability
    :math:`\\alpha`); they are checked by :meth:`fit`. After :meth:`fit`:

    - ``lower_``, ``upper_``: the bounds (``lower_ = a`` for ``less``, ``upper_ = b`` for
      ``greater``); ``interval_ = (lower_, upper_)``.
    - ``grid_``: the candidate means :math:`a + (b-a)k/G`, shape (G + 1,).
    - ``log_wealth_``: (G + 1,) final log-wealth at each candidate mean: of the test of
      :math:`\\mu \\le m` (``greater``), of :math:`\\mu \\ge m` (``less``), the larger of the
      two at :math:`\\delta/2` each (``two-sided``); None for the closed-form methods.

    NaN or inf in the data is refused (ValueError).

    >>> import numpy as np
    >>> x = np.random.default_rng(0).beta(2, 5, 200)
    >>> est = BettingCI(delta=0.05, grid=1000, random_state=0).fit(x)
    >>> bool(est.lower_ < x.mean() < est.upper_)
    True
    """

    def __init__(
        self,
        method: str = "star",
        delta: float = 0.05,
        alternative: str = "two-sided",
        bounds: tuple[float, float] = (0.0, 1.0),
        grid: int = 10_000,
        c: float = 1.0,
        randomize: bool = True,
        random_state: RandomState = None,
    ) -> None:
        self.method = method
        self.delta = delta
        self.alternative = alternative
        self.bounds = bounds
        self.grid = grid
        self.c = c
        self.randomize = randomize
        self.random_state = random_state

    def fit(self, x: Any) -> BettingCI:
        """Compute the interval for the sample x (n,); return self."""
        owner = "BettingCI"
        a, b = _bounds(self.bounds, owner)
        X = unit_sample("x", owner, x, 1, (a, b))[None, :]
        delta = _level("delta", owner, self.delta)
        check_choice("alternative", owner, self.alternative, ALTERNATIVES)
        _options(owner, self.method, self.grid, self.c, self.randomize, self.random_state, 1, True)
        if self.method == "clopper_pearson":
            binary_only("x", owner, X)
        rng = _generator(self.randomize, self.random_state)
        two = self.alternative == "two-sided"
        level = delta / 2 if two else delta
        args = (self.method, self.grid, self.c, rng)
        lo, hi, wealth = 0.0, 1.0, []
        if self.alternative != "less":
            lcb, w = _lcb(X, level, *args, two_sided=two, keep_wealth=True)
            lo = float(lcb[0])
            wealth.append(w)
        if self.alternative != "greater":
            lcb, w = _lcb(1.0 - X, level, *args, two_sided=two, keep_wealth=True)
            hi = 1.0 - float(lcb[0])
            wealth.append(None if w is None else w[:, ::-1])
        self.lower_ = a + (b - a) * lo
        self.upper_ = a + (b - a) * hi
        self.interval_ = (self.lower_, self.upper_)
        self.grid_ = a + (b - a) * _grid(self.grid)
        self.log_wealth_ = None if wealth[0] is None else np.maximum.reduce(wealth)[0]
        return self

    def __repr__(self) -> str:
        return (
            f"BettingCI(method={self.method!r}, delta={self.delta!r}, "
            f"alternative={self.alternative!r}, bounds={self.bounds!r}, grid={self.grid!r}, "
            f"c={self.c!r}, randomize={self.randomize!r}, random_state={self.random_state!r})"
        )
