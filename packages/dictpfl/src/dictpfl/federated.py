"""Federated fine-tuning with the server and the clients in separate processes.

:class:`Federation` spawns one server process and K client processes (multiprocessing
"spawn"); each client talks to the server over its own OS pipe, where every message is one
``bytes`` payload (:mod:`dictpfl.messages`) whose length the server logs. The launcher (this
process) stands for the clients' trusted setup: it sends each client its data shard, the
pretrained model and the CKKS context with the secret key, and sends the server only the
public context; it never relays FL traffic. :func:`run_federated` runs one method through a
federation (a fresh one, or one kept open so several methods share the process start-up).

Methods (same data, model and rounds):

=============  ===============================  =====================================
method         shared vector                     sent per client per round
=============  ===============================  =====================================
plaintext      all parameters (full fine-tune)   float32 Δ, no encryption
fedhe_full     all parameters                    ⌈#params/slots⌉ ciphertexts
fedml_he       all parameters                    top-p sensitive part encrypted, rest plain
dictpfl        lookup tables + head (DePE)       PrME-masked entries, encrypted
depe_only      lookup tables + head              all entries, encrypted (s = 0)
prme_only      all parameters                    PrME-masked entries, encrypted
=============  ===============================  =====================================

Times are per-process CPU seconds: a round costs ``max_k(compute + encrypt) + aggregate +
max_k decrypt + transfer``, with ``transfer = 8·(bytes_up + bytes_down) / bandwidth`` (all
traffic through the server's link).
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing as mp
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from dictpfl.client import DICT_METHODS, client_main
from dictpfl.data import FederatedData, check_federated_data
from dictpfl.he import HEContext
from dictpfl.model import MLP
from dictpfl.server import server_main
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)

__all__ = ["METHODS", "FLHistory", "Federation", "run_federated"]

METHODS = ("plaintext", "fedhe_full", "fedml_he", "dictpfl", "depe_only", "prme_only")


@dataclass
class FLHistory:
    """Per-round measurements of one federated run (arrays of length R = rounds).

    ``acc``: test accuracy of the global model after each round; ``bytes_up``/``bytes_down``:
    payload bytes received/sent by the server; ``t_*``: seconds (CPU) per round;
    ``participants``: clients aggregated each round; ``n_sent``: coordinates each client sent;
    ``final``: the final shared vector of every client (equal up to noise: they stay in sync).
    """

    method: str
    acc: np.ndarray
    bytes_up: np.ndarray
    bytes_down: np.ndarray
    t_compute: np.ndarray
    t_encrypt: np.ndarray
    t_aggregate: np.ndarray
    t_decrypt: np.ndarray
    t_transfer: np.ndarray
    wall: np.ndarray
    participants: list[list[int]]
    n_sent: np.ndarray
    n_shared: int
    n_params: int
    setup_bytes: int
    final: list[np.ndarray]
    frozen: list[dict[str, torch.Tensor]]
    manifests: list[dict] = field(repr=False)
    payloads: list[bytes] | None = field(default=None, repr=False)
    server_has_secret_key: bool = False

    @property
    def t_round(self) -> np.ndarray:
        """Modelled round time: compute + encrypt + aggregate + decrypt + transfer."""
        return self.t_compute + self.t_encrypt + self.t_aggregate + self.t_decrypt + self.t_transfer

    def summary(self) -> dict[str, Any]:
        """Final accuracy, mean bytes per round (up + down), mean seconds per round."""
        return {
            "method": self.method,
            "final acc": float(self.acc[-1]),
            "bytes/round": float(np.mean(self.bytes_up + self.bytes_down)),
            "s/round": float(np.mean(self.t_round)),
            "shared coords": self.n_shared,
            "sent coords": float(np.mean(self.n_sent)),
        }


#: Memory one client or server process takes (torch and TenSEAL loaded, a small model).
PROCESS_BYTES = 400 * 2**20


class Federation:
    """One server process and ``clients`` client processes, reusable across runs.

    The processes start at the first :meth:`run`, so building a federation is cheap and its
    argument is checked at once (``clients`` >= 2, the processes fitting in memory). Use as a
    context manager (or call :meth:`close`); processes are daemons, so they also end with the
    launcher.
    """

    def __init__(self, clients: int = 4):
        clients = check_int("clients", "Federation", clients, low=2)
        check_memory("clients", "Federation", clients, (clients + 1) * PROCESS_BYTES)
        self.clients = clients
        self.closed = False
        self._server = None

    @property
    def started(self) -> bool:
        """Whether the processes have been started."""
        return self._server is not None

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        links = [ctx.Pipe() for _ in range(self.clients)]
        self._server_ctl, server_end = ctx.Pipe()
        self._server = ctx.Process(
            target=server_main, args=(server_end, [a for a, _ in links]), daemon=True
        )
        self._client_ctl = []
        self._clients = []
        for _, b in links:
            mine, theirs = ctx.Pipe()
            self._client_ctl.append(mine)
            self._clients.append(ctx.Process(target=client_main, args=(theirs, b), daemon=True))
        for p in (self._server, *self._clients):
            p.start()

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the processes (politely, then by terminate)."""
        if self.closed:
            return
        self.closed = True
        if not self.started:
            return
        for conn in (self._server_ctl, *self._client_ctl):
            with contextlib.suppress(OSError):
                conn.send(None)
        for p in (self._server, *self._clients):
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()

    def run(self, server_job: dict, client_jobs: list[dict], timeout: float) -> tuple[dict, list]:
        """Send the jobs, wait for every report; raise ValueError on a reported error.

        A run that does not finish (timeout, interrupt) closes the federation: its processes
        may be mid-protocol, and a later run must not read their stale reports.
        """
        if self.closed:
            raise RuntimeError("this Federation is closed (an earlier run did not finish)")
        if not self.started:
            self._start()
        finished = False
        try:
            self._server_ctl.send(server_job)
            for conn, job in zip(self._client_ctl, client_jobs, strict=True):
                conn.send(job)
            reports = []
            for name, conn in (
                ("server", self._server_ctl),
                *(("client", c) for c in self._client_ctl),
            ):
                if not conn.poll(timeout):
                    raise RuntimeError(f"the {name} process did not report within {timeout} s")
                reports.append(conn.recv())
            finished = True
        finally:
            if not finished:
                self.close()
        errors = [r["error"] for r in reports if "error" in r]
        if errors:
            raise ValueError("; ".join(errors))
        return reports[0], reports[1:]


