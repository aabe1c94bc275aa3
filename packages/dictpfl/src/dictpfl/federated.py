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
from dictpfl.data import FederatedData
from dictpfl.he import HEContext
from dictpfl.model import MLP
from dictpfl.server import server_main
from paperkit import Described, check_choice, param_error

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
        """Final accuracy, mean MB per round (up + down), mean seconds per round."""
        return {
            "method": self.method,
            "final acc": float(self.acc[-1]),
            "MB/round": float(np.mean(self.bytes_up + self.bytes_down) / 1e6),
            "s/round": float(np.mean(self.t_round)),
            "shared coords": self.n_shared,
            "sent coords": float(np.mean(self.n_sent)),
        }


class Federation:
    """One server process and ``clients`` client processes, reusable across runs.

    Use as a context manager (or call :meth:`close`); processes are daemons, so they also end
    with the launcher.
    """

    def __init__(self, clients: int = 4):
        if isinstance(clients, bool) or not isinstance(clients, int) or clients < 2:
            raise param_error("clients", "Federation", "an integer >= 2", clients)
        self.clients = clients
        ctx = mp.get_context("spawn")
        links = [ctx.Pipe() for _ in range(clients)]
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
        self.closed = False

    def __enter__(self) -> Federation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the processes (politely, then by terminate)."""
        if self.closed:
            return
        self.closed = True
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


def _check(name: str, ok: bool, expected: str, got: Any) -> None:
    if not ok:
        raise param_error(name, "run_federated", expected, got)


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

    ``model=None`` pretrains the card's MLP 64-256-256 on ``data.public``. ``he=None`` creates a
    CKKS context (N = 8192, [60, 40, 40, 60], 2^40). ``encrypt=False`` runs the masked methods
    in plaintext (for equivalence checks). ``drop={round: [client ids]}`` makes those clients
    drop out after the round starts (the server times out after ``round_timeout`` s and
    aggregates the others). The PrME mask seed is ``seed``.
    """
    from dictpfl.model import pretrained_mlp

    check_choice("method", "run_federated", method, METHODS)
    if data is None:
        raise param_error("data", "run_federated", "a FederatedData", None, cls=TypeError)
    _check("clients", isinstance(clients, int) and clients >= 2, "an integer >= 2", clients)
    _check(
        "clients",
        len(data.clients) == clients,
        f"the number of client splits in data ({len(data.clients)})",
        clients,
    )
    _check("rounds", isinstance(rounds, int) and rounds >= 1, "a positive integer", rounds)
    _check("prune_ratio", 0 <= prune_ratio < 1, "in [0, 1)", prune_ratio)
    _check("reactivation", 0 <= reactivation <= 1, "in [0, 1]", reactivation)
    _check("bandwidth_mbps", bandwidth_mbps > 0, "positive", bandwidth_mbps)
    _check("fedml_frac", 0 < fedml_frac <= 1, "in (0, 1]", fedml_frac)
    d = data.n_features
    for k, (X, y) in enumerate(data.clients):
        _check(
            "data",
            X.ndim == 2 and X.shape[1] == d and len(X) == len(y) and len(y) > 0,
            f"clients with non-empty (n, {d}) features like the public split",
            Described(f"client {k} with features of shape {tuple(X.shape)}"),
        )
    if model is None:
        model = pretrained_mlp(data, seed=seed)
    _check("model", isinstance(model, MLP), "a dictpfl.model.MLP", Described(type(model).__name__))
    if method in DICT_METHODS:
        smallest = min(min(layer.weight.shape) for layer in model.body)
        _check("rank", isinstance(rank, int) and 1 <= rank <= smallest, f"in [1, {smallest}]", rank)
    uses_he = method != "plaintext" and (encrypt or method in ("fedhe_full", "fedml_he"))
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
        "n_features": d,
        "hidden": hidden,
        "n_classes": data.n_classes,
        "model_state": buf.getvalue(),
        "he_secret": he.to_bytes(secret=True) if uses_he else None,
        "test": tuple(t.numpy() for t in data.test),
    }
    drop = drop or {}
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
    _check("federation", fed.clients == clients, f"a Federation of {clients} clients", fed.clients)
    try:
        server, reports = fed.run(server_job, client_jobs, timeout=600.0 + rounds * round_timeout)
    finally:
        if owned:
            fed.close()
    return _history(
        method, server, reports, bandwidth_mbps, sum(p.numel() for p in model.parameters())
    )


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
