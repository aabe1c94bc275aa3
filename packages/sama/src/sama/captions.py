"""Caption metrics of SAMA-Bench: the COCO caption evaluation, one reference per turn.

The benchmark scores the cleaned answers of one video with pycocoevalcap's ``COCOEvalCap``
(PTB tokenisation, then BLEU-1..4, METEOR, ROUGE-L, CIDEr-D and SPICE over that video's turns).
Here the same scorers are called directly:

* tokenisation: the Stanford PTB tokenizer shipped with pycocoevalcap (lower-cased, then its
  punctuation list removed) when Java runs; otherwise a Python tokenizer that lower-cases,
  splits words, clitics and punctuation the PTB way and drops the same punctuation list;
* BLEU (corpus level over the video's turns, "closest" reference length), ROUGE-L (mean of the
  per-turn F-measure, beta 1.2) and CIDEr-D (IDF from the video's own references, so a one-turn
  video scores 0 even when perfect) from pycocoevalcap's own scorer classes;
* METEOR (pycocoevalcap's METEOR 1.5 jar) only with Java, SPICE only with Java *and* the Stanford
  CoreNLP models SPICE downloads on first use; otherwise ``None``, never 0.

As the benchmark's scripts, each text is cut to its first 300 words and then 2,000 characters;
turns whose cleaned prediction or reference is empty are dropped (``drop_empty``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paperkit import check_bool, describe, param_error

__all__ = ["CAPTION_KEYS", "CaptionScorer", "caption_scores", "java_available", "python_tokenize"]

#: The metric names, as pycocoevalcap's COCOEvalCap reports them.
CAPTION_KEYS = ("Bleu_1", "Bleu_2", "Bleu_3", "Bleu_4", "METEOR", "ROUGE_L", "CIDEr", "SPICE")
#: Words kept per text (the scripts' ``truncate_caption(txt, 300)``), then characters kept.
MAX_WORDS, MAX_CHARS = 300, 2000
#: pycocoevalcap's PTBTokenizer.PUNCTUATIONS (dropped after tokenisation).
PUNCTUATIONS = frozenset(
    [
        "''",
        "'",
        "``",
        "`",
        "-LRB-",
        "-RRB-",
        "-LCB-",
        "-RCB-",
        ".",
        "?",
        "!",
        ",",
        ":",
        "-",
        "--",
        "...",
        ";",
    ]
)
#: The PTB tokenizer's bracket tokens; lower-cased by ``-lowerCase``, so they escape the
#: (upper-case) punctuation list and stay, as in pycocoevalcap.
_BRACKETS = {"(": "-lrb-", ")": "-rrb-", "{": "-lcb-", "}": "-rcb-", "[": "-lsb-", "]": "-rsb-"}
_TOKEN = re.compile(
    r"n't\b|'(?:s|re|ve|ll|d|m)\b|\.\.\.|--|[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*(?=n't\b)"
    r"|[A-Za-z0-9]+(?:[-.][A-Za-z0-9]+)*|[^\sA-Za-z0-9]",
    re.IGNORECASE,
)


def java_available() -> bool:
    """True when a ``java`` executable is on the PATH."""
    return shutil.which("java") is not None


def _pycocoevalcap_dir() -> Path:
    import pycocoevalcap

    return Path(next(iter(pycocoevalcap.__path__)))


def python_tokenize(text: str) -> str:
    """The Java-free tokenisation: lower-case; split words, clitics (``n't``, ``'s``, ...) and
    punctuation as the PTB tokenizer does; drop pycocoevalcap's punctuation list; join by spaces.
    """
    if not isinstance(text, str):
        raise param_error("text", "python_tokenize", "a string", describe(text), cls=TypeError)
    tokens = _TOKEN.findall(text.replace("\n", " ").lower())
    tokens = [_BRACKETS.get(t, t) for t in tokens]
    return " ".join(t for t in tokens if t not in PUNCTUATIONS)


def _truncate(text: str) -> str:
    words = text.split()
    if len(words) > MAX_WORDS:
        text = " ".join(words[:MAX_WORDS])
    return text[:MAX_CHARS]


class CaptionScorer:
    """Scores reference/hypothesis lists; holds the Java process of METEOR so that
    many videos share one start-up. ``java``: True, False, or None to use Java when available.

    >>> scorer = CaptionScorer(java=False)
    >>> out = scorer.score(["a red circle moves left"], ["a red circle moves left"])
    >>> round(out["Bleu_4"], 6), out["METEOR"]
    (1.0, None)
    """

    def __init__(self, java: bool | None = None) -> None:
        if java is not None:
            java = check_bool("java", "CaptionScorer", java)
        if java and not java_available():
            raise param_error(
                "java", "CaptionScorer", "False or None (no java executable found)", java
            )
        self.java = java_available() if java is None else java
        self.tokenizer = "ptb" if self.java else "python"
        self._meteor: Any = None
        self.spice_available = self.java and self._spice_models_present()

    @staticmethod
    def _spice_models_present() -> bool:
        lib = _pycocoevalcap_dir() / "spice" / "lib"
        return (lib / "stanford-corenlp-3.6.0.jar").is_file() and (
            lib / "stanford-corenlp-3.6.0-models.jar"
        ).is_file()

    # ------------------------------------------------------------------ tokenisation
    def tokenize(self, texts: Sequence[str]) -> list[str]:
        """Tokenise every text in one call (one Java start for the PTB tokenizer)."""
        texts = [_truncate(t) for t in texts]
        if not self.java or not texts:
            return [python_tokenize(t) for t in texts]
        jar = _pycocoevalcap_dir() / "tokenizer" / "stanford-corenlp-3.4.1.jar"
        with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
            f.write("\n".join(t.replace("\n", " ") for t in texts))
            name = f.name
        try:
            out = subprocess.run(
                [
                    "java",
                    "-cp",
                    str(jar),
                    "edu.stanford.nlp.process.PTBTokenizer",
                    "-preserveLines",
                    "-lowerCase",
                    name,
                ],
                capture_output=True,
                check=True,
            ).stdout.decode()
        finally:
            os.remove(name)
        lines = out.split("\n")
        return [
            " ".join(w for w in lines[k].rstrip().split(" ") if w not in PUNCTUATIONS)
            if k < len(lines)
            else ""
            for k in range(len(texts))
        ]

    # ------------------------------------------------------------------ scoring
    def score_tokenized(self, refs: Sequence[str], hyps: Sequence[str]) -> dict[str, float | None]:
        """The metrics on tokenised texts (one reference per hypothesis)."""
        from pycocoevalcap.bleu.bleu import Bleu
        from pycocoevalcap.cider.cider import Cider
        from pycocoevalcap.rouge.rouge import Rouge

        if not refs:  # nothing to score: the scripts' fallback is 0 (METEOR/SPICE: None w/o Java)
            out: dict[str, float | None] = dict.fromkeys(CAPTION_KEYS, 0.0)
            out["METEOR"] = 0.0 if self.java else None
            out["SPICE"] = 0.0 if self.spice_available else None
            return out
        gts = {str(k): [r] for k, r in enumerate(refs)}
        res = {str(k): [h] for k, h in enumerate(hyps)}
        bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
        out = {f"Bleu_{n + 1}": float(b) for n, b in enumerate(bleu)}
        out["METEOR"] = self._meteor_score(gts, res) if self.java else None
        out["ROUGE_L"] = float(Rouge().compute_score(gts, res)[0])
        out["CIDEr"] = float(Cider().compute_score(gts, res)[0])
        out["SPICE"] = self._spice_score(gts, res) if self.spice_available else None
        return out

    def score(
        self, refs: Sequence[str], hyps: Sequence[str], *, drop_empty: bool = True
    ) -> dict[str, float | None]:
        """Tokenise, drop empty pairs (``drop_empty``), and score: see :func:`caption_scores`."""
        refs, hyps = _check_pairs(refs, hyps, "CaptionScorer.score")
        drop_empty = check_bool("drop_empty", "CaptionScorer.score", drop_empty)
        if drop_empty:
            pairs = [(r, h) for r, h in zip(refs, hyps, strict=True) if r.strip() and h.strip()]
            refs, hyps = [p[0] for p in pairs], [p[1] for p in pairs]
        tokens = self.tokenize([*refs, *hyps])
        return self.score_tokenized(tokens[: len(refs)], tokens[len(refs) :])

    def _meteor_score(self, gts: dict, res: dict) -> float:
        if self._meteor is None:
            from pycocoevalcap.meteor.meteor import Meteor

            self._meteor = Meteor()
        return float(self._meteor.compute_score(gts, res)[0])

    def _spice_score(self, gts: dict, res: dict) -> float:  # pragma: no cover - needs models
        from pycocoevalcap.spice.spice import Spice

        return float(Spice().compute_score(gts, res)[0])

    def close(self) -> None:
        """Stop the METEOR process, if one was started."""
        if self._meteor is not None:
            proc = self._meteor.meteor_p
            proc.stdin.close()
            proc.kill()
            proc.wait()
            self._meteor = None

    def __del__(self) -> None:  # pragma: no cover - interpreter shutdown order varies
        with contextlib.suppress(Exception):
            self.close()


def _check_pairs(refs: Any, hyps: Any, owner: str) -> tuple[list[str], list[str]]:
    for name, value in (("refs", refs), ("hyps", hyps)):
        if (
            isinstance(value, str)
            or not isinstance(value, Sequence)
            or not all(isinstance(t, str) for t in value)
        ):
            raise param_error(name, owner, "a list of strings", describe(value), cls=TypeError)
    if len(refs) != len(hyps):
        raise param_error(
            "hyps", owner, f"as many strings as refs ({len(refs)})", f"{len(hyps)} strings"
        )
    return list(refs), list(hyps)


def caption_scores(
    refs: Sequence[str],
    hyps: Sequence[str],
    *,
    java: bool | None = None,
    drop_empty: bool = True,
) -> dict[str, float | None]:
    """COCO caption metrics of ``hyps`` against ``refs`` (one reference each) for one video.

    Returns ``Bleu_1..4, METEOR, ROUGE_L, CIDEr, SPICE``; METEOR is None without Java, SPICE is
    None without Java or without the Stanford models. BLEU-n is the corpus BLEU
    BP * exp(mean_{k<=n} log p_k); ROUGE-L the mean F_{1.2} of the longest common subsequence;
    CIDEr-D the TF-IDF n-gram cosine (n <= 4) with a length penalty exp(-d^2 / 72), clipping and
    x10, IDF over these references only.
    """
    refs, hyps = _check_pairs(refs, hyps, "caption_scores")
    scorer = CaptionScorer(java=java)
    try:
        return scorer.score(refs, hyps, drop_empty=drop_empty)
    finally:
        scorer.close()
