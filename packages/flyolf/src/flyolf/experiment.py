r"""The four circuits of the paper's comparison and one evaluation of them on a task.

Per seed, :func:`calibrate_conditions` sets ``w_pk`` (control coding level 25%), :math:`g_{LI}`
(coding level 10%) and :math:`g_{SFA}` (the LI-only mean KC spike count per odor, or, where that is
below one spike per responding KC, the LI-only spikes per responding KC) on 64 clean calibration
odors that no task uses. :func:`evaluate` reads a task out of one circuit's KC spike counts with
both MBON stand-ins (logistic regression and the dopamine-gated anti-Hebbian rule).
"""

from __future__ import annotations

from typing import Any

import torch

from flyolf.calibration import calibrate, calibration_odors
from flyolf.circuit import FlyCircuit
from flyolf.config import CircuitConfig
from flyolf.metrics import coding_level, pattern_separation
from flyolf.odors import OdorTask
from flyolf.readout import train_readout

__all__ = ["CONDITIONS", "TARGET_CODING", "calibrate_conditions", "evaluate"]

CONDITIONS = ("control", "LI", "SFA", "LI+SFA")
TARGET_CODING = {"control": 0.25, "LI": 0.10}


def calibrate_conditions(
    cfg: CircuitConfig, li_scale: float = 1.0, sfa_scale: float = 1.0
) -> tuple[dict[str, CircuitConfig], dict[str, Any]]:
    """Calibrate ``w_pk``, ``g_li`` and ``g_sfa`` of ``cfg`` on the calibration odors; return the
    four circuits (the calibrated gains times ``li_scale`` and ``sfa_scale``) and the
    calibration's measurements (gains and mean KC spikes per odor)."""
    odors = calibration_odors(cfg)
    cfg = cfg.replace(w_pk=calibrate(cfg, odors, "w_pk", target_coding=TARGET_CODING["control"]))
    g_li = calibrate(cfg, odors, "li", target_coding=TARGET_CODING["LI"])
    gen = lambda: torch.Generator().manual_seed(cfg.seed + 2)  # noqa: E731 - calibration's spikes
    control = FlyCircuit(cfg)(odors, generator=gen()).kc_counts
    li = FlyCircuit(cfg.replace(g_li=g_li))(odors, generator=gen()).kc_counts
    li_count, floor = float(li.sum(1).mean()), float((control > 0).sum(1).float().mean())
    if li_count > floor:
        target, rule = li_count, "LI-only mean KC spike count"
    else:  # SFA cannot go below one spike per responding KC: match spikes per responding KC
        target = float(li.sum() / (li > 0).sum()) * floor
        rule = "LI-only spikes per responding KC (LI-only count below the SFA floor)"
    g_sfa = calibrate(cfg, odors, "sfa", target_count=target)
    info = {
        "w_pk": cfg.w_pk,
        "g_li": g_li,
        "g_sfa": g_sfa,
        "control_count": float(control.sum(1).mean()),
        "li_count": li_count,
        "sfa_floor": floor,
        "sfa_target": target,
        "sfa_rule": rule,
    }
    g_li, g_sfa = li_scale * g_li, sfa_scale * g_sfa
    circuits = {
        "control": cfg,
        "LI": cfg.replace(g_li=g_li),
        "SFA": cfg.replace(g_sfa=g_sfa),
        "LI+SFA": cfg.replace(g_li=g_li, g_sfa=g_sfa),
    }
    return circuits, info


def evaluate(cfg: CircuitConfig, task: OdorTask, seed: int) -> dict[str, float]:
    """Simulate the task's training and test trials (PN spikes drawn with ``seed``); return the
    test accuracy of the logistic (``acc``) and dopamine (``acc_dopamine``) readouts, the test
    trials' coding level, mean spikes per responding KC, and the pattern separation of the
    class-mean KC and PN responses (mean pairwise correlation, lower is better separated)."""
    X = torch.cat([task.X_train, task.X_test])
    out = FlyCircuit(cfg)(X, generator=torch.Generator().manual_seed(seed))
    n, n_classes = task.X_train.shape[0], task.prototypes.shape[0]
    train, test = out.kc_counts[:n], out.kc_counts[n:]
    means = torch.stack([test[task.y_test == c].mean(0) for c in range(n_classes)])
    pn_means = torch.stack([out.pn_counts[n:][task.y_test == c].mean(0) for c in range(n_classes)])
    return {
        "acc": train_readout(train, task.y_train).score(test, task.y_test),
        "acc_dopamine": train_readout(train, task.y_train, kind="dopamine").score(
            test, task.y_test
        ),
        "coding": coding_level(test),
        "spikes_per_responding_kc": float(test.sum() / (test > 0).sum().clamp(min=1)),
        "separation": pattern_separation(means),
        "pn_separation": pattern_separation(pn_means),
    }
