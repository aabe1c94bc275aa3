r"""The claimant's audit: a scaling law of the frontier fitted on 7 small models, and the LDA
test (the paper's procedure).

Scaling law (s: model scale, here the training-set size):

.. math::  L_0(s) = a_L + b_L s^{-\beta_L},\quad
   \Delta_0(s) = a_\Delta + b_\Delta s^{-\beta_\Delta},\quad
   PF(\delta; s) = L_0(s) + \frac{(\Delta_0(s) - \delta)_+^2}{2V}.

Protocol: 4 unconstrained small models at scales s_1 < ... < s_4 give L_0 and Delta_0 (power
laws; when the bootstrap interval of b_Delta holds 0 the fit is ill-conditioned and Delta_0(s)
is the mean of the small models, said in ``D0_mode_``); 3 DP-penalised models at s_4, with
lambda_k = sign(D) c_k Delta_0 / V_F (c_k = 0.25, 0.5, 0.75: by the law the penalty mu cuts the
gap by about mu V), fit V by least squares on L_k - L_u = (Delta_u - Delta_k)^2 / (2V).

Options (variants of the protocol, all off by default): ``repeats`` trains every small model on
that many independent subsets and seeds and fits the law on the means; ``v_per_scale`` trains
the penalised models at every scale and fits :math:`\log V(s) = a_V + b_V s^{-\beta_V}` (so
V > 0); ``L0_floor`` keeps the asymptote a_L at or above a known lower bound on the Bayes risk
(L_0(s) = L(eta_hat_s) = H(Y | X, A) + E[KL(eta || eta_hat_s)] >= H(Y | X, A) at every scale, so
the limit a_L obeys the same bound).

LDA test for a contested model at scale s_c with audited (L_c, Delta_c): the best gap reachable
within the loss tolerance tau is

.. math::  \delta^* = \Delta_0(s_c) - \sqrt{2V \max(L_c + \tau - L_0(s_c), 0)},

and an LDA is declared when :math:`\delta^* \le \Delta_c - \varepsilon`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ldafront._checks import check_features, check_groups, check_labels, check_scores, dp_weights
from ldafront.metrics import binary_entropy
from ldafront.postprocess import optimal_fair_postprocess
from ldafront.powerlaw import check_scales, fit_power_law, power_law, profile_fit
from ldafront.training import MODELS, train_dp_penalized
from paperkit import (
    check_array,
    check_choice,
    check_int,
    check_real,
    param_error,
)

__all__ = ["ScalingLawLDA", "fit_v"]

_OWNER = "ScalingLawLDA"


def fit_v(anchor: dict[str, float], penalized: list[dict[str, float]]) -> float | None:
    r"""V by least squares on the penalised models' residuals about the unconstrained one:
    :math:`L_k - L_u = c\,(\Delta_u - \Delta_k)^2`, :math:`V = 1/(2c)`; None when c <= 0.

    ``anchor`` and each of ``penalized`` hold ``"loss"`` and ``"dp"`` (no checks: internal).

    >>> round(fit_v({"loss": 0.4, "dp": 0.2}, [{"loss": 0.41, "dp": 0.1}]), 12)
    0.5
    """
    u = np.array([(anchor["dp"] - r["dp"]) ** 2 for r in penalized])
    res = np.array([r["loss"] - anchor["loss"] for r in penalized])
    slope = float(u @ res / (u @ u)) if u @ u > 0 else 0.0
    return 1.0 / (2.0 * slope) if slope > 0 else None


def _loss(f: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-row BCE."""
    return -y * np.log(f) - (1.0 - y) * np.log1p(-f)


