"""T-MEX: a test-based measurement-exclusivity score for causal representations
(Yao, Huang, Cadei, Zhang, Locatello, NeurIPS 2025, arXiv 2505.17708).

A representation block Ẑ_i is a valid measurement of latent Z_k when it depends on Z_k and is
conditionally independent of every other latent given the rest. T-MEX tests
H0_ik: Ẑ_i ⟂ Z_k | (Z_{−k}, V) for every (block, latent) with a GCM test and counts the entries
where the detected structure Ŵ disagrees with the hypothesised W.

>>> import numpy as np
>>> from tmex import tmex_score
>>> Z = np.random.default_rng(0).standard_normal((300, 2))
>>> tmex_score(Z, Z, rng=0).score
0

The public names are imported on first use.
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CITestResult": "citest",
        "LocationScaleSCM": "simulate",
        "MEASUREMENTS": "simulate",
        "TMEXResult": "score",
        "ate_adjustment": "metrics",
        "ate_scenario": "simulate",
        "gcm_test": "citest",
        "kci_test": "citest",
        "mcc": "metrics",
        "measurement": "simulate",
        "r2_matrix": "metrics",
        "tmex_score": "score",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from tmex.citest import CITestResult as CITestResult
    from tmex.citest import gcm_test as gcm_test
    from tmex.citest import kci_test as kci_test
    from tmex.metrics import ate_adjustment as ate_adjustment
    from tmex.metrics import mcc as mcc
    from tmex.metrics import r2_matrix as r2_matrix
    from tmex.score import TMEXResult as TMEXResult
    from tmex.score import tmex_score as tmex_score
    from tmex.simulate import MEASUREMENTS as MEASUREMENTS
    from tmex.simulate import LocationScaleSCM as LocationScaleSCM
    from tmex.simulate import ate_scenario as ate_scenario
    from tmex.simulate import measurement as measurement
