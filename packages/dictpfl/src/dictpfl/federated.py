"""Federated fine-tuning on Flower: one ServerApp, K ClientApps, CKKS ciphertexts between them.

The server (:mod:`dictpfl.serverapp`) runs the :class:`~dictpfl.serverapp.EncryptedFedAvg`
strategy with the public CKKS context only; each client (:mod:`dictpfl.clientapp`) holds the
secret key, its data shard and its own log, given by the trusted setup
(:class:`~dictpfl.config.ClientSetup`): the launcher, which never relays federated traffic.
:func:`run_federated` runs one method, :func:`run_methods` several on the same federation
(one engine start-up), in Flower's simulation engine (``engine="simulation"``, Ray) or with
the ClientApps in threads of this process (``engine="inprocess"``, the same messages without
the start-up of Ray's workers).

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

Times are CPU seconds of each app: a round costs ``max_k(compute + encrypt) + aggregate +
max_k decrypt + transfer``, with ``transfer = 8·(bytes_up + bytes_down) / bandwidth`` (all
traffic through the server's link; bytes as Flower serialises the messages).
"""

from __future__ import annotations

import logging
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch
from flwr.app import ArrayRecord, Context, Error, Message, RecordDict
from flwr.clientapp import ClientApp
from flwr.serverapp import Grid, ServerApp
from torch import nn

from dictpfl.clientapp import DICT_METHODS, make_client_app, setups_by_partition
from dictpfl.config import FAULTS, METHODS, ClientSetup, JobConfig
from dictpfl.data import FederatedData, check_federated_data
from dictpfl.he import HEContext
from dictpfl.model import MLP
from dictpfl.serverapp import ServerLog, make_server_app
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

__all__ = ["ENGINES", "METHODS", "FLHistory", "InProcessGrid", "run_federated", "run_methods"]


@dataclass
class FLHistory:
    """Per-round measurements of one federated run (arrays of length R = rounds).

    ``acc``: test accuracy of the global model after each round; ``bytes_up``/``bytes_down``:
    payload bytes received/sent by the server; ``t_*``: seconds (CPU) per round;
    ``participants``: clients aggregated each round; ``n_sent``: coordinates each client sent;
    ``final``/``frozen``: each client's final shared vector and frozen dictionaries, from its
    own log; ``manifests``: every message the server sent or received; ``rejected``: the
    replies the server refused, with the reason; ``digests``: the SHA-256 of each client's
    final shared vector, as the client reported it to the server (equal: clients stay in
    sync); ``payloads``/``updates``: the serialised update messages of round 0 and their
    ciphertexts (``keep_payloads``).
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
    rejected: list[dict] = field(default_factory=list)
    digests: dict[int, str] = field(default_factory=dict)
    payloads: list[bytes] = field(default_factory=list, repr=False)
    updates: list[list[bytes]] = field(default_factory=list, repr=False)
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


ENGINES = ("simulation", "inprocess")

#: Memory one simulated client takes (torch and TenSEAL loaded, a small model).
PROCESS_BYTES = 400 * 2**20


class InProcessGrid(Grid):
    """A Flower grid whose nodes run the ClientApp in this process, one thread per node.

    Messages are real Flower messages and each node keeps its ``context.state`` between them,
    as in the simulation engine; only the transport is a function call. A node works on its
    messages one at a time, so a slow node answers late exactly as a remote one would; an
    exception in the ClientApp becomes an error reply, as Flower's runtimes return it.
    """

    def __init__(self, client_app: ClientApp, n_nodes: int, run_id: int = 1):
        from concurrent.futures import ThreadPoolExecutor

        from flwr.supercore.task_identity import TaskIdentity

        TaskIdentity.run_id, TaskIdentity.node_id, TaskIdentity.task_id = run_id, 1, 1
        self.app, self._run_id = client_app, run_id
        self.nodes = {
            1000 + k: (
                Context(
                    run_id=run_id,
                    node_id=1000 + k,
                    node_config={"partition-id": k, "num-partitions": n_nodes},
                    state=RecordDict(),
                    run_config={},
                ),
                ThreadPoolExecutor(max_workers=1),
            )
            for k in range(n_nodes)
        }
        self.futures: dict[str, Any] = {}

    def set_run(self, run) -> None:
        self._run = run

    @property
    def run(self):
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self) -> list[int]:
        return list(self.nodes)

    def push_messages(self, messages) -> list[str]:
        ids = []
        for msg in messages:
            msg.metadata.__dict__["_message_id"] = uuid.uuid4().hex
            context, pool = self.nodes[msg.metadata.dst_node_id]
            self.futures[msg.metadata.message_id] = pool.submit(self._handle, msg, context)
            ids.append(msg.metadata.message_id)
        return ids

    def _handle(self, msg: Message, context: Context) -> Message:
        try:
            return self.app(msg, context)
        except Exception as exc:  # Flower's runtimes answer a failed ClientApp with an error
            return Message(Error(code=0, reason=f"{type(exc).__name__}: {exc}"), reply_to=msg)

    def pull_messages(self, message_ids) -> list[Message]:
        done = [i for i in message_ids if i in self.futures and self.futures[i].done()]
        return [self.futures.pop(i).result() for i in done]

    def send_and_receive(self, messages, *, timeout=None) -> list[Message]:
        ids = set(self.push_messages(messages))
        end = time.monotonic() + (timeout if timeout is not None else float("inf"))
        out: list[Message] = []
        while ids and time.monotonic() < end:
            got = self.pull_messages(ids)
            out += got
            ids -= {m.metadata.reply_to_message_id for m in got}
            if ids:
                time.sleep(0.01)
        return out

    def close(self) -> None:
        for _, pool in self.nodes.values():
            pool.shutdown(wait=True, cancel_futures=True)


def _simulate(server_app: ServerApp, client_app: ClientApp, clients: int) -> None:
    """Run the apps in Flower's simulation engine (Ray), one CPU per ClientApp worker."""
    import os

    from flwr.simulation import run_simulation

    # Ray's metrics exporter and dashboard are not needed here; without them Ray starts faster
    # and a busy machine does not time out its dashboard agent
    os.environ.setdefault("RAY_enable_metrics_collection", "0")
    run_simulation(
        server_app=server_app,
        client_app=client_app,
        num_supernodes=clients,
        backend_config={
            "client_resources": {"num_cpus": 1, "num_gpus": 0.0},
            "init_args": {"include_dashboard": False},
        },
    )


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
    **options: Any,
) -> FLHistory:
    """Federated fine-tuning of ``model`` (an :class:`~dictpfl.model.MLP` with a ``head``) on
    ``data`` with one of :data:`METHODS`; :func:`run_methods` with one method (same options).
    """
    check_choice("method", "run_federated", method, METHODS)
    return run_methods(
        (method,),
        data,
        rounds,
        clients,
        rank,
        prune_ratio,
        reactivation,
        bandwidth_mbps,
        seed,
        **options,
    )[method]


