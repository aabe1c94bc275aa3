"""paperkit: the small utilities shared by the NeurIPS 2025 paper packages.

Only what several packages would otherwise write again: seeding, device and backend checks, the
CUDA kernel loader, benchmark and report helpers, the argument-error wording, the registration
protocol and the ``papers`` command. Test helpers live in :mod:`paperkit.testing`.
"""

from paperkit.bench import Timing, crossover, loglog_slope, peak_memory, time_callable
from paperkit.devices import (
    cuda_available,
    cupy_available,
    pick_device,
    torch_available,
    triton_available,
    triton_interpret,
)
from paperkit.errors import PARAM_ERROR_PATTERN, Described, check_choice, param_error
from paperkit.kernels import (
    clear_kernel_cache,
    kernel_path,
    kernel_source,
    load_cuda_module,
    on_torch_stream,
    require_cupy,
    to_cupy,
    to_torch,
)
from paperkit.registry import ENTRY_POINT_GROUP, STATUSES, Paper, discover, get_paper
from paperkit.report import (
    figure,
    markdown_table,
    print_table,
    progress,
    run_dir,
    save_figure,
    to_jsonable,
    write_json,
)
from paperkit.seeding import seed_everything

__version__ = "0.1.0"

__all__ = [
    "ENTRY_POINT_GROUP",
    "PARAM_ERROR_PATTERN",
    "STATUSES",
    "Described",
    "Paper",
    "Timing",
    "check_choice",
    "clear_kernel_cache",
    "crossover",
    "cuda_available",
    "cupy_available",
    "discover",
    "figure",
    "get_paper",
    "kernel_path",
    "kernel_source",
    "load_cuda_module",
    "loglog_slope",
    "markdown_table",
    "on_torch_stream",
    "param_error",
    "peak_memory",
    "pick_device",
    "print_table",
    "progress",
    "require_cupy",
    "run_dir",
    "save_figure",
    "seed_everything",
    "time_callable",
    "to_cupy",
    "to_jsonable",
    "to_torch",
    "torch_available",
    "triton_available",
    "triton_interpret",
    "write_json",
]
