"""Repository-level checks, run by `nox -s "tests(workspace)"` in the environment holding every
package: the README catalog is current, every package is a workspace member registered the
documented way, the CI matrix and the nox sessions cover every package."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from paperkit.cli import catalog_markdown
from paperkit.registry import ENTRY_POINT_GROUP, discover

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = sorted(p.parent.name for p in ROOT.glob("packages/*/pyproject.toml"))
README_SECTIONS = (
    "## Usage",
    "## API",
    "## Reproduction",
    "## Benchmark",
    "## Deviations",
    "## Limitations",
)


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


catalog = _load("catalog", ROOT / "ci" / "catalog.py")
matrix = _load("matrix", ROOT / "ci" / "matrix.py")


def _pyproject(path: Path) -> dict:
    return tomllib.loads(path.read_text())


def test_readme_catalog_is_current():
    text = (ROOT / "README.md").read_text()
    expected = catalog_markdown(discover())
    assert catalog.current_block(text) == expected, (
        "The README catalog is stale: run `uv run python ci/catalog.py` and commit README.md."
    )


def test_every_package_is_installed_and_registered():
    assert sorted(discover()) == PACKAGES


def test_root_depends_on_every_member():
    root = _pyproject(ROOT / "pyproject.toml")
    deps = set(root["project"]["dependencies"])
    sources = root["tool"]["uv"]["sources"]
    for member in ["paperkit", *PACKAGES]:
        assert member in deps, f"add {member!r} to the root project's dependencies"
        assert sources.get(member) == {"workspace": True}, f"add {member} = {{ workspace = true }}"


@pytest.mark.parametrize("package", PACKAGES)
def test_package_layout(package):
    folder = ROOT / "packages" / package
    project = _pyproject(folder / "pyproject.toml")
    meta = project["project"]
    assert meta["name"] == package or meta["name"].endswith(f"-{package}")
    assert any(d.split(">")[0].split("[")[0].strip() == "paperkit" for d in meta["dependencies"])
    assert meta["scripts"] == {package: f"{package}.cli:main"}
    assert meta["entry-points"][ENTRY_POINT_GROUP] == {package: f"{package}.paper:PAPER"}
    assert "test" in project.get("dependency-groups", {}), "a `test` dependency group is needed"
    assert (folder / "src" / package / "__init__.py").is_file()
    assert any((folder / "tests").glob("test_*.py"))
    readme = (folder / "README.md").read_text()
    missing = [s for s in README_SECTIONS if s not in readme]
    assert not missing, f"README of {package} lacks {missing}"


@pytest.mark.parametrize("package", PACKAGES)
def test_dependencies_have_lower_bounds_only(package):
    deps = _pyproject(ROOT / "packages" / package / "pyproject.toml")["project"]["dependencies"]
    capped = [d for d in deps if "<" in d or "==" in d or "~=" in d]
    assert not capped, f"{package}: dependencies carry lower bounds only, got {capped}"


def test_matrix_selection_rules():
    members = ["paperkit", "lion", "zeros"]
    assert matrix.touched(["packages/zeros/src/zeros/ops.py"], members) == ["zeros"]
    assert matrix.touched(["packages/zeros/a", "packages/lion/b"], members) == ["lion", "zeros"]
    assert matrix.touched(["shared/src/paperkit/bench.py"], members) == members
    assert matrix.touched(["uv.lock"], members) == members
    assert matrix.touched(["README.md", "packages/README.md"], members) == []


def test_matrix_script_lists_every_member():
    out = subprocess.run(
        [sys.executable, str(ROOT / "ci" / "matrix.py")], capture_output=True, text=True, check=True
    )
    assert json.loads(out.stdout) == {"package": ["paperkit", *PACKAGES]}


def test_nox_has_every_session_for_every_package():
    out = subprocess.run(
        [sys.executable, "-m", "nox", "-l", "--json", "-f", str(ROOT / "noxfile.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    names = {s["session"] for s in json.loads(out.stdout)}
    for package in PACKAGES:
        for session in ("tests", "bench", "build", "kernels", "gpu"):
            assert f"{session}({package})" in names
    assert {"tests(paperkit)", "tests(workspace)", "build(paperkit)", "lint"} <= names
