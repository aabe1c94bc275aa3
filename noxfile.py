"""Sessions of the monorepo, each parametrised over the packages found under packages/.

    uvx nox -l                      # every session, per package
    uvx nox -s tests                # all packages' tests, paperkit's, and the workspace checks
    uvx nox -s "tests(zeros)"       # one package, in its own environment made from uv.lock
    uvx nox -s kernels              # nvcc compile gate for every .cu (sm_80, sm_90)

Each package session gets its own virtual environment, filled by ``uv sync --frozen --package``
from the committed lock, so a package only sees its declared dependencies.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nox

ROOT = Path(__file__).parent
PACKAGES = sorted(p.parent.name for p in ROOT.glob("packages/*/pyproject.toml"))
MEMBERS = ["paperkit", *PACKAGES]  # paperkit is tested and built like a package
TESTED = [*MEMBERS, "workspace"]  # "workspace": lock check, lint, repository tests
CUDA_ARCHS = ("sm_80", "sm_90")

nox.options.default_venv_backend = "uv"
nox.options.error_on_external_run = True


def _src(package: str) -> Path:
    return ROOT / "shared" if package == "paperkit" else ROOT / "packages" / package


def _sync(session: nox.Session, package: str | None, *args: str) -> None:
    """Fill the session's venv from uv.lock: one member and its dependencies (or the whole root)."""
    target = ["--package", package] if package else []
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
    session.env.update({"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""})
    session.run("pytest", str(_src(package) / "tests"), *session.posargs)


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
        session.run("uv", "build", "--package", member, "--wheel", "--out-dir", str(dist))
    pins = tmp / "pins.txt"
    session.run(
        "uv",
        "export",
        "--frozen",
        "--package",
        package,
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


def _nvcc() -> str | None:
    found = shutil.which("nvcc")
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    fallback = Path(home) / "bin" / "nvcc"
    return found or (str(fallback) if fallback.is_file() else None)


@nox.session(venv_backend="none")
@nox.parametrize("package", PACKAGES, ids=PACKAGES)
def kernels(session: nox.Session, package: str) -> None:
    """Compile every .cu of the package with nvcc for sm_80 and sm_90 (a gate for code that
    cannot run here); skipped with a notice when nvcc is absent."""
    sources = sorted((_src(package) / "src").rglob("*.cu"))
    if not sources:
        session.skip(f"{package} has no .cu kernels")
    nvcc = _nvcc()
    if nvcc is None:
        session.skip("nvcc not found (set CUDA_HOME): CUDA compile gate skipped")
    out = Path(session.create_tmp())
    for source in sources:
        for arch in CUDA_ARCHS:
            target = out / f"{source.stem}.{arch}.cubin"
            session.run(
                nvcc,
                "--std=c++17",
                f"-arch={arch}",
                "--cubin",
                "-Werror",
                "all-warnings",
                "-o",
                str(target),
                str(source),
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
