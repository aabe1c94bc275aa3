"""The server process: aggregation of what the clients send, never holding a secret key.

Per round t: send ``round`` to every connected client, collect the ``update`` payloads that
arrive before ``round_timeout`` (a client that dropped out is left out of this round), and
send every connected client

    c = Σ_{k ∈ S_t} w_k · Enc(Δ_k[m_t]),   w_k = n_k / Σ_{j ∈ S_t} n_j,

computed on ciphertexts (plaintext parts, for the baselines that send them, are summed the
same way in float64). The weights are renormalised over the responders S_t, so the round is
an exact FedAvg step of the clients that answered and a late client loses nothing it had:
it receives the same global update and stays in sync. Stale payloads of an earlier round
(recognised by their round id) are dropped. Every payload in and out is logged by its manifest.
"""

from __future__ import annotations

import time
from multiprocessing.connection import Connection, wait
from typing import Any

import numpy as np

from dictpfl.he import HEContext
from dictpfl.messages import decode, encode, manifest

__all__ = ["server_main"]


class _Links:
    """The server's connections to the clients, with byte and manifest logging."""

    def __init__(self, conns: list[Connection], log: list[dict], keep: list[bytes] | None):
        self.conns = conns
        self.alive = set(range(len(conns)))
        self.log = log
        self.keep = keep
        self.bytes = {"up": 0, "down": 0}

    def send(self, k: int, payload: bytes) -> None:
        if k not in self.alive:
            return
        try:
            self.conns[k].send_bytes(payload)
        except OSError:
            self.alive.discard(k)
            return
        self.bytes["down"] += len(payload)
        self.log.append({"dir": "down", "client": k, **manifest(payload)})

    def broadcast(self, payload: bytes) -> None:
        for k in sorted(self.alive):
            self.send(k, payload)

    def collect(self, kind: str, round: int, timeout: float) -> dict[int, Any]:
        """Messages of ``kind`` and ``round`` from each live client, until ``timeout``."""
        got: dict[int, Any] = {}
        deadline = time.monotonic() + timeout
        while len(got) < len(self.alive):
            waiting = {self.conns[k]: k for k in self.alive if k not in got}
            ready = wait(list(waiting), timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            for conn in ready:
                k = waiting[conn]
                try:
                    payload = conn.recv_bytes()
                except (EOFError, OSError):
                    self.alive.discard(k)
                    continue
                self.bytes["up"] += len(payload)
                self.log.append({"dir": "up", "client": k, **manifest(payload)})
                msg = decode(payload)
                if msg.kind == kind and msg.round == round:
                    got[k] = msg
                    if self.keep is not None and round == 0:
                        self.keep.append(payload)
        return got


def _aggregate(
    he: HEContext | None, msgs: dict[int, Any], n: dict[int, int]
) -> tuple[list[bytes], np.ndarray | None]:
    """Weighted sum of the received updates, ``w_k = n_k / Σ n`` over the senders."""
    ids = sorted(msgs)
    total = sum(n[k] for k in ids)
    w = [n[k] / total for k in ids]
    ct = []
    if msgs[ids[0]].ct:
        ct = he.weighted_sum([msgs[k].ct for k in ids], w)
    plain = None
    if msgs[ids[0]].plain is not None:
        sizes = {msgs[k].plain.size for k in ids}
        if len(sizes) != 1:
            raise ValueError(f"clients sent plaintext updates of different lengths {sizes}")
        plain = sum(wk * msgs[k].plain.astype(np.float64) for k, wk in zip(ids, w, strict=True))
        plain = plain.astype(np.float32)
    return ct, plain


def _run_job(job: dict[str, Any], conns: list[Connection]) -> dict[str, Any]:
    he = HEContext.from_bytes(job["he_public"], secret=False) if job["he_public"] else None
    links = _Links(conns, [], [] if job["keep_payloads"] else None)
    joins = links.collect("join", -1, job["join_timeout"])
    links.alive &= set(joins)  # a client that never joined takes no part in this job
    n = {k: m.meta["n_samples"] for k, m in joins.items()}
    shared = {k: m.meta["n_shared"] for k, m in joins.items()}
    if len(set(shared.values())) > 1:
        links.broadcast(encode("end", -1))
        return {"error": f"clients hold models of different shared sizes {shared}"}
    try:
        return _rounds(job, he, links, n)
    except Exception:
        links.broadcast(encode("end", job["rounds"]))
        raise


def _rounds(job: dict[str, Any], he: HEContext | None, links: _Links, n: dict[int, int]) -> dict:
    if job["method"] == "fedml_he":  # the sensitivity mask, agreed once under HE
        sens = links.collect("sens", -1, job["join_timeout"])
        ct, _ = _aggregate(he, sens, n)
        links.broadcast(encode("sens_global", -1, ct=ct))
    setup = dict(links.bytes)
    rounds = []
    for t in range(job["rounds"]):
        before = dict(links.bytes)
        w0 = time.perf_counter()
        links.broadcast(encode("round", t))
        updates = links.collect("update", t, job["round_timeout"])
        c0 = time.process_time()
        ct, plain = _aggregate(he, updates, n) if updates else ([], None)
        reply = encode("global", t, ct=ct, plain=plain)
        t_aggregate = time.process_time() - c0
        links.broadcast(reply)
        rounds.append(
            {
                "round": t,
                "participants": sorted(updates),
                "bytes_up": links.bytes["up"] - before["up"],
                "bytes_down": links.bytes["down"] - before["down"],
                "t_aggregate": t_aggregate,
                "wall": time.perf_counter() - w0,
            }
        )
    links.broadcast(encode("end", job["rounds"]))
    return {
        "rounds": rounds,
        "setup_bytes": setup["up"] + setup["down"],
        "manifests": links.log,
        "payloads": links.keep,
        "server_has_secret_key": bool(he is not None and he.has_secret_key),
    }


def server_main(control: Connection, conns: list[Connection]) -> None:
    """Process entry: run the jobs the launcher sends on ``control`` until it sends None."""
    while True:
        job = control.recv()
        if job is None:
            return
        try:
            control.send(_run_job(job, conns))
        except Exception as exc:  # reported to the launcher, which raises it
            control.send({"error": f"server: {exc!r}"})
