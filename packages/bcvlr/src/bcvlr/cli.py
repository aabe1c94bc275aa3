"""The ``bcvlr`` command: ``bcvlr reproduce [--quick] [--seed N] [--out DIR]``, ``bcvlr bench``."""

from __future__ import annotations

from collections.abc import Sequence

from bcvlr.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
