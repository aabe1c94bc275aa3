"""The ``shadowopacity`` command: ``shadowopacity reproduce [--quick] [--seed N] [--out DIR]``,
``shadowopacity bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from shadowopacity.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
