"""The ``tmex`` command: ``tmex reproduce [--quick] [--seed N] [--out DIR]``,
``tmex bench [--quick] [--out DIR]``."""

from __future__ import annotations

from collections.abc import Sequence

from paperkit.cli import package_main
from tmex.paper import PAPER


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tmex`` command."""
    return package_main(PAPER, argv)
