"""The static kernel gate: compile GPU kernels for Hopper (sm_90) without a GPU and hold each
launch configuration to the hardware's limits.

A kernel that needs more shared memory than one block may have does not launch; one that spills
registers to local memory runs, slowly. Both are visible at compile time, so a package lists
every configuration its dispatcher can choose and the gate compiles each one:

* Triton kernels through Triton's own offline compiler (``triton.compile`` on an ``ASTSource``
  for a ``GPUTarget("cuda", 90, 32)``), then the ``ptxas`` that ships with Triton (``-v``) for the
  register and spill figures;
* CUDA C++ (``.cu``) through ``nvcc -Xptxas -v`` (:func:`parse_ptxas`).

A package's Triton gate is the module ``<pkg>.kernels.offline`` whose ``configurations()`` yields
:class:`TritonConfig` items; ``python -m <pkg>.kernels.offline`` calls :func:`main`, which prints
one table row per configuration and exits with status 1 when a row breaks a budget.
``python -m paperkit.kernel_gate <pkg>`` (what the ``kernels`` nox session runs) does both parts
for one package: its ``.cu`` files through nvcc for sm_80 and sm_90, then its Triton gate.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "SM90",
    "SM90_SHARED_BYTES",
    "Budget",
    "TritonConfig",
    "compile_cuda",
    "compile_triton",
    "gate_package",
    "main",
    "parse_ptxas",
    "run_offline",
    "violations",
]

#: Compute capability of the H100/H200 (Hopper).
SM90 = 90
#: Shared memory one block may use on sm_90 (the opt-in maximum, 227 KiB).
SM90_SHARED_BYTES = 232_448
#: Architectures every ``.cu`` is compiled for (Ampere and Hopper).
CUDA_ARCHS = ("sm_80", "sm_90")


@dataclass(frozen=True)
class Budget:
    """Limits of one configuration: shared memory per block, spilled bytes (stores + loads) and
    registers per thread (255 is the hardware maximum)."""

    shared_bytes: int = SM90_SHARED_BYTES
    spill_bytes: int = 0
    registers: int = 255


@dataclass(frozen=True)
class TritonConfig:
    """One launch configuration of a Triton kernel: the ``@triton.jit`` function, the type of
    every runtime argument (``"*fp32"``, ``"*bf16"``, ``"i32"``, ``"i64"``, ``"fp32"``), the
    constexpr values, and the launch options. ``label`` names the configuration in the table
    (for instance ``{"dtype": "bf16", "d": 128}``)."""

    fn: Any
    signature: dict[str, str]
    constexprs: dict[str, Any]
    label: dict[str, Any]
    num_warps: int = 4
    num_stages: int = 3
    budget: Budget = field(default_factory=Budget)


def parse_ptxas(report: str) -> dict[str, int]:
    """Registers, spill bytes (stores + loads), stack bytes and static shared bytes from the
    ``-v`` output of ptxas for one function.

    >>> parse_ptxas("ptxas info    : Used 40 registers, 16 bytes smem, 380 bytes cmem[0]\\n"
    ...             "    8 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads")
    {'registers': 40, 'spill_bytes': 8, 'stack_bytes': 8, 'smem_bytes': 16}
    """

    def total(pattern: str) -> int:
        return sum(int(x) for x in re.findall(pattern, report))

    registers = re.search(r"Used (\d+) registers", report)
    return {
        "registers": int(registers.group(1)) if registers else 0,
        "spill_bytes": total(r"(\d+) bytes spill (?:stores|loads)"),
        "stack_bytes": total(r"(\d+) bytes stack frame"),
        "smem_bytes": total(r"(\d+) bytes smem"),
    }


def compile_triton(config: TritonConfig, arch: int = SM90) -> dict[str, Any]:
    """Compile one configuration for ``sm_<arch>`` and return its resource figures: registers,
    spill and stack bytes (ptxas ``-v``), shared bytes (Triton's metadata: what the launch asks
    for), and the warps. Needs the ``triton`` of a CUDA build of torch; no GPU, and not under
    ``TRITON_INTERPRET=1`` (the interpreter replaces the compiler)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas
    from triton.compiler import ASTSource

    signature = {**config.signature, **dict.fromkeys(config.constexprs, "constexpr")}
    kernel = triton.compile(
        ASTSource(config.fn, signature, dict(config.constexprs)),
        target=GPUTarget("cuda", arch, 32),
        options={"num_warps": config.num_warps, "num_stages": config.num_stages},
    )
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "kernel.ptx"
        ptx.write_text(kernel.asm["ptx"])
        suffix = "a" if arch >= SM90 else ""
        report = subprocess.run(
            [get_ptxas(arch).path, "-v", f"--gpu-name=sm_{arch}{suffix}", str(ptx)]
            + ["-o", str(Path(tmp) / "kernel.cubin")],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
    figures = parse_ptxas(report)
    return {
        **config.label,
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
        "registers": figures["registers"],
        "spill_bytes": figures["spill_bytes"],
        "stack_bytes": figures["stack_bytes"],
        "shared_bytes": int(kernel.metadata.shared),
    }


def violations(row: dict[str, Any], budget: Budget) -> list[str]:
    """What in one row breaks its budget (empty when it fits)."""
    found = []
    if row["shared_bytes"] > budget.shared_bytes:
        found.append(f"shared {row['shared_bytes']:,} B > {budget.shared_bytes:,} B")
    if row["spill_bytes"] > budget.spill_bytes:
        found.append(f"spills {row['spill_bytes']:,} B > {budget.spill_bytes:,} B")
    if row["registers"] > budget.registers:
        found.append(f"registers {row['registers']} > {budget.registers}")
    return found


def main(
    configurations: Callable[[], Iterable[TritonConfig]], argv: list[str] | None = None
) -> int:
    """Compile every configuration, print a table (``--json``: one JSON object per line, with a
    ``violations`` list) and return 1 when any row breaks its budget, else 0."""
    as_json = "--json" in (sys.argv[1:] if argv is None else argv)
    configs = list(configurations())
    rows = [compile_triton(config) for config in configs]
    if as_json:
        failed = 0
        for row, config in zip(rows, configs, strict=True):
            bad = violations(row, config.budget)
            failed += bool(bad)
            print(json.dumps({**row, "violations": bad}), flush=True)
    else:
        failed = _print_rows(rows, [config.budget for config in configs])
    if failed:
        print(f"{failed} configuration(s) break their budget", file=sys.stderr)
    return int(failed > 0)


def run_offline(module: str, timeout: float = 1800) -> list[dict[str, Any]]:
    """Run a package's gate ``python -m <module> --json`` in a fresh process with the compiler's
    environment (``TRITON_INTERPRET`` removed: the interpreter replaces the compiler) and return
    its rows, each with its ``violations``; raises ``RuntimeError`` with the end of stderr when the
    process fails. For tests: a budget violation makes the process fail."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    run = subprocess.run(
        [sys.executable, "-m", module, "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    if run.returncode != 0:
        raise RuntimeError(f"{module} failed:\n{run.stderr[-3000:]}")
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def _nvcc() -> str | None:
    home = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    fallback = Path(home) / "bin" / "nvcc"
    return shutil.which("nvcc") or (str(fallback) if fallback.is_file() else None)


def compile_cuda(source: Path, arch: str, nvcc: str) -> list[dict[str, Any]]:
    """Compile one ``.cu`` to a cubin for ``arch`` (warnings are errors) and return one row per
    entry function: registers, spill, stack and static shared bytes from ``ptxas -v``."""
    with tempfile.TemporaryDirectory() as tmp:
        run = subprocess.run(
            [nvcc, "--std=c++17", f"-arch={arch}", "--cubin", "-Werror", "all-warnings"]
            + ["-Xptxas", "-v", "-o", str(Path(tmp) / "out.cubin"), str(source)],
            capture_output=True,
            text=True,
        )
    if run.returncode != 0:
        raise RuntimeError(f"nvcc failed on {source.name} for {arch}:\n{run.stderr[-4000:]}")
    rows = []
    for part in run.stderr.split("Compiling entry function")[1:]:
        name = re.match(r"\s*'([^']+)'", part).group(1)
        figures = parse_ptxas(part)
        rows.append(
            {
                "source": source.name,
                "arch": arch,
                "function": name,
                "registers": figures["registers"],
                "spill_bytes": figures["spill_bytes"],
                "stack_bytes": figures["stack_bytes"],
                "shared_bytes": figures["smem_bytes"],
            }
        )
    return rows


def _print_rows(rows: list[dict[str, Any]], budgets: list[Budget]) -> int:
    """Print the table; returns how many rows break their budget."""
    failed = 0
    for i, (row, budget) in enumerate(zip(rows, budgets, strict=True)):
        bad = violations(row, budget)
        failed += bool(bad)
        if i == 0:
            print(" | ".join([*row, "verdict"]))
        print(" | ".join([*(str(v) for v in row.values()), "; ".join(bad) or "ok"]), flush=True)
    return failed


def gate_package(package: str) -> int:
    """The whole gate of one installed package: every ``.cu`` under it through nvcc (no spills,
    static shared memory within sm_90's block limit; skipped with a notice without nvcc), then
    ``<package>.kernels.offline`` when it exists. Returns the number of failing rows."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{package!r} is not an installed package")
    root = Path(next(iter(spec.submodule_search_locations)))
    failed = 0
    sources = sorted(root.rglob("*.cu"))
    nvcc = _nvcc()
    if sources and nvcc is None:
        print(f"nvcc not found (set CUDA_HOME): {len(sources)} .cu file(s) not compiled")
    elif sources:
        rows = [
            row for src in sources for arch in CUDA_ARCHS for row in compile_cuda(src, arch, nvcc)
        ]
        print(f"{package}: CUDA kernels (nvcc, ptxas -v)")
        failed += _print_rows(rows, [Budget()] * len(rows))
    if importlib.util.find_spec(f"{package}.kernels") and importlib.util.find_spec(
        f"{package}.kernels.offline"
    ):
        offline = importlib.import_module(f"{package}.kernels.offline")
        print(f"{package}: Triton kernels (offline compile for sm_90)")
        configs = list(offline.configurations())
        rows = [compile_triton(config) for config in configs]
        failed += _print_rows(rows, [config.budget for config in configs])
    return failed


if __name__ == "__main__":
    failures = sum(gate_package(name) for name in sys.argv[1:])
    if failures:
        print(f"{failures} kernel configuration(s) break their budget", file=sys.stderr)
    raise SystemExit(int(failures > 0))
