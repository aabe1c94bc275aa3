"""Federated training of the character LM with FedAvg, and the four data treatments (the
paper's adaptive reweighting and its experiments).

Methods, all with the same number of local optimiser steps per round (⌈|S_k|/batch⌉, S_k the
client's distinct samples), so deduplication is not confounded with less training:

- ``"none"``: every sample, copies included, weight 1;
- ``"local_dedup"``: each client drops its own repeats;
- ``"global_dedup"``: one copy per distinct item survives over all clients (the lowest-index
  holder keeps it), decided from the PSI output (:func:`fedrw.global_dedup_keep`);
- ``"fedrw"``: every sample, weight w = F(x)^(-α_r) from the PSI frequencies (α_r possibly
  ramped, :func:`fedrw.adaptive_alpha`), loss Σ w ℓ / Σ w (:func:`fedrw.weighted_lm_loss`).

Each round the server sends the global parameters to every client process (float32 bytes), each
client runs its local Adam steps on batches drawn from its own data and returns its parameters;
the server averages them with weights ∝ the client's effective data size (Σ w over its samples
for FedRW, its sample count otherwise) and measures the test perplexity exp(mean char NLL).
"""

from __future__ import annotations

import math
import struct
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection

import numpy as np
import torch

from fedrw.canon import canonicalize
from fedrw.data import FederatedCorpus
from fedrw.model import PAD_ID, CharGRU, encode_texts, weighted_lm_loss
from fedrw.processes import QUIT, ClientGroup
from fedrw.protocol import Message, secure_global_frequencies
from fedrw.weights import adaptive_alpha, global_dedup_keep, reweight
from paperkit import check_choice, check_int, check_real, describe, param_error

__all__ = ["METHODS", "LMHistory", "client_training_data", "run_federated_lm"]

METHODS = ("none", "local_dedup", "global_dedup", "fedrw")
SERVER = -1


@dataclass
class LMHistory:
    """One federated run: test perplexity after each round, the preprocessing (PSI) time and
    bytes, the FL traffic, and every server-client message."""

    method: str
    test_ppl: np.ndarray
    preprocess_seconds: float
    preprocess_bytes: int
    train_bytes: int
    train_seconds: float
    transcript: list[Message]

    @property
    def bytes_total(self) -> int:
        """Preprocessing plus training bytes."""
        return self.preprocess_bytes + self.train_bytes


def _vector(model: torch.nn.Module) -> torch.Tensor:
    return torch.nn.utils.parameters_to_vector(model.parameters()).detach()


def _load(model: torch.nn.Module, data: bytes) -> None:
    flat = torch.from_numpy(np.frombuffer(data, dtype=np.float32).copy())
    torch.nn.utils.vector_to_parameters(flat, model.parameters())


