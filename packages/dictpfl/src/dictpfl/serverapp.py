"""The Flower ServerApp and its strategy: aggregation on ciphertexts, never a secret key.

:class:`EncryptedFedAvg` is a Flower :class:`~flwr.serverapp.strategy.Strategy`, run by the
strategy's own ``start`` loop. Round t (``server_round`` = t + 1):

* ``configure_train``: a ``train`` message to every client that has no message in flight,
  carrying the aggregates it has not applied yet (a late client catches up here);
* ``aggregate_train``: check each reply (an error reply, a reply to another round or job, an
  undecodable or wrongly sized ciphertext is rejected and logged), then

      c_t = Σ_{k ∈ S_t} w_k · Enc(Δ_k[m_t]),   w_k = n_k / Σ_{j ∈ S_t} n_j,

  on ciphertexts (plaintext parts, for the baselines that send them, summed the same way in
  float64). The weights are renormalised over the accepted replies S_t, so the round is an
  exact FedAvg step of the clients that answered; a late reply is discarded (never counted
  twice) and its client receives c_t later;
* ``configure_evaluate``: c_t to every free client, which decrypts and applies it; client 0
  answers the test accuracy.

A client keeps one message in flight at most: a client still busy with an earlier message is
left out until its reply (late, discarded) has come back. Before the rounds, a setup query
sends the job's public configuration and the pretrained model (and, for FedML-HE, agrees the
sensitive set under HE); after them, a finish query delivers the last aggregates. Every message
in and out is logged by its :func:`~dictpfl.wire.manifest`, bytes counted as Flower sends them.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from flwr.app import ArrayRecord, ConfigRecord, Context, Message, MetricRecord, RecordDict
from flwr.serverapp import Grid, ServerApp
from flwr.serverapp.strategy import Strategy

from dictpfl.config import JobConfig
from dictpfl.he import HEContext
from dictpfl.wire import ciphertext_record, ciphertexts, manifest, plaintext, serialise

__all__ = ["EncryptedFedAvg", "ServerLog", "make_server_app", "run_job"]

log = logging.getLogger("dictpfl.server")


@dataclass
class ServerLog:
    """What the server saw of one job: per-round records, every message's manifest, rejected
    replies with their reason, and (when asked) the serialised update messages of round 0 and
    their ciphertexts."""

    job: int
    rounds: list[dict] = field(default_factory=list)
    manifests: list[dict] = field(default_factory=list)
    rejected: list[dict] = field(default_factory=list)
    payloads: list[bytes] = field(default_factory=list)
    updates: list[list[bytes]] = field(default_factory=list)
    setup_bytes: int = 0
    digests: dict[int, str] = field(default_factory=dict)
    server_has_secret_key: bool = False


class EncryptedFedAvg(Strategy):
    """FedAvg over CKKS ciphertexts (and plaintext parts) of the clients that answer.

    Args:
        cfg: the job's public configuration.
        he: the public CKKS context (None for the plaintext methods); a context with a secret
            key is refused.
        nodes: node id → client index, for the clients that joined.
        n_samples: node id → its sample count (the FedAvg weights).
        record: where the rounds and manifests are logged.
        keep_payloads: keep the serialised update messages of round 0 (for audits).
    """

    def __init__(
        self,
        cfg: JobConfig,
        he: HEContext | None,
        nodes: dict[int, int],
        n_samples: dict[int, int],
        record: ServerLog,
        keep_payloads: bool = False,
    ):
        if he is not None and he.has_secret_key:
            raise ValueError("the server must get the public CKKS context, not the secret key")
        self.cfg, self.nodes, self.n = cfg, dict(nodes), dict(n_samples)
        self.he = he if cfg.encrypt else None
        self.record, self.keep = record, keep_payloads
        self.applied = dict.fromkeys(nodes, -1)  # last aggregate each client applied
        self.aggregates: dict[int, ArrayRecord] = {}
        self.in_flight: dict[int, str] = {}  # node → message id awaiting a reply
        self.sent: dict[str, tuple[int, str, int]] = {}  # message id → (node, kind, round)
        self._pending: list[tuple[Message, dict]] = []
        self._round_row: dict | None = None

    # -- messages ---------------------------------------------------------------------------

    def _free_nodes(self, grid: Grid) -> list[int]:
        """Clients without a message in flight (late replies that came back are discarded)."""
        if self.in_flight:
            for reply in grid.pull_messages(list(self.in_flight.values())):
                self._log_in(reply, late=True)
        return [node for node in self.nodes if node not in self.in_flight]

    def _message(self, node: int, kind: str, t: int, content: RecordDict) -> Message:
        for s in range(self.applied[node] + 1, t + (kind != "train")):
            content[f"agg.{s}"] = self.aggregates[s]
        msg = Message(content, dst_node_id=node, message_type=kind, group_id=str(t))
        # measured before the push: once pushed, the engine may serialise it concurrently
        self._pending.append((msg, manifest(msg, "down", self.nodes[node], t)))
        return msg

    def _track(self, t: int) -> None:
        """After the strategy's send: note each message's id and log it."""
        for msg, entry in self._pending:
            node = msg.metadata.dst_node_id
            self.in_flight[node] = msg.metadata.message_id
            self.sent[msg.metadata.message_id] = (node, msg.metadata.message_type, t)
            self._log_out(entry, t)
        self._pending = []

    def _log_out(self, entry: dict, t: int) -> None:
        entry["round"] = t
        self.record.manifests.append(entry)
        if self._round_row is not None:
            self._round_row["bytes_down"] += entry["bytes"]

    def _log_in(self, reply: Message, late: bool = False) -> tuple[int, str, int] | None:
        """Log a reply; free its node; return (node, kind, round) of the message it answers."""
        origin = self.sent.get(reply.metadata.reply_to_message_id)
        if origin is None:
            return None
        node, kind, t = origin
        if self.in_flight.get(node) == reply.metadata.reply_to_message_id:
            del self.in_flight[node]
        entry = manifest(reply, "up", self.nodes[node], t)
        entry["late"] = late
        self.record.manifests.append(entry)
        if self._round_row is not None:
            self._round_row["bytes_up"] += entry["bytes"]
        if late:
            self._reject(node, t, f"late reply to the {kind} message of round {t}: discarded")
        return origin

    def _reject(self, node: int, t: int, why: str) -> None:
        self.record.rejected.append({"round": t, "client": self.nodes[node], "reason": why})
        log.warning("round %d, client %d: %s", t, self.nodes[node], why)

    # -- Strategy ---------------------------------------------------------------------------

    def configure_train(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        t = server_round - 1
        self._round_row = {"round": t, "bytes_up": 0, "bytes_down": 0, "wall": time.perf_counter()}
        msgs = []
        for node in self._free_nodes(grid):
            content = RecordDict({"config": ConfigRecord({"round": t, "job": self.cfg.job})})
            msgs.append(self._message(node, "train", t, content))
        return _Tracked(msgs, lambda: self._track(t))

    def aggregate_train(
        self, server_round: int, replies: Iterable[Message]
    ) -> tuple[ArrayRecord | None, MetricRecord | None]:
        t = server_round - 1
        updates: dict[int, tuple[list[bytes], np.ndarray | None, int]] = {}
        for reply in replies:
            origin = self._log_in(reply)
            if origin is None or origin[1] != "train" or origin[2] != t:
                continue
            node = origin[0]
            try:
                updates[node] = self._check_update(reply, t)
            except ValueError as exc:
                self._reject(node, t, str(exc))
                continue
            if self.keep and t == 0:
                self.record.payloads.append(serialise(reply))
                self.record.updates.append(updates[node][0])
        updates = self._agree_on_size(updates, t)
        c0 = time.process_time()
        aggregate = self._aggregate(updates)
        t_aggregate = time.process_time() - c0
        self.aggregates[t] = aggregate
        self._round_row.update(participants=sorted(self.nodes[k] for k in updates))
        self._round_row["t_aggregate"] = t_aggregate
        return aggregate, MetricRecord({"participants": len(updates)})

    def configure_evaluate(
        self, server_round: int, arrays: ArrayRecord, config: ConfigRecord, grid: Grid
    ) -> Iterable[Message]:
        t = server_round - 1
        msgs = [
            self._message(node, "evaluate", t, RecordDict({"config": ConfigRecord({"round": t})}))
            for node in self._free_nodes(grid)
        ]
        return _Tracked(msgs, lambda: self._track(t))

    def aggregate_evaluate(self, server_round: int, replies: Iterable[Message]) -> MetricRecord:
        t = server_round - 1
        acc = float("nan")
        for reply in replies:
            origin = self._log_in(reply)
            if origin is None or reply.has_error():
                if origin is not None:
                    self._reject(origin[0], t, f"evaluate failed: {reply.error.reason}")
                continue
            node = origin[0]
            metrics = reply.content["metrics"]
            self.applied[node] = int(metrics["applied"])
            if "acc" in metrics:
                acc = float(metrics["acc"])
        row = self._round_row
        row["acc"] = acc
        row["wall"] = time.perf_counter() - row["wall"]
        self.record.rounds.append(row)
        self._round_row = None
        return MetricRecord({"acc": acc})

    def summary(self) -> None:
        log.info("EncryptedFedAvg: method %s, %d clients", self.cfg.method, len(self.nodes))

    # -- checks and aggregation -------------------------------------------------------------

    def _check_update(self, reply: Message, t: int) -> tuple[list[bytes], np.ndarray | None, int]:
        """The ciphertexts, plaintext part and coordinate count of a train reply; ValueError
        with the reason when the reply is an error or malformed."""
        if reply.has_error():
            raise ValueError(f"the client failed: {reply.error.reason}")
        try:
            info, update = reply.content["info"], reply.content["update"]
            if int(info["round"]) != t or int(info["job"]) != self.cfg.job:
                raise ValueError(f"a reply for round {info['round']} of job {info['job']}")
            n_sent = int(info["n_sent"])
            ct, plain = ciphertexts(update), plaintext(update)
        except (KeyError, TypeError) as exc:
            raise ValueError(f"a malformed update message ({exc!r})") from exc
        if self.he is not None:
            self.he.check_ciphertexts(ct, n_sent)
        elif ct:
            raise ValueError("ciphertexts in an unencrypted method's update")
        elif plain is None or plain.size != n_sent:
            raise ValueError(f"a plaintext update of {0 if plain is None else plain.size} values")
        return ct, plain, n_sent

    def _agree_on_size(self, updates: dict, t: int) -> dict:
        """Keep the replies whose mask size (and plaintext size) the majority shares: every
        client computes the same mask, so a different size is a broken client."""
        if not updates:
            return updates
        shape = {k: (u[2], None if u[1] is None else u[1].size) for k, u in updates.items()}
        common, _ = Counter(shape.values()).most_common(1)[0]
        for k in [k for k, s in shape.items() if s != common]:
            self._reject(k, t, f"update of size {shape[k]} differs from the round's {common}")
            del updates[k]
        return updates

    def _aggregate(self, updates: dict) -> ArrayRecord:
        """``Σ w_k c_k`` over the accepted updates (an empty record when there are none)."""
        if not updates:
            return ArrayRecord()
        ids = sorted(updates)
        total = sum(self.n[k] for k in ids)
        w = [self.n[k] / total for k in ids]
        ct = []
        if updates[ids[0]][0]:
            ct = self.he.weighted_sum([updates[k][0] for k in ids], w)
        plain = None
        if updates[ids[0]][1] is not None:
            plain = sum(wk * updates[k][1].astype(np.float64) for k, wk in zip(ids, w, strict=True))
        return ciphertext_record(ct, plain)


class _Tracked(list):
    """The messages of one send; the strategy notes their ids once the grid has pushed them
    (Flower assigns a message's id when it is pushed)."""

    def __init__(self, msgs: list[Message], after_push):
        super().__init__(msgs)
        self.after_push = after_push


def run_job(
    grid: Grid,
    cfg: JobConfig,
    he: HEContext | None,
    model: ArrayRecord,
    n_clients: int,
    *,
    round_timeout: float,
    setup_timeout: float,
    keep_payloads: bool = False,
) -> ServerLog:
    """One method's run on ``grid``: setup query, ``cfg.rounds`` rounds of
    :class:`EncryptedFedAvg`, finish query. Waits up to ``setup_timeout`` for ``n_clients``
    nodes to connect and answer the setup."""
    record = ServerLog(
        job=cfg.job, server_has_secret_key=bool(he is not None and he.has_secret_key)
    )
    deadline = time.monotonic() + setup_timeout
    while len(list(grid.get_node_ids())) < n_clients:
        if time.monotonic() > deadline:
            raise RuntimeError(f"fewer than {n_clients} clients connected in {setup_timeout} s")
        time.sleep(0.1)
    node_ids = sorted(grid.get_node_ids())[:n_clients]
    setup = [
        Message(
            RecordDict(
                {
                    "config": ConfigRecord({**cfg.to_record(), "phase": "setup"}),
                    "model": model,
                }
            ),
            dst_node_id=node,
            message_type="query",
        )
        for node in node_ids
    ]
    for msg in setup:
        entry = manifest(msg, "down", -1, -1)
        record.manifests.append(entry)
        record.setup_bytes += entry["bytes"]
    nodes, n_samples, shared, sens = {}, {}, {}, {}
    for reply in grid.send_and_receive(setup, timeout=setup_timeout):
        node = reply.metadata.src_node_id
        if reply.has_error():
            log.warning("node %d failed its setup: %s", node, reply.error.reason)
            continue
        info = reply.content["info"]
        nodes[node] = int(info["partition"])
        n_samples[node] = int(info["n_samples"])
        shared[node] = int(info["n_shared"])
        if "sens" in reply.content:
            sens[node] = ciphertexts(reply.content["sens"])
        entry = manifest(reply, "up", nodes[node], -1)
        record.manifests.append(entry)
        record.setup_bytes += entry["bytes"]
    if len(nodes) < 2:
        raise RuntimeError(f"{len(nodes)} client(s) answered the setup; 2 are needed")
    if len(set(shared.values())) > 1:
        raise RuntimeError(f"clients hold models of different shared sizes {shared}")
    if cfg.method == "fedml_he":
        _agree_sensitivity(grid, cfg, he, nodes, n_samples, sens, record, setup_timeout)
    strategy = EncryptedFedAvg(cfg, he, nodes, n_samples, record, keep_payloads)
    tracking = _TrackingGrid(grid)
    strategy.start(
        grid=tracking, initial_arrays=ArrayRecord(), num_rounds=cfg.rounds, timeout=round_timeout
    )
    _finish(tracking, strategy, record, setup_timeout)
    accs = [r["acc"] for r in record.rounds]
    print(f"job {cfg.job} ({cfg.method}): {cfg.rounds} rounds, test accuracy {accs[-1]:.3f}")
    return record


def _agree_sensitivity(
    grid: Grid,
    cfg: JobConfig,
    he: HEContext,
    nodes: dict[int, int],
    n_samples: dict[int, int],
    sens: dict[int, list[bytes]],
    record: ServerLog,
    timeout: float,
) -> None:
    """FedML-HE's setup: the weighted sum of the clients' encrypted sensitivity scores goes
    back to every client, which decrypts it and keeps the top ⌈p·P⌉ coordinates."""
    ids = sorted(sens)
    total = sum(n_samples[k] for k in ids)
    summed = he.weighted_sum([sens[k] for k in ids], [n_samples[k] / total for k in ids])
    msgs = []
    for node in nodes:
        content = RecordDict(
            {
                "config": ConfigRecord({"phase": "agree", "job": cfg.job}),
                "sens": ciphertext_record(summed),
            }
        )
        msgs.append(Message(content, dst_node_id=node, message_type="query"))
        entry = manifest(msgs[-1], "down", nodes[node], -1)
        record.manifests.append(entry)
        record.setup_bytes += entry["bytes"]
    for reply in grid.send_and_receive(msgs, timeout=timeout):
        entry = manifest(reply, "up", nodes.get(reply.metadata.src_node_id, -1), -1)
        record.manifests.append(entry)
        record.setup_bytes += entry["bytes"]
        if reply.has_error():
            raise RuntimeError(f"a client failed to agree the sensitive set: {reply.error.reason}")


def _finish(grid: Grid, strategy: EncryptedFedAvg, record: ServerLog, timeout: float) -> None:
    """Let in-flight replies come back, then deliver the last aggregates to every client and
    collect a digest of each client's final shared vector."""
    deadline = time.monotonic() + timeout
    while strategy.in_flight and time.monotonic() < deadline:
        strategy._free_nodes(grid)
        time.sleep(0.05)
    t = strategy.cfg.rounds - 1
    msgs = [
        strategy._message(
            node, "query", t, RecordDict({"config": ConfigRecord({"phase": "finish"})})
        )
        for node in strategy.nodes
        if node not in strategy.in_flight
    ]
    after = strategy.cfg.rounds  # logged after the last round
    for reply in grid.send_and_receive(
        _Tracked(msgs, lambda: strategy._track(after)), timeout=timeout
    ):
        origin = strategy._log_in(reply)
        if origin is not None and not reply.has_error():
            record.digests[strategy.nodes[origin[0]]] = str(reply.content["info"]["digest"])


class _TrackingGrid(Grid):
    """The grid the strategy's loop sends through: after each push it lets the strategy note
    the ids Flower gave its messages (all calls go to the real grid)."""

    def __init__(self, grid: Grid):
        self.inner = grid

    def set_run(self, run) -> None:
        self.inner.set_run(run)

    @property
    def run(self):
        return self.inner.run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        return self.inner.create_message(content, message_type, dst_node_id, group_id, ttl)

    def get_node_ids(self):
        return self.inner.get_node_ids()

    def push_messages(self, messages):
        return self.inner.push_messages(messages)

    def pull_messages(self, message_ids):
        return self.inner.pull_messages(message_ids)

    def send_and_receive(self, messages, *, timeout=None):
        messages = list(messages) if not isinstance(messages, _Tracked) else messages
        ids = set(self.inner.push_messages(messages))
        if isinstance(messages, _Tracked):
            messages.after_push()
        end = time.monotonic() + (timeout if timeout is not None else float("inf"))
        out: list[Message] = []
        while ids and time.monotonic() < end:
            got = list(self.inner.pull_messages(ids))
            out += got
            ids -= {m.metadata.reply_to_message_id for m in got}
            if ids:
                time.sleep(0.05)
        return out


def make_server_app(
    jobs: list[JobConfig],
    he: HEContext | None,
    model: ArrayRecord,
    n_clients: int,
    records: list[ServerLog],
    *,
    round_timeout: float,
    setup_timeout: float,
    keep_payloads: bool = False,
) -> ServerApp:
    """A ServerApp that runs ``jobs`` one after the other and appends their logs to
    ``records``."""
    app = ServerApp()

    @app.main()
    def main(grid: Grid, context: Context) -> None:
        for cfg in jobs:
            records.append(
                run_job(
                    grid,
                    cfg,
                    he,
                    model,
                    n_clients,
                    round_timeout=round_timeout,
                    setup_timeout=setup_timeout,
                    keep_payloads=keep_payloads,
                )
            )

    return app


#: The ServerApp of a Flower deployment (``serverapp = "dictpfl.serverapp:server_app"``): its
#: run config names the directory `dictpfl setup` wrote for the server (``server-dir``).
server_app = ServerApp()


@server_app.main()
def _deployed(grid: Grid, context: Context) -> None:
    import json
    from pathlib import Path

    import torch

    conf = context.run_config
    directory = Path(str(conf["server-dir"]))
    settings = json.loads((directory / "jobs.json").read_text())
    public = directory / "public.ctx"
    he = HEContext.from_bytes(public.read_bytes()) if public.is_file() else None
    model = ArrayRecord(torch.load(directory / "model.pt", weights_only=True))
    for raw in settings["jobs"]:
        cfg = JobConfig.from_record(raw)
        record = run_job(
            grid,
            cfg,
            he,
            model,
            int(settings["clients"]),
            round_timeout=float(conf.get("round-timeout", 120.0)),
            setup_timeout=float(conf.get("setup-timeout", 600.0)),
        )
        out = directory / f"log-job-{cfg.job}.json"
        out.write_text(
            json.dumps(
                {
                    "method": cfg.method,
                    "rounds": record.rounds,
                    "rejected": record.rejected,
                    "setup_bytes": record.setup_bytes,
                    "digests": record.digests,
                    "manifests": record.manifests,
                },
                indent=1,
            )
        )
