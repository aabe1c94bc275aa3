"""CKKS homomorphic encryption of update vectors, through TenSEAL (Microsoft SEAL).

CKKS encodes a real vector of up to N/2 entries into one ciphertext at scale Δ = 2^40; the
server computes ``c = Σ_k w_k · Enc(v_k)`` with ciphertext additions and plaintext-scalar
multiplications (one rescale), and only a secret-key holder recovers ``Σ_k w_k v_k`` up to
noise of order 1e-7. The default parameters (N = 8192, coefficient modulus 60+40+40+60 = 200
bits ≤ 218) are 128-bit secure by the HE standard's table.

Key roles: a client creates the context with its secret key and shares it with the other
clients (secure channel assumed); the server gets :meth:`HEContext.public`, which can add and
scale ciphertexts but cannot decrypt.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
import tenseal as ts

from paperkit import (
    Described,
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    describe,
    param_error,
)

__all__ = ["HEContext"]

_MAGIC = b"DPFLCKKS"
#: The polynomial degrees N TenSEAL's CKKS accepts here (the HE standard's 128-bit table).
DEGREES = (4096, 8192, 16384, 32768)


def _check_params(owner: str, n: Any, coeff_bits: Any, scale_bits: Any) -> tuple:
    """N in :data:`DEGREES`, at least 3 prime sizes in [20, 60], and a scale of 20 bits up to the
    middle primes' size."""
    check_int("n", owner, n)
    check_choice("n", owner, int(n), DEGREES)
    expected = "a sequence of 3 prime bit sizes at least, each an integer in [20, 60]"
    if isinstance(coeff_bits, (str, bytes)) or not hasattr(coeff_bits, "__len__"):
        raise param_error("coeff_bits", owner, expected, describe(coeff_bits), cls=TypeError)
    bits = list(coeff_bits)
    if any(isinstance(b, bool) or not isinstance(b, (int, np.integer)) for b in bits):
        raise param_error("coeff_bits", owner, expected, bits, cls=TypeError)
    if len(bits) < 3 or any(not 20 <= b <= 60 for b in bits):
        raise param_error("coeff_bits", owner, expected, bits)
    scale_bits = check_int("scale_bits", owner, scale_bits, low=20, high=min(bits[1:-1]))
    return int(n), tuple(int(b) for b in bits), scale_bits


