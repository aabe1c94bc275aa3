"""A seeded, English-like synthetic corpus from a small probabilistic grammar (character tokens).

The language (drawn once per ``seed``): about 500 pronounceable words in classes (nouns, verbs,
adjectives, adverbs, prepositions) plus English function words, each class with Zipf-distributed
word frequencies (p ~ 1/rank^1.1). Sentences follow

    S  -> NP VP [conj S] .        NP -> det adj* noun[s] [prep NP]      VP -> verb[s] [NP] [adv]

with subject-verb number agreement (plural nouns take ``s``, singular subjects' verbs take
``s``), a new line after about one sentence in six. A model has to learn spelling, word
frequencies, word order and agreement, which gives a smooth loss curve that keeps falling for
thousands of steps. Nothing is downloaded.
"""

from __future__ import annotations

import random

import numpy as np
import torch

from paperkit import check_int, check_memory

__all__ = ["ALPHABET", "synthetic_corpus", "synthetic_text"]

#: The character vocabulary; token id = index in this string.
ALPHABET = "abcdefghijklmnopqrstuvwxyz .,\n"

_ONSETS = [
    "b",
    "c",
    "d",
    "f",
    "g",
    "h",
    "j",
    "k",
    "l",
    "m",
    "n",
    "p",
    "r",
    "s",
    "t",
    "v",
    "w",
    "z",
    "br",
    "cr",
    "dr",
    "fr",
    "gr",
    "pl",
    "pr",
    "st",
    "tr",
    "sh",
    "ch",
    "th",
]
_VOWELS = ["a", "e", "i", "o", "u", "a", "e", "i", "o", "ea", "ou", "ai"]
_CODAS = ["", "", "", "n", "r", "l", "s", "t", "m", "nd", "st", "rk"]
_CLASSES = {"noun": 200, "verb": 120, "adj": 100, "adv": 40, "prep": 12}
_DETS = ["the", "a", "this", "that", "every", "some", "my", "our"]
_CONJ = ["and", "but", "because", "while", "so"]


def _zipf(n: int, exponent: float = 1.1) -> list[float]:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return np.cumsum(weights / weights.sum()).tolist()


def _lexicon(rng: random.Random) -> dict[str, list[str]]:
    seen: set[str] = set(_DETS) | set(_CONJ)
    lexicon: dict[str, list[str]] = {}
    for cls, count in _CLASSES.items():
        words: list[str] = []
        max_syllables = 1 if cls == "prep" else 3
        while len(words) < count:
            syllables = rng.randint(1, max_syllables)
            word = "".join(
                rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)
                for _ in range(syllables)
            )
            if word not in seen and not word.endswith("s"):
                seen.add(word)
                words.append(word)
        lexicon[cls] = words
    return lexicon


class _Grammar:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.lexicon = _lexicon(self.rng)
        self.cum = {cls: _zipf(len(words)) for cls, words in self.lexicon.items()}

    def word(self, cls: str) -> str:
        return self.rng.choices(self.lexicon[cls], cum_weights=self.cum[cls])[0]

    def noun_phrase(self, depth: int = 0) -> tuple[str, bool]:
        rng = self.rng
        plural = rng.random() < 0.35
        det = rng.choice(_DETS[1:] if not plural else ["the", "some", "our", "my"])
        if plural and det in ("a", "this", "that", "every"):
            det = "the"
        words = [det]
        while rng.random() < 0.3 and len(words) < 3:
            words.append(self.word("adj"))
        words.append(self.word("noun") + ("s" if plural else ""))
        if depth == 0 and rng.random() < 0.25:
            words += [self.word("prep"), self.noun_phrase(depth + 1)[0]]
        return " ".join(words), plural

    def sentence(self, depth: int = 0) -> str:
        rng = self.rng
        subject, plural = self.noun_phrase()
        parts = [subject, self.word("verb") + ("" if plural else "s")]
        if rng.random() < 0.7:
            parts.append(self.noun_phrase()[0])
        if rng.random() < 0.25:
            parts.append(self.word("adv"))
        if depth == 0 and rng.random() < 0.2:
            parts[-1] += ","
            parts += [rng.choice(_CONJ), self.sentence(depth + 1)]
        return " ".join(parts)


#: Planned bytes per character: the sentence list and the joined string (text), plus the byte
#: view and the int64 ids (corpus).
TEXT_BYTES_PER_CHAR = 4
CORPUS_BYTES_PER_TOKEN = 16


def synthetic_text(n_chars: int, seed: int = 0) -> str:
    """``n_chars`` characters of grammar text over :data:`ALPHABET`, deterministic in ``seed``
    (a non-negative integer); lengths that would not fit in memory are refused.

    >>> synthetic_text(25, seed=0)
    'my choulvoun missturkshou'
    """
    owner = "synthetic_text"
    n_chars = check_int("n_chars", owner, n_chars, low=1)
    check_memory("n_chars", owner, n_chars, TEXT_BYTES_PER_CHAR * n_chars)
    seed = check_int("seed", owner, seed, low=0)
    return _text(n_chars, seed)


def _text(n_chars: int, seed: int) -> str:
    grammar = _Grammar(seed)
    pieces: list[str] = []
    total = 0
    while total < n_chars:
        piece = grammar.sentence() + (".\n" if grammar.rng.random() < 0.17 else ". ")
        pieces.append(piece)
        total += len(piece)
    return "".join(pieces)[:n_chars]


def synthetic_corpus(n_tokens: int, seed: int = 0) -> torch.Tensor:
    """``n_tokens`` character ids (int64, in ``[0, len(ALPHABET))``) of :func:`synthetic_text`
    (``seed`` a non-negative integer; lengths that would not fit in memory are refused)."""
    owner = "synthetic_corpus"
    n_tokens = check_int("n_tokens", owner, n_tokens, low=1)
    check_memory(
        "n_tokens", owner, n_tokens, (TEXT_BYTES_PER_CHAR + CORPUS_BYTES_PER_TOKEN) * n_tokens
    )
    seed = check_int("seed", owner, seed, low=0)
    raw = np.frombuffer(_text(n_tokens, seed).encode("ascii"), dtype=np.uint8)
    lookup = np.zeros(256, dtype=np.int64)
    lookup[np.frombuffer(ALPHABET.encode("ascii"), dtype=np.uint8)] = np.arange(len(ALPHABET))
    return torch.from_numpy(lookup[raw])
