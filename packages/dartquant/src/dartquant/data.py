"""Seeded synthetic grammar text, character level (the reproduction's corpus; nothing downloads).

Sentences come from a small probabilistic grammar: subject (determiner, optional adjective, noun),
verb agreeing in number, optional object and prepositional phrase, sometimes a number or a
quoted name, ended by punctuation; paragraphs break with a newline. The vocabulary is the 95
printable ASCII characters plus newline (96 ids), of which the grammar uses a subset.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import (
    Described,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

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


#: Planned bytes per character of :func:`synthetic_text` (the sentence list and the joined
#: string) and of :func:`token_splits` (the text, the list of ids and the int64 tensor).
TEXT_BYTES_PER_CHAR = 4
IDS_BYTES_PER_CHAR = 32


def synthetic_text(n_chars: int, seed: int = 0) -> str:
    """About ``n_chars`` characters of grammar text from ``seed`` (deterministic).

    >>> synthetic_text(18, seed=0)
    'A quick city sees!'
    """
    owner = "synthetic_text"
    n_chars = check_int("n_chars", owner, n_chars, low=1)
    check_memory("n_chars", owner, n_chars, TEXT_BYTES_PER_CHAR * n_chars)
    seed = check_int("seed", owner, seed, low=0)
    return _text(n_chars, seed)


def _text(n_chars: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    parts, size = [], 0
    while size < n_chars:
        s = _sentence(rng) + ("\n" if rng.random() < 0.2 else " ")
        parts.append(s)
        size += len(s)
    return "".join(parts)[:n_chars]


def encode(text: str) -> torch.Tensor:
    """Character ids (int64) of ``text``, a string of characters of :data:`VOCAB` (printable
    ASCII and newline; any other character is refused). The empty string gives an empty tensor.
    """
    if not isinstance(text, str):
        raise param_error("text", "encode", "a string", describe(text), cls=TypeError)
    bad = sorted({c for c in text if c not in _INDEX})
    if bad:
        raise param_error("text", "encode", "printable ASCII or newline", "".join(bad))
    return torch.tensor([_INDEX[c] for c in text], dtype=torch.int64)


def decode(ids: torch.Tensor) -> str:
    """The text of a 1-D integer tensor of character ids in ``[0, len(VOCAB))`` (other ids are
    refused); an empty tensor gives the empty string.

    >>> decode(encode("Hi!"))
    'Hi!'
    """
    check_tensor("ids", "decode", ids, dtype="int", ndim=1, nonempty=False)
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= len(VOCAB)):
        raise param_error(
            "ids",
            "decode",
            f"character ids in [0, {len(VOCAB)})",
            Described(f"ids in [{int(ids.min())}, {int(ids.max())}]"),
        )
    return "".join(VOCAB[i] for i in ids.tolist())


def token_splits(
    n_chars: int, seed: int = 0, val_fraction: float = 0.1
) -> tuple[torch.Tensor, torch.Tensor]:
    """(train, validation) token streams of one seeded corpus, split at the end
    (``val_fraction`` in (0, 1) of the ids are held out)."""
    owner = "token_splits"
    n_chars = check_int("n_chars", owner, n_chars, low=1)
    check_memory("n_chars", owner, n_chars, IDS_BYTES_PER_CHAR * n_chars)
    seed = check_int("seed", owner, seed, low=0)
    val_fraction = check_real(
        "val_fraction", owner, val_fraction, low=0, high=1, low_open=True, high_open=True
    )
    ids = encode(_text(n_chars, seed))
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
    ``n_outliers`` fixed channels multiplied by ``outlier_scale`` (float32, raw scale).
    ``outlier_scale`` and ``nu`` are finite and positive; sizes that would not fit in memory are
    refused."""
    owner = "heavy_tailed_acts"
    n_tokens = check_int("n_tokens", owner, n_tokens, low=1)
    d = check_int("d", owner, d, low=1)
    larger = "n_tokens" if n_tokens >= d else "d"
    check_memory(larger, owner, max(n_tokens, d), 3 * 4 * n_tokens * d)
    n_outliers = check_int("n_outliers", owner, n_outliers, low=0, high=d)
    outlier_scale = check_real("outlier_scale", owner, outlier_scale, low=0, low_open=True)
    nu = check_real("nu", owner, nu, low=0, low_open=True)
    seed = check_int("seed", owner, seed, low=0)
    gen = torch.Generator().manual_seed(seed)
    chi2 = torch.distributions.Chi2(torch.tensor(nu))
    torch.manual_seed(seed)
    x = torch.randn(n_tokens, d, generator=gen) / (chi2.sample((n_tokens, d)) / nu).sqrt()
    x[:, torch.randperm(d, generator=gen)[:n_outliers]] *= outlier_scale
    return x
