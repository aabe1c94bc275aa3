"""Lazy package namespaces: ``import <pkg>`` costs nothing until a name is used.

The ``papers`` command imports each package's registration (``<pkg>.paper``), which imports the
package's ``__init__``; a lazy ``__init__`` keeps that from importing torch or scipy::

    # src/zeros/__init__.py
    from paperkit.lazy import lazy_exports

    __version__ = "0.1.0"
    __getattr__, __dir__, __all__ = lazy_exports(__name__, {
        "ZeroSAttention": "layers",
        "zeros_attention": "ops",
    })

``zeros.ZeroSAttention`` then imports ``zeros.layers`` on first use; ``from zeros import *`` and
``dir(zeros)`` see every name. For type checkers and IDEs, repeat the imports under
``if TYPE_CHECKING:`` in the redundant-alias form (``from zeros.layers import ZeroSAttention as
ZeroSAttention``), which marks them as re-exports for linters (ruff's F401).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, names: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]], list[str]]:
    """``(__getattr__, __dir__, __all__)`` for a package whose public names live in submodules.

    ``names`` maps each public name to the submodule (relative to ``package``) defining it.
    """
    table = dict(names)
    clashes = sorted(n for n, module in table.items() if module.split(".")[-1] == n)
    if clashes:  # importing the submodule would set the package attribute to the module
        raise ValueError(f"{package}: public names equal to their submodule's name: {clashes}")

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{table[name]}"), name)
        import sys

        setattr(sys.modules[package], name, value)  # later look-ups skip this function
        return value

    def __dir__() -> list[str]:
        import sys

        return sorted(set(vars(sys.modules[package])) | set(table))

    return __getattr__, __dir__, sorted(table)
