"""flyolf: a spiking model of the fly olfactory circuit, lateral inhibition (APL feedback) vs
spike-frequency adaptation under noise (NeurIPS 2025, arXiv 2510.21315).

The public names are imported on first use (importing ``flyolf`` imports no torch).

>>> import torch
>>> from flyolf import CircuitConfig, FlyCircuit, coding_level
>>> circuit = FlyCircuit(CircuitConfig(n_kc=500, w_pk=0.0019, g_li=0.0014))
>>> out = circuit(torch.full((2, 50), 30.0))
>>> 0.0 <= coding_level(out.kc_counts) <= 1.0
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CircuitConfig": "config",
        "CircuitOutput": "circuit",
        "FlyCircuit": "circuit",
        "OdorTask": "odors",
        "Readout": "readout",
        "add_noise": "odors",
        "calibrate": "calibration",
        "calibration_odors": "calibration",
        "coding_level": "metrics",
        "connectivity": "circuit",
        "fast_sigmoid": "surrogate",
        "learn_gains": "learning",
        "lifetime_sparseness": "metrics",
        "make_odor_task": "odors",
        "noise_robustness": "metrics",
        "odor_prototypes": "odors",
        "pattern_separation": "metrics",
        "pn_rates": "pn",
        "simulate_kc": "kc",
        "spike_fn": "surrogate",
        "train_readout": "readout",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from flyolf.calibration import calibrate as calibrate
    from flyolf.calibration import calibration_odors as calibration_odors
    from flyolf.circuit import CircuitOutput as CircuitOutput
    from flyolf.circuit import FlyCircuit as FlyCircuit
    from flyolf.circuit import connectivity as connectivity
    from flyolf.config import CircuitConfig as CircuitConfig
    from flyolf.kc import simulate_kc as simulate_kc
    from flyolf.learning import learn_gains as learn_gains
    from flyolf.metrics import coding_level as coding_level
    from flyolf.metrics import lifetime_sparseness as lifetime_sparseness
    from flyolf.metrics import noise_robustness as noise_robustness
    from flyolf.metrics import pattern_separation as pattern_separation
    from flyolf.odors import OdorTask as OdorTask
    from flyolf.odors import add_noise as add_noise
    from flyolf.odors import make_odor_task as make_odor_task
    from flyolf.odors import odor_prototypes as odor_prototypes
    from flyolf.pn import pn_rates as pn_rates
    from flyolf.readout import Readout as Readout
    from flyolf.readout import train_readout as train_readout
    from flyolf.surrogate import fast_sigmoid as fast_sigmoid
    from flyolf.surrogate import spike_fn as spike_fn
