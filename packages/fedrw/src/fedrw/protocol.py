"""PPMPR, the paper's privacy-preserving multi-party computation of global sample frequencies.

Every client i holds a multiset of samples with local counts c_i(x). For every ordered pair
(querier i, holder j) the labelled PSI of :mod:`fedrw.oprf` and :mod:`fedrw.labels` gives i the
count c_j(x) of each of its own distinct items x (0 when j lacks x) and nothing else, so client i
ends with the global frequency

    F(x) = c_i(x) + Σ_{j≠i} c_j(x)        for every x ∈ S_i                    (PPMPR)

One pair session runs both directions. The pairs are scheduled round-robin (K-1 rounds for even K,
K for odd K; all pairs of a round concurrently: the paper's parallel orchestration) or, as the
baseline, one direction after another. Clients are separate OS processes with one pipe per pair;
every client-to-client message is logged with its length and time. Leakage: j learns |S_i|; i
learns c_j(x) for x ∈ S_i ∩ S_j and j's padded table size.
"""

from __future__ import annotations

import pickle
import struct
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection

import numpy as np

from fedrw.canon import canonicalize
from fedrw.curve import hash_to_curve, random_scalar, scalar_key, scalar_mult
from fedrw.labels import ROW_BYTES, build_label_table, decode_table, encode_table, lookup_labels
from fedrw.oprf import BlindState, OPRFKey, unblind
from fedrw.processes import QUIT, ClientGroup, exchange
from fedrw.schedule import MAX_CLIENTS, round_robin_schedule, sequential_schedule
from paperkit import check_bool, check_int, check_memory, describe, param_error

__all__ = ["FrequencyResult", "Message", "client_counts", "secure_global_frequencies"]

_PTS = 32  # bytes of one x-coordinate


@dataclass(frozen=True)
class Message:
    """One client-to-client message: sender, receiver, its length in bytes, the time it was sent
    (seconds since the protocol started), its kind (``"query"``, ``"reply"``, ``"tags"``, ...)
    and, when asked for, the payload itself."""

    src: int
    dst: int
    nbytes: int
    t: float
    kind: str = ""
    payload: bytes | None = field(default=None, repr=False)


@dataclass
class FrequencyResult:
    """What the protocol leaves with the clients, and how it ran.

    Attributes:
        freqs: per client i, F(x) for each of its distinct canonical items x.
        counts: per client i, the vector (c_0(x), ..., c_{K-1}(x)) it learned for each x.
        transcript: every client-to-client message (:class:`Message`), in time order.
        seconds: wall time from the start of the protocol until every client holds F.
        rounds: rounds of the schedule (pairs of a round run concurrently).
        cpu: CPU seconds of each client's part: ``cpu[(i, -1)]`` its set-up (key, H, F_k),
            ``cpu[(i, j)]`` its side of the session with j.
        schedule: the rounds of pairs that ran; ``parallel``: whether a round's pairs (and the
            two directions of a pair) ran concurrently.
    """

    freqs: list[dict[bytes, int]]
    counts: list[dict[bytes, tuple[int, ...]]]
    transcript: list[Message]
    seconds: float
    rounds: int
    cpu: dict[tuple[int, int], float] = field(default_factory=dict)
    schedule: list[list[tuple[int, int]]] = field(default_factory=list)
    parallel: bool = True

    @property
    def critical_path_seconds(self) -> float:
        """CPU seconds along the schedule's critical path with one core per client: the
        slowest set-up, plus per round the slowest pair, where a pair costs the slower of its
        two sides when the directions run concurrently and the sum of both sides otherwise.
        This is the wall time the schedule would take on a machine with K free cores."""
        setup = max((c for (i, j), c in self.cpu.items() if j < 0), default=0.0)
        join = max if self.parallel else (lambda a, b: a + b)
        return setup + sum(
            max(join(self.cpu[(i, j)], self.cpu[(j, i)]) for i, j in rnd) for rnd in self.schedule
        )

    @property
    def bytes_total(self) -> int:
        """Bytes of all client-to-client messages."""
        return sum(m.nbytes for m in self.transcript)