class ScalingLawLDA:
    r"""Fit the frontier's scaling law on small models and test for a less discriminatory
    alternative (module docstring for the math).

    Args:
        n_small_unconstrained: unconstrained small models, one per scale (default 4).
        n_small_penalized: DP-penalised models at the largest small scale (default 3; their
            cuts are spread evenly in (0, 1): 25/50/75 % for 3).
        tau: loss tolerance in nats (default 0.002).
        eps: least meaningful DP reduction (default 0.02).
        hidden, epochs, lr, weight_decay: the small models' training (see
            :func:`ldafront.train_dp_penalized`).
        holdout: fraction of the data held out to audit the small models when ``fit`` gets no
            ``eval_data``.
        n_boot: bootstrap resamples of the audit rows for the Delta_0 conditioning check.
        repeats: independent training subsets and seeds per small model; the law is fitted on
            the mean audited (L, Delta) of each configuration (default 1: the paper's 7 models).
        v_per_scale: train the penalised models at every scale and fit V(s) as a power law of
            log V (default False: V constant, from the largest small scale).
        L0_floor: a lower bound on the asymptote a_L of L_0(s) (a known lower bound on the
            Bayes risk; default None: unconstrained).
        random_state: seeds the subsampling, the initialisations and the bootstrap.

    NaN and inf are refused everywhere.

    >>> from ldafront import SyntheticLDA
    >>> X, y, A, _ = SyntheticLDA.make(0).sample(3000, 1)
    >>> aud = ScalingLawLDA(epochs=60).fit(X, y, A, scales=[200, 400, 800, 1600],
    ...                                   model="logistic")
    >>> curve = aud.predict_frontier(16000, [0.0, 0.1])
    >>> bool(curve[0] > curve[1])
    True
    """

    def __init__(
        self,
        n_small_unconstrained: int = 4,
        n_small_penalized: int = 3,
        tau: float = 0.002,
        eps: float = 0.02,
        *,
        hidden: int = 64,
        epochs: int = 300,
        lr: float = 1e-2,
        weight_decay: float = 0.0,
        holdout: float = 0.3,
        n_boot: int = 200,
        repeats: int = 1,
        v_per_scale: bool = False,
        L0_floor: float | None = None,
        random_state: int = 0,
    ) -> None:
        self.n_small_unconstrained = check_int(
            "n_small_unconstrained", _OWNER, n_small_unconstrained, low=3, high=100
        )
        self.n_small_penalized = check_int(
            "n_small_penalized", _OWNER, n_small_penalized, low=1, high=100
        )
        self.tau = check_real("tau", _OWNER, tau, low=0.0)
        self.eps = check_real("eps", _OWNER, eps, low=0.0, high=1.0)
        self.hidden = check_int("hidden", _OWNER, hidden, low=1, high=4096)
        self.epochs = check_int("epochs", _OWNER, epochs, low=1, high=100_000)
        self.lr = check_real("lr", _OWNER, lr, low=0.0, low_open=True, high=10.0)
        self.weight_decay = check_real("weight_decay", _OWNER, weight_decay, low=0.0)
        self.holdout = check_real(
            "holdout", _OWNER, holdout, low=0.0, high=1.0, low_open=True, high_open=True
        )
        self.n_boot = check_int("n_boot", _OWNER, n_boot, low=20, high=100_000)
        self.repeats = check_int("repeats", _OWNER, repeats, low=1, high=100)
        if not isinstance(v_per_scale, (bool, np.bool_)):
            raise param_error(
                "v_per_scale", _OWNER, "a bool", type(v_per_scale).__name__, cls=TypeError
            )
        self.v_per_scale = bool(v_per_scale)
        self.L0_floor = None if L0_floor is None else check_real("L0_floor", _OWNER, L0_floor)
        self.random_state = check_int("random_state", _OWNER, random_state, low=0)

    # -- fitting -------------------------------------------------------------------------------

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        A: np.ndarray,
        scales: Any = (250, 500, 1000, 2000),
        model: str = "mlp",
        *,
        eval_data: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    ) -> ScalingLawLDA:
        """Train the 4 + 3 small models on nested random subsets of (X (n, d), y (n,), A (n,))
        of the given sizes (with ``repeats`` > 1, again on fresh random subsets and seeds; with
        ``v_per_scale``, penalised models at every scale), audit them on ``eval_data = (X_e,
        y_e, A_e)`` (default: a held-out ``holdout`` fraction of the data) and fit the scaling
        law. Returns self.

        ``scales``: as many increasing training-set sizes as ``n_small_unconstrained`` (at
        least 3, positive, at most the training rows). ``model``: "logistic" or "mlp".
        """
        owner = "ScalingLawLDA.fit"
        dims: dict = {}
        X = check_features("X", owner, X, dims=dims)
        y = check_labels("y", owner, y, dims=dims)
        A = check_groups("A", owner, A, dims=dims)
        s = np.sort(check_scales(owner, scales))
        if s.size != self.n_small_unconstrained:
            raise param_error(
                "scales",
                owner,
                f"{self.n_small_unconstrained} scales (n_small_unconstrained)",
                s.tolist(),
            )
        if np.any(s != np.round(s)):
            raise param_error("scales", owner, "whole numbers of training rows", s.tolist())
        model = check_choice("model", owner, model, MODELS)
        rng = np.random.default_rng(self.random_state)
        if eval_data is None:
            order = rng.permutation(len(y))
            n_eval = max(1, int(round(self.holdout * len(y))))
            ev, tr = order[:n_eval], order[n_eval:]
            Xe, ye, Ae = X[ev], y[ev], A[ev]
            X, y, A = X[tr], y[tr], A[tr]
        else:
            if not isinstance(eval_data, (tuple, list)) or len(eval_data) != 3:
                raise param_error(
                    "eval_data", owner, "a tuple (X, y, A)", type(eval_data), cls=TypeError
                )
            edims: dict = {"d": dims["d"]}
            Xe = check_features("eval_data", owner, eval_data[0], dims=edims)
            ye = check_labels("eval_data", owner, eval_data[1], dims=edims)
            Ae = check_groups("eval_data", owner, eval_data[2], dims=edims)
            X, y, A = X[(order := rng.permutation(len(y)))], y[order], A[order]
        if s[-1] > len(y):
            raise param_error("scales", owner, f"at most the {len(y)} training rows", float(s[-1]))
        self.model_ = model
        self.scales_ = s
        self.H_ = binary_entropy(float(ye.mean()))
        self.small_ = []
        self.models_ = []
        we = dp_weights(Ae)
        scores = []
        cuts = np.arange(1, self.n_small_penalized + 1) / (self.n_small_penalized + 1)
        pen_scales = s if self.v_per_scale else s[-1:]
        for rep in range(self.repeats):
            rows = np.arange(len(y)) if rep == 0 else rng.permutation(len(y))
            seed = self.random_state + rep
            for scale in s.astype(int):
                sub = rows[:scale]
                f, seconds = self._train(X[sub], y[sub], A[sub], 0.0, Xe, Ae, seed)
                anchor = self._row(scale, 0.0, 0.0, rep, f, ye, we, "unconstrained", seconds)
                self.small_.append(anchor)
                scores.append(f)
                if scale not in pen_scales:
                    continue
                # penalised models, with lambda chosen to cut the gap by ~25/50/75 %
                for cut in cuts:
                    lam = float(
                        np.sign(anchor["signed_dp"]) * cut * anchor["dp"] / anchor["fisher"]
                    )
                    f, seconds = self._train(X[sub], y[sub], A[sub], lam, Xe, Ae, seed)
                    self.small_.append(
                        self._row(scale, lam, cut, rep, f, ye, we, "penalized", seconds)
                    )
                    scores.append(f)
        self.eval_scores_ = np.array(scores)  # (models, n_eval), in the order of small_
        self.train_seconds_ = float(sum(r["seconds"] for r in self.small_))
        self._fit_law(ye, we)
        return self

    def _train(self, X, y, A, lam, Xe, Ae, seed) -> tuple[np.ndarray, float]:
        fitted, stats = train_dp_penalized(
            X,
            y,
            A,
            lam,
            model=self.model_,
            hidden=self.hidden,
            epochs=self.epochs,
            lr=self.lr,
            weight_decay=self.weight_decay,
            seed=seed,
        )
        self.models_.append(fitted)
        return fitted.predict_proba(Xe, Ae), stats["seconds"]

    def _row(self, scale, lam, cut, rep, f, ye, we, kind, seconds) -> dict[str, Any]:
        signed = float(np.mean(we * f))
        return {
            "kind": kind,
            "scale": float(scale),
            "repeat": rep,
            "cut": float(cut),
            "lam": lam,
            "loss": float(np.mean(_loss(f, ye))),
            "dp": abs(signed),
            "signed_dp": signed,
            "fisher": float(np.mean(we**2 * f * (1 - f))),
            "seconds": seconds,
        }

    def _means(self, values: np.ndarray, scale: float, cut: float) -> float:
        """Mean of ``values`` (aligned with ``small_``) over the repeats of one configuration."""
        keep = [r["scale"] == scale and r["cut"] == cut for r in self.small_]
        return float(np.mean(np.asarray(values)[keep]))

    def _law_params(self, loss: np.ndarray, dp: np.ndarray) -> dict[str, Any]:
        """The scaling law's parameters from the small models' audited losses and gaps
        (arrays aligned with ``small_``): power laws of L_0 and Delta_0 on the per-scale means,
        the mean Delta_0, V at each scale with penalised models (None where the fit failed)
        and the largest scale's mean (L, Delta)."""
        s = self.scales_
        L_u = np.array([self._means(loss, x, 0.0) for x in s])
        D_u = np.array([self._means(dp, x, 0.0) for x in s])
        cuts = sorted({r["cut"] for r in self.small_} - {0.0})
        v_at = []
        for x in s if self.v_per_scale else s[-1:]:
            anchor = {"loss": self._means(loss, x, 0.0), "dp": self._means(dp, x, 0.0)}
            pen = [{"loss": self._means(loss, x, c), "dp": self._means(dp, x, c)} for c in cuts]
            v_at.append(fit_v(anchor, pen))
        return {
            "L": fit_power_law(s, L_u, self.L0_floor),
            "D": fit_power_law(s, D_u),
            "D_mean": float(D_u.mean()),
            "V_at": v_at,
            "L_small": float(L_u[-1]),
            "D_small": float(D_u[-1]),
        }

    def _evaluate(self, params: dict[str, Any], scale: float) -> tuple[float, float, float]:
        """(L0, Delta0, V) at ``scale`` from ``_law_params`` output, with the fitted choices
        (Delta_0's mode, V's model) of this audit."""
        L0 = float(power_law(scale, *params["L"]))
        if self.D0_mode_ == "power law":
            D0 = float(power_law(scale, *params["D"]))
        else:
            D0 = params["D_mean"]
        v_at = params["V_at"]
        if None in v_at:  # the penalised models traced no convex frontier
            V = self.V_fisher_
        elif self.v_per_scale:
            V = float(np.exp(power_law(scale, *fit_power_law(self.scales_, np.log(v_at)))))
        else:
            V = v_at[-1]
        return L0, min(max(D0, 0.0), 1.0), V

    def _fit_law(self, ye: np.ndarray, we: np.ndarray) -> None:
        s = self.scales_
        loss = np.array([r["loss"] for r in self.small_])
        dp = np.array([r["dp"] for r in self.small_])
        self.params_ = self._law_params(loss, dp)
        self.L_params_ = self.params_["L"]
        self.D_params_ = self.params_["D"]
        # conditioning of Delta_0's fit: bootstrap the audit rows, refit (the grid profile) on
        # the repeat-averaged scores, look at b_Delta
        kinds = np.array([r["kind"] for r in self.small_])
        scales = np.array([r["scale"] for r in self.small_])
        u_scores = np.array(
            [self.eval_scores_[(kinds == "unconstrained") & (scales == x)].mean(axis=0) for x in s]
        )
        rng = np.random.default_rng([self.random_state, 7])
        n = len(ye)
        b_boot = []
        for _ in range(self.n_boot):
            idx = rng.integers(0, n, n)
            w, g = we[idx], u_scores[:, idx]
            p1 = np.mean(w > 0)
            if p1 in (0.0, 1.0):
                continue
            wb = np.where(w > 0, 1 / p1, -1 / (1 - p1))
            b_boot.append(profile_fit(s, np.abs((wb * g).mean(axis=1)))[0][1])
        lo, hi = np.quantile(b_boot, [0.025, 0.975])
        self.D_b_interval_ = (float(lo), float(hi))
        self.D0_mode_ = "mean of small models" if lo <= 0.0 <= hi else "power law"
        self.D0_mean_ = self.params_["D_mean"]
        fisher = np.array([r["fisher"] for r in self.small_])
        self.V_fisher_ = self._means(fisher, s[-1], 0.0)
        self.V_at_ = self.params_["V_at"]
        if None in self.V_at_:
            self.V_mode_ = "Fisher term (fit failed)"
        else:
            self.V_mode_ = "power law of log V per scale" if self.v_per_scale else "penalized fit"
        self.V_ = self._evaluate(self.params_, s[-1])[2]

    def law_from_audit(self, scale: float, loss: Any, dp: Any) -> dict[str, float]:
        """The law at ``scale`` refitted on other audited losses and gaps of the same small
        models (``(len(small_),)`` each, e.g. on a bootstrap resample of the audit rows), with
        this fit's choices kept: dict ``L0``, ``D0``, ``V`` and ``L_small``, ``D_small`` (the
        largest scale's mean unconstrained loss and gap, the "no scaling" anchor)."""
        self._fitted("law_from_audit")
        owner = "ScalingLawLDA.law_from_audit"
        scale = check_real("scale", owner, scale, low=0.0, low_open=True)
        shape = (len(self.small_),)
        loss = check_array("loss", owner, loss, shape=shape).astype(float)
        dp = check_array("dp", owner, dp, shape=shape).astype(float)
        params = self._law_params(loss, dp)
        L0, D0, V = self._evaluate(params, scale)
        return {
            "L0": L0,
            "D0": D0,
            "V": V,
            "L_small": params["L_small"],
            "D_small": params["D_small"],
        }

    # -- prediction ----------------------------------------------------------------------------

    def _fitted(self, method: str) -> None:
        if not hasattr(self, "V_"):
            raise ValueError(
                f"The 'self' parameter of ScalingLawLDA.{method} must be a fitted ScalingLawLDA "
                "(call fit first). Got an unfitted ScalingLawLDA instead."
            )

    def law_at(self, scale: float) -> tuple[float, float, float]:
        """``(L0(s), Delta0(s), V(s))`` of the scaling law at scale ``s`` (> 0); V(s) is the
        constant V unless ``v_per_scale``."""
        self._fitted("law_at")
        scale = check_real("scale", "ScalingLawLDA.law_at", scale, low=0.0, low_open=True)
        return self._evaluate(self.params_, scale)

    def predict_frontier(self, scale: float, deltas: Any) -> np.ndarray:
        r"""PF(delta; s) = L0(s) + (Delta0(s) - delta)_+^2 / (2V(s)) at each delta, ``(k,)``."""
        self._fitted("predict_frontier")
        owner = "ScalingLawLDA.predict_frontier"
        scale = check_real("scale", owner, scale, low=0.0, low_open=True)
        grid = check_array("deltas", owner, deltas, ndim=1).astype(float)
        if grid.min() < 0:
            raise param_error("deltas", owner, "nonnegative", float(grid.min()))
        L0, D0, V = self.law_at(scale)
        return L0 + np.clip(D0 - grid, 0.0, None) ** 2 / (2.0 * V)

    def small_frontier(self, deltas: Any) -> np.ndarray:
        """The "no scaling" baseline: the law with the largest small scale's own measured
        (L_u, Delta_u) and V (means over the repeats), used as-is at any scale, ``(k,)``."""
        self._fitted("small_frontier")
        grid = check_array("deltas", "ScalingLawLDA.small_frontier", deltas, ndim=1)
        grid = grid.astype(float)
        if grid.min() < 0:
            raise param_error(
                "deltas", "ScalingLawLDA.small_frontier", "nonnegative", float(grid.min())
            )
        L_u, D_u = self.params_["L_small"], self.params_["D_small"]
        return L_u + np.clip(D_u - grid, 0.0, None) ** 2 / (2.0 * self.V_)

    def lda_test(
        self,
        scale_c: float,
        L_c: float,
        D_c: float,
        *,
        scores: np.ndarray | None = None,
        y: np.ndarray | None = None,
        A: np.ndarray | None = None,
    ) -> dict[str, Any]:
        r"""Does a less discriminatory alternative likely exist for the contested model?

        Args:
            scale_c: the contested model's scale (> 0).
            L_c, D_c: its audited loss and DP gap (nonnegative).
            scores, y, A: with black-box access, its scores on the claimant's sample, the
                labels and groups there (all three, ``(n,)``): the constructive LDA is the
                post-processed model (:func:`ldafront.optimal_fair_postprocess`) at
                Delta_c - eps, with its audited loss increase.

        Returns:
            dict with ``exists`` (delta* <= D_c - eps), ``delta_star``, ``margin`` (D_c - eps -
            delta*; positive means an LDA), ``L0``, ``D0``, ``V`` at ``scale_c``, ``tau``,
            ``eps``; and ``constructive`` (a dict) when scores are given.
        """
        self._fitted("lda_test")
        owner = "ScalingLawLDA.lda_test"
        scale_c = check_real("scale_c", owner, scale_c, low=0.0, low_open=True)
        L_c = check_real("L_c", owner, L_c, low=0.0)
        D_c = check_real("D_c", owner, D_c, low=0.0, high=1.0)
        L0, D0, V = self.law_at(scale_c)
        delta_star = D0 - float(np.sqrt(2.0 * V * max(L_c + self.tau - L0, 0.0)))
        margin = D_c - self.eps - delta_star
        out: dict[str, Any] = {
            "exists": bool(margin >= 0.0),
            "delta_star": delta_star,
            "margin": margin,
            "L0": L0,
            "D0": D0,
            "V": V,
            "tau": self.tau,
            "eps": self.eps,
        }
        given = [v is not None for v in (scores, y, A)]
        if any(given) and not all(given):
            missing = ("scores", "y", "A")[given.index(False)]
            raise param_error(missing, owner, "given with the other two of scores, y, A", None)
        if all(given):
            dims: dict = {}
            f = check_scores("scores", owner, scores, dims=dims)
            labels = check_labels("y", owner, y, dims=dims)
            groups = check_groups("A", owner, A, dims=dims)
            gap = abs(float(np.mean(dp_weights(groups) * f)))
            target = max(gap - self.eps, 0.0)
            g = optimal_fair_postprocess(f, groups, target)
            increase = float(np.mean(_loss(g, labels)) - np.mean(_loss(f, labels)))
            out["constructive"] = {
                "delta": target,
                "loss": float(np.mean(_loss(g, labels))),
                "loss_increase": increase,
                "within_tau": bool(increase <= self.tau),
            }
        return out

    def summary(self) -> dict[str, Any]:
        """The fitted parameters as plain numbers (for reports)."""
        self._fitted("summary")
        aL, bL, betaL = self.L_params_
        aD, bD, betaD = self.D_params_
        return {
            "a_L": aL,
            "b_L": bL,
            "beta_L": betaL,
            "a_D": aD,
            "b_D": bD,
            "beta_D": betaD,
            "D0_mode": self.D0_mode_,
            "b_D_interval": list(self.D_b_interval_),
            "D0_mean": self.D0_mean_,
            "V": self.V_,
            "V_mode": self.V_mode_,
            "V_per_scale": [None if v is None else float(v) for v in self.V_at_],
            "repeats": self.repeats,
            "L0_floor": self.L0_floor,
            "V_fisher": self.V_fisher_,
            "train_seconds": self.train_seconds_,
        }
