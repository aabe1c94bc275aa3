"""Linear-optimization oracles over one action set A: Oracle(A, θ) = argmin_{a ∈ A} ⟨a, θ⟩.

The reduction of the paper (Sec. 3) touches an action set only through this oracle, so its cost
does not depend on the number of actions K = |A|. Three kinds of context are supported:

- ``"topk"``: a combinatorial set with stochastic availability. The context is a dict
  ``{"mask": (d,) bool, "k": int}``; its actions are the {0,1}^d vectors with exactly k ones, all
  on available items. The oracle picks the k available items with the smallest θ_i (ties by the
  lowest index).
- ``"finite"``: an explicit finite set, a ``(K_t, d)`` array of actions (rows); the oracle is the
  row of smallest ⟨a, θ⟩ (ties by the lowest row).
- a callable ``oracle(context, theta) -> (d,)`` supplied by the user (any context type).

:class:`Oracle` wraps one of them, counts calls (``n_calls``) and evaluates many directions over
many contexts at once (:meth:`Oracle.batch`), vectorized for ``"topk"``.
"""

from __future__ import annotations

import inspect
import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from paperkit import check_array, check_int, param_error

__all__ = ["ORACLES", "Oracle", "finite_oracle", "topk_oracle"]

#: The built-in oracle kinds.
ORACLES = ("topk", "finite")


def topk_oracle(context: dict, theta: np.ndarray) -> np.ndarray:
    """argmin over {a ∈ {0,1}^d : Σa = k, a ≤ mask} of ⟨a, θ⟩: the k available items of smallest
    θ_i, ties broken by the lowest index. NaN in ``theta`` is refused.

    >>> context = {"mask": np.array([True, False, True, True]), "k": 2}
    >>> topk_oracle(context, np.array([3.0, 0.0, 1.0, 2.0]))
    array([0., 0., 1., 1.])
    """
    mask, k = _check_topk(context, "topk_oracle", None)
    theta = check_array("theta", "topk_oracle", theta, shape=(mask.size,))
    return Oracle("topk")(context, theta)


