"""VG-Search: variable-granularity verification for compute-efficient test-time search
(Chen et al., NeurIPS 2025, arXiv 2505.11730).

A verifier-guided search over ``n`` candidates with beam width ``m`` that calls the process
reward model only every ``g`` generation steps: ``g = 1`` is beam search, verifying only the
finished solutions is Best-of-N, and an intermediate or adaptively chosen ``g`` trades error
correction against verifier compute. The LLM and PRM are replaced by a synthetic multi-step task
(:class:`ChainArithmetic`), a noisy step generator and a PRM whose step correctness is known.

>>> from vgsearch import ChainArithmetic, NoisyPRM, NoisyStepGenerator, SearchConfig, vg_search
>>> res = vg_search(ChainArithmetic(2, seed=0), NoisyStepGenerator(), NoisyPRM("strong"),
...                 SearchConfig(n=16, m=4, g=2), rng=0)
>>> len(res.completions)
16

The public names are imported on first use (importing ``vgsearch`` imports no scikit-learn).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AdaptiveGranularity": "adaptive",
        "ChainArithmetic": "task",
        "Generator": "steps",
        "LearnedPRM": "verifiers",
        "NoisyPRM": "verifiers",
        "NoisyStepGenerator": "task",
        "SearchConfig": "search",
        "SearchResult": "search",
        "Step": "steps",
        "Verifier": "steps",
        "aggregate_scores": "scoring",
        "beam_search": "search",
        "best_of_n": "search",
        "evaluate": "evaluation",
        "majority_vote": "scoring",
        "make_problems": "task",
        "vg_search": "search",
        "weighted_majority": "scoring",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from vgsearch.adaptive import AdaptiveGranularity as AdaptiveGranularity
    from vgsearch.evaluation import evaluate as evaluate
    from vgsearch.scoring import aggregate_scores as aggregate_scores
    from vgsearch.scoring import majority_vote as majority_vote
    from vgsearch.scoring import weighted_majority as weighted_majority
    from vgsearch.search import SearchConfig as SearchConfig
    from vgsearch.search import SearchResult as SearchResult
    from vgsearch.search import beam_search as beam_search
    from vgsearch.search import best_of_n as best_of_n
    from vgsearch.search import vg_search as vg_search
    from vgsearch.steps import Generator as Generator
    from vgsearch.steps import Step as Step
    from vgsearch.steps import Verifier as Verifier
    from vgsearch.task import ChainArithmetic as ChainArithmetic
    from vgsearch.task import NoisyStepGenerator as NoisyStepGenerator
    from vgsearch.task import make_problems as make_problems
    from vgsearch.verifiers import LearnedPRM as LearnedPRM
    from vgsearch.verifiers import NoisyPRM as NoisyPRM
