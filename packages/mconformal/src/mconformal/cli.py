"""The ``mconformal`` command: ``mconformal reproduce [--quick] [--seed N] [--out DIR]``,
``mconformal bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from mconformal.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mconformal`` command."""
    return package_main(PAPER, argv)
