"""TreeGen: Bayesian Flow Networks over hierarchies, applied to jet clustering (NeurIPS 2025).

A generative model over binary hierarchies: every node's parent is a categorical variable, a
categorical Bayesian Flow Network refines a *probabilistic hierarchy* (one distribution per node)
into a discrete tree, and an entropy-consistent accuracy schedule makes variables with different
numbers of admissible parents lose entropy at the same rate. Shipped with a Ginkgo-like jet
simulator, its exact tree likelihood, exhaustive enumeration (the exact posterior for n <= 8
leaves) and the clustering baselines. The public names are imported on first use.

>>> from treegen import GinkgoLike, exact_posterior, beam_cluster, is_valid
>>> model = GinkgoLike()
>>> leaves, tree = model.sample(seed=0)
>>> trees, probs = exact_posterior(leaves, model)
>>> is_valid(beam_cluster(leaves, model), leaves, model)
True
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CategoricalBFN": "bfn",
        "EntropyScheduler": "scheduler",
        "GinkgoLike": "ginkgo",
        "QuadraticScheduler": "scheduler",
        "Tree": "tree",
        "TreeGen": "model",
        "beam_cluster": "baselines",
        "canonicalize": "tree",
        "count_trees": "enumeration",
        "entropy_curve": "scheduler",
        "enumerate_trees": "enumeration",
        "exact_posterior": "enumeration",
        "greedy_cluster": "baselines",
        "is_valid": "likelihood",
        "kt_cluster": "baselines",
        "posterior_sample": "enumeration",
        "random_valid_trees": "baselines",
        "tree_loglik": "likelihood",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from treegen.baselines import beam_cluster as beam_cluster
    from treegen.baselines import greedy_cluster as greedy_cluster
    from treegen.baselines import kt_cluster as kt_cluster
    from treegen.baselines import random_valid_trees as random_valid_trees
    from treegen.bfn import CategoricalBFN as CategoricalBFN
    from treegen.enumeration import count_trees as count_trees
    from treegen.enumeration import enumerate_trees as enumerate_trees
    from treegen.enumeration import exact_posterior as exact_posterior
    from treegen.enumeration import posterior_sample as posterior_sample
    from treegen.ginkgo import GinkgoLike as GinkgoLike
    from treegen.likelihood import is_valid as is_valid
    from treegen.likelihood import tree_loglik as tree_loglik
    from treegen.model import TreeGen as TreeGen
    from treegen.scheduler import EntropyScheduler as EntropyScheduler
    from treegen.scheduler import QuadraticScheduler as QuadraticScheduler
    from treegen.scheduler import entropy_curve as entropy_curve
    from treegen.tree import Tree as Tree
    from treegen.tree import canonicalize as canonicalize
