"""The ``dictpfl`` command: ``dictpfl reproduce [--quick] [--seed N] [--out DIR]``,
``dictpfl bench [--quick]`` and ``dictpfl setup --out DIR`` (a Flower deployment's keys and
data, see :mod:`dictpfl.deploy`)."""

from __future__ import annotations

from collections.abc import Sequence

from dictpfl.paper import PAPER
from paperkit.cli import Command, package_main


def main(argv: Sequence[str] | None = None) -> int:
    from dictpfl import deploy

    setup = Command("write the trusted setup of a Flower deployment", deploy.configure, deploy.run)
    return package_main(PAPER, argv, commands={"setup": setup})
