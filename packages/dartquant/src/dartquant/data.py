"""Seeded synthetic grammar text, character level (the reproduction's corpus; nothing downloads).

Sentences come from a small probabilistic grammar: subject (determiner, optional adjective, noun),
verb agreeing in number, optional object and prepositional phrase, sometimes a number or a
quoted name, ended by punctuation; paragraphs break with a newline. The vocabulary is the 95
printable ASCII characters plus newline (96 ids), of which the grammar uses a subset.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import param_error

__all__ = ["VOCAB", "decode", "encode", "heavy_tailed_acts", "synthetic_text", "token_splits"]

VOCAB = "\n" + "".join(chr(c) for c in range(32, 127))
_INDEX = {c: i for i, c in enumerate(VOCAB)}

_DET = ["the", "a", "every", "some", "this", "that", "no"]
_ADJ = ["quick", "lazy", "red", "old", "bright", "quiet", "small", "heavy", "clever", "strange"]
_NOUN = [
    "fox",
    "dog",
    "river",
    "engine",
    "garden",
    "teacher",
    "city",
    "model",
    "lamp",
    "storm",
    "bird",
    "clock",
]
_VERB_S = ["sees", "likes", "moves", "finds", "builds", "follows", "breaks", "holds"]
_VERB_P = ["see", "like", "move", "find", "build", "follow", "break", "hold"]
_PREP = ["near", "under", "behind", "over", "with", "without", "beside"]
_NAME = ["Ada", "Bo", "Cy", "Dee", "Eli", "Fay"]


def _noun_phrase(rng: np.random.Generator) -> tuple[str, bool]:
    plural = rng.random() < 0.3
    noun = rng.choice(_NOUN) + ("s" if plural else "")
    det = rng.choice(["the", "some", "many", "these"]) if plural else rng.choice(_DET)
    words = [det] + ([rng.choice(_ADJ)] if rng.random() < 0.5 else []) + [noun]
    return " ".join(words), plural


def _sentence(rng: np.random.Generator) -> str:
    subject, plural = _noun_phrase(rng)
    if rng.random() < 0.15:
        subject, plural = str(rng.choice(_NAME)), False
    words = [subject, rng.choice(_VERB_P if plural else _VERB_S)]
    if rng.random() < 0.8:
        words.append(_noun_phrase(rng)[0])
    if rng.random() < 0.4:
        words += [rng.choice(_PREP), _noun_phrase(rng)[0]]
    if rng.random() < 0.15:
        words += ["at", f"{int(rng.integers(1, 13))}:{int(rng.integers(0, 6))}0"]
    text = " ".join(words)
    end = rng.choice([".", ".", ".", "!", "?"])
    if rng.random() < 0.1:
        text = f'"{text}," said {rng.choice(_NAME)}'
        end = "."
    return text[0].upper() + text[1:] + end


def synthetic_text(n_chars: int, seed: int = 0) -> str:
    """About ``n_chars`` characters of grammar text from ``seed`` (deterministic)."""
    if isinstance(n_chars, bool) or not isinstance(n_chars, int) or n_chars < 1:
        raise param_error("n_chars", "synthetic_text", "a positive int", n_chars)
    rng = np.random.default_rng(seed)
    parts, size = [], 0
    while size < n_chars:
        s = _sentence(rng) + ("\n" if rng.random() < 0.2 else " ")
        parts.append(s)
        size += len(s)
    return "".join(parts)[:n_chars]


def encode(text: str) -> torch.Tensor:
    """Character ids (int64) of ``text`` in :data:`VOCAB`."""
    bad = sorted({c for c in text if c not in _INDEX})
    if bad:
        raise param_error("text", "encode", "printable ASCII or newline", "".join(bad))
    return torch.tensor([_INDEX[c] for c in text], dtype=torch.int64)


def decode(ids: torch.Tensor) -> str:
    """The text of character ids."""
    return "".join(VOCAB[int(i)] for i in ids)


def token_splits(
    n_chars: int, seed: int = 0, val_fraction: float = 0.1
) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, validation) token streams of one seeded corpus, split at the end."""
    ids = encode(synthetic_text(n_chars, seed))
    cut = int(len(ids) * (1 - val_fraction))
    return ids[:cut], ids[cut:]


def heavy_tailed_acts(
    n_tokens: int = 4096,
    d: int = 64,
    n_outliers: int = 5,
    outlier_scale: float = 50.0,
    nu: float = 5.0,
    seed: int = 0,
) -> torch.Tensor:
    """Synthetic LLM-like activations [n_tokens, d]: Student-t(``nu``) entries with
    ``n_outliers`` fixed channels multiplied by ``outlier_scale`` (float32, raw scale)."""
    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int) or n_tokens < 1:
        raise param_error("n_tokens", "heavy_tailed_acts", "a positive int", n_tokens)
    if not 0 <= n_outliers <= d:
        raise param_error("n_outliers", "heavy_tailed_acts", f"in [0, d={d}]", n_outliers)
    gen = torch.Generator().manual_seed(seed)
    chi2 = torch.distributions.Chi2(torch.tensor(float(nu)))
    torch.manual_seed(seed)
    x = torch.randn(n_tokens, d, generator=gen) / (chi2.sample((n_tokens, d)) / nu).sqrt()
    x[:, torch.randperm(d, generator=gen)[:n_outliers]] *= outlier_scale
    return x