def client_counts(client_datasets: object, owner: str) -> list[Counter]:
    """Check the clients' datasets (at least 2 clients, none empty, samples ``str``/``bytes``)
    and return each client's Counter of canonical samples."""
    if not isinstance(client_datasets, (list, tuple)):
        raise param_error(
            "client_datasets",
            owner,
            "a list of lists of samples",
            describe(client_datasets),
            cls=TypeError,
        )
    if not 2 <= len(client_datasets) <= MAX_CLIENTS:
        raise param_error(
            "client_datasets",
            owner,
            f"a list of 2 to {MAX_CLIENTS} clients",
            f"{len(client_datasets)} clients",
        )
    out = []
    for i, data in enumerate(client_datasets):
        if not isinstance(data, (list, tuple)) or not all(
            isinstance(x, (str, bytes)) for x in data
        ):
            raise param_error(
                "client_datasets",
                owner,
                "lists of str or bytes samples",
                describe(data),
                cls=TypeError,
            )
        if not data:
            raise param_error(
                "client_datasets", owner, "non-empty for every client", f"client {i} empty"
            )
        out.append(Counter(canonicalize(x) for x in data))
    return out


class _PSIClient:
    """One client's side of the protocol, run inside its own process."""

    def __init__(self, index: int, k: int, counts: Counter, pad_to: int, seed: int | None):
        self.index, self.k, self.pad_to = index, k, pad_to
        self.counts = dict(counts)
        self.items = list(self.counts)
        self.rng = None if seed is None else np.random.default_rng([seed, index])
        self.learned = {x: [0] * k for x in self.items}
        for x, c in self.counts.items():
            self.learned[x][index] = c
        self.log: list[Message] = []
        self.cpu: dict[tuple[int, int], float] = {}

    def init(self) -> None:
        """Key, H(x) and F_k(x) of the own items: computed once, reused with every peer."""
        self.key = OPRFKey.generate(self.rng)
        self.points = {x: hash_to_curve(x)[1:] for x in self.items}
        self.prf = {x: self.key.evaluate(p) for x, p in self.points.items()}

    def _log(self, peer: int, data: bytes, kind: str, keep: bool) -> None:
        self.log.append(
            Message(
                self.index,
                peer,
                len(data),
                time.perf_counter() - self.t0,
                kind,
                data if keep else None,
            )
        )

    def _query(self) -> tuple[list[bytes], bytes, BlindState]:
        order = list(self.items)
        perm = (
            np.random.default_rng().permutation(len(order))
            if self.rng is None
            else self.rng.permutation(len(order))
        )
        order = [order[i] for i in perm]
        scalars = [random_scalar(self.rng) for _ in order]
        queries = [
            scalar_mult(scalar_key(r), self.points[x]) for r, x in zip(scalars, order, strict=True)
        ]
        return order, b"".join(queries), BlindState(scalars)

    def _reply(self, queries: bytes) -> bytes:
        evaluated = [self.key.evaluate(queries[i : i + _PTS]) for i in range(0, len(queries), _PTS)]
        table = build_label_table(self.key, self.counts, self.pad_to, self.rng, prf_values=self.prf)
        return struct.pack(">I", len(evaluated)) + b"".join(evaluated) + encode_table(table)

    def _learn(self, peer: int, order: list[bytes], state: BlindState, reply: bytes) -> None:
        (n,) = struct.unpack(">I", reply[:4])
        evaluated = [reply[4 + i * _PTS : 4 + (i + 1) * _PTS] for i in range(n)]
        table = decode_table(reply[4 + n * _PTS :])
        for x, c in zip(order, lookup_labels(unblind(evaluated, state), table), strict=True):
            self.learned[x][peer] = c

    def pair(self, peer: int, conn: Connection, concurrent: bool, keep: bool) -> None:
        """Both directions with ``peer``: concurrently (each side sends while it receives), or
        the lower index querying first and then answering."""
        order, queries, state = self._query()
        if concurrent:
            self._log(peer, queries, "query", keep)
            peer_queries = exchange(conn, queries)
            reply = self._reply(peer_queries)
            self._log(peer, reply, "reply", keep)
            self._learn(peer, order, state, exchange(conn, reply))
            return
        for step in ("ask", "answer") if self.index < peer else ("answer", "ask"):
            if step == "ask":
                self._log(peer, queries, "query", keep)
                conn.send_bytes(queries)
                self._learn(peer, order, state, conn.recv_bytes())
            else:
                reply = self._reply(conn.recv_bytes())
                self._log(peer, reply, "reply", keep)
                conn.send_bytes(reply)


