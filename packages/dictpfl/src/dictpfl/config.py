"""Typed configuration of a federated run, and what the trusted setup gives each client.

:class:`JobConfig` is the public configuration of one method's run: the server sends it to
every client in the setup message as a Flower ``ConfigRecord``. :class:`ClientSetup` is what a
client holds before the run starts and never sends: the CKKS context with the secret key, its
data shard, the test split and where it keeps its own log. In a deployment the setup lives in
a directory on the client's machine (:meth:`ClientSetup.save` / :meth:`ClientSetup.load`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["FAULTS", "METHODS", "ClientSetup", "JobConfig"]

#: The methods of :func:`dictpfl.federated.run_methods` (see its table).
METHODS = ("plaintext", "fedhe_full", "fedml_he", "dictpfl", "depe_only", "prme_only")

#: Faults a client can be told to show in a round (for the robustness tests and demos):
#: ``drop`` (the ClientApp fails: Flower returns an error reply), ``late`` (the reply comes
#: after the round's timeout), ``garbage`` (random bytes instead of ciphertexts) and ``resize``
#: (a ciphertext of the wrong length).
FAULTS = ("drop", "late", "garbage", "resize")


@dataclass(frozen=True)
class JobConfig:
    """The public configuration of one method's federated run (no key, no data).

    Attributes follow :func:`dictpfl.federated.run_federated`; ``job`` numbers the runs of one
    federation (a client starts fresh state at each new job), ``encrypt`` says whether updates
    are CKKS ciphertexts, ``hidden``/``n_features``/``n_classes`` give the model's shape.
    """

    method: str
    job: int = 0
    rounds: int = 20
    seed: int = 0
    rank: int = 8
    prune_ratio: float = 0.7
    reactivation: float = 0.2
    decay: float = 0.5
    error_feedback: bool = False
    fedml_frac: float = 0.1
    local_epochs: int = 1
    lr: float = 1e-3
    batch_size: int = 32
    encrypt: bool = True
    n_features: int = 64
    hidden: tuple[int, ...] = (256, 256)
    n_classes: int = 10

    def to_record(self) -> dict:
        """The fields as Flower config values (lists for tuples)."""
        return {
            k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self).items()
        }

    @classmethod
    def from_record(cls, record) -> JobConfig:
        """Inverse of :meth:`to_record` (a ``ConfigRecord`` or a dict)."""
        names = {f.name for f in dataclasses.fields(cls)}
        values = {k: record[k] for k in record if k in names}
        values["hidden"] = tuple(int(h) for h in values["hidden"])
        return cls(**values)


@dataclass
class ClientSetup:
    """What the trusted setup gives client ``partition`` before any round.

    ``secret_context``: the CKKS context with the secret key (bytes of
    :meth:`dictpfl.he.HEContext.to_bytes`), or None for the plaintext methods; ``data`` and
    ``test``: (X float32, y int64) arrays; ``log_dir``: where the client writes its report at
    the end of each job (its own disk); ``faults``: ``{job: {round: fault}}`` with a fault of
    :data:`FAULTS` (empty in real use); ``late_s``: how long a ``late`` reply is held back.
    """

    partition: int
    secret_context: bytes | None
    data: tuple[np.ndarray, np.ndarray]
    test: tuple[np.ndarray, np.ndarray]
    log_dir: str
    faults: dict[int, dict[int, str]] = field(default_factory=dict)
    late_s: float = 0.0

    def save(self, directory: str | Path) -> Path:
        """Write the setup into ``directory`` (created): ``setup.npz`` and ``secret.ctx``."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        np.savez(
            directory / "setup.npz",
            partition=self.partition,
            X=self.data[0],
            y=self.data[1],
            X_test=self.test[0],
            y_test=self.test[1],
        )
        if self.secret_context is not None:
            (directory / "secret.ctx").write_bytes(self.secret_context)
        return directory

    @classmethod
    def load(cls, directory: str | Path) -> ClientSetup:
        """Read a setup written by :meth:`save`; the client's log goes to ``directory/log``."""
        directory = Path(directory)
        if not (directory / "setup.npz").is_file():
            raise ValueError(
                f"setup-dir {str(directory)!r} holds no setup.npz (write it with `dictpfl setup`)"
            )
        with np.load(directory / "setup.npz") as z:
            arrays = {k: z[k] for k in z.files}
        secret = directory / "secret.ctx"
        return cls(
            partition=int(arrays["partition"]),
            secret_context=secret.read_bytes() if secret.is_file() else None,
            data=(arrays["X"], arrays["y"]),
            test=(arrays["X_test"], arrays["y_test"]),
            log_dir=str(directory / "log"),
        )
