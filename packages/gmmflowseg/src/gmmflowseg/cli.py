"""The ``gmmflowseg`` command: ``gmmflowseg reproduce [--quick] [--cracks] [--seed N] [--out DIR]``,
``gmmflowseg bench [--quick]``.

``--cracks`` adds the crack data set to the reproduction (outside the 10-minute budget).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from gmmflowseg.paper import PAPER
from paperkit.cli import package_main


def main(argv: Sequence[str] | None = None) -> int:
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    paper = PAPER
    if "--cracks" in args:
        args.remove("--cracks")
        paper = dataclasses.replace(PAPER, reproduce="gmmflowseg.reproduce:reproduce_with_cracks")
    return package_main(paper, args)