class HEContext:
    """A TenSEAL CKKS context, with or without the secret key.

    Build it with :meth:`create` (key holder) or :meth:`from_bytes` (other clients, server).
    Vectors are split into chunks of ``slots = n/2`` entries, one serialised ciphertext each.
    Encoded values must satisfy ``|v| < max_abs = 2^(coeff_bits[0] - scale_bits - 1)``, else
    ``v·Δ`` wraps around the last modulus and decrypts to garbage: NaN, inf and such values are
    refused by :meth:`encrypt`.

    The constructor wraps a TenSEAL context made with the parameters given (they are not read
    back from it) and sets its scale to 2^scale_bits; :meth:`create` and :meth:`from_bytes` are
    the usual ways in.
    """

    def __init__(self, context: ts.Context, n: int, coeff_bits: Sequence[int], scale_bits: int):
        owner = "HEContext"
        if not isinstance(context, ts.Context):
            raise param_error(
                "context", owner, "a tenseal.Context", describe(context), cls=TypeError
            )
        n, bits, scale_bits = _check_params(owner, n, coeff_bits, scale_bits)
        context.global_scale = 2.0**scale_bits
        self._ctx = context
        self.n = n
        self.coeff_bits = bits
        self.scale_bits = scale_bits
        self.slots = self.n // 2
        self.max_abs = 2.0 ** (self.coeff_bits[0] - self.scale_bits - 1)

    @classmethod
    def create(
        cls, n: int = 8192, coeff_bits: Sequence[int] = (60, 40, 40, 60), scale_bits: int = 40
    ) -> HEContext:
        """A fresh CKKS context holding a new secret key (the key-holder client's call).

        ``n`` in 4096, 8192, 16384, 32768; ``coeff_bits`` 3 prime sizes at least, each in
        [20, 60], whose sum the HE standard bounds for N (TenSEAL refuses a larger one);
        ``scale_bits`` in [20, the middle primes' size].
        """
        owner = "HEContext.create"
        n, bits, scale_bits = _check_params(owner, n, coeff_bits, scale_bits)
        try:
            ctx = ts.context(ts.SCHEME_TYPE.CKKS, n, coeff_mod_bit_sizes=list(bits))
        except ValueError as exc:  # SEAL refuses moduli beyond the standard's bound for N
            raise param_error(
                "coeff_bits", owner, f"within the HE standard's bound for N = {n}", list(bits)
            ) from exc
        return cls(ctx, n, bits, scale_bits)

    @property
    def context(self) -> ts.Context:
        """The underlying TenSEAL context."""
        return self._ctx

    @property
    def has_secret_key(self) -> bool:
        """Whether this context can decrypt."""
        return bool(self._ctx.has_secret_key())

    def to_bytes(self, *, secret: bool) -> bytes:
        """Serialise (with the secret key only when ``secret``; never send that to the server)."""
        secret = check_bool("secret", "HEContext.to_bytes", secret)
        if secret and not self.has_secret_key:
            raise param_error("secret", "HEContext.to_bytes", "False for a public context", secret)
        header = json.dumps(
            {"n": self.n, "coeff_bits": list(self.coeff_bits), "scale_bits": self.scale_bits}
        ).encode()
        body = self._ctx.serialize(
            save_public_key=True,
            save_secret_key=secret,
            save_galois_keys=False,
            save_relin_keys=False,
        )
        return _MAGIC + struct.pack("<I", len(header)) + header + body

    def public(self) -> bytes:
        """The server's context: ``serialize(save_secret_key=False)``; it cannot decrypt."""
        return self.to_bytes(secret=False)

    @classmethod
    def from_bytes(cls, b: bytes, secret: bool = False) -> HEContext:
        """Load a context. ``secret=True`` requires the secret key in ``b``; ``secret=False``
        drops it if present (the result is public)."""
        owner = "HEContext.from_bytes"
        if not isinstance(b, (bytes, bytearray)):
            raise param_error(
                "b", owner, "bytes made by HEContext.to_bytes", describe(b), cls=TypeError
            )
        secret = check_bool("secret", owner, secret)
        try:
            if bytes(b[:8]) != _MAGIC:
                raise ValueError("bad magic bytes")
            (size,) = struct.unpack("<I", b[8:12])
            meta = json.loads(bytes(b[12 : 12 + size]))
            ctx = ts.context_from(bytes(b[12 + size :]))
        except (ValueError, struct.error, RuntimeError) as exc:
            raise param_error(
                "b", owner, "bytes made by HEContext.to_bytes", Described(f"{len(b)} other bytes")
            ) from exc
        if secret and not ctx.has_secret_key():
            raise param_error(
                "secret", "HEContext.from_bytes", "False for bytes without a secret key", secret
            )
        if not secret and ctx.has_secret_key():
            ctx.make_context_public(generate_galois_keys=False, generate_relin_keys=False)
        return cls(ctx, meta["n"], meta["coeff_bits"], meta["scale_bits"])

    @property
    def ciphertext_bytes(self) -> int:
        """An upper bound on one serialised ciphertext: 2 polynomials of N coefficients per
        prime of the modulus, 8 bytes each."""
        return 2 * self.n * len(self.coeff_bits) * 8

    def n_chunks(self, length: int) -> int:
        """Number of ciphertexts for ``length`` >= 0 entries: ``ceil(length / slots)``."""
        length = check_int("length", "HEContext.n_chunks", length, low=0)
        return -(-length // self.slots)

    def encrypt(self, vec: np.ndarray | Sequence[float]) -> list[bytes]:
        """Encrypt a non-empty 1-D real vector (array, tensor or list; cast to float64) as
        ``ceil(P / slots)`` serialised CKKS ciphertexts. NaN, inf and ``|v| >= max_abs`` are
        refused; the ciphertexts must fit in memory."""
        owner = "HEContext.encrypt"
        if hasattr(vec, "detach"):
            vec = vec.detach().cpu().numpy()
        v = check_array("vec", owner, vec, ndim=1).astype(np.float64)
        check_memory("vec", owner, describe(v), self.n_chunks(v.size) * self.ciphertext_bytes)
        peak = float(np.max(np.abs(v)))
        if peak >= self.max_abs:
            raise param_error(
                "vec",
                owner,
                f"of |v| < {self.max_abs:g} (CKKS overflows beyond the modulus)",
                Described(f"max |v| = {peak:g}"),
            )
        return [
            ts.ckks_vector(self._ctx, v[i : i + self.slots].tolist()).serialize()
            for i in range(0, v.size, self.slots)
        ]

    def decrypt(self, chunks: Sequence[bytes]) -> np.ndarray:
        """Decrypt serialised ciphertexts into one float64 vector. Needs the secret key: a public
        context raises ``ValueError`` (it has no secret key)."""
        if not self.has_secret_key:
            raise ValueError("This HEContext is public: it holds no secret key and cannot decrypt.")
        vecs = self._load("chunks", "HEContext.decrypt", chunks)
        parts = [np.asarray(v.decrypt()) for v in vecs]
        return np.concatenate(parts) if parts else np.zeros(0)

    def _load(self, name: str, owner: str, chunks: Any) -> list[ts.CKKSVector]:
        """Deserialise a sequence of ciphertexts of this context; errors name ``name``."""
        expected = "a sequence of serialised CKKS ciphertexts of this context"
        if isinstance(chunks, (bytes, bytearray, str)) or not hasattr(chunks, "__iter__"):
            raise param_error(name, owner, expected, describe(chunks), cls=TypeError)
        out = []
        for c in chunks:
            if not isinstance(c, (bytes, bytearray)):
                raise param_error(name, owner, expected, describe(c), cls=TypeError)
            try:
                out.append(ts.ckks_vector_from(self._ctx, bytes(c)))
            except (ValueError, RuntimeError, TypeError) as exc:
                raise param_error(
                    name, owner, expected, Described(f"{len(c)} other bytes")
                ) from exc
        return out

    def check_ciphertexts(self, chunks: Sequence[bytes], length: int) -> None:
        """Server side: ValueError unless ``chunks`` are ``ceil(length / slots)`` ciphertexts of
        this context holding ``length`` values in all (full chunks, then the rest)."""
        owner = "HEContext.check_ciphertexts"
        length = check_int("length", owner, length, low=0)
        expected = f"{self.n_chunks(length)} ciphertexts holding {length} values"
        if isinstance(chunks, (bytes, bytearray, str)) or not hasattr(chunks, "__len__"):
            raise param_error("chunks", owner, expected, describe(chunks), cls=TypeError)
        if len(chunks) != self.n_chunks(length):
            raise param_error("chunks", owner, expected, Described(f"{len(chunks)} ciphertexts"))
        for j, vec in enumerate(self._load("chunks", owner, chunks)):
            want = min(self.slots, length - j * self.slots)
            if vec.size() != want:
                raise param_error(
                    "chunks", owner, expected, Described(f"ciphertext {j} of {vec.size()} values")
                )

    def weighted_sum(
        self, list_of_chunks: Sequence[Sequence[bytes]], weights: Sequence[float]
    ) -> list[bytes]:
        """Server side: ``Σ_k w_k · c_k`` chunk by chunk, on ciphertexts only.

        All clients must send the same number of chunks of the same sizes; the weights (one per
        client) are finite, in [-1, 1] (NaN is refused).
        """
        owner = "HEContext.weighted_sum"
        if isinstance(list_of_chunks, (bytes, str)) or not hasattr(list_of_chunks, "__len__"):
            raise param_error(
                "list_of_chunks",
                owner,
                "one sequence of ciphertexts per client",
                describe(list_of_chunks),
                cls=TypeError,
            )
        if len(list_of_chunks) == 0:
            raise param_error(
                "list_of_chunks",
                owner,
                "one sequence of ciphertexts per client, 1 at least",
                Described("no client"),
            )
        loaded = [self._load("list_of_chunks", owner, c) for c in list_of_chunks]
        w = check_array("weights", owner, weights, ndim=1)
        if w.size != len(list_of_chunks):
            raise param_error(
                "weights",
                owner,
                f"one weight per client ({len(list_of_chunks)} clients)",
                Described(f"{w.size} weights"),
            )
        if np.any(np.abs(w) > 1):
            raise param_error("weights", owner, "in [-1, 1]", w.tolist())
        counts = {len(c) for c in loaded}
        if len(counts) != 1:
            raise param_error(
                "list_of_chunks",
                owner,
                "the same number of ciphertexts from every client (same model shapes)",
                Described(f"counts {[len(c) for c in loaded]}"),
            )
        out = []
        for j in range(counts.pop()):
            vecs = [c[j] for c in loaded]
            sizes = {v.size() for v in vecs}
            if len(sizes) != 1:
                raise param_error(
                    "list_of_chunks",
                    owner,
                    "ciphertexts of equal length across clients (same model shapes)",
                    Described(f"chunk {j} lengths {[v.size() for v in vecs]}"),
                )
            acc = vecs[0] * float(w[0])
            for v, wk in zip(vecs[1:], w[1:], strict=True):
                acc += v * float(wk)
            out.append(acc.serialize())
        return out
