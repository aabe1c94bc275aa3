"""The ``oraclebandit`` command: ``oraclebandit reproduce [--quick] [--seed N] [--out DIR]``,
``oraclebandit bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from oraclebandit.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``oraclebandit`` command."""
    return package_main(PAPER, argv)