def _psi_client(
    ctrl: Connection,
    index: int,
    k: int,
    counts: Counter,
    pad_to: int,
    seed: int | None,
    keep: bool,
    peers: dict[int, Connection],
) -> None:
    """The client process: init, one pair session per command, then its results."""
    client = _PSIClient(index, k, counts, pad_to, seed)
    while (cmd := ctrl.recv_bytes()) != QUIT:
        if cmd[:1] == b"I":
            (client.t0,) = struct.unpack(">d", cmd[1:])
            t = time.process_time()
            client.init()
            client.cpu[(index, -1)] = time.process_time() - t
            ctrl.send_bytes(b"ok")
        elif cmd[:1] == b"P":
            peer, concurrent = struct.unpack(">H?", cmd[1:])
            t = time.process_time()
            client.pair(peer, peers[peer], concurrent, keep)
            client.cpu[(index, peer)] = time.process_time() - t
            ctrl.send_bytes(b"ok")
        elif cmd[:1] == b"R":  # to the harness, which returns it to the caller
            learned = {x: tuple(v) for x, v in client.learned.items()}
            ctrl.send_bytes(pickle.dumps((learned, client.log, client.cpu)))


def secure_global_frequencies(
    client_datasets: Sequence[Sequence[str | bytes]],
    parallel: bool = True,
    pad_to: int | None = None,
    seed: int | None = None,
    *,
    keep_payloads: bool = False,
) -> FrequencyResult:
    """Global frequencies F(x) of every client's samples by pairwise labelled PSI (PPMPR).

    Args:
        client_datasets: K ≥ 2 lists of samples (``str`` or ``bytes``; canonicalised with
            :func:`fedrw.canonicalize`), none empty.
        parallel: the round-robin schedule with the pairs of a round concurrent (K-1 or K
            rounds); False runs the K(K-1) directions one after another.
        pad_to: the public bound every label table is padded to (default: the largest client's
            number of distinct samples); smaller than a client's table is refused.
        seed: None draws keys, blinding scalars and shuffles from the OS CSPRNG (fresh keys per
            run, the secure setting); an integer makes them reproducible, for tests only.
        keep_payloads: keep every message's bytes in the transcript (to audit it).

    Returns:
        :class:`FrequencyResult`; ``freqs[i][x] = Σ_j c_j(x)`` exactly. NaN policy: not
        applicable (text input).

    >>> res = secure_global_frequencies([["a", "b", "b"], ["b", "c"]], seed=0)
    >>> res.freqs[0] == {b"a": 1, b"b": 3}, res.freqs[1] == {b"b": 3, b"c": 1}, res.rounds
    (True, True, 1)
    """
    owner = "secure_global_frequencies"
    counts = client_counts(client_datasets, owner)
    parallel = check_bool("parallel", owner, parallel)
    largest = max(len(c) for c in counts)
    if pad_to is None:
        pad_to = largest
    pad_to = check_int("pad_to", owner, pad_to, low=largest)
    if seed is not None:
        seed = check_int("seed", owner, seed, low=0)
    keep_payloads = check_bool("keep_payloads", owner, keep_payloads)
    k = len(counts)
    check_memory("pad_to", owner, pad_to, 4.0 * k * k * pad_to * ROW_BYTES)
    schedule = round_robin_schedule(k) if parallel else sequential_schedule(k)
    args = [(i, k, counts[i], pad_to, seed, keep_payloads) for i in range(k)]
    with ClientGroup(_psi_client, args, links=True) as group:
        start = time.perf_counter()
        for i in range(k):
            group.send(i, b"I" + struct.pack(">d", start))
        for i in range(k):
            group.recv(i)
        for rnd in schedule:
            for i, j in rnd:
                group.send(i, b"P" + struct.pack(">H?", j, parallel))
                group.send(j, b"P" + struct.pack(">H?", i, parallel))
            for i, j in rnd:
                group.recv(i)
                group.recv(j)
        seconds = time.perf_counter() - start
        learned, transcript, cpu = [], [], {}
        for i in range(k):
            group.send(i, b"R")
            vectors, log, times = pickle.loads(group.recv(i))
            learned.append(vectors)
            transcript += log
            cpu |= times
    transcript.sort(key=lambda m: m.t)
    freqs = [{x: sum(v) for x, v in vectors.items()} for vectors in learned]
    return FrequencyResult(
        freqs, learned, transcript, seconds, len(schedule), cpu, schedule, parallel
    )
