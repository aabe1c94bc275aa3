"""promptmem: how much data can a prompt make a frozen transformer memorise?

Haiyu Wang, Yuanyuan Lin, "Prompt Tuning Transformers for Data Memorization", NeurIPS 2025
(OpenReview M5GLj4Fgvp). Part A (:mod:`promptmem.construction`) executes the counting argument of
the paper's upper bound exactly: prompt length :math:`m`, generation steps :math:`s` with
:math:`m s \\approx nN`, and :math:`m, s \\approx \\sqrt{nN}` at the balance point. Part B
(:mod:`promptmem.model`, :mod:`promptmem.tuning`) prompt-tunes small frozen transformers and
searches for the shortest prompt that memorises random data.

The public names are imported on first use (importing ``promptmem`` imports no torch).

>>> import torch
>>> from promptmem import PromptInterpreter, memorization_dataset
>>> X, Y = memorization_dataset(20, 3, vocab=4)
>>> interp = PromptInterpreter()
>>> prompt = interp.build(X, Y, k="sqrt")  # 60 slots, k = 8: m = 8 tokens
>>> len(prompt), interp.run(prompt, X[5])[0] == Y[5].tolist()
(8, True)
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "FrozenTransformer": "model",
        "PrecisionError": "construction",
        "Prompt": "construction",
        "PromptInterpreter": "construction",
        "PromptToken": "construction",
        "fit_scaling": "scaling",
        "memorization_dataset": "data",
        "min_prompt_length": "tuning",
        "tradeoff_curve": "construction",
        "tune_prompt": "tuning",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from promptmem.construction import PrecisionError as PrecisionError
    from promptmem.construction import Prompt as Prompt
    from promptmem.construction import PromptInterpreter as PromptInterpreter
    from promptmem.construction import PromptToken as PromptToken
    from promptmem.construction import tradeoff_curve as tradeoff_curve
    from promptmem.data import memorization_dataset as memorization_dataset
    from promptmem.model import FrozenTransformer as FrozenTransformer
    from promptmem.scaling import fit_scaling as fit_scaling
    from promptmem.tuning import min_prompt_length as min_prompt_length
    from promptmem.tuning import tune_prompt as tune_prompt
