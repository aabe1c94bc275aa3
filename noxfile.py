"""Sessions of the monorepo, each parametrised over the packages found under packages/.

    uvx nox -l                      # every session, per package
    uvx nox -s tests                # all packages' tests, paperkit's, and the workspace checks
    uvx nox -s "tests(zeros)"       # one package, in its own environment made from uv.lock
    uvx nox -s kernels              # static kernel gate: .cu (nvcc) and Triton (offline sm_90)

Each package session gets its own virtual environment, filled by ``uv sync --frozen --package``
from the committed lock, so a package only sees its declared dependencies.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import nox

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).parent
PACKAGES = sorted(p.parent.name for p in ROOT.glob("packages/*/pyproject.toml"))
MEMBERS = ["paperkit", *PACKAGES]  # paperkit is tested and built like a package
TESTED = [*MEMBERS, "workspace"]  # "workspace": lock check, lint, repository tests
DIST_PREFIX = "neurips25-"

nox.options.default_venv_backend = "uv"
nox.options.error_on_external_run = True


def _src(package: str) -> Path:
    return ROOT / "shared" if package == "paperkit" else ROOT / "packages" / package


def _dist(package: str) -> str:
    """The distribution name of a member: ours alone on the public index (``neurips25-<pkg>``)."""
    return f"{DIST_PREFIX}{package}"


def _sync(session: nox.Session, package: str | None, *args: str) -> None:
    """Fill the session's venv from uv.lock: one member and its dependencies (or the whole root)."""
    target = ["--package", _dist(package)] if package else []
    session.run_install(
        "uv",
        "sync",
        "--frozen",
        "--no-default-groups",
        *target,
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
        external=True,
    )


def _workspace_checks(session: nox.Session) -> None:
    _sync(session, None, "--group", "dev")
    session.run("uv", "lock", "--check", external=True)
    _lint(session)
    session.run("pytest", "tests", *session.posargs)


def _lint(session: nox.Session) -> None:
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
@nox.parametrize("package", TESTED, ids=TESTED)
def tests(session: nox.Session, package: str) -> None:
    """A package's CPU tests in its own environment (Triton kernels under the interpreter);
    ``tests(workspace)``: lock check, lint and the repository-level tests."""
    if package == "workspace":
        _workspace_checks(session)
        return
    _sync(session, package, "--group", "test")
    # bytecode is cached in the session's venv: without it every test process recompiles torch
    # (about 20 s of CPU for torch._dynamo alone)
    session.env.update(
        {"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": "", "PYTHONDONTWRITEBYTECODE": ""}
    )
    # the tests, and every `>>>` example of the sources as a doctest
    src = _src(package) / "src" / package
    session.run(
        "pytest", str(_src(package) / "tests"), "--doctest-modules", str(src), *session.posargs
    )


@nox.session
@nox.parametrize("package", PACKAGES, ids=PACKAGES)
def bench(session: nox.Session, package: str) -> None:
    """The package's benchmark: prints its table, writes runs/<pkg>/bench-*/bench.json."""
    _sync(session, package)
    session.run(package, "bench", *session.posargs)


@nox.session(venv_backend="none")
@nox.parametrize("package", MEMBERS, ids=MEMBERS)
def build(session: nox.Session, package: str) -> None:
    """Build the wheel, install it into a clean venv with only its declared dependencies
    (pinned by the lock), import it and run its command."""
    tmp = Path(session.create_tmp()) / f"build-{package}"
    shutil.rmtree(tmp, ignore_errors=True)
    dist = tmp / "dist"
    for member in dict.fromkeys(["paperkit", package]):  # paperkit is every package's runtime dep
        session.run("uv", "build", "--package", _dist(member), "--wheel", "--out-dir", str(dist))
    pins = tmp / "pins.txt"
    session.run(
        "uv",
        "export",
        "--frozen",
        "--package",
        _dist(package),
        "--no-emit-workspace",
        "--no-dev",
        "--no-hashes",
        "--quiet",
        "--output-file",
        str(pins),
    )
    venv = tmp / "venv"
    session.run("uv", "venv", "--quiet", str(venv))
    python = str(venv / "bin" / "python")
    wheels = sorted(str(w) for w in dist.glob("*.whl"))
    session.run("uv", "pip", "install", "--python", python, "--constraint", str(pins), *wheels)
    session.run(python, "-c", f"import {package}; print({package}.__name__, 'imports')")
    if package != "paperkit":
        session.run(str(venv / "bin" / package), "--help", silent=True)


@nox.session(venv_backend="none")
def wheels(session: nox.Session) -> None:
    """Build every member's wheel into dist/, the wheelhouse of install path 2:
    ``pip install --find-links dist neurips25-<pkg>``."""
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("uv", "build", "--all-packages", "--wheel", "--out-dir", str(dist))


def _extras(package: str) -> list[str]:
    meta = tomllib.loads((_src(package) / "pyproject.toml").read_text())["project"]
    return sorted(meta.get("optional-dependencies", {}))