def finite_oracle(context: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """argmin over the rows a of ``context`` (K, d) of ⟨a, θ⟩ (ties by the lowest row). NaN
    refused.

    >>> finite_oracle(np.array([[1., 0.], [0., 1.]]), np.array([0.5, -1.]))
    array([0., 1.])
    """
    A = check_array("context", "finite_oracle", context, ndim=2)
    theta = check_array("theta", "finite_oracle", theta, shape=(A.shape[1],))
    return Oracle("finite")(A, theta)


def _check_topk(context: Any, owner: str, d: int | None) -> tuple[np.ndarray, int]:
    if not isinstance(context, dict) or set(context) != {"mask", "k"}:
        raise param_error(
            "context",
            owner,
            'a dict {"mask": (d,) bool array, "k": int}',
            type(context).__name__,
            cls=TypeError,
        )
    mask = check_array("context", owner, context["mask"], ndim=1, kind="bool")
    if d is not None and mask.size != d:
        raise param_error("context", owner, f"a mask of length d={d}", f"length {mask.size}")
    k = check_int("context", owner, context["k"], low=1)
    if k > int(mask.sum()):
        raise param_error(
            "context",
            owner,
            f"at least k={k} available items (resample it)",
            f"{int(mask.sum())} available",
        )
    return mask, k


def _check_callable(fn: Callable, owner: str) -> None:
    try:
        sig = inspect.signature(fn)
        sig.bind(None, None)
    except (TypeError, ValueError) as exc:
        raise param_error(
            "oracle",
            owner,
            "'topk', 'finite' or a callable oracle(context, theta) -> (d,)",
            f"a callable that cannot be called as oracle(context, theta) ({exc})",
            cls=TypeError,
        ) from exc


class Oracle:
    """One linear-optimization oracle, with a call counter.

    Args:
        oracle: ``"topk"``, ``"finite"`` or a callable ``(context, theta) -> (d,)``.
        owner: the name used in error messages (the learner that holds the oracle).

    ``n_calls`` counts (context, θ) evaluations: one per :meth:`__call__`, ``M·N`` per
    :meth:`batch` of M directions over N contexts.
    """

    def __init__(self, oracle: str | Callable, owner: str = "Oracle") -> None:
        kind = oracle
        if callable(kind):
            _check_callable(kind, owner)
            self.kind, self.fn = "callable", kind
        elif isinstance(kind, str):
            from paperkit import check_choice

            self.kind, self.fn = check_choice("oracle", owner, kind, ORACLES), None
        else:
            raise param_error(
                "oracle",
                owner,
                "'topk', 'finite' or a callable",
                type(kind).__name__,
                cls=TypeError,
            )
        self.owner = owner
        self.n_calls = 0

    # -- contexts -------------------------------------------------------------------------------
    def check_context(self, context: Any, d: int) -> Any:
        """Validate a context of dimension ``d`` (ValueError/TypeError naming 'context')."""
        if self.kind == "topk":
            _check_topk(context, self.owner, d)
            return context
        if self.kind == "finite":
            return check_array("context", self.owner, context, shape=(None, d))
        if context is None:
            raise param_error("context", self.owner, "a context", None, cls=TypeError)
        return context

    def freeze(self, context: Any) -> Any:
        """A copy of a checked context that later changes to the caller's arrays cannot reach."""
        if self.kind == "topk":
            return {"mask": np.array(context["mask"], dtype=bool), "k": int(context["k"])}
        if self.kind == "finite":
            return np.array(context, dtype=float)
        return context

    def contains(self, context: Any, action: np.ndarray) -> bool:
        """Whether ``action`` is an action of ``context`` (callable oracles: always True, the
        set is unknown to us)."""
        if self.kind == "topk":
            ones = action == 1
            binary = np.all(ones | (action == 0))
            return bool(
                binary and ones.sum() == context["k"] and not np.any(ones & ~context["mask"])
            )
        if self.kind == "finite":
            return bool(np.any(np.all(np.asarray(context) == action, axis=1)))
        return True

    def actions(self, context: Any) -> np.ndarray:
        """Every action of ``context`` as a ``(K, d)`` array (K = C(n_avail, k) for ``"topk"``).
        This enumerates K: only the K-dependent baselines use it."""
        if self.kind == "topk":
            avail = np.flatnonzero(context["mask"])
            combos = np.array(list(itertools.combinations(avail, context["k"])))
            out = np.zeros((len(combos), context["mask"].size))
            np.put_along_axis(out, combos, 1.0, axis=1)
            return out
        if self.kind == "finite":
            return np.asarray(context, dtype=float)
        raise param_error(
            "oracle", self.owner, "'topk' or 'finite' (actions are enumerated)", "a callable"
        )

    # -- evaluation -----------------------------------------------------------------------------
    def __call__(self, context: Any, theta: np.ndarray) -> np.ndarray:
        """Oracle(context, θ) as a float ``(d,)`` array."""
        self.n_calls += 1
        if self.kind == "topk":
            return _topk_batch(context["mask"][None], np.array([context["k"]]), theta[None])[0, 0]
        if self.kind == "finite":
            A = np.asarray(context, dtype=float)
            return A[int(np.argmin(A @ theta))].copy()
        out = np.asarray(self.fn(context, theta), dtype=float)
        if out.shape != theta.shape:
            raise param_error(
                "oracle",
                self.owner,
                f"a callable returning shape {theta.shape}",
                f"shape {out.shape}",
            )
        return out

    def batch(self, contexts: Sequence[Any], thetas: np.ndarray) -> np.ndarray:
        """Oracle(A_n, θ_m) for every direction and context: ``(M, N, d)``."""
        M, N = thetas.shape[0], len(contexts)
        if self.kind == "topk":
            self.n_calls += M * N
            masks = np.stack([c["mask"] for c in contexts])
            ks = np.array([c["k"] for c in contexts])
            return _topk_batch(masks, ks, thetas)
        if self.kind == "finite":
            self.n_calls += M * N
            out = np.empty((M, N, thetas.shape[1]))
            for n, A in enumerate(contexts):
                A = np.asarray(A, dtype=float)
                out[:, n] = A[np.argmin(thetas @ A.T, axis=1)]
            return out
        return np.stack([np.stack([self(c, th) for c in contexts]) for th in thetas]).reshape(
            M, N, thetas.shape[1]
        )


def _topk_batch(masks: np.ndarray, ks: np.ndarray, thetas: np.ndarray) -> np.ndarray:
    """One-hot top-k of θ_m over the available items of every mask: ``(M, N, d)`` floats.

    k passes of a vectorized argmin (the first index on ties, so ties go to the lowest index);
    each chosen item is set to +inf before the next pass. Unavailable items start at +inf and are
    never chosen (k ≤ n_avail). Contexts with a smaller k stop choosing after their k-th pass.
    """
    vals = np.where(masks[None], thetas[:, None, :], np.inf)  # (M, N, d)
    out = np.zeros(vals.shape)
    for step in range(int(ks.max())):
        j = np.argmin(vals, axis=-1)[..., None]  # (M, N, 1)
        live = np.broadcast_to((step < ks)[None, :, None], j.shape).astype(float)
        np.put_along_axis(out, j, np.maximum(np.take_along_axis(out, j, -1), live), axis=-1)
        np.put_along_axis(vals, j, np.inf, axis=-1)
    return out
