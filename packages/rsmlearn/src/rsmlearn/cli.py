"""The ``rsmlearn`` command: ``rsmlearn reproduce [--quick] [--seed N] [--out DIR]``,
``rsmlearn bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from rsmlearn.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rsmlearn`` command."""
    return package_main(PAPER, argv)
