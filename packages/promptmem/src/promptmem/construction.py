r"""Part A: an exact algorithmic reference of the prompt-length counting argument.

The paper's Theorem (Section 3) states that a transformer of constant size memorises any
:math:`n` pairs of length :math:`N` with a prompt of length :math:`\tilde O(\sqrt{nN})` when it
may run a corresponding number of autoregressive steps, and that prompt length trades against the
number of steps. This module executes the standard route to that bound (contextual keys,
grouping, bit packing and sequential bit extraction, as in the sqrt-memorisation constructions of
Vardi et al. and Kajitsuka & Sato that the paper builds on) with a fixed *prompt interpreter*:

1. every output slot :math:`(i, j)` gets an exact :math:`q`-bit key (:mod:`promptmem.keys`); the
   :math:`S` distinct slots are sorted by key;
2. the sorted slots are cut into :math:`m = \lceil S/k\rceil` groups of :math:`k` consecutive
   slots; prompt token :math:`g` holds :math:`lo_g` (the group's smallest key), the number of its
   slots, and the integer :math:`W_g` concatenating, slot after slot, the :math:`q`-bit key and
   the :math:`b = \lceil\log_2|V|\rceil` output bits: :math:`k(q+b)` bits, read as the dyadic
   fraction :math:`w_g = W_g / 2^{k(q+b)} \in [0, 1)`;
3. a query selects the group with the largest :math:`lo_g \le` key (hard attention over the
   prompt tokens), then runs up to :math:`k` constant-size steps
   :math:`w \leftarrow 2^{q+b} w`, :math:`f = \lfloor w\rfloor`, :math:`w \leftarrow w - f`,
   comparing the key field of :math:`f` with the query key and emitting its :math:`b` output bits
   on a match.

So :math:`m \cdot s \approx nN` (prompt length times steps) and :math:`k = \lceil\sqrt{nN}\rceil`
gives :math:`m, s \le \lceil\sqrt{nN}\rceil`, while each token needs :math:`k(q+b)` bits of
precision (the growth that the :math:`\tilde O` and the bit-precision assumption hide).

Scope: this is the counting argument executed exactly (prompt length, steps, bits per token), not
a transformer with fixed weights: each step is a constant-size operation (hard attention, shift,
ReLU-floor on dyadic inputs, compare), but it is not compiled into attention and MLP weights.
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from paperkit import check_choice, check_int, check_tensor, param_error
from promptmem.keys import key_bits, position_bits, real_code, sequence_code, token_bits

__all__ = ["PrecisionError", "Prompt", "PromptInterpreter", "PromptToken", "tradeoff_curve"]

#: Significand bits of one float64 entry used to hold payload bits (``float64`` mode).
FLOAT64_BITS = 52
#: Most output slots one prompt may hold (bounds the work of :meth:`PromptInterpreter.build`).
MAX_SLOTS = 10**6


class PrecisionError(ValueError):
    """A prompt token would need more payload bits than ``52 * width`` float64 entries hold."""


@dataclass(frozen=True)
class PromptToken:
    """One prompt token: the group's smallest key ``lo``, its number of slots ``count`` and the
    payload: the integer :math:`W_g` (exact mode) or its ``width`` float64 entries, each an exact
    dyadic fraction ``chunk / 2**52`` (float64 mode)."""

    lo: int
    count: int
    payload: int | tuple[float, ...]


@dataclass(frozen=True)
class Prompt:
    """A built prompt: its tokens and the format every token shares.

    Attributes:
        tokens: the :math:`m` prompt tokens, sorted by ``lo``.
        key_bits: :math:`q`, bits of a slot key.
        out_bits: :math:`b`, bits of an output token.
        group_size: :math:`k` (at most the number of slots), slots per token.
        N: sequence length of the memorised inputs.
        vocab: the token vocabulary, or None for real-valued inputs.
        direction: the fixed generic vector :math:`a` of real-valued keys (None for tokens).
        mode: ``"exact"`` or ``"float64"``.
    """

    tokens: tuple[PromptToken, ...]
    key_bits: int
    out_bits: int
    group_size: int
    N: int
    vocab: int | None
    direction: tuple[float, ...] | None
    mode: str

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def field_bits(self) -> int:
        """:math:`q + b`, bits of one slot in a payload."""
        return self.key_bits + self.out_bits

    @property
    def bits_per_token(self) -> int:
        """:math:`k(q + b)`, payload bits of one prompt token."""
        return self.group_size * self.field_bits

    @property
    def steps(self) -> int:
        """:math:`s`, the most extraction steps a query can take (the largest group)."""
        return max(t.count for t in self.tokens)


class PromptInterpreter:
    r"""The fixed prompt interpreter of Part A: builds exact prompts and runs queries on them.

    Args:
        mode: ``"exact"`` (payloads as Python integers, any precision) or ``"float64"``
            (each payload split over ``width`` float64 entries of 52 bits; :meth:`build` raises
            :class:`PrecisionError` exactly when :math:`k(q+b) > 52\,\mathrm{width}`).
        width: float64 entries per prompt token in ``"float64"`` mode.

    >>> import torch
    >>> X = torch.tensor([[0, 1], [1, 1], [2, 0]]); Y = torch.tensor([[1, 0], [2, 2], [0, 1]])
    >>> interp = PromptInterpreter()
    >>> prompt = interp.build(X, Y, k="sqrt")  # nN = 6 slots, k = ceil(sqrt(6)) = 3
    >>> interp.prompt_length, interp.steps, interp.bits_per_token
    (2, 3, 21)
    >>> interp.run(prompt, [1, 1])  # position 0 is the 3rd slot of token 0
    ([2, 2], 3)
    """

    def __init__(self, mode: str = "exact", width: int = 4) -> None:
        owner = "PromptInterpreter"
        self.mode = check_choice("mode", owner, mode, ("exact", "float64"))
        self.width = check_int("width", owner, width, low=1, high=10**6)
        self.prompt: Prompt | None = None

    @property
    def capacity_bits(self) -> float:
        """Payload bits one token can hold: :math:`52\\,\\mathrm{width}` (float64), else inf."""
        return FLOAT64_BITS * self.width if self.mode == "float64" else math.inf

    def _last(self) -> Prompt:
        if self.prompt is None:
            raise ValueError("PromptInterpreter: no prompt built yet; call build(X, Y, k) first.")
        return self.prompt

    @property
    def prompt_length(self) -> int:
        """:math:`m = \\lceil S/k\\rceil` of the last built prompt (S distinct output slots)."""
        return len(self._last())

    @property
    def bits_per_token(self) -> int:
        """:math:`k(q+b)`, payload bits per token of the last built prompt."""
        return self._last().bits_per_token

    @property
    def steps(self) -> int:
        """:math:`s`, the most extraction steps a query of the last built prompt can take."""
        return self._last().steps

    def build(self, X: Any, Y: Any, k: int | str = "sqrt", *, vocab: int | None = None) -> Prompt:
        r"""Pack a data set into a prompt of :math:`m = \lceil S/k\rceil` tokens.

        Args:
            X: inputs, an integer tensor ``(n, N)`` of tokens in ``[0, vocab)`` or a float
                tensor ``(n, N, d0)`` of real tokens.
            Y: targets, an integer tensor ``(n, N)`` with entries in ``[0, vocab)``.
            k: slots per prompt token, an integer :math:`\ge 1` (capped at the number of
                slots S), or ``"sqrt"`` for :math:`k = \lceil\sqrt{S}\rceil`.
            vocab: the vocabulary :math:`|V|`; default ``max(X, Y) + 1`` (at least 2).

        Returns:
            the :class:`Prompt` (also kept for :attr:`prompt_length` and friends).

        Raises:
            ValueError: equal inputs with different targets (not memorisable), two different
                real inputs with the same key, entries outside ``[0, vocab)``.
            PrecisionError: float64 mode, when :math:`k(q+b) > 52\,\mathrm{width}`.

        NaN policy: NaN or inf in ``X`` is refused.
        """
        owner = "PromptInterpreter.build"
        dims: dict = {}
        real = hasattr(X, "is_floating_point") and X.is_floating_point()
        shape = ("n", "N", "d0") if real else ("n", "N")
        check_tensor("X", owner, X, shape=shape, dims=dims, dtype="float" if real else "int")
        check_tensor("Y", owner, Y, shape=("n", "N"), dims=dims, dtype="int")
        n, N = Y.shape
        if n * N > MAX_SLOTS:
            raise param_error("X", owner, f"at most {MAX_SLOTS:g} output slots (n * N)", n * N)
        if int(Y.min()) < 0:
            raise param_error("Y", owner, "non-negative tokens", int(Y.min()))
        if not real and int(X.min()) < 0:
            raise param_error("X", owner, "non-negative tokens", int(X.min()))
        top = max(int(Y.max()), -1 if real else int(X.max())) + 1
        if vocab is None:
            vocab = max(2, top)
        vocab = check_int("vocab", owner, vocab, low=max(2, top))
        if k != "sqrt":
            k = check_int("k", owner, k, low=1)
        slots, direction = _slots(X, Y, vocab, real, owner)
        S = len(slots)
        group = min(S, math.isqrt(S - 1) + 1 if k == "sqrt" else k)
        q = key_bits(N, None if real else vocab)
        b = token_bits(vocab)
        if group * (q + b) > self.capacity_bits:
            raise PrecisionError(
                f"A prompt token needs k(q+b) = {group}*({q}+{b}) = {group * (q + b)} payload "
                f"bits, more than the {self.capacity_bits} bits of width={self.width} float64 "
                "entries; use mode='exact', a larger width or a smaller k."
            )
        keys = sorted(slots)
        tokens = tuple(
            self._token(keys[g : g + group], slots, group, q, b) for g in range(0, S, group)
        )
        self.prompt = Prompt(tokens, q, b, group, N, None if real else vocab, direction, self.mode)
        return self.prompt

    def _token(
        self, keys: list[int], slots: dict[int, int], group: int, q: int, b: int
    ) -> PromptToken:
        """Concatenate the group's (key, output) fields, first slot most significant (through
        a binary string: linear in k(q+b), where shifting an integer k times is quadratic)."""
        fields = "".join(format((key << b) | slots[key], f"0{q + b}b") for key in keys)
        fields += "0" * (
            (group - len(keys)) * (q + b)
        )  # a short last group: zero fields at the end
        payload = int(fields, 2)
        if self.mode == "exact":
            return PromptToken(keys[0], len(keys), payload)
        return PromptToken(keys[0], len(keys), _to_words(payload, group * (q + b), self.width))

    def run(self, prompt: Prompt, x: Any) -> tuple[list[int], int]:
        r"""Answer one input sequence from the prompt alone.

        For each position :math:`j`: its key (as in :meth:`build`), the group with the largest
        :math:`lo_g \le` key, then the sequential extraction steps until the key field matches.

        Args:
            prompt: a :class:`Prompt` built by an interpreter of the same ``mode``.
            x: one input: ``N`` tokens (a list or 1-D integer tensor) or ``(N, d0)`` real
                tokens.

        Returns:
            ``(y_pred, steps_used)``: the ``N`` output tokens (``-1`` where the input was not
            memorised) and the most extraction steps any position took (at most :math:`k`; the
            positions run in parallel).

        NaN policy: NaN or inf in ``x`` is refused.
        """
        owner = "PromptInterpreter.run"
        if not isinstance(prompt, Prompt):
            raise param_error("prompt", owner, "a Prompt from build()", type(prompt).__name__)
        if prompt.mode != self.mode:
            raise param_error("prompt", owner, f"a prompt built in mode {self.mode!r}", prompt.mode)
        codes = _query_code(prompt, x, owner)
        p = position_bits(prompt.N)
        lows = [t.lo for t in prompt.tokens]
        out, used = [], 0
        for j in range(prompt.N):
            key = (codes << p) | j
            g = bisect.bisect_right(lows, key) - 1  # hard attention: largest lo_g <= key
            y, steps = (-1, 0) if g < 0 else self._extract(prompt, prompt.tokens[g], key)
            out.append(y)
            used = max(used, steps)
        return out, used

    def _extract(self, prompt: Prompt, token: PromptToken, key: int) -> tuple[int, int]:
        r"""Sequential bit extraction on :math:`w = W / 2^T`: each step
        :math:`w \leftarrow 2^{q+b} w`, :math:`f = \lfloor w\rfloor`, :math:`w \leftarrow w - f`.

        A step reads the next :math:`q + b` digits of :math:`w`'s binary expansion, which is
        what the code does (one O(T) expansion, then O(q+b) per step, instead of O(T)-bit
        shifts); the number of steps is the same.
        """
        f, b = prompt.field_bits, prompt.out_bits
        digits = _expansion(token.payload, prompt.bits_per_token)
        for step in range(1, token.count + 1):
            field = int(digits[(step - 1) * f : step * f], 2)  # floor(2^(q+b) w)
            if field >> b == key:
                return field & ((1 << b) - 1), step
            if field >> b > key:  # slots are sorted: the key is not stored
                return -1, step
        return -1, token.count


@functools.lru_cache(maxsize=64)
def _expansion(payload: int | tuple[float, ...], bits: int) -> str:
    """The ``bits`` binary digits of :math:`w = W / 2^{bits}` (from the integer, or from the
    float64 entries)."""
    W = payload if isinstance(payload, int) else _from_words(payload, bits)
    return format(W, f"0{bits}b")


def _slots(
    X: Any, Y: Any, vocab: int, real: bool, owner: str
) -> tuple[dict[int, int], tuple[float, ...] | None]:
    """Key -> output token for every distinct output slot; refuses contradictions/collisions."""
    N = Y.shape[1]
    p = position_bits(N)
    Ys = Y.tolist()
    direction = None
    if real:
        Xa = X.detach().cpu().numpy().astype(np.float64)
        direction = tuple(_direction(Xa.shape[1] * Xa.shape[2]).tolist())
        a = np.asarray(direction)
        codes = [real_code(x, a) for x in Xa]
    else:
        Xa = X.tolist()
        codes = [sequence_code(x, vocab) for x in Xa]
    first: dict[int, int] = {}
    slots: dict[int, int] = {}
    for i, code in enumerate(codes):
        if code in first:
            other = first[code]
            if real and not np.array_equal(Xa[i], Xa[other]):
                raise param_error(
                    "X",
                    owner,
                    "inputs with distinct contextual keys <a, vec X> (real-valued collision)",
                    f"rows {other} and {i}",
                )
            if Ys[i] != Ys[other]:
                raise param_error(
                    "Y",
                    owner,
                    "equal for equal inputs (duplicate inputs with different targets cannot be "
                    "memorised)",
                    f"rows {other} and {i}",
                )
            continue
        first[code] = i
        for j in range(N):
            slots[(code << p) | j] = Ys[i][j]
    return slots, direction


def _direction(size: int) -> np.ndarray:
    """The fixed generic direction a of real-valued keys (seeded, so build and run agree)."""
    return np.random.default_rng(20251).standard_normal(size)


def _query_code(prompt: Prompt, x: Any, owner: str) -> int:
    """The sequence code of a query input, checked against the prompt's format."""
    if prompt.vocab is None:
        arr = np.asarray(x.detach().cpu() if hasattr(x, "detach") else x, dtype=np.float64)
        size = len(prompt.direction)
        if arr.ndim != 2 or arr.shape[0] != prompt.N or arr.size != size:
            raise param_error(
                "x",
                owner,
                f"real tokens of shape ({prompt.N}, {size // prompt.N})",
                f"shape {arr.shape}",
            )
        if not np.isfinite(arr).all():
            raise param_error("x", owner, "finite (no NaN or inf)", "non-finite entries")
        return real_code(arr, np.asarray(prompt.direction))
    tokens = x.tolist() if hasattr(x, "tolist") else x
    if not isinstance(tokens, Sequence) or len(tokens) != prompt.N:
        raise param_error("x", owner, f"a sequence of {prompt.N} tokens", _show(tokens))
    for t in tokens:
        if isinstance(t, bool) or not isinstance(t, (int, np.integer)):
            raise param_error("x", owner, "integer tokens", _show(tokens))
        if not 0 <= t < prompt.vocab:
            raise param_error("x", owner, f"tokens in [0, {prompt.vocab})", _show(tokens))
    return sequence_code(tokens, prompt.vocab)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) < 40 else text[:37] + "..."


