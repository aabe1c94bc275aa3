r"""The LION chunkwise form as one Triton kernel: two causal passes minus the diagonal.

The bidirectional mask splits as :math:`M=M^F+M^B-I`. Each half is a causal, scalar-decay
(RetNet/GLA-style) linear attention:

- forward pass over positions :math:`0..N-1` with gates :math:`g_t=\log\lambda_{t-1}`
  (:math:`g_0=0`), so :math:`\exp(G_i-G_j)=\lambda_j\cdots\lambda_{i-1}` with
  :math:`G=\mathrm{cumsum}(g)`;
- backward pass over :math:`N-1..0` (the flipped sequence) with the shifted, flipped gates
  :math:`g_t=\log\lambda_{t+1}`, so the weight is :math:`\lambda_{i+1}\cdots\lambda_j`.

The program axis 1 picks the direction and axis 2 a block of ``BV`` value columns; one program per
(batch, head, direction, value block) walks the sequence in blocks of ``BLOCK`` positions with a
:math:`d\times BV` state :math:`S` and a :math:`d` state :math:`z` (the denominator) in registers:
inside a block the dense causal block :math:`(qk^\top)\odot\exp(G_i-G_j)`, across blocks the
decayed state. Every exponent is :math:`\le 0`. The two partial numerators and denominators are
summed in torch, minus the diagonal :math:`(q_i\cdot k_i)v_i`, then normalised.

Launch configurations (:func:`launch_config`): the tile ``BLOCK`` is ``chunk_size`` capped by a
per-(dtype, d) limit, and ``BV``, ``num_warps``, ``num_stages`` come from a table sized so that
every configuration fits sm_90's shared memory per block without register spills; these are the
configurations the static kernel gate (:mod:`lion.kernels.offline`) compiles. Head sizes above
:data:`MAX_TRITON_HEAD_DIM` go to the torch chunk form. Offsets are 64-bit (the ``(2, B, H, N, d)``
numerators pass :math:`2^{31}` elements at :math:`BHNd>2^{30}`), and the grid is
``(B*H, 2, d/BV)``, checked against the launch limits (:func:`grid`).

Precision: the kernel loads float32, float16 or bfloat16 and computes in float32 (float64 inputs
are cast to float32 for it); the parts come back in float32 (float64 for float64 inputs). The
backward pass of autograd recomputes with the pure-torch chunk form (:mod:`lion.chunk`) on the
same float32 values and differentiates it, so it differentiates what the forward computed, and
returns each gradient in its input's dtype. Triton is imported lazily: this module imports on a
machine without it. This is the ``triton`` backend of :func:`lion.lion_attention`; the launcher
:func:`lion_chunk_triton_parts` takes checked inputs.
"""

from __future__ import annotations

import functools

import torch

from paperkit import describe, param_error

__all__ = [
    "MAX_GRID_X",
    "MAX_GRID_YZ",
    "MAX_TRITON_HEAD_DIM",
    "TRITON_DTYPES",
    "grid",
    "kernel_dtype",
    "largest_offsets",
    "launch_config",
    "lion_chunk_triton_parts",
    "tile_size",
    "triton_fits",
    "triton_runs",
]

#: The input dtypes the kernel is compiled for; float64 is cast to float32 before the launch.
TRITON_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: The largest head size d the kernel takes; larger heads run the torch chunk form.
MAX_TRITON_HEAD_DIM = 128
#: CUDA's launch limits: grid axis x (0) and axes y, z (1, 2).
MAX_GRID_X = 2**31 - 1
MAX_GRID_YZ = 65_535

# head size d -> (largest BLOCK, BV, num_warps, num_stages), for every dtype of TRITON_DTYPES.
# Sized by the offline compile for sm_90 (lion.kernels.offline): no configuration spills
# registers and none needs more shared memory than one block may have. The kernel's dots are
# IEEE float32 FMAs on register tiles, so the BLOCK x BLOCK and BLOCK x d tiles and the d x BV
# state share 255 registers per thread: 8 warps throughout, smaller tiles and one stage for the
# larger heads (with 4 warps every head size spilled, 1-3 KB per thread; d = 128 with
# BLOCK = 64 and 3 stages asked for 279 KB of shared memory).
_TILES: dict[int, tuple[int, int, int, int]] = {
    16: (64, 16, 8, 2),
    32: (32, 32, 8, 2),
    64: (32, 32, 8, 1),
    128: (16, 16, 8, 1),
}


def tile_size(n: int) -> bool:
    """Whether ``n`` (the head size d or the chunk size) is a power of two >= 16, the sizes
    ``tl.dot`` tiles."""
    return n >= 16 and (n & (n - 1)) == 0


def triton_fits(head_dim: int, chunk_size: int) -> bool:
    """Whether the kernel takes a head size ``head_dim`` and a ``chunk_size``: both powers of two
    >= 16 and ``head_dim <= MAX_TRITON_HEAD_DIM`` (a larger head's state does not fit one
    program's registers; :func:`lion.ops.pick_backend` sends it to the chunk form)."""
    return tile_size(head_dim) and tile_size(chunk_size) and head_dim <= MAX_TRITON_HEAD_DIM