def run_methods(
    methods: tuple[str, ...] = METHODS,
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
    he: HEContext | None = None,
    engine: str = "simulation",
    encrypt: bool = True,
    decay: float = 0.5,
    error_feedback: bool = False,
    fedml_frac: float = 0.1,
    local_epochs: int = 1,
    lr: float = 1e-3,
    batch_size: int = 32,
    faults: dict[int, dict[int, str]] | None = None,
    round_timeout: float = 120.0,
    setup_timeout: float = 300.0,
    keep_payloads: bool = False,
) -> dict[str, FLHistory]:
    """Run each of ``methods`` in turn on one Flower federation of ``clients`` ClientApps.

    ``model=None`` pretrains the reference MLP 64-256-256 on ``data.public``. ``he=None`` creates
    a CKKS context (N = 8192, [60, 40, 40, 60], 2^40); the server gets only its public part.
    ``engine``: ``"simulation"`` (Flower's simulation engine) or ``"inprocess"`` (the same apps
    and messages, ClientApps in threads). ``encrypt=False`` runs the masked methods in
    plaintext (for equivalence checks). ``faults={round: {client: fault}}`` makes clients fail
    in a round of every method (a fault of :data:`dictpfl.config.FAULTS`): the server times out
    after ``round_timeout`` s, rejects what is malformed and aggregates the others.
    ``setup_timeout`` bounds the wait for the clients to start and answer the setup. The PrME
    mask seed is ``seed``.

    Every argument is checked before anything is pretrained or any app is started: ``data``
    as :func:`dictpfl.data.check_federated_data` requires (finite features: NaN is refused),
    ``clients`` equal to its client splits, ``model`` an MLP of ``data``'s input and class
    counts, ``rank`` in [1, the model's smallest layer width], ``he`` a context with the secret
    key, the ciphertexts of one round fitting in memory, and every count and rate in range.
    """
    owner = "run_methods"
    if isinstance(methods, str) or not isinstance(methods, (tuple, list)) or not methods:
        raise param_error("methods", owner, f"a non-empty tuple of {METHODS}", describe(methods))
    for m in methods:
        check_choice("methods", owner, m, METHODS)
    if data is None:
        raise param_error("data", owner, "a FederatedData", None, cls=TypeError)
    check_federated_data("data", owner, data)
    rounds = check_int("rounds", owner, rounds, low=1)
    clients = check_int("clients", owner, clients, low=2)
    if len(data.clients) != clients:
        raise param_error(
            "clients", owner, f"the number of client splits in data ({len(data.clients)})", clients
        )
    check_memory("clients", owner, clients, (clients + 1) * PROCESS_BYTES)
    rank = check_int("rank", owner, rank, low=1)
    prune_ratio = check_real("prune_ratio", owner, prune_ratio, low=0, high=1, high_open=True)
    reactivation = check_real("reactivation", owner, reactivation, low=0, high=1)
    bandwidth_mbps = check_real("bandwidth_mbps", owner, bandwidth_mbps, low=0, low_open=True)
    seed = check_int("seed", owner, seed, low=0)
    engine = check_choice("engine", owner, engine, ENGINES)
    encrypt = check_bool("encrypt", owner, encrypt)
    decay = check_real("decay", owner, decay, low=0, high=1, high_open=True)
    error_feedback = check_bool("error_feedback", owner, error_feedback)
    fedml_frac = check_real("fedml_frac", owner, fedml_frac, low=0, high=1, low_open=True)
    local_epochs = check_int("local_epochs", owner, local_epochs, low=1)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch_size = check_int("batch_size", owner, batch_size, low=1)
    faults = _check_faults(owner, faults, rounds, clients)
    round_timeout = check_real("round_timeout", owner, round_timeout, low=0, low_open=True)
    setup_timeout = check_real("setup_timeout", owner, setup_timeout, low=0, low_open=True)
    keep_payloads = check_bool("keep_payloads", owner, keep_payloads)
    widths = _check_model(owner, model, data)
    if any(m in DICT_METHODS for m in methods) and rank > min(widths):
        raise param_error("rank", owner, f"an integer in [1, {min(widths)}]", rank)
    uses_he = {
        m: m != "plaintext" and (encrypt or m in ("fedhe_full", "fedml_he")) for m in methods
    }
    if he is not None:
        if not isinstance(he, HEContext):
            raise param_error("he", owner, "an HEContext", describe(he), cls=TypeError)
        if any(uses_he.values()) and not he.has_secret_key:
            raise param_error(
                "he",
                owner,
                "a context with the secret key (the clients decrypt)",
                Described("a public context"),
            )
    for m in methods:
        if uses_he[m]:
            shared = _shared_size(m, widths, data.n_classes, rank)
            slots, one_ct = (he.slots, he.ciphertext_bytes) if he else (4096, 2 * 8192 * 4 * 8)
            need = (2 * clients + 2) * -(-shared // slots) * one_ct  # uploads, aggregate, copies
            check_memory("model", owner, describe(model), need)

    from dictpfl.model import pretrained_mlp

    if model is None:
        model = pretrained_mlp(data, seed=seed)
    if any(uses_he.values()) and he is None:
        he = HEContext.create()
    hidden = tuple(layer.out_features for layer in model.body)
    jobs = [
        JobConfig(
            method=m,
            job=j,
            rounds=rounds,
            seed=seed,
            rank=rank,
            prune_ratio=0.0 if m == "depe_only" else prune_ratio,
            reactivation=reactivation,
            decay=decay,
            error_feedback=error_feedback,
            fedml_frac=fedml_frac,
            local_epochs=local_epochs,
            lr=lr,
            batch_size=batch_size,
            encrypt=uses_he[m],
            n_features=data.n_features,
            hidden=hidden,
            n_classes=data.n_classes,
        )
        for j, m in enumerate(methods)
    ]
    n_params = sum(p.numel() for p in model.parameters())
    with tempfile.TemporaryDirectory(prefix="dictpfl-") as logs:
        setups = [
            ClientSetup(
                partition=k,
                secret_context=he.to_bytes(secret=True) if he is not None else None,
                data=tuple(t.numpy() for t in data.clients[k]),
                test=tuple(t.numpy() for t in data.test),
                log_dir=str(Path(logs) / f"client-{k}"),
                faults={
                    j: {t: f[k] for t, f in faults.items() if k in f} for j in range(len(jobs))
                },
                late_s=1.2 * round_timeout + 1.0,
            )
            for k in range(clients)
        ]
        records: list[ServerLog] = []
        server_app = make_server_app(
            jobs,
            HEContext.from_bytes(he.public()) if he is not None else None,
            ArrayRecord(model.state_dict()),
            clients,
            records,
            round_timeout=round_timeout,
            setup_timeout=setup_timeout,
            keep_payloads=keep_payloads,
        )
        client_app = make_client_app(setups_by_partition(setups))
        flwr_log = logging.getLogger("flwr")
        level = flwr_log.level
        flwr_log.setLevel(logging.WARNING)  # the strategy's per-round INFO lines, for every job
        try:
            _run_engine(engine, server_app, client_app, clients)
        finally:
            flwr_log.setLevel(level)
        if len(records) != len(jobs):
            raise RuntimeError(
                f"the ServerApp finished {len(records)} of {len(jobs)} jobs (see its log above)"
            )
        return {
            cfg.method: _history(
                cfg, rec, _client_reports(logs, cfg.job, clients), bandwidth_mbps, n_params
            )
            for cfg, rec in zip(jobs, records, strict=True)
        }


def _run_engine(engine: str, server_app: ServerApp, client_app: ClientApp, clients: int) -> None:
    if engine == "simulation":
        _simulate(server_app, client_app, clients)
        return
    grid = InProcessGrid(client_app, clients)
    try:
        server_app(
            grid, Context(run_id=1, node_id=1, node_config={}, state=RecordDict(), run_config={})
        )
    finally:
        grid.close()


def _client_reports(logs: str, job: int, clients: int) -> list[dict]:
    """The reports the clients wrote into their own logs at the end of ``job``."""
    reports = []
    for k in range(clients):
        path = Path(logs) / f"client-{k}" / f"job-{job}-client-{k}.pt"
        if path.is_file():
            reports.append(torch.load(path, weights_only=False))
    return reports


def _check_faults(owner: str, faults: Any, rounds: int, clients: int) -> dict[int, dict[int, str]]:
    """None, or a dict of rounds in [0, rounds) to dicts of client ids in [0, clients) to
    faults of :data:`FAULTS`."""
    if faults is None:
        return {}
    expected = (
        f"a dict of rounds in [0, {rounds}) to dicts of client ids in [0, {clients}) to one of "
        f"{FAULTS}"
    )
    if not isinstance(faults, dict):
        raise param_error("faults", owner, expected, describe(faults), cls=TypeError)
    for t, per in faults.items():
        if (
            isinstance(t, bool)
            or not isinstance(t, int)
            or not isinstance(per, dict)
            or not all(isinstance(k, int) and not isinstance(k, bool) for k in per)
        ):
            raise param_error("faults", owner, expected, faults, cls=TypeError)
        if (
            not 0 <= t < rounds
            or not all(0 <= k < clients for k in per)
            or not all(f in FAULTS for f in per.values())
        ):
            raise param_error("faults", owner, expected, faults)
    return {t: dict(per) for t, per in faults.items()}


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
    cfg: JobConfig, rec: ServerLog, reports: list[dict], bandwidth_mbps: float, n_params: int
) -> FLHistory:
    R = cfg.rounds

    def worst(key: str) -> np.ndarray:
        return np.array(
            [
                max((r["stats"].get(f"{key}.{t}", 0.0) for r in reports), default=0.0)
                for t in range(R)
            ]
        )

    rows = {r["round"]: r for r in rec.rounds}
    up = np.array([rows[t]["bytes_up"] if t in rows else 0 for t in range(R)], dtype=float)
    down = np.array([rows[t]["bytes_down"] if t in rows else 0 for t in range(R)], dtype=float)
    return FLHistory(
        method=cfg.method,
        acc=np.array([rows[t]["acc"] if t in rows else np.nan for t in range(R)]),
        bytes_up=up,
        bytes_down=down,
        t_compute=worst("t_compute"),
        t_encrypt=worst("t_encrypt"),
        t_aggregate=np.array(
            [rows[t].get("t_aggregate", 0.0) if t in rows else 0.0 for t in range(R)]
        ),
        t_decrypt=worst("t_decrypt_eval"),
        t_transfer=8 * (up + down) / (bandwidth_mbps * 1e6),
        wall=np.array([rows[t]["wall"] if t in rows else np.nan for t in range(R)]),
        participants=[rows[t].get("participants", []) if t in rows else [] for t in range(R)],
        n_sent=worst("n_sent"),
        n_shared=int(reports[0]["P"]) if reports else 0,
        n_params=n_params,
        setup_bytes=int(rec.setup_bytes),
        final=[r["final"] for r in reports],
        frozen=[r["frozen"] for r in reports],
        manifests=rec.manifests,
        rejected=rec.rejected,
        digests=rec.digests,
        payloads=rec.payloads,
        updates=rec.updates,
        server_has_secret_key=rec.server_has_secret_key,
    )
