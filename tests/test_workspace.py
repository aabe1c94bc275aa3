"""Repository-level checks, run by `nox -s "tests(workspace)"` in the environment holding every
package: the README catalog is current, every package is a workspace member registered the
documented way and follows the package contract of the root README (registration, GPU flag,
README sections, pyproject fields, lazy registration, self-contained docs, results schema), and
the CI matrix and the nox sessions cover every package."""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
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
    "## Install",
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
        dist = f"neurips25-{member}"
        assert dist in deps, f"add {dist!r} to the root project's dependencies"
        assert sources.get(dist) == {"workspace": True}, f"add {dist} = {{ workspace = true }}"


@pytest.mark.parametrize("package", PACKAGES)
def test_package_layout(package):
    folder = ROOT / "packages" / package
    project = _pyproject(folder / "pyproject.toml")
    meta = project["project"]
    assert meta["name"] == f"neurips25-{package}"
    for key in ("version", "description", "readme", "requires-python", "license"):
        assert meta.get(key), f"{package}: pyproject lacks project.{key}"
    kit = [d for d in meta["dependencies"] if d.startswith("neurips25-paperkit")]
    assert kit and re.match(r"^neurips25-paperkit>=\d", kit[0]), f"{package}: needs the kit, {kit}"
    assert meta["scripts"] == {package: f"{package}.cli:main"}
    assert meta["entry-points"][ENTRY_POINT_GROUP] == {package: f"{package}.paper:PAPER"}
    assert project["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [f"src/{package}"]
    test_group = project.get("dependency-groups", {}).get("test", [])
    assert any(d.startswith("neurips25-paperkit[testing") for d in test_group), (
        f"{package}: the `test` dependency group needs neurips25-paperkit[testing]"
    )
    assert (folder / "src" / package / "__init__.py").is_file()
    assert (folder / "tests" / "test_bad_inputs.py").is_file(), "the shared bad-input suite"
    readme = (folder / "README.md").read_text()
    missing = [s for s in README_SECTIONS if s not in readme]
    assert not missing, f"README of {package} lacks {missing}"
    assert f"neurips25-{package}" in readme.split("## Install", 1)[1].split("\n## ", 1)[0]


@pytest.mark.parametrize("package", PACKAGES)
def test_version_is_the_distributions(package):
    meta = _pyproject(ROOT / "packages" / package / "pyproject.toml")["project"]
    module = importlib.import_module(package)
    assert module.__version__ == meta["version"]


@pytest.mark.parametrize("package", PACKAGES)
def test_registration_targets_resolve_with_the_contract_signatures(package):
    paper = discover()[package]
    expected = {"reproduce": {"quick", "seed", "out"}, "bench": {"quick", "device", "out"}}
    for kind, names in expected.items():
        if kind == "bench" and paper.bench is None:
            continue
        fn = paper.load_reproduce() if kind == "reproduce" else paper.load_bench()
        params = inspect.signature(fn).parameters
        kw_only = {n for n, p in params.items() if p.kind is inspect.Parameter.KEYWORD_ONLY}
        assert names <= kw_only, f"{package}.{kind} must take keyword-only {sorted(names)}"
        required = {n for n, p in params.items() if p.default is inspect.Parameter.empty}
        assert required <= names, f"{package}.{kind} requires more than the contract: {required}"


def _has_gpu_code(package: str) -> bool:
    src = ROOT / "packages" / package / "src"
    if any(src.rglob("*.cu")):
        return True
    return any("triton.jit" in p.read_text() for p in src.rglob("*.py"))


@pytest.mark.parametrize("package", PACKAGES)
def test_gpu_flag_matches_gpu_code(package):
    assert discover()[package].gpu == _has_gpu_code(package), (
        f"{package}: register gpu=True exactly when the package has Triton or CUDA kernels"
    )


HEAVY = (
    "torch",
    "scipy",
    "sklearn",
    "torch_geometric",
    "transformers",
    "tenseal",
    "faiss",
    "hnswlib",
    "sentence_transformers",
    "triton",
    "cupy",
    "networkx",
    "pandas",
    "matplotlib",
)
IMPORT_BUDGET_S = 2.0  # `papers list` and `<pkg> --help` answer in under 2 s


@pytest.mark.parametrize("package", PACKAGES)
def test_registration_and_command_import_nothing_heavy(package):
    """Measured on imports, not on wall clock: the modules `papers list` and `<pkg> --help`
    import pull in none of the heavy libraries, and Python's own import timer
    (`-X importtime`) adds up to less than the budget."""
    code = (
        f"import sys, {package}.paper, {package}.cli; "
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", code],
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "[]", f"{package}: registration imports {out.stdout.strip()}"
    seconds = _top_level_import_seconds(out.stderr)
    assert seconds < IMPORT_BUDGET_S, f"{package}: imports take {seconds:.2f} s"


def _top_level_import_seconds(importtime: str) -> float:
    """The cumulative time of the top-level imports in `-X importtime` output, whose lines read
    `import time: <self us> | <cumulative us> | <name, indented by nesting depth>`."""
    total = 0
    for line in importtime.splitlines():
        fields = line.removeprefix("import time:").split("|")
        if len(fields) == 3 and fields[1].strip().isdigit() and not fields[2][1:2].isspace():
            total += int(fields[1])
    return total / 1e6


DOC_REFERENCES = re.compile(r"\bspec card\b|\bthe card\b|STANDARD\.md|\.\./shared/", re.IGNORECASE)


@pytest.mark.parametrize("package", PACKAGES)
def test_docs_are_self_contained(package):
    """READMEs, sources and tests cite the paper, never a document outside this repository."""
    folder = ROOT / "packages" / package
    hits = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in [folder / "README.md", *folder.rglob("*.py")]
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if DOC_REFERENCES.search(line)
    ]
    assert not hits, f"{package} refers to documents outside the repository: {hits}"


def test_a_quick_reproduction_follows_the_results_schema(tmp_path):
    """The smallest package's quick run, through the command, read back by the schema alone."""
    from paperkit.results import validate

    out = tmp_path / "run"
    subprocess.run(
        [sys.executable, "-m", "paperkit.cli", "reproduce", SMALLEST, "--quick", "--out", str(out)],
        check=True,
        capture_output=True,
        env={**__import__("os").environ, "PAPERKIT_NO_PROGRESS": "1"},
        timeout=240,
    )
    doc = json.loads((out / "results.json").read_text())
    validate(doc)
    assert doc["package"] == SMALLEST and doc["quick"] is True and doc["claims"]


SMALLEST = "scbfgs"  # the quickest `--quick` reproduction of the workspace


@pytest.mark.parametrize("package", PACKAGES)
def test_dependencies_have_lower_bounds_only(package):
    deps = _pyproject(ROOT / "packages" / package / "pyproject.toml")["project"]["dependencies"]
    capped = [d for d in deps if "<" in d or "==" in d or "~=" in d]
    assert not capped, f"{package}: dependencies carry lower bounds only, got {capped}"


def test_matrix_selection_rules():
    members = ["paperkit", "lion", "zeros"]
    assert matrix.touched([".github/workflows/ci.yml"], members) == members
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
        for session in ("tests", "bench", "build", "kernels", "gpu", "pipinstall"):
            assert f"{session}({package})" in names
    assert {"tests(paperkit)", "tests(workspace)", "build(paperkit)", "lint", "wheels"} <= names
