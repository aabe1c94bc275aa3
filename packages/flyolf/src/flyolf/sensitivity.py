r"""Which parameter do the LI and SFA effects depend on? One-seed variants of the experiment.

Each variant changes one thing of the standard circuit and recalibrates (control coding level
25%, LI-only 10%, :math:`g_{SFA}` matched to LI's spikes per responding KC), then scales the
calibrated gains where it says so:

* ``"odor window 300 ms"``: ``steps = 300`` (KCs fire more spikes per odor, so SFA, which acts
  from a KC's second spike on, has more to act on);
* ``"tau_a = 300 ms"``: slower adaptation (``tau_a = 0.3``);
* ``"g_SFA x 4"``: four times the calibrated adaptation increment;
* ``"g_LI x 2"``: twice the calibrated APL gain (a sparser LI code).

Every variant is read out by both MBON stand-ins at each noise level.
"""

from __future__ import annotations

from typing import Any

from flyolf.config import CircuitConfig
from flyolf.experiment import CONDITIONS, calibrate_conditions, evaluate
from flyolf.odors import make_odor_task
from paperkit import progress

__all__ = ["VARIANTS", "sensitivity"]

#: name -> (config changes, g_LI scale, g_SFA scale).
VARIANTS: dict[str, tuple[dict[str, Any], float, float]] = {
    "odor window 300 ms": ({"steps": 300}, 1.0, 1.0),
    "tau_a = 300 ms": ({"tau_a": 0.3}, 1.0, 1.0),
    "g_SFA x 4": ({}, 1.0, 4.0),
    "g_LI x 2": ({}, 2.0, 1.0),
}


def sensitivity(
    cfg: CircuitConfig, noise: list[float], n_classes: int, n_train: int, n_test: int
) -> list[dict[str, Any]]:
    """Accuracy of the four circuits for every variant of ``cfg``, noise level and readout:
    rows with ``variant``, ``readout``, ``sigma``, one column per condition and the control's
    spikes per responding KC on the test trials."""
    rows = []
    for name, (changes, li_scale, sfa_scale) in progress(list(VARIANTS.items()), "sensitivity"):
        circuits, _ = calibrate_conditions(cfg.replace(**changes), li_scale, sfa_scale)
        for sigma in noise:
            task = make_odor_task(n_classes, n_train, n_test, noise=sigma, seed=cfg.seed)
            res = {c: evaluate(circuits[c], task, seed=cfg.seed + 7) for c in CONDITIONS}
            for readout, key in (("logistic", "acc"), ("dopamine", "acc_dopamine")):
                rows.append(
                    {
                        "variant": name,
                        "readout": readout,
                        "sigma": sigma,
                        **{c: res[c][key] for c in CONDITIONS},
                        "control_spikes_per_kc": res["control"]["spikes_per_responding_kc"],
                    }
                )
    return rows
