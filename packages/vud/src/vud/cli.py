"""The ``vud`` command: ``vud reproduce [--quick] [--seed N] [--out DIR]``, ``vud bench``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from vud.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    return package_main(PAPER, argv)
