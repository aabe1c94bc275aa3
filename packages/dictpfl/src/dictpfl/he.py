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

import numpy as np
import tenseal as ts

from paperkit import Described, param_error

__all__ = ["HEContext"]

_MAGIC = b"DPFLCKKS"


class HEContext:
    """A TenSEAL CKKS context, with or without the secret key.

    Build it with :meth:`create` (key holder) or :meth:`from_bytes` (other clients, server).
    Vectors are split into chunks of ``slots = n/2`` entries, one serialised ciphertext each.
    Encoded values must satisfy ``|v| < max_abs = 2^(coeff_bits[0] - scale_bits - 1)``, else
    ``v·Δ`` wraps around the last modulus and decrypts to garbage.
    """

    def __init__(self, context: ts.Context, n: int, coeff_bits: Sequence[int], scale_bits: int):
        self._ctx = context
        self.n = int(n)
        self.coeff_bits = tuple(int(b) for b in coeff_bits)
        self.scale_bits = int(scale_bits)
        self.slots = self.n // 2
        self.max_abs = 2.0 ** (self.coeff_bits[0] - self.scale_bits - 1)

    @classmethod
    def create(
        cls, n: int = 8192, coeff_bits: Sequence[int] = (60, 40, 40, 60), scale_bits: int = 40
    ) -> HEContext:
        """A fresh CKKS context holding a new secret key (the key-holder client's call)."""
        if n not in (4096, 8192, 16384, 32768):
            raise param_error("n", "HEContext.create", "one of 4096, 8192, 16384, 32768", n)
        bits = [int(b) for b in coeff_bits]
        if len(bits) < 3 or any(b < 20 or b > 60 for b in bits):
            raise param_error(
                "coeff_bits", "HEContext.create", "at least 3 prime sizes in [20, 60]", coeff_bits
            )
        if not 20 <= scale_bits <= min(bits[1:-1]):
            raise param_error(
                "scale_bits", "HEContext.create", "in [20, the middle primes' bit size]", scale_bits
            )
        ctx = ts.context(ts.SCHEME_TYPE.CKKS, n, coeff_mod_bit_sizes=bits)
        ctx.global_scale = 2.0**scale_bits
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
        if not isinstance(b, (bytes, bytearray)) or not bytes(b[:8]) == _MAGIC:
            raise param_error(
                "b", "HEContext.from_bytes", "bytes made by HEContext.to_bytes", Described("other")
            )
        (size,) = struct.unpack("<I", b[8:12])
        meta = json.loads(bytes(b[12 : 12 + size]))
        ctx = ts.context_from(bytes(b[12 + size :]))
        if secret and not ctx.has_secret_key():
            raise param_error(
                "secret", "HEContext.from_bytes", "False for bytes without a secret key", secret
            )
        if not secret and ctx.has_secret_key():
            ctx.make_context_public(generate_galois_keys=False, generate_relin_keys=False)
        return cls(ctx, meta["n"], meta["coeff_bits"], meta["scale_bits"])

    def n_chunks(self, length: int) -> int:
        """Number of ciphertexts for a vector of ``length`` entries: ``ceil(length / slots)``."""
        return -(-int(length) // self.slots)

    def encrypt(self, vec: np.ndarray | Sequence[float]) -> list[bytes]:
        """Encrypt a 1-D vector as ``ceil(P / slots)`` serialised CKKS ciphertexts."""
        v = np.asarray(getattr(vec, "detach", lambda: vec)(), dtype=np.float64)
        if v.ndim != 1 or v.size == 0:
            raise param_error(
                "vec", "HEContext.encrypt", "a non-empty 1-D vector", Described(f"shape {v.shape}")
            )
        peak = float(np.max(np.abs(v)))
        if not np.isfinite(peak) or peak >= self.max_abs:
            raise param_error(
                "vec",
                "HEContext.encrypt",
                f"finite with |v| < {self.max_abs:g} (CKKS overflows beyond the modulus)",
                Described(f"max |v| = {peak:g}"),
            )
        return [
            ts.ckks_vector(self._ctx, v[i : i + self.slots].tolist()).serialize()
            for i in range(0, v.size, self.slots)
        ]

    def decrypt(self, chunks: Sequence[bytes]) -> np.ndarray:
        """Decrypt serialised ciphertexts into one float64 vector (needs the secret key;
        TenSEAL raises ``ValueError`` on a public context)."""
        parts = [np.asarray(ts.ckks_vector_from(self._ctx, c).decrypt()) for c in chunks]
        return np.concatenate(parts) if parts else np.zeros(0)

    def weighted_sum(
        self, list_of_chunks: Sequence[Sequence[bytes]], weights: Sequence[float]
    ) -> list[bytes]:
        """Server side: ``Σ_k w_k · c_k`` chunk by chunk, on ciphertexts only.

        All clients must send the same number of chunks of the same sizes.
        """
        if len(list_of_chunks) == 0 or len(list_of_chunks) != len(weights):
            raise param_error(
                "weights",
                "HEContext.weighted_sum",
                f"one weight per client ({len(list_of_chunks)} clients, at least 1)",
                Described(f"{len(weights)} weights"),
            )
        w = np.asarray(weights, dtype=np.float64)
        if not np.all(np.isfinite(w)) or np.any(np.abs(w) > 1):
            raise param_error("weights", "HEContext.weighted_sum", "finite, in [-1, 1]", list(w))
        counts = {len(c) for c in list_of_chunks}
        if len(counts) != 1:
            raise param_error(
                "list_of_chunks",
                "HEContext.weighted_sum",
                "the same number of ciphertexts from every client (same model shapes)",
                Described(f"counts {[len(c) for c in list_of_chunks]}"),
            )
        out = []
        for j in range(counts.pop()):
            vecs = [ts.ckks_vector_from(self._ctx, c[j]) for c in list_of_chunks]
            sizes = {v.size() for v in vecs}
            if len(sizes) != 1:
                raise param_error(
                    "list_of_chunks",
                    "HEContext.weighted_sum",
                    "ciphertexts of equal length across clients (same model shapes)",
                    Described(f"chunk {j} lengths {[v.size() for v in vecs]}"),
                )
            acc = vecs[0] * float(w[0])
            for v, wk in zip(vecs[1:], w[1:], strict=True):
                acc += v * float(wk)
            out.append(acc.serialize())
        return out
