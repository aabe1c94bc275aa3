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

import numbers
from typing import Any

import numpy as np

from bettingci.baselines import CLOSED_FORMS
from bettingci.betting import BETTING_METHODS, final_log_wealth, invert, trace
from paperkit import Described, check_choice, param_error

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

RandomState = int | np.random.Generator | None


# ---------------------------------------------------------------------------- validation
def _sample(x: Any, owner: str, ndim: tuple[int, ...], bounds: tuple[float, float]) -> np.ndarray:
    """x as float64 rescaled from ``bounds`` to [0, 1], after the type and value checks."""
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        got = Described(f"an array of dtype {arr.dtype}")
        raise param_error("x", owner, "an array of real numbers", got, cls=TypeError)
    if arr.ndim not in ndim:
        expected = " or ".join(f"{d}-D" for d in ndim)
        raise param_error("x", owner, f"a {expected} array", Described(f"shape {arr.shape}"))
    if arr.size == 0 or arr.shape[-1] == 0:
        raise param_error("x", owner, "a non-empty sample", Described(f"shape {arr.shape}"))
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        got = Described(f"{int((~np.isfinite(arr)).sum())} NaN or infinite values")
        raise param_error("x", owner, "finite", got)
    a, b = bounds
    if arr.min() < a or arr.max() > b:
        got = Described(f"values in [{arr.min():.6g}, {arr.max():.6g}]")
        raise param_error("x", owner, f"within the bounds [{a:g}, {b:g}]", got)
    if (a, b) != (0.0, 1.0):
        arr = np.clip((arr - a) / (b - a), 0.0, 1.0)
    return arr


def _level(delta: Any, owner: str, name: str = "delta") -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise param_error(name, owner, "a number in (0, 1)", delta, cls=TypeError)
    if not 0.0 < float(delta) < 1.0:
        raise param_error(name, owner, "in the open interval (0, 1)", delta)
    return float(delta)


def _check_c(c: Any, owner: str) -> None:
    if isinstance(c, bool) or not isinstance(c, numbers.Real):
        raise param_error("c", owner, "a positive number", c, cls=TypeError)
    if not c > 0 or not np.isfinite(c):
        raise param_error("c", owner, "a positive number", c)


def _options(owner: str, method: str, grid: Any, c: Any, random_state: Any) -> None:
    check_choice("method", owner, method, METHODS)
    if isinstance(grid, bool) or not isinstance(grid, numbers.Integral):
        raise param_error("grid", owner, "an integer >= 10", grid, cls=TypeError)
    if grid < 10:
        raise param_error("grid", owner, "an integer >= 10", grid)
    _check_c(c, owner)
    expected = "None, a non-negative integer or a numpy Generator"
    if random_state is not None and not isinstance(
        random_state, (numbers.Integral, np.random.Generator)
    ):
        got = Described(f"an object of type {type(random_state).__name__}")
        raise param_error("random_state", owner, expected, got, cls=TypeError)
    if isinstance(random_state, numbers.Integral) and random_state < 0:
        raise param_error("random_state", owner, expected, random_state)


def _bounds(bounds: Any, owner: str) -> tuple[float, float]:
    try:
        a, b = (float(v) for v in bounds)
    except (TypeError, ValueError):
        raise param_error("bounds", owner, "a pair (a, b) of numbers", bounds) from None
    if not (np.isfinite(a) and np.isfinite(b) and a < b):
        raise param_error("bounds", owner, "a pair of finite numbers a < b", bounds)
    return a, b


