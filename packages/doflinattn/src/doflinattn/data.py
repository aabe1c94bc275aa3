r"""Data: real English sentences that ship with Python, synthetic keys with a chosen spectrum,
and a synthetic next-token task for the causal teacher.

* :func:`stdlib_sentences`: sentences from the docstrings of standard-library modules;
* :func:`spectral_keys`: Gaussian points whose covariance eigenvalues decay as
  :math:`\sigma_i^2 \propto i^{-2\,\mathrm{decay}}`, so the Gaussian kernel's DoF is set by
  ``decay`` (flat spectrum: many effective dimensions; steep: few);
* :func:`periodic_tokens`: sequences that repeat a random block of random period, whose next
  token is predictable only by attending one period back.
"""

from __future__ import annotations

import importlib
import inspect
import re
import warnings

import numpy as np
import torch

from paperkit import check_int, check_real, param_error

__all__ = ["periodic_tokens", "spectral_keys", "stdlib_sentences"]

_MODULES = (
    "argparse",
    "asyncio",
    "base64",
    "bisect",
    "calendar",
    "collections",
    "concurrent.futures",
    "configparser",
    "contextlib",
    "copy",
    "csv",
    "dataclasses",
    "datetime",
    "decimal",
    "difflib",
    "email",
    "enum",
    "fractions",
    "functools",
    "gettext",
    "glob",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http.client",
    "http.server",
    "imaplib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "locale",
    "logging",
    "mailbox",
    "mimetypes",
    "operator",
    "optparse",
    "os",
    "pathlib",
    "pickle",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "pprint",
    "queue",
    "random",
    "re",
    "sched",
    "secrets",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "smtplib",
    "socket",
    "socketserver",
    "sqlite3",
    "ssl",
    "statistics",
    "string",
    "subprocess",
    "tarfile",
    "tempfile",
    "textwrap",
    "threading",
    "timeit",
    "tokenize",
    "trace",
    "traceback",
    "typing",
    "unittest",
    "urllib.parse",
    "urllib.request",
    "uuid",
    "warnings",
    "wave",
    "weakref",
    "xml.dom.minidom",
    "zipfile",
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_CLEAN = re.compile(r"^[A-Z][A-Za-z0-9 ,;:'\-()]*[a-z][.!?]$")


def _docstrings() -> list[str]:
    docs = []
    for name in _MODULES:
        try:
            module = importlib.import_module(name)
        except ImportError:  # pragma: no cover - a trimmed Python install
            continue
        docs.append(inspect.getdoc(module) or "")
        for attr in sorted(vars(module)):
            with warnings.catch_warnings():  # typing.io / typing.re warn when touched
                warnings.simplefilter("ignore", DeprecationWarning)
                obj = getattr(module, attr)
                public = not attr.startswith("_")
                if public and (inspect.isfunction(obj) or inspect.isclass(obj)):
                    docs.append(inspect.getdoc(obj) or "")
    return docs


def stdlib_sentences(n: int, min_words: int = 6, max_words: int = 40, seed: int = 0) -> list[str]:
    """``n`` distinct English sentences from the docstrings of Python standard-library modules
    (ships with Python; no download), each of ``min_words`` to ``max_words`` words, plain prose
    only (no code, no markup), drawn without replacement with ``seed``.

    >>> s = stdlib_sentences(3, seed=1)
    >>> len(s), all(6 <= len(x.split()) <= 40 for x in s)
    (3, True)
    """
    owner = "stdlib_sentences"
    n = check_int("n", owner, n, low=1, high=100_000)
    min_words = check_int("min_words", owner, min_words, low=1, high=1000)
    max_words = check_int("max_words", owner, max_words, low=min_words, high=1000)
    seed = check_int("seed", owner, seed, low=0)
    pool = set()
    for doc in _docstrings():
        for paragraph in doc.split("\n\n"):
            for sentence in _SENTENCE.split(" ".join(paragraph.split())):
                words = len(sentence.split())
                if min_words <= words <= max_words and _CLEAN.match(sentence):
                    pool.add(sentence)
    sentences = sorted(pool)
    if n > len(sentences):
        raise param_error(
            "n", owner, f"at most {len(sentences)} (the sentences found for these lengths)", n
        )
    order = np.random.default_rng(seed).permutation(len(sentences))[:n]
    return [sentences[i] for i in order]


def spectral_keys(
    n: int, d: int, decay: float, *, scale: float = 1.0, seed: int = 0
) -> torch.Tensor:
    r"""``n`` points in :math:`\mathbb R^d` (float64), Gaussian with covariance eigenvalues
    :math:`\sigma_i^2 = s^2\, i^{-2\,\mathrm{decay}} / \sum_j j^{-2\,\mathrm{decay}}`, so that
    :math:`E\|x\|^2 = s^2` (``scale`` = s) whatever the decay, in a random orthonormal basis.

    >>> spectral_keys(5, 3, 1.0).shape
    torch.Size([5, 3])
    """
    owner = "spectral_keys"
    n = check_int("n", owner, n, low=1, high=10**7)
    d = check_int("d", owner, d, low=1, high=10**4)
    decay = check_real("decay", owner, decay, low=0.0, high=100.0)
    scale = check_real("scale", owner, scale, low=0.0, low_open=True, high=1e6)
    seed = check_int("seed", owner, seed, low=0)
    g = torch.Generator().manual_seed(seed)
    var = torch.arange(1, d + 1, dtype=torch.float64) ** (-2.0 * decay)
    sigma = scale * (var / var.sum()).sqrt()
    basis, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    return (torch.randn(n, d, generator=g, dtype=torch.float64) * sigma) @ basis.T


def periodic_tokens(
    num: int, length: int, vocab: int, *, min_period: int = 3, max_period: int = 8, seed: int = 0
) -> torch.Tensor:
    """``num`` int64 sequences of ``length`` tokens in ``[0, vocab)``: a random block of a
    random period in ``[min_period, max_period]``, repeated. From the first repeat on, token
    :math:`t` equals token :math:`t - p`.

    >>> x = periodic_tokens(2, 12, 10, min_period=3, max_period=3)
    >>> bool((x[:, 3:] == x[:, :-3]).all())
    True
    """
    owner = "periodic_tokens"
    num = check_int("num", owner, num, low=1, high=10**6)
    length = check_int("length", owner, length, low=2, high=10**5)
    vocab = check_int("vocab", owner, vocab, low=2, high=10**6)
    min_period = check_int("min_period", owner, min_period, low=1, high=length)
    max_period = check_int("max_period", owner, max_period, low=min_period, high=length)
    seed = check_int("seed", owner, seed, low=0)
    g = torch.Generator().manual_seed(seed)
    periods = torch.randint(min_period, max_period + 1, (num,), generator=g)
    blocks = torch.randint(0, vocab, (num, max_period), generator=g)
    pos = torch.arange(length)[None, :] % periods[:, None]
    return blocks.gather(1, pos)
