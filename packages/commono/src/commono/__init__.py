"""commono: the Common-O Bench harness ("What's in Common? Multimodal Models Hallucinate When
Reasoning Across Scenes", NeurIPS 2025 Datasets & Benchmarks, arXiv 2511.03768).

Two scenes, a lettered candidate list with "No objects are in common", and the question which
candidates appear in both; scored by exact-set accuracy and hallucination (false positives). The
package holds the example schema, the prompt and answer formats, the scoring, a synthetic
generator, model adapters and a tiny detector. Public names are imported on first use (importing
``commono`` imports neither torch nor PIL).

>>> from commono import parse_answer
>>> sorted(parse_answer("Answer: C, A", 4))
['A', 'C']
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "NONE_OPTION": "schema",
        "Example": "schema",
        "load_jsonl": "schema",
        "save_jsonl": "schema",
        "validate": "schema",
        "build_prompt": "prompt",
        "letters": "prompt",
        "parse_options": "prompt",
        "parse_answer": "parse",
        "score_example": "scoring",
        "evaluate": "scoring",
        "summarize": "scoring",
        "Report": "scoring",
        "Adapter": "adapters",
        "OracleAdapter": "adapters",
        "RandomAdapter": "adapters",
        "UnionAdapter": "adapters",
        "PerceptionIntersectAdapter": "adapters",
        "CallableAdapter": "adapters",
        "format_answer": "adapters",
        "make_synthetic_bench": "generator",
        "make_single_scenes": "generator",
        "is_similar": "generator",
        "render_scene": "render",
        "VOCAB": "render",
        "TinyDetector": "detector",
        "train_detector": "detector",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from commono.adapters import Adapter as Adapter
    from commono.adapters import CallableAdapter as CallableAdapter
    from commono.adapters import OracleAdapter as OracleAdapter
    from commono.adapters import PerceptionIntersectAdapter as PerceptionIntersectAdapter
    from commono.adapters import RandomAdapter as RandomAdapter
    from commono.adapters import UnionAdapter as UnionAdapter
    from commono.adapters import format_answer as format_answer
    from commono.detector import TinyDetector as TinyDetector
    from commono.detector import train_detector as train_detector
    from commono.generator import is_similar as is_similar
    from commono.generator import make_single_scenes as make_single_scenes
    from commono.generator import make_synthetic_bench as make_synthetic_bench
    from commono.parse import parse_answer as parse_answer
    from commono.prompt import build_prompt as build_prompt
    from commono.prompt import letters as letters
    from commono.prompt import parse_options as parse_options
    from commono.render import VOCAB as VOCAB
    from commono.render import render_scene as render_scene
    from commono.schema import NONE_OPTION as NONE_OPTION
    from commono.schema import Example as Example
    from commono.schema import load_jsonl as load_jsonl
    from commono.schema import save_jsonl as save_jsonl
    from commono.schema import validate as validate
    from commono.scoring import Report as Report
    from commono.scoring import evaluate as evaluate
    from commono.scoring import score_example as score_example
    from commono.scoring import summarize as summarize
