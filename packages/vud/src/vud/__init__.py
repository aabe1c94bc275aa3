"""vud: Variational Uncertainty Decomposition for In-Context Learning (NeurIPS 2025,
arXiv 2509.02327).

VUD splits the predictive entropy of an in-context learner into an aleatoric upper bound
:math:`V_a(Z)=E_{q(U|Z,D)}H[q(y^*|x^*,D\\cup(Z,U))]` and an epistemic lower bound
:math:`V_e = H[q(y^*|x^*,D)] - V_a`, by letting the model label auxiliary probe inputs Z.
The public names are imported on first use (``import vud`` imports no torch).

>>> import torch
>>> from vud import BayesOracleICL, LogisticPrior, decompose
>>> oracle = BayesOracleICL(LogisticPrior())
>>> cx, cy = torch.tensor([[-2.0], [1.0]]), torch.tensor([0.0, 1.0])
>>> r = decompose(oracle, cx, cy, torch.tensor([0.5]), num_permutations=1)
>>> r.aleatoric <= r.total
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BanditTrace": "bandit",
        "BayesOracleICL": "predictors",
        "BernoulliArmsPrior": "priors",
        "ICLPredictor": "predictors",
        "LinearGaussianPrior": "priors",
        "LogisticPrior": "priors",
        "ProbeBound": "probes",
        "TransformerICL": "predictors",
        "VUDResult": "decomposition",
        "arm_epistemic": "bandit",
        "categorical_entropy": "info",
        "categorical_kl": "info",
        "decompose": "decomposition",
        "gaussian_entropy": "info",
        "gaussian_kl": "info",
        "probe_bound": "probes",
        "probe_candidates": "probes",
        "run_bandit": "bandit",
        "select_probe": "decomposition",
        "train_pfn": "training",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from vud.bandit import BanditTrace as BanditTrace
    from vud.bandit import arm_epistemic as arm_epistemic
    from vud.bandit import run_bandit as run_bandit
    from vud.decomposition import VUDResult as VUDResult
    from vud.decomposition import decompose as decompose
    from vud.decomposition import select_probe as select_probe
    from vud.info import categorical_entropy as categorical_entropy
    from vud.info import categorical_kl as categorical_kl
    from vud.info import gaussian_entropy as gaussian_entropy
    from vud.info import gaussian_kl as gaussian_kl
    from vud.predictors import BayesOracleICL as BayesOracleICL
    from vud.predictors import ICLPredictor as ICLPredictor
    from vud.predictors import TransformerICL as TransformerICL
    from vud.priors import BernoulliArmsPrior as BernoulliArmsPrior
    from vud.priors import LinearGaussianPrior as LinearGaussianPrior
    from vud.priors import LogisticPrior as LogisticPrior
    from vud.probes import ProbeBound as ProbeBound
    from vud.probes import probe_bound as probe_bound
    from vud.probes import probe_candidates as probe_candidates
    from vud.training import train_pfn as train_pfn