def run_federated(
    method: str = "dictpfl",
    data: FederatedData | None = None,
    rounds: int = 20,
    clients: int = 4,
    rank: int = 8,
    prune_ratio: float = 0.7,
    reactivation: float = 0.2,
    bandwidth_mbps: float = 100.0,
    seed: int = 0,
    *,
    model: nn.Module | None = None,
    federation: Federation | None = None,
    he: HEContext | None = None,
    encrypt: bool = True,
    decay: float = 0.5,
    error_feedback: bool = False,
    fedml_frac: float = 0.1,
    local_epochs: int = 1,
    lr: float = 1e-3,
    batch_size: int = 32,
    drop: dict[int, list[int]] | None = None,
    round_timeout: float = 120.0,
    keep_payloads: bool = False,
) -> FLHistory:
    """Federated fine-tuning of ``model`` (an :class:`~dictpfl.model.MLP` with a ``head``) on
    ``data`` with one of :data:`METHODS`.

    ``model=None`` pretrains the reference MLP 64-256-256 on ``data.public``. ``he=None`` creates
    a CKKS context (N = 8192, [60, 40, 40, 60], 2^40). ``encrypt=False`` runs the masked methods
    in plaintext (for equivalence checks). ``drop={round: [client ids]}`` makes those clients
    drop out after the round starts (the server times out after ``round_timeout`` s and
    aggregates the others). The PrME mask seed is ``seed``.

    Every argument is checked before anything is pretrained or any process is started: ``data``
    as :func:`dictpfl.data.check_federated_data` requires (finite features: NaN is refused),
    ``clients`` equal to its client splits, ``model`` an MLP of ``data``'s input and class
    counts, ``rank`` in [1, the model's smallest layer width], ``he`` a context with the secret
    key, the ciphertexts of one round fitting in memory, and every count and rate in range.
    """
    owner = "run_federated"
    check_choice("method", owner, method, METHODS)
    if data is None:
        raise param_error("data", owner, "a FederatedData", None, cls=TypeError)
    check_federated_data("data", owner, data)
    rounds = check_int("rounds", owner, rounds, low=1)
    clients = check_int("clients", owner, clients, low=2)
    if len(data.clients) != clients:
        raise param_error(
            "clients", owner, f"the number of client splits in data ({len(data.clients)})", clients
        )
    rank = check_int("rank", owner, rank, low=1)
    prune_ratio = check_real("prune_ratio", owner, prune_ratio, low=0, high=1, high_open=True)
    reactivation = check_real("reactivation", owner, reactivation, low=0, high=1)
    bandwidth_mbps = check_real("bandwidth_mbps", owner, bandwidth_mbps, low=0, low_open=True)
    seed = check_int("seed", owner, seed, low=0)
    encrypt = check_bool("encrypt", owner, encrypt)
    decay = check_real("decay", owner, decay, low=0, high=1, high_open=True)
    error_feedback = check_bool("error_feedback", owner, error_feedback)
    fedml_frac = check_real("fedml_frac", owner, fedml_frac, low=0, high=1, low_open=True)
    local_epochs = check_int("local_epochs", owner, local_epochs, low=1)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch_size = check_int("batch_size", owner, batch_size, low=1)
    drop = _check_drop(owner, drop, rounds, clients)
    round_timeout = check_real("round_timeout", owner, round_timeout, low=0, low_open=True)
    keep_payloads = check_bool("keep_payloads", owner, keep_payloads)
    widths = _check_model(owner, model, data)
    if method in DICT_METHODS and rank > min(widths):
        raise param_error("rank", owner, f"an integer in [1, {min(widths)}]", rank)
    if federation is not None:
        if not isinstance(federation, Federation):
            raise param_error(
                "federation", owner, "a Federation", describe(federation), cls=TypeError
            )
        if federation.closed or federation.clients != clients:
            state = "closed" if federation.closed else "open"
            raise param_error(
                "federation",
                owner,
                f"an open Federation of {clients} clients",
                Described(f"a {state} one of {federation.clients}"),
            )
    uses_he = method != "plaintext" and (encrypt or method in ("fedhe_full", "fedml_he"))
    if he is not None:
        if not isinstance(he, HEContext):
            raise param_error("he", owner, "an HEContext", describe(he), cls=TypeError)
        if uses_he and not he.has_secret_key:
            raise param_error(
                "he",
                owner,
                "a context with the secret key (the clients decrypt)",
                Described("a public context"),
            )
    if uses_he:
        shared = _shared_size(method, widths, data.n_classes, rank)
        slots, one_ct = (he.slots, he.ciphertext_bytes) if he else (4096, 2 * 8192 * 4 * 8)
        need = (2 * clients + 2) * -(-shared // slots) * one_ct  # uploads, aggregate, copies
        check_memory("model", owner, describe(model), need)

    from dictpfl.model import pretrained_mlp

    if model is None:
        model = pretrained_mlp(data, seed=seed)
    if uses_he and he is None:
        he = HEContext.create()
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    hidden = [layer.out_features for layer in model.body]
    common = {
        "method": method,
        "rounds": rounds,
        "seed": seed,
        "mask_seed": seed,
        "rank": rank,
        "prune_ratio": 0.0 if method == "depe_only" else prune_ratio,
        "reactivation": reactivation,
        "decay": decay,
        "error_feedback": error_feedback,
        "fedml_frac": fedml_frac,
        "local_epochs": local_epochs,
        "lr": lr,
        "batch_size": batch_size,
        "encrypt": uses_he,
        "n_features": data.n_features,
        "hidden": hidden,
        "n_classes": data.n_classes,
        "model_state": buf.getvalue(),
        "he_secret": he.to_bytes(secret=True) if uses_he else None,
        "test": tuple(t.numpy() for t in data.test),
    }
    client_jobs = [
        {
            **common,
            "client_id": k,
            "data": tuple(t.numpy() for t in data.clients[k]),
            "drop_rounds": sorted(t for t, ids in drop.items() if k in ids),
        }
        for k in range(clients)
    ]
    server_job = {
        "method": method,
        "rounds": rounds,
        "he_public": he.public() if uses_he else None,
        "round_timeout": round_timeout,
        "join_timeout": 120.0,
        "keep_payloads": keep_payloads,
    }
    owned = federation is None
    fed = Federation(clients) if owned else federation
    try:
        server, reports = fed.run(server_job, client_jobs, timeout=600.0 + rounds * round_timeout)
    finally:
        if owned:
            fed.close()
    return _history(
        method, server, reports, bandwidth_mbps, sum(p.numel() for p in model.parameters())
    )


def _check_drop(owner: str, drop: Any, rounds: int, clients: int) -> dict[int, list[int]]:
    """None, or a dict of rounds in [0, rounds) to lists of client ids in [0, clients)."""
    if drop is None:
        return {}
    expected = f"a dict of rounds in [0, {rounds}) to lists of client ids in [0, {clients})"
    if not isinstance(drop, dict):
        raise param_error("drop", owner, expected, describe(drop), cls=TypeError)
    for t, ids in drop.items():
        if (
            isinstance(t, bool)
            or not isinstance(t, int)
            or not isinstance(ids, (list, tuple))
            or not all(isinstance(k, int) and not isinstance(k, bool) for k in ids)
        ):
            raise param_error("drop", owner, expected, drop, cls=TypeError)
        if not 0 <= t < rounds or not all(0 <= k < clients for k in ids):
            raise param_error("drop", owner, expected, drop)
    return {t: list(ids) for t, ids in drop.items()}


def _check_model(owner: str, model: Any, data: FederatedData) -> list[int]:
    """The layer widths (input, then each body layer's output) of ``model``, an MLP of
    ``data``'s feature and class counts, or of the reference MLP 64-256-256 when None."""
    if model is None:
        return [data.n_features, 256, 256]
    if not isinstance(model, MLP):
        raise param_error("model", owner, "a dictpfl.model.MLP", describe(model), cls=TypeError)
    d_in, k = model.body[0].in_features, model.head.out_features
    if d_in != data.n_features or k != data.n_classes:
        raise param_error(
            "model",
            owner,
            f"an MLP of {data.n_features} inputs and {data.n_classes} classes (as data)",
            Described(f"an MLP of {d_in} inputs and {k} classes"),
        )
    return [d_in, *(layer.out_features for layer in model.body)]


def _shared_size(method: str, widths: list[int], n_classes: int, rank: int) -> int:
    """P, the shared coordinates of ``method`` on an MLP of layer widths ``widths``: the
    tables r·d_in of every body layer plus the head for the dictionary methods, every parameter
    otherwise."""
    head = (widths[-1] + 1) * n_classes
    if method in DICT_METHODS:
        return rank * sum(widths[:-1]) + head
    return sum((a + 1) * b for a, b in zip(widths, widths[1:], strict=False)) + head


def _history(
    method: str, server: dict, reports: list[dict], bandwidth_mbps: float, n_params: int
) -> FLHistory:
    rounds = server["rounds"]
    R = len(rounds)

    def worst(key: str) -> np.ndarray:
        return np.array(
            [max((r["stats"][t].get(key, 0.0) for r in reports), default=0.0) for t in range(R)]
        )

    up = np.array([r["bytes_up"] for r in rounds], dtype=float)
    down = np.array([r["bytes_down"] for r in rounds], dtype=float)
    return FLHistory(
        method=method,
        acc=np.array([reports[0]["stats"][t]["acc"] for t in range(R)]),
        bytes_up=up,
        bytes_down=down,
        t_compute=worst("t_compute"),
        t_encrypt=worst("t_encrypt"),
        t_aggregate=np.array([r["t_aggregate"] for r in rounds]),
        t_decrypt=worst("t_decrypt"),
        t_transfer=8 * (up + down) / (bandwidth_mbps * 1e6),
        wall=np.array([r["wall"] for r in rounds]),
        participants=[r["participants"] for r in rounds],
        n_sent=np.array([reports[0]["stats"][t]["n_sent"] for t in range(R)]),
        n_shared=int(reports[0]["P"]),
        n_params=n_params,
        setup_bytes=int(server["setup_bytes"]),
        final=[r["final"] for r in reports],
        frozen=[r["frozen"] for r in reports],
        manifests=server["manifests"],
        payloads=server["payloads"],
        server_has_secret_key=server["server_has_secret_key"],
    )
