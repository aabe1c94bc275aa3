"""The ``robin`` command: ``robin reproduce [--quick] [--seed N] [--out DIR]``, ``robin bench``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from robin.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