def _train_client(
    ctrl: Connection,
    index: int,
    texts: list[str],
    freqs: np.ndarray,
    steps: int,
    cfg: dict,
) -> None:
    """A client process: per round, load the global model, take ``steps`` Adam steps on
    batches of its own samples (weights F^-α_r), send the parameters back."""
    torch.set_num_threads(1)
    model = CharGRU(cfg["emb"], cfg["hidden"])
    opt = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    tokens = encode_texts(texts) if texts else None
    while (msg := ctrl.recv_bytes()) != QUIT:
        r, alpha = struct.unpack(">Hd", msg[:10])
        _load(model, msg[10:])
        if tokens is not None:
            weights = torch.from_numpy(reweight(freqs, alpha))
            gen = torch.Generator().manual_seed(cfg["seed"] * 1_000_003 + index * 1009 + r)
            need = steps * cfg["batch"]
            perm = torch.cat(
                [torch.randperm(len(texts), generator=gen) for _ in range(-(-need // len(texts)))]
            )[:need]
            for s in range(steps):
                idx = perm[s * cfg["batch"] : (s + 1) * cfg["batch"]]
                batch = tokens[idx]
                loss = weighted_lm_loss(model(batch[:, :-1]), batch[:, 1:], weights[idx], PAD_ID)
                opt.zero_grad()
                loss.backward()
                opt.step()
        ctrl.send_bytes(_vector(model).numpy().astype(np.float32).tobytes())


def client_training_data(
    method: str, corpus: FederatedCorpus, counts: list[dict[bytes, tuple[int, ...]]] | None
) -> list[tuple[list[str], np.ndarray]]:
    """Per client: the samples it trains on under ``method`` and their global frequencies F
    (all ones unless ``method="fedrw"``). ``counts`` is the PSI output (per-client count
    vectors), needed by ``"global_dedup"`` and ``"fedrw"``. NaN policy: not applicable."""
    owner = "client_training_data"
    method = check_choice("method", owner, method, METHODS)
    if not isinstance(corpus, FederatedCorpus):
        raise param_error("corpus", owner, "a FederatedCorpus", describe(corpus), cls=TypeError)
    if method in ("global_dedup", "fedrw"):
        every = [{canonicalize(t) for t in texts} for texts in corpus.clients]
        if (
            not isinstance(counts, list)
            or len(counts) != len(every)
            or any(
                not isinstance(c, dict) or set(c) != e for c, e in zip(counts, every, strict=True)
            )
        ):
            raise param_error(
                "counts",
                owner,
                "the PSI output of this corpus (count vectors of every client's items)",
                describe(counts),
            )
    out = []
    for i, texts in enumerate(corpus.clients):
        keys = [canonicalize(t) for t in texts]
        if method in ("none", "fedrw"):
            chosen = list(range(len(texts)))
        else:
            allowed = global_dedup_keep(i, counts[i]) if method == "global_dedup" else None
            first: dict[bytes, int] = {}
            for n, key in enumerate(keys):
                if key not in first and (allowed is None or key in allowed):
                    first[key] = n
            chosen = sorted(first.values())
        freqs = [sum(counts[i][keys[n]]) if method == "fedrw" else 1 for n in chosen]
        out.append(([texts[n] for n in chosen], np.asarray(freqs, dtype=np.float64)))
    return out


def _warm_up_imports() -> None:
    """Take one Adam step here: its first step imports much of torch (compile helpers), which
    forked clients then inherit instead of each importing it again (seconds per process)."""
    p = torch.nn.Parameter(torch.zeros(1))
    p.grad = torch.ones(1)
    torch.optim.Adam([p]).step()


def _perplexity(model: CharGRU, test: torch.Tensor) -> float:
    model.eval()
    with torch.no_grad():
        logits = model(test[:, :-1])
        nll = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2), test[:, 1:], reduction="sum", ignore_index=PAD_ID
        )
    model.train()
    return math.exp(float(nll) / int((test[:, 1:] != PAD_ID).sum()))


def _fedavg(
    model: CharGRU,
    test: torch.Tensor,
    data: list[tuple[list[str], np.ndarray]],
    args: list[tuple],
    rounds: int,
    method: str,
    alpha: float,
    warmup_rounds: int,
) -> tuple[list[float], list[Message], float]:
    """The server's loop: broadcast, collect, average with effective sizes, evaluate."""
    ppl, log = [], []
    with ClientGroup(_train_client, args) as group:
        start = time.perf_counter()
        for r in range(rounds):
            a = adaptive_alpha(r, alpha, warmup_rounds) if method == "fedrw" else 0.0
            message = struct.pack(">Hd", r % 65536, a) + _vector(model).numpy().tobytes()
            sizes = []
            for i, (texts, freqs) in enumerate(data):
                log.append(Message(SERVER, i, len(message), time.perf_counter() - start, "model"))
                group.send(i, message)
                sizes.append(float(reweight(freqs, a).sum()) if texts else 0.0)
            total = np.zeros_like(_vector(model).numpy(), dtype=np.float64)
            for i in range(len(data)):
                reply = group.recv(i)
                log.append(Message(i, SERVER, len(reply), time.perf_counter() - start, "update"))
                total += sizes[i] * np.frombuffer(reply, dtype=np.float32)
            _load(model, (total / sum(sizes)).astype(np.float32).tobytes())
            ppl.append(_perplexity(model, test))
        seconds = time.perf_counter() - start
    return ppl, log, seconds


def run_federated_lm(
    method: str = "fedrw",
    corpus: FederatedCorpus | None = None,
    rounds: int = 10,
    alpha: float = 1.0,
    seed: int = 0,
    *,
    warmup_rounds: int = 0,
    emb: int = 32,
    hidden: int = 128,
    lr: float = 2e-3,
    batch: int = 32,
) -> LMHistory:
    """FedAvg training of :class:`fedrw.CharGRU` over the clients of ``corpus`` (one OS
    process per client) with the data treatment ``method`` (see the module docstring).

    Args:
        method: ``"none"``, ``"local_dedup"``, ``"global_dedup"`` or ``"fedrw"``.
        corpus: a :class:`fedrw.FederatedCorpus` (default: ``make_duplicated_corpus()``).
        rounds: FL rounds; ``alpha``: α_max of the weights F^-α (``"fedrw"`` only);
            ``warmup_rounds``: rounds of the linear α ramp (0: off).
        seed: model initialisation and batch order.
        emb, hidden, lr, batch: GRU sizes, Adam learning rate, batch size.

    Returns:
        :class:`LMHistory` (``test_ppl`` has one entry per round). The PSI runs only for
        ``"global_dedup"`` and ``"fedrw"``; its time and bytes are the preprocessing cost.
        NaN policy: NaN alpha or lr is refused.
    """
    owner = "run_federated_lm"
    method = check_choice("method", owner, method, METHODS)
    if corpus is None:
        from fedrw.data import make_duplicated_corpus

        corpus = make_duplicated_corpus()
    if not isinstance(corpus, FederatedCorpus):
        raise param_error("corpus", owner, "a FederatedCorpus", describe(corpus), cls=TypeError)
    rounds = check_int("rounds", owner, rounds, low=1, high=10_000)
    alpha = check_real("alpha", owner, alpha, low=0.0, high=1.0)
    seed = check_int("seed", owner, seed, low=0, high=2**31)
    warmup_rounds = check_int("warmup_rounds", owner, warmup_rounds, low=0, high=10_000)
    cfg = {
        "emb": check_int("emb", owner, emb, low=1, high=1024),
        "hidden": check_int("hidden", owner, hidden, low=1, high=1024),
        "lr": check_real("lr", owner, lr, low=0.0, low_open=True, high=1.0),
        "batch": check_int("batch", owner, batch, low=1, high=4096),
        "seed": seed,
    }
    if not corpus.test:
        raise param_error("corpus", owner, "a corpus with a test set", "an empty test set")
    pre_seconds, pre_bytes, counts = 0.0, 0, None
    if method in ("global_dedup", "fedrw"):
        psi = secure_global_frequencies(corpus.clients)
        pre_seconds, pre_bytes, counts = psi.seconds, psi.bytes_total, psi.counts
    data = client_training_data(method, corpus, counts)
    steps = [-(-len({canonicalize(t) for t in texts}) // batch) for texts in corpus.clients]
    _warm_up_imports()
    torch.manual_seed(seed)
    model = CharGRU(emb, hidden)
    test = encode_texts(corpus.test)
    args = [(i, data[i][0], data[i][1], steps[i], cfg) for i in range(len(data))]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the server only averages and evaluates; the clients compute
    try:
        ppl, log, seconds = _fedavg(model, test, data, args, rounds, method, alpha, warmup_rounds)
    finally:
        torch.set_num_threads(threads)
    return LMHistory(
        method, np.asarray(ppl), pre_seconds, pre_bytes, sum(m.nbytes for m in log), seconds, log
    )
