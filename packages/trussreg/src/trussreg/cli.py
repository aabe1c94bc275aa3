"""The ``trussreg`` command: ``trussreg reproduce [--quick] [--seed N] [--out DIR]``,
``trussreg bench [--quick] [--device D] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from trussreg.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``trussreg`` command."""
    return package_main(PAPER, argv)