def _readme_example(package: str) -> str:
    """The python block of the README's Usage section (the same one its test runs)."""
    text = (_src(package) / "README.md").read_text()
    body = text.split("## Usage", 1)[1].split("\n## ", 1)[0]
    return body.split("```python\n", 1)[1].split("```", 1)[0]


@nox.session(venv_backend="none")
@nox.parametrize("package", PACKAGES, ids=PACKAGES)
def pipinstall(session: nox.Session, package: str) -> None:
    """The three documented install paths, each into a fresh ``python -m venv`` with plain pip
    (no uv inside): (1) from the checkout, ``pip install ./shared ./packages/<pkg>[extras]``;
    (2) from a wheelhouse, ``pip install --find-links dist neurips25-<pkg>``; (3) from git,
    ``pip install "neurips25-<pkg> @ git+<repo>#subdirectory=packages/<pkg>" "neurips25-paperkit
    @ git+<repo>#subdirectory=shared"`` (here the repository is this checkout's committed HEAD).
    Each venv imports the package, runs ``<pkg> --help`` and the README's usage example, and
    fails if pip took a distribution named like one of ours from anywhere but this tree."""
    tmp = Path(session.create_tmp()) / f"pipinstall-{package}"
    shutil.rmtree(tmp, ignore_errors=True)
    dist = tmp / "dist"
    for member in ("paperkit", package):
        session.run("uv", "build", "--package", _dist(member), "--wheel", "--out-dir", str(dist))
    extras = _extras(package)
    target = f"./packages/{package}" + (f"[{','.join(extras)}]" if extras else "")
    repo = f"git+file://localhost{ROOT}"  # a host part: older pips refuse git+file:///
    paths = {
        "checkout": ["./shared", target],
        "wheelhouse": ["--find-links", str(dist), _dist(package)],
        "git": [
            f"{_dist(package)} @ {repo}#subdirectory=packages/{package}",
            f"{_dist('paperkit')} @ {repo}#subdirectory=shared",
        ],
    }
    python = os.environ.get("PIPINSTALL_PYTHON", sys.executable)
    example = tmp / "example.py"
    example.write_text(_readme_example(package))
    for name, args in paths.items():
        venv = tmp / name
        session.run(python, "-m", "venv", str(venv), external=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip"]
        report = tmp / f"{name}-report.json"
        session.run(*pip, "install", "--quiet", "--report", str(report), *args, external=True)
        _check_origins(report, package, allowed=(ROOT, dist))
        py = str(venv / "bin" / "python")
        session.run(py, "-c", f"import {package}; print({package}.__name__, {package}.__version__)")
        session.run(str(venv / "bin" / package), "--help", silent=True, external=True)
        session.run(py, str(example), external=True)


def _check_origins(report: Path, package: str, *, allowed: tuple[Path, ...]) -> None:
    """Fail when pip installed a distribution named like one of ours (``neurips25-x`` or the
    plain ``x``, which belongs to unrelated projects on the public index) from elsewhere."""
    ours = {n for m in MEMBERS for n in (m, _dist(m))}
    roots = [f"{scheme}{p}" for p in allowed for scheme in ("file://", "file://localhost")]
    for item in json.loads(report.read_text())["install"]:
        name = item["metadata"]["name"].lower().replace("_", "-")
        url = item["download_info"]["url"]
        if name in ours and not any(url.startswith(r) for r in roots):
            raise RuntimeError(f"pip took {name} from {url}, not from this project ({package})")


@nox.session(venv_backend="none")
@nox.parametrize("package", PACKAGES, ids=PACKAGES)
def kernels(session: nox.Session, package: str) -> None:
    """The static kernel gate, no GPU needed (``paperkit.kernel_gate``): every .cu of the package
    compiled by nvcc for sm_80 and sm_90, and the Triton launch configurations that
    ``<pkg>.kernels.offline`` lists compiled offline for sm_90; each row held to sm_90's shared
    memory per block and to its spill budget, in a table. Skipped for packages with neither."""
    src = _src(package) / "src" / package
    has_cuda = any(src.rglob("*.cu"))
    has_triton = (src / "kernels" / "offline.py").is_file()
    if not (has_cuda or has_triton):
        session.skip(f"{package} has no GPU kernels to gate")
    session.run(
        "uv",
        "run",
        "--frozen",
        "--no-default-groups",
        "--package",
        _dist(package),
        "python",
        "-m",
        "paperkit.kernel_gate",
        package,
        env={
            "UV_PROJECT_ENVIRONMENT": str(ROOT / ".nox" / f"kernels-{package}"),
            "TRITON_DEFAULT_FP_FUSION": "1",
        },
        external=True,
    )


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check and ruff format --check over the tree."""
    _sync(session, None, "--only-group", "lint")
    _lint(session)


@nox.session
@nox.parametrize("package", MEMBERS, ids=MEMBERS)
def gpu(session: nox.Session, package: str) -> None:
    """On a machine with a CUDA GPU: the package's `gpu`-marked tests and its GPU benchmark."""
    _sync(session, package, "--group", "test", "--all-extras")
    session.run("pytest", str(_src(package) / "tests"), "-m", "gpu", *session.posargs)
    if package != "paperkit":
        session.run(package, "bench", "--quick", "--device", "cuda")
