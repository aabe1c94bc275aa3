"""The kernels gate of the tile-based splat: Triton's offline compile for sm_90 (Hopper) of every
launch configuration the launcher can pick (dense and culled, each value-column block of
:data:`~gaussianfusion.kernels.splat_triton.BLOCK_F`), without a GPU, held to sm_90's shared
memory per block and to no register spills (:mod:`paperkit.kernel_gate`).

``python -m gaussianfusion.kernels.offline`` prints the table and exits with status 1 when a
row breaks its budget; ``nox -s "kernels(gaussianfusion)"`` runs it.
"""

from __future__ import annotations

from gaussianfusion.kernels.splat_triton import BLOCK_F, LAUNCH
from paperkit.kernel_gate import TritonConfig, main

__all__ = ["configurations"]

_POINTERS = ("PAR", "BOX", "VAL", "OUT")
_FLOATS = ("x0", "dx", "y0", "dy", "r2")


def configurations() -> list[TritonConfig]:
    """One configuration per (CULL, BLOCK_F), exactly as the launcher launches them."""
    from gaussianfusion.kernels import splat_jit

    fn = splat_jit.splat_fwd
    block_p, block_n, warps, stages = LAUNCH
    configs = []
    for cull in (False, True):
        for bf in BLOCK_F:
            constants = {"CULL": cull, "BLOCK_P": block_p, "BLOCK_N": block_n, "BLOCK_F": bf}
            signature = {
                arg: "*fp32" if arg in _POINTERS else "fp32" if arg in _FLOATS else "i32"
                for arg in fn.arg_names
                if arg not in constants
            }
            configs.append(
                TritonConfig(
                    fn,
                    signature,
                    constants,
                    label={
                        "CULL": int(cull),
                        "BLOCK_P": block_p,
                        "BLOCK_N": block_n,
                        "BLOCK_F": bf,
                    },
                    num_warps=warps,
                    num_stages=stages,
                )
            )
    return configs


if __name__ == "__main__":
    raise SystemExit(main(configurations))
