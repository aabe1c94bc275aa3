"""The ``noisysubmod`` command: ``noisysubmod reproduce [--quick] [--seed N] [--out DIR]``,
``noisysubmod bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from noisysubmod.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``noisysubmod`` command."""
    return package_main(PAPER, argv)
