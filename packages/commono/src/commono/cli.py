"""The ``commono`` command: ``commono reproduce [--quick] [--seed N] [--out DIR]``,
``commono bench [--quick]``."""

from __future__ import annotations

from collections.abc import Sequence

from commono.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
