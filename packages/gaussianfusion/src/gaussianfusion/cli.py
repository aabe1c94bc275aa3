"""The ``gaussianfusion`` command: ``gaussianfusion reproduce [--quick] [--seed N] [--out DIR]``,
``gaussianfusion bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from gaussianfusion.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