def kernel_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the kernel loads for inputs of ``dtype``: float64 (and any other dtype outside
    :data:`TRITON_DTYPES`) is cast to float32."""
    return dtype if dtype in TRITON_DTYPES else torch.float32


def launch_config(dtype: torch.dtype, head_dim: int, chunk_size: int) -> dict[str, int]:
    """The constexprs and launch options the launcher uses for inputs of ``dtype`` (after
    :func:`kernel_dtype`), head size ``head_dim`` and ``chunk_size`` (both accepted by
    :func:`triton_fits`): ``{"BLOCK", "BV", "num_warps", "num_stages"}``; ``BLOCK`` is
    ``chunk_size`` capped by the table's limit for (dtype, d).

    >>> launch_config(torch.float32, 128, 64)
    {'BLOCK': 16, 'BV': 16, 'num_warps': 8, 'num_stages': 1}
    """
    if not triton_fits(head_dim, chunk_size):
        raise ValueError(f"no Triton launch configuration for d = {head_dim}, C = {chunk_size}")
    block, bv, warps, stages = _TILES[head_dim]
    return {"BLOCK": min(chunk_size, block), "BV": bv, "num_warps": warps, "num_stages": stages}


def grid(batch: int, heads: int, head_dim: int, bv: int) -> tuple[int, int, int]:
    """The launch grid ``(B*H, 2, d/BV)``: (batch, head) on axis x, the direction on y, the value
    block on z. Raises ``ValueError`` when an axis passes CUDA's limit (:data:`MAX_GRID_X`,
    :data:`MAX_GRID_YZ`); d <= 128 keeps z <= 8, and B*H reaches 2**31 only with q, k, v far
    larger than a GPU's memory."""
    shape = (batch * heads, 2, head_dim // bv)
    if shape[0] > MAX_GRID_X or max(shape[1:]) > MAX_GRID_YZ:
        raise ValueError(f"grid {shape} passes CUDA's launch limits")
    return shape


def largest_offsets(batch: int, heads: int, n: int, head_dim: int) -> dict[str, int]:
    """The largest element offset the kernel adds to each pointer for ``(B, H, N, d)`` inputs,
    by the kernel's own formulas at the last program, direction, position and column: ``Q/K/V``
    ``bh*N*d + pos*d + col``, ``L`` ``bh*N + pos``, ``NUM`` ``rev*BH*N*d + bh*N*d + pos*d + col``,
    ``DEN`` ``rev*BH*N + bh*N + pos``. The kernel computes them in int64 (from
    ``program_id(...).to(tl.int64)``); ``NUM`` passes int32 once ``B*H*N*d > 2**30``.

    >>> largest_offsets(1, 1, 4, 16)["NUM"]
    127
    """
    bh, pos, col = batch * heads - 1, n - 1, head_dim - 1
    total = batch * heads
    return {
        "QKV": bh * n * head_dim + pos * head_dim + col,
        "L": bh * n + pos,
        "NUM": total * n * head_dim + bh * n * head_dim + pos * head_dim + col,
        "DEN": total * n + bh * n + pos,
    }


def triton_runs(device: torch.device) -> bool:
    """Whether Triton can run on tensors of ``device``: Triton installed, and a CUDA device or
    the interpreter on (``TRITON_INTERPRET=1``)."""
    from paperkit import triton_available, triton_interpret

    return triton_available() and (device.type == "cuda" or triton_interpret())


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def lion_causal_chunk_fwd(
        Q,
        K,
        V,
        L,
        NUM,
        DEN,
        N,
        BH,
        D: tl.constexpr,
        BLOCK: tl.constexpr,
        BV: tl.constexpr,
    ):
        # 64-bit offsets: (2, B, H, N, d) elements pass 2**31 long before memory runs out
        bh = tl.program_id(0).to(tl.int64)
        reverse = tl.program_id(1).to(tl.int64)
        vcol = tl.program_id(2) * BV + tl.arange(0, BV)  # this program's value columns
        rows = tl.arange(0, BLOCK)
        cols = tl.arange(0, D)
        causal = rows[:, None] >= rows[None, :]
        S = tl.zeros((D, BV), dtype=tl.float32)
        z = tl.zeros((D,), dtype=tl.float32)
        first = (rows * 0 + tl.program_id(2)) == 0  # the first value block stores the denominator
        step = 1 - 2 * reverse  # +1 forward, -1 backward
        head = bh * N * D  # the (b, h) slice of q, k, v
        outs = reverse * BH * N * D + head  # and of this direction's numerators
        for start in range(0, N, BLOCK):
            t = start + rows
            valid = t < N
            pos = tl.where(reverse == 1, N - 1 - t, t).to(tl.int64)  # position in the sequence
            off = head + pos[:, None] * D + cols[None, :]
            voff = pos[:, None] * D + vcol[None, :]
            q = tl.load(Q + off, mask=valid[:, None], other=0.0).to(tl.float32)
            k = tl.load(K + off, mask=valid[:, None], other=0.0).to(tl.float32)
            v = tl.load(V + head + voff, mask=valid[:, None], other=0.0).to(tl.float32)
            gpos = pos - step  # lambda_{i-1} forward, lambda_{i+1} backward
            gvalid = valid & (gpos >= 0) & (gpos < N)
            g = tl.load(L + bh * N + gpos, mask=gvalid, other=0.0)
            G = tl.cumsum(g, 0)
            decay = tl.exp(tl.where(causal, G[:, None] - G[None, :], float("-inf")))
            a = tl.dot(q, tl.trans(k), input_precision="ieee") * decay
            into = tl.exp(G)  # decay from the end of the previous block to each query
            num = tl.dot(a, v, input_precision="ieee")
            num += into[:, None] * tl.dot(q, S, input_precision="ieee")
            tl.store(NUM + outs + voff, num, mask=valid[:, None])
            den = tl.sum(a, axis=1) + into * tl.sum(q * z[None, :], axis=1)
            tl.store(DEN + reverse * BH * N + bh * N + pos, den, mask=valid & first)
            total = tl.sum(g, axis=0)
            w = tl.where(valid, tl.exp(total - G), 0.0)  # decay from each key to the block end
            kw = k * w[:, None]
            S = tl.exp(total) * S + tl.dot(tl.trans(kw), v, input_precision="ieee")
            z = tl.exp(total) * z + tl.sum(kw, axis=0)

    return lion_causal_chunk_fwd


def _forward(q, k, v, log_lambda, chunk_size):
    B, H, N, d = q.shape
    work = torch.promote_types(q.dtype, torch.float32)  # the parts' dtype: float32 or float64
    kdt = kernel_dtype(q.dtype)
    q, k, v = (x.to(kdt).contiguous() for x in (q, k, v))
    if log_lambda is None:
        ll = torch.zeros(B, H, N, device=q.device, dtype=torch.float32)
    else:
        ll = log_lambda.to(torch.float32).contiguous()
    config = launch_config(kdt, d, chunk_size)
    launch = {key: config.pop(key) for key in ("num_warps", "num_stages")}
    num = torch.empty(2, B, H, N, d, device=q.device, dtype=torch.float32)
    den = torch.empty(2, B, H, N, device=q.device, dtype=torch.float32)
    shape = grid(B, H, d, config["BV"])
    _kernel()[shape](q, k, v, ll, num, den, N, B * H, D=d, **config, **launch)
    qf, kf, vf = (x.float() for x in (q, k, v))
    diag = (qf * kf).sum(-1)
    parts = torch.cat([num.sum(0) - diag[..., None] * vf, (den.sum(0) - diag)[..., None]], dim=-1)
    return parts.to(work)


class _LionChunkTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, log_lambda, chunk_size):
        ctx.save_for_backward(q, k, v, *(() if log_lambda is None else (log_lambda,)))
        ctx.has_lambda = log_lambda is not None
        ctx.chunk_size = chunk_size
        return _forward(q, k, v, log_lambda, chunk_size)

    @staticmethod
    def backward(ctx, grad):
        from lion.chunk import chunk_parts

        saved = ctx.saved_tensors
        # what the kernel computed: the kernel's input values (float64 rounded to float32),
        # in float32 (float64 for float64 inputs), decays in float32
        work = torch.promote_types(saved[0].dtype, torch.float32)
        kdt = kernel_dtype(saved[0].dtype)
        inputs = [
            x.detach().to(kdt if i < 3 else torch.float32).to(work).requires_grad_(x.requires_grad)
            for i, x in enumerate(saved)
        ]
        q, k, v = inputs[:3]
        ll = inputs[3] if ctx.has_lambda else None
        with torch.enable_grad(), torch.autocast(grad.device.type, enabled=False):
            out = chunk_parts(q, k, v, ll, ctx.chunk_size)
        needs = [x for x in inputs if x.requires_grad]
        grads = iter(torch.autograd.grad(out, needs, grad.to(work), allow_unused=True))
        result = [(next(grads).to(x.dtype) if x.requires_grad else None) for x in saved]
        if not ctx.has_lambda:
            result.append(None)
        return (*result, None)


def lion_chunk_triton_parts(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None,
    chunk_size: int,
) -> torch.Tensor:
    """Unnormalised ``[num, den]`` ``(B, H, N, d + 1)`` from the Triton kernel, for checked
    ``q, k, v (B, H, N, d)`` and decays ``(B, H, N)`` (None: all ones); d a power of two in
    [16, 128] and ``chunk_size`` a power of two >= 16. Computes in float32 and returns float32
    (float64 for float64 inputs)."""
    owner = "lion_chunk_triton_parts"
    if not (tile_size(q.shape[-1]) and q.shape[-1] <= MAX_TRITON_HEAD_DIM):
        expected = (
            "of a head size d that is a power of two in [16, "
            f"{MAX_TRITON_HEAD_DIM}] (Triton's tiles and registers)"
        )
        raise param_error("q", owner, expected, describe(q))
    if not tile_size(chunk_size):
        raise param_error("chunk_size", owner, "a power of two >= 16 (Triton's tiles)", chunk_size)
    return _LionChunkTriton.apply(q, k, v, log_lambda, chunk_size)
