"""The ``idenergy`` command: ``idenergy reproduce [--quick] [--seed N] [--out DIR]``,
``idenergy bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from idenergy.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
