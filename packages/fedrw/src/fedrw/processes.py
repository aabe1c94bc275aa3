"""Clients as separate OS processes that exchange only bytes.

:class:`ClientGroup` starts one process per client (``fork`` where the platform has it, else
``spawn``). Each client gets a control pipe to the parent (the server, or the harness that starts
the protocol and collects its output) and, when asked, one duplex pipe to every other client.
Everything crosses a process boundary as ``bytes`` (``send_bytes`` / ``recv_bytes``), so the
protocol's communication is counted, not estimated.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import threading
import traceback
from collections.abc import Callable, Sequence
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["QUIT", "ClientGroup", "exchange"]

_ERROR = b"\x00ERROR\x00"
#: The control message that ends a client's loop.
QUIT = b"\x00QUIT\x00"
_READY = b"\x00READY\x00"


def exchange(conn: Connection, data: bytes) -> bytes:
    """Send ``data`` and receive the peer's message at the same time (a background thread
    sends), so two peers that both send first never block each other on a full pipe."""
    sender = threading.Thread(target=conn.send_bytes, args=(data,))
    sender.start()
    try:
        return conn.recv_bytes()
    finally:
        sender.join()


def _context() -> Any:
    methods = mp.get_all_start_methods()
    return mp.get_context("fork" if "fork" in methods else "spawn")


def _run_client(target: Callable[..., None], ctrl: Connection, args: tuple) -> None:
    try:
        ctrl.send_bytes(_READY)
        target(ctrl, *args)
    except BaseException:  # report any failure to the parent instead of leaving it waiting
        ctrl.send_bytes(_ERROR + traceback.format_exc().encode())
        raise


class ClientGroup:
    """K client processes running ``target(ctrl, *args[k], peers)`` (``peers``: dict of peer
    index to duplex pipe, only with ``links=True``).

    Use as a context manager; :meth:`send` / :meth:`recv` talk to client k over its control
    pipe. The constructor returns once every client runs (process start-up is never timed). A
    client that dies or raises makes :meth:`recv` raise ``RuntimeError`` with its traceback
    instead of hanging.
    """

    def __init__(
        self, target: Callable[..., None], args: Sequence[tuple], *, links: bool = False
    ) -> None:
        ctx = _context()
        k = len(args)
        peers: list[dict[int, Connection]] = [{} for _ in range(k)]
        if links:
            for i in range(k):
                for j in range(i + 1, k):
                    peers[i][j], peers[j][i] = ctx.Pipe(duplex=True)
        self._ctrl: list[Connection] = []
        self._procs = []
        for i in range(k):
            parent, child = ctx.Pipe(duplex=True)
            extra = (peers[i],) if links else ()
            proc = ctx.Process(
                target=_run_client, args=(target, child, (*args[i], *extra)), daemon=True
            )
            proc.start()
            child.close()
            self._ctrl.append(parent)
            self._procs.append(proc)
        for ends in peers:  # the parent keeps none of the client-to-client pipes
            for conn in ends.values():
                conn.close()
        for i in range(k):  # every client is up before anything is timed
            if self.recv(i) != _READY:  # pragma: no cover - a protocol error
                raise RuntimeError(f"client process {i} did not start")

    def __len__(self) -> int:
        return len(self._procs)

    def send(self, k: int, data: bytes) -> None:
        self._ctrl[k].send_bytes(data)

    def recv(self, k: int) -> bytes:
        conn, proc = self._ctrl[k], self._procs[k]
        while not conn.poll(0.5):
            if not proc.is_alive():
                raise RuntimeError(f"client process {k} exited with code {proc.exitcode}")
        data = conn.recv_bytes()
        if data.startswith(_ERROR):
            raise RuntimeError(f"client process {k} failed:\n{data[len(_ERROR) :].decode()}")
        return data

    def close(self) -> None:
        for conn, proc in zip(self._ctrl, self._procs, strict=True):
            if proc.is_alive():
                with contextlib.suppress(OSError):  # the client already went away
                    conn.send_bytes(QUIT)
            conn.close()
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():  # pragma: no cover - a client stuck after the protocol ended
                proc.terminate()
                proc.join()

    def __enter__(self) -> ClientGroup:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
