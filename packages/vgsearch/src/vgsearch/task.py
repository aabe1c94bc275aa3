"""The stand-in for the paper's LLM reasoning task: chained modular arithmetic with a noisy
step generator.

A :class:`ChainArithmetic` problem of level ``l`` in 1..5 starts from ``a_0`` in [0, 20] and
applies ``L = 3 + 2 l`` operations ``a_k = a_{k-1} op_k c_k (mod 101)``, ``op_k`` in {+, -, x};
reasoning step ``k`` states ``a_k`` and the final answer is ``a_L``. Each step renders as text of
a seeded token length in [15, 60], so generator and verifier token counts (hence FLOPs) behave as
for an LLM's solution steps.

:class:`NoisyStepGenerator` is the policy: from a prefix (right or already wrong) it states the
correct next value ``op(stated a_{k-1}, c_k)`` with probability ``1 - p_err`` and otherwise a
plausible wrong value (off by 1..3, or the wrong operator applied). The next step computes from
the *stated* value, so an error propagates to the answer, as a slip does in an LLM's chain of
thought.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit import check_bool, check_int, check_real, describe, param_error
from vgsearch.hashing import mix
from vgsearch.steps import Step

__all__ = ["MODULUS", "OPS", "ChainArithmetic", "NoisyStepGenerator", "make_problems"]

MODULUS = 101
OPS = ("+", "-", "*")
#: The phrasings of a step (drawn per step: two right solutions rarely read alike, as LLM
#: samples do not, so a verifier scores them apart).
PHRASES = (
    "Step {k}: apply {op} {c} mod 101 to {a}, giving {v}.",
    "Step {k}: {a} {op} {c} = {v} (mod 101).",
    "Step {k}: next, {op}{c} turns {a} into {v}.",
    "Step {k}: we get {v} from {a} {op} {c}.",
    "Step {k}: reducing {a} {op} {c} modulo 101 leaves {v}.",
    "Step {k}: so the value is now {v} ({a} {op} {c}).",
)
#: Relative error rate of each operator (multiplication is the hardest step).
OP_WEIGHT = {"+": 0.6, "-": 0.8, "*": 1.6}


def apply_op(a: int, op: str, c: int) -> int:
    """``a op c (mod 101)``."""
    if op == "+":
        return (a + c) % MODULUS
    if op == "-":
        return (a - c) % MODULUS
    return (a * c) % MODULUS


class ChainArithmetic:
    """One problem: ``L = 3 + 2 level`` chained operations mod 101 (or ``length`` when given, for
    scaling studies), drawn from ``seed``.

    Attributes: ``level``, ``seed``, ``a0``, ``ops`` (tuple of ``(op, c)``), ``values``
    (``a_1..a_L``), ``answer`` (``a_L``), ``L``, ``step_tokens`` (token length of each step, in
    [15, 60]), ``prompt_tokens`` (``40 + 10 L``), ``key`` (a 64-bit identity for hashing).
    No NaN can enter (integers only).

    >>> p = ChainArithmetic(2, seed=7)
    >>> p.L, len(p.values), p.answer == p.values[-1], 15 <= min(p.step_tokens)
    (7, 7, True, True)
    """

    def __init__(self, level: int, seed: int = 0, length: int | None = None) -> None:
        self.level = check_int("level", "ChainArithmetic", level, low=1, high=5)
        self.seed = check_int("seed", "ChainArithmetic", seed, low=0)
        if length is not None:
            length = check_int("length", "ChainArithmetic", length, low=1, high=10**4)
        rng = np.random.default_rng([self.seed, self.level, 101])
        self.L = 3 + 2 * self.level if length is None else length
        self.a0 = int(rng.integers(0, 21))
        ops = []
        for _ in range(self.L):
            op = OPS[int(rng.integers(0, 3))]
            c = int(rng.integers(2, 10)) if op == "*" else int(rng.integers(1, 20))
            ops.append((op, c))
        self.ops = tuple(ops)
        values, a = [], self.a0
        for op, c in self.ops:
            a = apply_op(a, op, c)
            values.append(a)
        self.values = tuple(values)
        self.answer = self.values[-1]
        self.step_tokens = tuple(int(t) for t in rng.integers(15, 61, size=self.L))
        self.prompt_tokens = 40 + 10 * self.L
        self.key = mix(mix(self.seed) ^ (self.level << 32))

    def __repr__(self) -> str:
        return f"ChainArithmetic(level={self.level}, seed={self.seed})"


def make_problems(n_per_level: int, seed: int = 0) -> list[ChainArithmetic]:
    """``n_per_level`` problems of each level 1..5 (level-major order), seeds ``seed * 10**6 + i``.

    >>> [p.level for p in make_problems(2)]
    [1, 1, 2, 2, 3, 3, 4, 4, 5, 5]
    """
    n_per_level = check_int("n_per_level", "make_problems", n_per_level, low=1, high=10**6)
    seed = check_int("seed", "make_problems", seed, low=0)
    return [
        ChainArithmetic(level, seed * 10**6 + i)
        for level in range(1, 6)
        for i in range(n_per_level)
    ]


class NoisyStepGenerator:
    """The policy: per reasoning step, the correct next value with probability ``1 - p_err``,

        p_err(level, op, T) = min(0.95, base * (1 + level_slope (level - 1)) * w_op * T / 0.8),

    ``w = {+: 0.6, -: 0.8, x: 1.6}``, else a wrong value: off by +-1..3 or another operator with
    the same constant (half each). The next step applies ``op`` to the *stated* value, so errors
    propagate. Each step's text takes one of :data:`PHRASES` at random. One batched call draws six
    numbers per prefix from ``rng`` (prefix order), so the same prefixes and the same stream give
    the same steps. No NaN can enter (checked reals).

    >>> gen = NoisyStepGenerator(base=0.0)
    >>> p = ChainArithmetic(1, seed=3)
    >>> gen.step([p], [[]], np.random.default_rng(0), to_end=True)[0].value == p.answer
    True
    """

    def __init__(
        self, temperature: float = 0.8, base: float = 0.08, level_slope: float = 0.25
    ) -> None:
        owner = "NoisyStepGenerator"
        self.temperature = check_real("temperature", owner, temperature, low=0.0)
        self.base = check_real("base", owner, base, low=0.0, high=1.0)
        self.level_slope = check_real("level_slope", owner, level_slope, low=0.0)

    def p_err(self, level: int, op: str) -> float:
        """The error probability of one step (formula in the class docstring)."""
        rate = self.base * (1 + self.level_slope * (level - 1)) * OP_WEIGHT[op]
        return min(0.95, rate * self.temperature / 0.8)

    def _draw(self, problems: Sequence[ChainArithmetic], ks: list[int], prev: list[int], rng):
        """One reasoning step for each (problem, index k, stated previous value)."""
        size = len(ks)
        u = rng.random(size)
        kind = rng.random(size)
        delta = rng.integers(1, 4, size=size)
        sign = rng.random(size)
        alt = rng.random(size)
        style = rng.integers(0, len(PHRASES), size=size)
        out = []
        for i, (p, k, a) in enumerate(zip(problems, ks, prev, strict=True)):
            op, c = p.ops[k]
            value = apply_op(a, op, c)
            if u[i] < self.p_err(p.level, op):
                if kind[i] < 0.5:
                    wrong = value + (int(delta[i]) if sign[i] < 0.5 else -int(delta[i]))
                else:
                    others = [o for o in OPS if o != op]
                    wrong = apply_op(a, others[int(alt[i] < 0.5)], c)
                wrong %= MODULUS
                value = wrong if wrong != value else (value + 1) % MODULUS
            out.append((value, int(style[i])))
        return out

    def step(
        self,
        problems: Sequence[ChainArithmetic],
        prefixes: Sequence[Sequence[Step]],
        rng: np.random.Generator,
        to_end: bool = False,
    ) -> list[Step]:
        """One new step per prefix (``to_end``: one chunk holding every remaining step).

        A prefix that is already complete gets no step (an error: the search never asks)."""
        owner = "NoisyStepGenerator.step"
        check_bool("to_end", owner, to_end)
        if not isinstance(rng, np.random.Generator):
            raise param_error(
                "rng", owner, "a numpy.random.Generator", describe(rng), cls=TypeError
            )
        if len(problems) != len(prefixes):
            raise ValueError(
                f"The 'prefixes' parameter of NoisyStepGenerator.step must have one entry per "
                f"problem ({len(problems)}). Got {len(prefixes)} instead."
            )
        ks, prev = [], []
        for i, (p, prefix) in enumerate(zip(problems, prefixes, strict=True)):
            k = sum(s.reasoning_steps for s in prefix)
            if k >= p.L:
                raise ValueError(
                    f"The 'prefixes' parameter of NoisyStepGenerator.step must hold unfinished "
                    f"solutions. Got a complete one at index {i} instead."
                )
            ks.append(k)
            prev.append(prefix[-1].value if prefix else p.a0)
        if not to_end:
            drawn = self._draw(problems, ks, prev, rng)
            return [
                self._render(p, k, a, [d])
                for p, k, a, d in zip(problems, ks, prev, drawn, strict=True)
            ]
        start = list(prev)
        chunks: list[list[tuple[int, int]]] = [[] for _ in prefixes]
        live = list(range(len(prefixes)))
        while live:
            drawn = self._draw(
                [problems[i] for i in live], [ks[i] for i in live], [prev[i] for i in live], rng
            )
            for i, d in zip(live, drawn, strict=True):
                chunks[i].append(d)
                ks[i] += 1
                prev[i] = d[0]
            live = [i for i in live if ks[i] < problems[i].L]
        return [
            self._render(p, k - len(chunk), a, chunk)
            for p, k, a, chunk in zip(problems, ks, start, chunks, strict=True)
        ]

    @staticmethod
    def _render(p: ChainArithmetic, k0: int, a: int, drawn: list[tuple[int, int]]) -> Step:
        """The chunk stating the drawn (value, phrasing) pairs as reasoning steps ``k0, k0 + 1,
        ...`` of ``p``, starting from the stated value ``a``; steps joined by a blank line."""
        lines, lengths, values = [], [], []
        for j, (v, style) in enumerate(drawn):
            op, c = p.ops[k0 + j]
            lines.append(PHRASES[style].format(k=k0 + j + 1, op=op, c=c, a=a, v=v))
            lengths.append(p.step_tokens[k0 + j])
            values.append(v)
            a = v
        final = k0 + len(values) == p.L
        if len(values) == 1:
            return Step(lines[0], values[0], lengths[0], final)
        return Step(
            "\n\n".join(lines), values[-1], sum(lengths), final, tuple(values), tuple(lengths)
        )
