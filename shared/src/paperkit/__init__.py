"""paperkit: the small utilities shared by the NeurIPS 2025 paper packages.

Only what several packages would otherwise write again: seeding, device and backend checks, the
CUDA kernel loader, benchmark and report helpers, the argument-error wording, the registration
protocol and the ``papers`` command. Test helpers live in :mod:`paperkit.testing`.
"""

from paperkit.backends import resolve_backend
from paperkit.bench import (
    Measurement,
    Timing,
    crossover,
    loglog_slope,
    measure,
    measure_interleaved,
    peak_memory,
    plot_scaling,
    ratio_spread,
    scaling,
    time_callable,
    time_interleaved,
)
from paperkit.checks import (
    check_array,
    check_bool,
    check_callable,
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
)
from paperkit.devices import (
    cuda_available,
    cupy_available,
    pick_device,
    torch_available,
    triton_available,
    triton_interpret,
)
from paperkit.errors import PARAM_ERROR_PATTERN, Described, param_error
from paperkit.hf import tiny_causal_lm
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
from paperkit.results import VERDICTS, Claim, Report
from paperkit.seeding import seed_everything

__version__ = "0.2.0"

__all__ = [
    "ENTRY_POINT_GROUP",
    "PARAM_ERROR_PATTERN",
    "STATUSES",
    "VERDICTS",
    "Claim",
    "Described",
    "Measurement",
    "Paper",
    "Report",
    "Timing",
    "check_array",
    "check_bool",
    "check_callable",
    "check_choice",
    "check_int",
    "check_memory",
    "check_real",
    "check_tensor",
    "clear_kernel_cache",
    "crossover",
    "cuda_available",
    "cupy_available",
    "describe",
    "discover",
    "figure",
    "get_paper",
    "kernel_path",
    "kernel_source",
    "load_cuda_module",
    "loglog_slope",
    "markdown_table",
    "measure",
    "measure_interleaved",
    "on_torch_stream",
    "param_error",
    "peak_memory",
    "pick_device",
    "plot_scaling",
    "print_table",
    "progress",
    "ratio_spread",
    "require_cupy",
    "resolve_backend",
    "run_dir",
    "save_figure",
    "scaling",
    "seed_everything",
    "time_callable",
    "time_interleaved",
    "tiny_causal_lm",
    "to_cupy",
    "to_jsonable",
    "to_torch",
    "torch_available",
    "triton_available",
    "triton_interpret",
    "write_json",
]
