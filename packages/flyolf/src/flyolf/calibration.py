r"""Calibration of the circuit's gains by bisection (the paper's matched-sparseness protocol).

* ``"w_pk"``: the PN -> KC weight so that the control circuit (no LI, no SFA) has the target
  coding level (25%) on clean odors;
* ``"li"``: the APL gain :math:`g_{LI}` that brings the coding level to ``target_coding`` (10%);
* ``"sfa"``: SFA cannot lower the coding level as defined (:math:`a_k = 0` until a KC's first
  spike, so every KC that fires in the control still fires once), so :math:`g_{SFA}` is set to
  match ``target_count``, the mean number of KC spikes per odor of the LI-only circuit:
  LI-only and SFA-only are compared at matched total activity.

Each objective is computed with one fixed PN-spike generator, so it is a deterministic and
monotone function of the gain; bisection runs on a log scale after bracketing.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from flyolf.config import CircuitConfig, check_config
from flyolf.odors import odor_prototypes
from flyolf.pn import check_rates
from paperkit import check_choice, check_int, check_real, param_error

__all__ = ["CALIBRATION_ODORS", "MECHANISMS", "calibrate", "calibration_odors"]

MECHANISMS = ("li", "sfa", "w_pk")
#: An adaptation increment so large that a KC fires at most once per odor.
SFA_CEILING = 1e6
#: Number of clean odors the default calibration set holds, and odors per shared background.
CALIBRATION_ODORS = 64
GROUP = 4


def calibration_odors(cfg: CircuitConfig, count: int = CALIBRATION_ODORS) -> torch.Tensor:
    """``count`` clean odors (Hz) of the task's kind, in groups of 4 that share a background
    (as a task's odors do; many backgrounds, so the coding level carries over to new tasks),
    from seeds no task uses (``cfg.seed * 10_000 + 1000 + group``).

    NaN policy: no tensor input.

    >>> tuple(calibration_odors(CircuitConfig(), 10).shape)
    (10, 50)
    """
    check_config(cfg, "calibration_odors")
    count = check_int("count", "calibration_odors", count, low=1, high=1_000_000)
    groups = -(-count // GROUP)
    base = cfg.seed * 10_000 + 1000
    odors = [odor_prototypes(GROUP, cfg.n_orn, seed=base + i) for i in range(groups)]
    return torch.cat(odors)[:count]


def _bisect(
    objective: Callable[[float], float], target: float, increasing: bool, start: float, iters: int
) -> float:
    """The x > 0 where the monotone objective crosses ``target`` (log-scale bisection)."""

    def above(x: float) -> bool:
        return (objective(x) >= target) == increasing

    lo, hi = start, start
    if above(start):
        while above(lo):
            lo /= 4
            if lo < 1e-12:
                return lo
    else:
        while not above(hi):
            hi *= 4
            if hi > 1e12:
                raise RuntimeError("calibration target out of reach")
    for _ in range(iters):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if above(mid) else (mid, hi)
    return math.sqrt(lo * hi)


def calibrate(
    cfg: CircuitConfig,
    odors: torch.Tensor | None = None,
    mechanism: str = "li",
    target_coding: float = 0.10,
    target_count: float | None = None,
    iters: int = 12,
) -> float:
    r"""The gain that meets the target on ``odors`` (see the module docstring).

    Args:
        cfg: the circuit; the other gain is kept at its value in ``cfg`` (``w_pk`` must be set
            for ``"li"`` and ``"sfa"``). Calibrate LI and SFA each alone, from the control.
        odors: clean ORN rates (B, n_orn) in Hz, at least 64 odors recommended; None: 64
            :func:`calibration_odors`.
        mechanism: ``"li"`` (``g_li`` to the coding level ``target_coding``), ``"sfa"``
            (``g_sfa`` to the mean KC spike count per odor ``target_count``) or ``"w_pk"``
            (``w_pk`` to the coding level ``target_coding``).
        iters: bisection steps after bracketing (relative precision :math:`4^{2^{-iters}} - 1`).

    Raises:
        ValueError: for ``"sfa"``, when ``target_count`` is at or below the count at which every
            KC that responds in the control fires a single spike (no SFA gain reaches it).

    Returns:
        The calibrated gain (a float).

    NaN policy: NaN, inf and negative rates are refused (ValueError).

    >>> cfg = CircuitConfig(n_kc=300, w_pk=0.01)
    >>> g = calibrate(cfg, calibration_odors(cfg, 16), mechanism="li", target_coding=0.1)
    >>> g > 0
    True
    """
    from flyolf.circuit import FlyCircuit

    owner = "calibrate"
    check_config(cfg, owner)
    check_choice("mechanism", owner, mechanism, MECHANISMS)
    target_coding = check_real(
        "target_coding", owner, target_coding, low=0, high=1, low_open=True, high_open=True
    )
    iters = check_int("iters", owner, iters, low=1, high=200)
    if odors is None:
        odors = calibration_odors(cfg)
    check_rates("odors", owner, odors, cfg.n_orn)
    if mechanism == "sfa":
        if target_count is None:
            raise param_error(
                "target_count", owner, "a positive number for mechanism 'sfa'", None, cls=TypeError
            )
        target_count = check_real("target_count", owner, target_count, low=0, low_open=True)
    elif target_count is not None:
        check_real("target_count", owner, target_count, low=0, low_open=True)
    if mechanism != "w_pk" and cfg.w_pk is None:
        raise param_error(
            "cfg.w_pk", owner, f"set (calibrate 'w_pk' first) for mechanism {mechanism!r}", None
        )

    def run(**gain: float) -> torch.Tensor:
        circuit = FlyCircuit(cfg.replace(**gain))
        generator = torch.Generator().manual_seed(cfg.seed + 2)
        return circuit(odors, generator=generator).kc_counts

    if mechanism == "w_pk":
        return _bisect(
            lambda w: float((run(w_pk=w) > 0).float().mean()), target_coding, True, 0.01, iters
        )
    if mechanism == "li":
        return _bisect(
            lambda g: float((run(g_li=g) > 0).float().mean()), target_coding, False, 1e-3, iters
        )
    floor = float(run(g_sfa=SFA_CEILING).sum(dim=1).mean())  # every responding KC fires once
    if target_count <= floor:
        raise param_error(
            "target_count",
            owner,
            f"above {floor:.4g}, the mean count when every responding KC fires once (SFA cannot "
            "go lower)",
            target_count,
        )
    return _bisect(
        lambda g: float(run(g_sfa=g).sum(dim=1).mean()), target_count, False, 0.05, iters
    )
