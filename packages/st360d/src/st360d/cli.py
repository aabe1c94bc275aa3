"""The ``st360d`` command: ``st360d reproduce [--quick] [--seed N] [--out DIR]``,
``st360d bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from st360d.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
