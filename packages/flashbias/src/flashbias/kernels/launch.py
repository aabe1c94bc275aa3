"""What the Triton launcher picks, without importing Triton: the padded sizes, the tile sizes,
warps and stages of every kernel (:func:`launch_config`), the one-axis grid (:func:`grid`) and
the largest offsets a launch forms (:func:`largest_offsets`).

Every configuration :func:`launch_config` can return is compiled for sm_90 by the static kernel
gate (:mod:`flashbias.kernels.offline`, ``uvx nox -s "kernels(flashbias)"``) and held there to
the 232,448 B of shared memory of one Hopper block and to no register spills; a shape whose
configuration is not in that set does not reach the kernels (:func:`triton_shape_error`).
"""

from __future__ import annotations

__all__ = [
    "HEAD_PADS",
    "INT32_MAX",
    "KERNELS",
    "MAX_HEAD",
    "MAX_RANK",
    "RANK_PADS",
    "TRITON_DTYPES",
    "grid",
    "largest_offsets",
    "gated_pads",
    "launch_config",
    "pad_head",
    "pad_rank",
    "triton_shape_error",
]

#: The dtypes the kernels take (fp32 accumulators in every case).
TRITON_DTYPES = ("float16", "bfloat16", "float32")
#: The three kernels of :mod:`flashbias.kernels.triton_jit`.
KERNELS = ("flash_bias_fwd", "flash_bias_bwd_dkdv", "flash_bias_bwd_dq")
#: The widest head size d and bias rank R the kernels take; wider shapes go to SDPA.
MAX_HEAD = 128
MAX_RANK = 32
#: The padded head sizes D (the next power of two >= max(d, 32)) and ranks RP (16 for R <= 16, else
#: 32; always 32 for fp16/bf16 at D = 128, see :func:`pad_rank`): zero columns change no score and
#: no gradient of the given ones; few pads keep the gated set small (``tl.dot`` takes no tile
#: below 16).
HEAD_PADS = (32, 64, 128)
RANK_PADS = (16, 32)
INT32_MAX = 2**31 - 1
#: Programs on grid axis 0 (the only axis the kernels use).
GRID_MAX = 2**31 - 1

# (BLOCK_N, BLOCK_M, num_warps, num_stages) of the forward, dK/dV and dQ kernels per (16- or 32-bit
# inputs, D), the same for every RP. The offline compile for sm_90 (dense mask and causal mask on)
# set these; the README has the table. 64 x 64 tiles spill registers from D = 64 in every dtype
# (2-5 KB per thread) and 32 x 32 tiles still spill 100-900 B in fp16/bf16, so every kernel runs
# 16 x 32 tiles on 4 warps without software pipelining (1 stage); at D = 128 the fp32 backward
# needs 8 warps and the fp16/bf16 backward 16 x 16 tiles (16 x 32 spilled 80-1,028 B there), and
# the fp16/bf16 dQ kernel spilled 36 B with RP = 16 but none with RP = 32, hence that rank pad;
# the fp32 forward at D = 32 spilled 8 B on 4 warps (128 registers), none on 8.
_SMALL = (16, 32, 4, 1)
_TILES = {
    (16, 32): (_SMALL, _SMALL, _SMALL),
    (16, 64): (_SMALL, _SMALL, _SMALL),
    (16, 128): (_SMALL, (16, 16, 4, 1), (16, 16, 4, 1)),
    (32, 32): ((16, 32, 8, 1), _SMALL, _SMALL),
    (32, 64): (_SMALL, _SMALL, _SMALL),
    (32, 128): (_SMALL, (16, 32, 8, 1), (16, 32, 8, 1)),
}


def pad_head(d: int) -> int:
    """The padded head size D of d columns (:data:`HEAD_PADS`; d <= :data:`MAX_HEAD`)."""
    return max(32, 1 << (max(d, 1) - 1).bit_length())


def pad_rank(R: int, dtype: str = "float32", D: int = 32) -> int:
    """The padded rank RP of R bias columns (R = 0 without a bias) for inputs of ``dtype`` padded
    to head size D (:data:`RANK_PADS`).

    >>> pad_rank(2), pad_rank(20), pad_rank(2, "bfloat16", 128)
    (16, 32, 32)
    """
    return 32 if R > 16 or (dtype != "float32" and D == 128) else 16


def gated_pads(dtype: str) -> list[tuple[int, int]]:
    """Every (D, RP) the launcher can pick for ``dtype``."""
    return sorted(
        {(pad_head(d), pad_rank(R, dtype, pad_head(d))) for d in HEAD_PADS for R in (0, 32)}
    )


