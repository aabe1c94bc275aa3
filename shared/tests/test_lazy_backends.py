import sys
import types

import pytest

from paperkit.backends import resolve_backend
from paperkit.lazy import lazy_exports


def test_lazy_exports_import_on_first_use(tmp_path, monkeypatch):
    pkg = tmp_path / "lazypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from paperkit.lazy import lazy_exports\n"
        "__getattr__, __dir__, __all__ = lazy_exports(__name__, {'heavy_fn': 'heavy'})\n"
    )
    (pkg / "heavy.py").write_text("def heavy_fn():\n    return 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import lazypkg

    assert "lazypkg.heavy" not in sys.modules and lazypkg.__all__ == ["heavy_fn"]
    assert "heavy_fn" in dir(lazypkg)
    assert lazypkg.heavy_fn() == 42 and "lazypkg.heavy" in sys.modules
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        lazypkg.nope  # noqa: B018
    for name in ("lazypkg", "lazypkg.heavy"):
        sys.modules.pop(name, None)


def test_lazy_exports_returns_sorted_all_and_refuses_module_names():
    getattr_, dir_, names = lazy_exports("x", {"b": "m", "a": "m"})
    assert names == ["a", "b"] and isinstance(getattr_, types.FunctionType)
    with pytest.raises(ValueError, match=r"submodule's name: \['pretrain'\]"):
        lazy_exports("x", {"pretrain": "pretrain"})


def test_resolve_backend():
    available = {"reference": True, "chunk": True, "triton": False}
    assert resolve_backend("op", "auto", available, auto=("triton", "chunk")) == "chunk"
    assert resolve_backend("op", "reference", available, auto=("chunk",)) == "reference"
    with pytest.raises(ValueError, match="a backend that can run here"):
        resolve_backend("op", "triton", available, auto=("chunk",))
    with pytest.raises(ValueError, match="'backend' parameter of op must be one of"):
        resolve_backend("op", "fast", available, auto=("chunk",))