def _binary(X: np.ndarray, method: str, owner: str) -> None:
    if method == "clopper_pearson" and not np.isin(X, (0.0, 1.0)).all():
        got = Described("non-binary values")
        raise param_error("x", owner, "binary (0 or 1) for method 'clopper_pearson'", got)


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
    rows = max(1, CHUNK_ELEMENTS // ms.size)
    lcb = np.empty(R)
    wealth = np.empty((R, ms.size)) if keep_wealth else None
    for s in range(0, R, rows):
        lw = final_log_wealth(X[s : s + rows], ms, L, method, c=c, two_sided=two_sided)
        lcb[s : s + rows] = invert(lw, thr[s : s + rows], grid)
        if keep_wealth:
            wealth[s : s + rows] = lw
    return lcb, wealth


def _generator(randomize: bool, random_state: RandomState) -> np.random.Generator | None:
    if not randomize:
        return None
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


# ---------------------------------------------------------------------------- public API
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
    Cost O(n G).
    """
    owner = "lower_bound"
    X = _sample(x, owner, (1,), (0.0, 1.0))[None, :]
    delta = _level(delta, owner)
    _options(owner, method, grid, c, random_state)
    _binary(X, method, owner)
    return float(_lcb(X, delta, method, grid, c, _generator(randomize, random_state))[0][0])


def upper_bound(x: Any, delta: float = 0.05, method: str = "star", **kw: Any) -> float:
    """Upper confidence bound :math:`\\mathrm{UCB}(x) = 1 - \\mathrm{LCB}(1 - x)` at level
    :math:`\\delta`; keywords as :func:`lower_bound`."""
    X = _sample(x, "upper_bound", (1,), (0.0, 1.0))
    return 1.0 - lower_bound(1.0 - X, delta, method, **kw)


def confidence_interval(
    x: Any, delta: float = 0.05, method: str = "star", **kw: Any
) -> tuple[float, float]:
    """Two-sided interval :math:`[\\mathrm{LCB}_{\\delta/2}, \\mathrm{UCB}_{\\delta/2}]`
    covering :math:`\\mu` with probability :math:`\\ge 1-\\delta`; keywords as
    :func:`lower_bound`. ``hedged`` uses WSR's two-sided hedged capital
    :math:`\\max(K^+/2, K^-/2)`, i.e. the one-sided tests at :math:`\\delta/2` with the cap
    :math:`1/(2m)`."""
    if np.ndim(x) != 1:
        got = Described(f"shape {np.shape(x)}")
        raise param_error("x", "confidence_interval", "a 1-D array", got)
    lo, hi = _interval("confidence_interval", "delta", x, delta, method, **kw)
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
    generator stream (``rng.random(R)``)."""
    owner = "lower_bound_batch"
    X = _sample(X, owner, (2,), (0.0, 1.0))
    delta = _level(delta, owner)
    _options(owner, method, grid, c, random_state)
    _binary(X, method, owner)
    return _lcb(X, delta, method, grid, c, _generator(randomize, random_state))[0]


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
    thresholds are drawn before the upper side's.
    """
    return _interval(
        "betting_ci",
        "alpha",
        x,
        alpha,
        method,
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
    alpha: float,
    method: str,
    *,
    alternative: str = "two-sided",
    bounds: tuple[float, float] = (0.0, 1.0),
    grid: int = 10_000,
    c: float = 1.0,
    randomize: bool = True,
    random_state: RandomState = None,
) -> tuple[Any, Any]:
    a, b = _bounds(bounds, owner)
    X = _sample(x, owner, (1, 2), (a, b))
    single = X.ndim == 1
    X = np.atleast_2d(X)
    alpha = _level(alpha, owner, level_name)
    check_choice("alternative", owner, alternative, ALTERNATIVES)
    _options(owner, method, grid, c, random_state)
    _binary(X, method, owner)
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


def log_wealth(
    x: Any, ms: Any, delta: float = 0.05, method: str = "star", *, c: float = 1.0
) -> np.ndarray:
    """Log-wealth trajectories :math:`\\log W_t(m)`, t = 0..n, of the tests of
    :math:`H_0: \\mu \\le m` for each m in ``ms``: shape (n + 1, len(ms)), row 0 is 0.
    ``method`` is one of the betting methods."""
    owner = "log_wealth"
    X = _sample(x, owner, (1,), (0.0, 1.0))
    grid = _sample(ms, owner, (1,), (0.0, 1.0))
    delta = _level(delta, owner)
    check_choice("method", owner, method, BETTING_METHODS)
    _check_c(c, owner)
    return trace(X, grid, np.log(1.0 / delta), method, c=c)[1]


def bet_sequence(
    x: Any, ms: Any, delta: float = 0.05, method: str = "star", *, c: float = 1.0
) -> np.ndarray:
    """The bets :math:`\\lambda_t(m)`, t = 1..n, for each m in ``ms``: shape (n, len(ms)).
    Row t - 1 depends on :math:`x_1..x_{t-1}` only (predictability)."""
    owner = "bet_sequence"
    X = _sample(x, owner, (1,), (0.0, 1.0))
    grid = _sample(ms, owner, (1,), (0.0, 1.0))
    delta = _level(delta, owner)
    check_choice("method", owner, method, BETTING_METHODS)
    _check_c(c, owner)
    return trace(X, grid, np.log(1.0 / delta), method, c=c)[0]


class BettingCI:
    """Estimator of a confidence interval for the mean of data in ``bounds`` (fit/attributes).

    Parameters are those of :func:`betting_ci` (``delta`` is the miss probability
    :math:`\\alpha`). After :meth:`fit`:

    - ``lower_``, ``upper_``: the bounds (``lower_ = a`` for ``less``, ``upper_ = b`` for
      ``greater``); ``interval_ = (lower_, upper_)``.
    - ``grid_``: the candidate means :math:`a + (b-a)k/G`, shape (G + 1,).
    - ``log_wealth_``: (G + 1,) final log-wealth at each candidate mean: of the test of
      :math:`\\mu \\le m` (``greater``), of :math:`\\mu \\ge m` (``less``), the larger of the
      two at :math:`\\delta/2` each (``two-sided``); None for the closed-form methods.

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
        X = _sample(x, owner, (1,), (a, b))[None, :]
        delta = _level(self.delta, owner)
        check_choice("alternative", owner, self.alternative, ALTERNATIVES)
        _options(owner, self.method, self.grid, self.c, self.random_state)
        _binary(X, self.method, owner)
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
