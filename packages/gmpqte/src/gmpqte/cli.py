"""The ``gmpqte`` command: ``gmpqte reproduce [--quick] [--seed N] [--out DIR]``,
``gmpqte bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from gmpqte.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gmpqte`` command."""
    return package_main(PAPER, argv)