def _to_words(payload: int, bits: int, width: int) -> tuple[float, ...]:
    """Split a ``bits``-bit payload (top-aligned in 52 * width bits) into float64 entries, each
    ``chunk / 2**52`` exactly."""
    aligned = payload << (FLOAT64_BITS * width - bits)
    mask = (1 << FLOAT64_BITS) - 1
    chunks = [(aligned >> (FLOAT64_BITS * (width - 1 - i))) & mask for i in range(width)]
    return tuple(math.ldexp(float(c), -FLOAT64_BITS) for c in chunks)


def _from_words(words: tuple[float, ...], bits: int) -> int:
    """The payload back from its float64 entries (exact: each entry is a 52-bit dyadic)."""
    aligned = 0
    for word in words:
        aligned = (aligned << FLOAT64_BITS) | int(math.ldexp(word, FLOAT64_BITS))
    return aligned >> (FLOAT64_BITS * len(words) - bits)


def tradeoff_curve(n: int, N: int, ks: Sequence[int], *, vocab: int = 8) -> list[dict[str, int]]:
    r"""The prompt-length / steps trade-off of the construction, counted without building.

    For :math:`S = nN` slots (distinct token inputs) and each :math:`k` (capped at S):
    :math:`m = \lceil S/k\rceil`, :math:`s = k`, bits per token :math:`k(q+b)` with
    :math:`q = N\lceil\log_2|V|\rceil + \lceil\log_2 N\rceil`, :math:`b = \lceil\log_2|V|\rceil`.
    :meth:`PromptInterpreter.build` on such data gives the same m and bits (tested).

    Args:
        n: number of pairs (at least 1). N: sequence length (at least 1).
        ks: the group sizes, integers :math:`\ge 1`.
        vocab: the vocabulary :math:`|V|` (at least 2).

    Returns:
        one ``dict(k, m, s, bits_per_token)`` per k, in the given order.

    NaN policy: integers only.

    >>> [(r["k"], r["m"], r["s"]) for r in tradeoff_curve(16, 4, [1, 8, 64])]
    [(1, 64, 1), (8, 8, 8), (64, 1, 64)]
    """
    owner = "tradeoff_curve"
    n = check_int("n", owner, n, low=1, high=10**12)
    N = check_int("N", owner, N, low=1, high=10**6)
    vocab = check_int("vocab", owner, vocab, low=2)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, Sequence) or len(ks) == 0:
        raise param_error("ks", owner, "a non-empty list of integers", _show(ks))
    S = n * N
    q, b = key_bits(N, vocab), token_bits(vocab)
    rows = []
    for k in ks:
        k = min(S, check_int("ks", owner, k, low=1))
        rows.append({"k": k, "m": -(-S // k), "s": k, "bits_per_token": k * (q + b)})
    return rows
