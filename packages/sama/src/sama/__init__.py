"""sama: the SAMA-Bench harness for multi-turn referential grounded video chat.

SAMA ("Towards Multi-Turn Referential Grounded Video Chat with Large Language Models", NeurIPS
2025) scores a video chat model on conversations that refer to regions (masks in, text out) and
ground phrases (text in, masks out). This package holds the benchmark's data schema, a generator
of synthetic instances, the model protocol with reference models, the scoring exactly as the
benchmark's scripts compute it, and SAMA's spatio-temporal context aggregator as a torch module.
Public names are imported on first use (importing ``sama`` imports no torch).

>>> from sama import clean_text
>>> clean_text("The <p>red circle</p> [SEG] is moving left.")
'The red circle is moving left.'
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "CaptionScorer": "captions",
        "MiniLMSimilarity": "textsim",
        "ModelResponse": "adapter",
        "NoisyOracle": "adapter",
        "NullModel": "adapter",
        "OracleModel": "adapter",
        "Region": "schema",
        "Report": "scoring",
        "SpatioTemporalContextAggregator": "aggregator",
        "Turn": "schema",
        "VideoChatModel": "adapter",
        "VideoRecord": "schema",
        "caption_scores": "captions",
        "chunk_rounds": "schema",
        "clean_text": "scoring",
        "erode": "adapter",
        "evaluate": "scoring",
        "extract_phrases": "scoring",
        "from_json": "schema",
        "greedy_matches": "scoring",
        "greedy_miou": "scoring",
        "greedy_pairs": "scoring",
        "greedy_recall": "scoring",
        "iou_matrix": "scoring",
        "jaccard_similarity": "textsim",
        "make_synthetic_bench": "generator",
        "mask_iou": "scoring",
        "python_tokenize": "captions",
        "sample_frame_indices": "schema",
        "to_json": "schema",
        "validate": "schema",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from sama.adapter import ModelResponse as ModelResponse
    from sama.adapter import NoisyOracle as NoisyOracle
    from sama.adapter import NullModel as NullModel
    from sama.adapter import OracleModel as OracleModel
    from sama.adapter import VideoChatModel as VideoChatModel
    from sama.adapter import erode as erode
    from sama.aggregator import SpatioTemporalContextAggregator as SpatioTemporalContextAggregator
    from sama.captions import CaptionScorer as CaptionScorer
    from sama.captions import caption_scores as caption_scores
    from sama.captions import python_tokenize as python_tokenize
    from sama.generator import make_synthetic_bench as make_synthetic_bench
    from sama.schema import Region as Region
    from sama.schema import Turn as Turn
    from sama.schema import VideoRecord as VideoRecord
    from sama.schema import chunk_rounds as chunk_rounds
    from sama.schema import from_json as from_json
    from sama.schema import sample_frame_indices as sample_frame_indices
    from sama.schema import to_json as to_json
    from sama.schema import validate as validate
    from sama.scoring import Report as Report
    from sama.scoring import clean_text as clean_text
    from sama.scoring import evaluate as evaluate
    from sama.scoring import extract_phrases as extract_phrases
    from sama.scoring import greedy_matches as greedy_matches
    from sama.scoring import greedy_miou as greedy_miou
    from sama.scoring import greedy_pairs as greedy_pairs
    from sama.scoring import greedy_recall as greedy_recall
    from sama.scoring import iou_matrix as iou_matrix
    from sama.scoring import mask_iou as mask_iou
    from sama.textsim import MiniLMSimilarity as MiniLMSimilarity
    from sama.textsim import jaccard_similarity as jaccard_similarity
