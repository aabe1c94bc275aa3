"""The CUDA source ships with the package and instantiates every kernel the launchers ask for
(compiled by the `kernels` nox session; run by the gpu-marked tests in test_cuda.py)."""

import re

from gspn2.kernels.common import CUDA_DTYPES, KERNEL_NAMES
from paperkit import kernel_source


def test_kernel_source_instantiates_every_launched_kernel():
    source = kernel_source("gspn2", "kernels/gspn_scan.cu")
    instantiated = set(re.findall(r"^GSPN_INSTANTIATE\((\w+)\)", source, re.MULTILINE))
    assert instantiated == set(CUDA_DTYPES.values())
    for name in ("gspn_fwd", "gspn_bwd", "gspn_fwd_step", "gspn_bwd_step"):
        assert re.search(rf"__global__ void {name}\(", source), name
        assert all(f"{name}<{t}>" in KERNEL_NAMES for t in instantiated)
    assert "#include" not in source  # self-contained under NVRTC
