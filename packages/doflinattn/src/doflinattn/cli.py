"""The ``doflinattn`` command: ``doflinattn reproduce [--quick] [--budget M] [--seed N]
[--out DIR]``, ``doflinattn bench [--quick] [--device D]``.

``--budget M`` sets the MiniLM total feature budget M of reproduction (b) (a multiple of 12:
6 layers, even dims; default 6 x 16 quick, 6 x 32 full).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from doflinattn.paper import PAPER
from paperkit.cli import package_main


def _pop_budget(args: list[str]) -> tuple[int | None, list[str]]:
    """``--budget M`` / ``--budget=M`` taken out of ``args`` (the kit's parser does not know it)."""
    for i, a in enumerate(args):
        if a == "--budget" or a.startswith("--budget="):
            value = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else "")
            rest = args[:i] + args[i + (1 if "=" in a else 2) :]
            try:
                return int(value), rest
            except ValueError:
                return -1, rest
    return None, args


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    budget, args = _pop_budget(args)
    if budget is not None:
        if args[:1] != ["reproduce"]:
            print("doflinattn: --budget belongs to `doflinattn reproduce`.", file=sys.stderr)
            return 2
        if budget < 12 or budget % 12:
            print(
                f"doflinattn: --budget must be a positive multiple of 12 (6 layers, even dims). "
                f"Got {budget} instead.",
                file=sys.stderr,
            )
            return 2
        import doflinattn.reproduce as reproduce  # heavy (torch): only when the option is given

        reproduce.BUDGET = budget
    return package_main(PAPER, args)