def launch_config(kernel: str, dtype: str, D: int, RP: int) -> dict[str, int]:
    """The constexprs and launch options of ``kernel`` for inputs of ``dtype`` ("float16",
    "bfloat16", "float32"), padded head size D and padded rank RP.

    >>> launch_config("flash_bias_fwd", "bfloat16", 32, 16)
    {'BLOCK_N': 16, 'BLOCK_M': 32, 'num_warps': 4, 'num_stages': 1}
    """
    if kernel not in KERNELS or dtype not in TRITON_DTYPES:
        raise ValueError(f"no launch configuration for {kernel} on {dtype}")
    if (D, RP) not in gated_pads(dtype):
        raise ValueError(f"no launch configuration for D={D}, RP={RP} on {dtype}")
    bits = 32 if dtype == "float32" else 16
    block_n, block_m, warps, stages = _TILES[bits, D][KERNELS.index(kernel)]
    return {"BLOCK_N": block_n, "BLOCK_M": block_m, "num_warps": warps, "num_stages": stages}


def grid(length: int, block: int, B: int, H: int) -> tuple[int]:
    """The one-axis grid of ceil(length / block) · B · H programs (block index fastest)."""
    return (-(-length // block) * B * H,)


def largest_offsets(
    kernel: str, dtype: str, shape: dict[str, int], strides: dict[str, tuple[int, ...]]
) -> dict[str, int]:
    """The largest element offsets the last program of ``kernel`` forms, split as the kernel
    splits them: ``base`` (batch, head and first row of a tile, computed in int64), ``tile``
    (within one tile, computed in int32) and ``programs`` (the grid size, axis 0). ``shape``
    holds B, N, M, H, d, R; ``strides`` the strides of q, k (padded operands), the factors, the
    dense mask (``mask``, None without one) and of the factor gradients, as the launcher passes
    them (:mod:`flashbias.kernels.attention_triton`).

    Every offset of a tensor with more than 2³¹ elements passes int32 in its base, none in its
    tile (``triton_shape_error`` refuses the rare shapes whose tile offset would).
    """
    B, N, M, H = (shape[a] for a in ("B", "N", "M", "H"))
    D = pad_head(shape["d"])
    RP = pad_rank(shape["R"], dtype, D)
    cfg = launch_config(kernel, dtype, D, RP)
    bn, bm = cfg["BLOCK_N"], cfg["BLOCK_M"]
    base = tile = 0

    def rows(stride, first, block, width):
        nonlocal base, tile
        s_b, s_l, s_h = stride
        base = max(base, (B - 1) * s_b + (H - 1) * s_h + first * s_l)
        tile = max(tile, (block - 1) * s_l + width - 1)

    last_n, last_m = (N - 1) // bn * bn, (M - 1) // bm * bm
    for name, first, block, width in (
        ("q", last_n, bn, D),
        ("k", last_m, bm, D),
        ("q_bias", last_n, bn, RP),
        ("k_bias", last_m, bm, RP),
        ("dq_bias", last_n, bn, RP),
        ("dk_bias", last_m, bm, RP),
    ):
        rows(strides[name], first, block, width)
    if strides.get("mask") is not None:
        s_b, s_h, s_n, s_m = strides["mask"]
        base = max(base, (B - 1) * s_b + (H - 1) * s_h + last_n * s_n + last_m * s_m)
        tile = max(tile, (bn - 1) * s_n + (bm - 1) * s_m)
    base = max(base, (B * H - 1) * N + N - 1)  # the row statistics LSE and D: (B, H, N)
    length, block = (M, bm) if kernel == "flash_bias_bwd_dkdv" else (N, bn)
    return {"base": base, "tile": tile, "programs": grid(length, block, B, H)[0]}


def triton_shape_error(dtype: str, d: int, R: int, B: int, N: int, M: int, H: int) -> str | None:
    """Why the kernels do not take this shape (None when they do): a dtype or a d or R
    beyond :data:`MAX_HEAD` / :data:`MAX_RANK` (no gated configuration), or a grid past axis 0's
    limit or a tile offset past int32 (contiguous padded operands, dense mask assumed)."""
    if dtype not in TRITON_DTYPES:
        return "float16, bfloat16 or float32"
    if d > MAX_HEAD or R > MAX_RANK:
        return f"head size d <= {MAX_HEAD} and bias rank R <= {MAX_RANK}"
    D = pad_head(d)
    RP = pad_rank(R, dtype, D)
    q_strides = (N * H * D, H * D, D)
    k_strides = (M * H * D, H * D, D)
    shape = dict(B=B, N=N, M=M, H=H, d=d, R=R)
    strides = {
        "q": q_strides,
        "k": k_strides,
        "q_bias": (N * H * RP, H * RP, RP),
        "k_bias": (M * H * RP, H * RP, RP),
        "dq_bias": (N * H * RP, H * RP, RP),
        "dk_bias": (M * H * RP, H * RP, RP),
        "mask": (H * N * M, N * M, M, 1),
    }
    for kernel in KERNELS:
        found = largest_offsets(kernel, dtype, shape, strides)
        if found["programs"] > GRID_MAX or found["tile"] > INT32_MAX:
            return "a grid of at most 2^31 - 1 programs and tile offsets within int32"
    return None
