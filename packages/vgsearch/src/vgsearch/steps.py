"""What a search moves around: a reasoning :class:`Step`, and the :class:`Generator` and
:class:`Verifier` protocols a search talks to (an LLM and a process reward model, PRM, in the
paper; the stand-ins of :mod:`vgsearch.task` and :mod:`vgsearch.verifiers` here).

A candidate solution is a list of steps. The PRM scores a prefix with one score in [0, 1] per
*reasoning* step: a step returned by a "sample to the end" call (``to_end=True``, the last
iteration of the search) holds several reasoning steps, listed in ``values`` and
``lengths``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["Generator", "Step", "Verifier", "reasoning_texts", "reasoning_values"]


@dataclass(frozen=True)
class Step:
    """One generated chunk of a solution.

    Attributes:
        text: the rendered text of the chunk.
        value: the value the chunk states last (the answer when ``is_final``).
        n_tokens: its length in tokens (for the FLOPs accounting).
        is_final: whether the solution ends with this chunk (EOS).
        values: the value stated by each reasoning step of the chunk (``()``: one step, ``value``).
        lengths: the token length of each reasoning step (``()``: one step, ``n_tokens``).
    """

    text: str
    value: int
    n_tokens: int
    is_final: bool
    values: tuple[int, ...] = ()
    lengths: tuple[int, ...] = ()

    @property
    def reasoning_steps(self) -> int:
        """How many reasoning steps the chunk holds."""
        return len(self.values) if self.values else 1


def reasoning_values(prefix: Sequence[Step]) -> list[int]:
    """The stated value of every reasoning step of ``prefix``, chunks flattened.

    >>> reasoning_values([Step("a", 3, 10, False), Step("b; c", 5, 20, True, (4, 5), (8, 12))])
    [3, 4, 5]
    """
    out: list[int] = []
    for step in prefix:
        out.extend(step.values or (step.value,))
    return out


def reasoning_texts(prefix: Sequence[Step]) -> list[str]:
    """The text of every reasoning step of ``prefix``: a chunk's text split at blank lines (the
    step separator a PRM reads, ``"\\n\\n"``).

    >>> reasoning_texts([Step("a", 3, 10, False), Step("b\\n\\nc", 5, 20, True, (4, 5), (8, 12))])
    ['a', 'b', 'c']
    """
    out: list[str] = []
    for step in prefix:
        out.extend(step.text.split("\n\n") if step.values else (step.text,))
    return out


@runtime_checkable
class Generator(Protocol):
    """A stochastic step generator (the policy LLM).

    ``step(problems, prefixes, rng, to_end=False)`` returns one new :class:`Step` per prefix
    (``problems[i]`` is the problem of ``prefixes[i]``), drawing its randomness from ``rng``; with
    ``to_end=True`` the step runs to the end of the solution (``is_final=True``).
    """

    def step(
        self,
        problems: Sequence[Any],
        prefixes: Sequence[Sequence[Step]],
        rng: np.random.Generator,
        to_end: bool = False,
    ) -> list[Step]: ...


@runtime_checkable
class Verifier(Protocol):
    """A process reward model: ``score(problems, prefixes)`` gives, per prefix, one score in
    [0, 1] per reasoning step (:func:`reasoning_values` order)."""

    def score(
        self, problems: Sequence[Any], prefixes: Sequence[Sequence[Step]]
    ) -> list[list[float]]: ...
