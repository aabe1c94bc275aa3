"""The ``eosgd`` command: ``eosgd reproduce [--quick] [--seed N] [--out DIR]``,
``eosgd bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from eosgd.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``eosgd`` command."""
    return package_main(PAPER, argv)
