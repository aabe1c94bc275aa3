r"""The ZeroS attention operator: explicit zero-sum weights and three exact ways to apply them.

Per batch and head, with radial logits :math:`s_i`, prefix sums
:math:`E_t=\sum_{j\le t}e^{s_j}` and :math:`P_t=\sum_{j\le t}s_j`, the prefix softmax
:math:`p_{t,i}=e^{s_i}/E_t` splits exactly into

.. math::
    p_{t,i} = \tfrac1t + \delta^1_{t,i} + \delta^h_{t,i},\qquad
    \delta^1_{t,i} = \frac{s_i - P_t/t}{t},\qquad \delta^h = p - \tfrac1t - \delta^1,

where :math:`\delta^1` and :math:`\delta^h` each sum to 0 over :math:`i\le t`. ZeroS drops the
zero-order :math:`1/t` and gates the rest per token and head:

.. math::
    r_{t,i} = \sigma^1_t\delta^1_{t,i} + \sigma^h_t\delta^h_{t,i} \;(+\,\sigma^0_t/t),\qquad
    o_t = \sum_{i\le t} r_{t,i}\,(\hat q_t\cdot\hat k_i)\,v_i .

Since :math:`r_{t,i}=\alpha_t e^{s_i}+\beta_t s_i+\gamma_t` with :math:`\alpha_t=\sigma^h_t/E_t`,
:math:`\beta_t=(\sigma^1_t-\sigma^h_t)/t`, :math:`\gamma_t=-(\beta_tP_t+\sigma^h_t)/t
(+\sigma^0_t/t)`, the output is :math:`o_t=\hat q_t^\top(\alpha_tF_t+\beta_tG_t+\gamma_tH_t)` with
three :math:`d\times d` prefix states :math:`F_t=\sum e^{s_i}\hat k_iv_i^\top`,
:math:`G_t=\sum s_i\hat k_iv_i^\top`, :math:`H_t=\sum\hat k_iv_i^\top`: linear in :math:`T`.

Backends (all exact, agreeing to rounding):

- ``naive``: the explicit :math:`T\times T` weights, :math:`O(T^2d)`.
- ``scan``: cumulative sums of the states, :math:`O(Td^2)` time and memory; one shift
  :math:`m=\max s` (detached) with :math:`F, E` accumulated in float64.
- ``chunk``: blocks of ``chunk_size`` positions, explicit weights inside a block and carried
  states across blocks, with a running max that rescales the carried :math:`F, E` (flash style).
- ``triton``: the ``chunk`` algorithm as one fused Triton kernel (forward; the backward recomputes
  with ``chunk``).

Non-causal: every prefix sum becomes the sum over all :math:`T` positions and :math:`t` becomes
:math:`T`.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F

from paperkit import Described, check_choice, param_error

__all__ = ["BACKENDS", "SCAN_RANGE_LIMIT", "zero_sum_weights", "zeros_attention"]

Backend = Literal["auto", "naive", "scan", "chunk", "triton"]
BACKENDS = ("auto", "naive", "scan", "chunk", "triton")
#: ``scan`` uses one shift for the whole sequence; past this spread of logits, early prefix sums
#: underflow even in float64 (e^-745 is the smallest positive double), so it refuses.
SCAN_RANGE_LIMIT = 700.0


def _shape(x: torch.Tensor) -> Described:
    return Described(f"a tensor of shape {tuple(x.shape)}")


def _check_inputs(
    owner: str,
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None,
    qkv: tuple[torch.Tensor, ...] = (),
) -> None:
    named = dict(zip(("q", "k", "v"), qkv, strict=False))
    named.update(s=s, gate1=gate1, gateh=gateh)
    if gate0 is not None:
        named["gate0"] = gate0
    for name, x in named.items():
        if not isinstance(x, torch.Tensor):
            raise param_error(
                name, owner, "a torch.Tensor", Described(type(x).__name__), cls=TypeError
            )
        if not x.is_floating_point():
            raise param_error(
                name, owner, "a floating-point tensor", Described(str(x.dtype)), cls=TypeError
            )
    if s.dim() != 3:
        raise param_error("s", owner, "a 3-D tensor (B, T, H)", _shape(s))
    for name in ("gate1", "gateh", "gate0"):
        if name in named and named[name].shape != s.shape:
            raise param_error(
                name, owner, f"of the same shape as s {tuple(s.shape)}", _shape(named[name])
            )
    for name in ("q", "k", "v"):
        if name not in named:
            continue
        x = named[name]
        if x.dim() != 4 or x.shape[:3] != s.shape:
            raise param_error(
                name,
                owner,
                f"a 4-D tensor (B, T, H, d) with (B, T, H) = {tuple(s.shape)}",
                _shape(x),
            )
    if qkv and qkv[0].shape != qkv[1].shape:
        raise param_error(
            "k", owner, f"of the same shape as q {tuple(qkv[0].shape)}", _shape(qkv[1])
        )
    dtypes = {x.dtype for x in named.values()}
    devices = {x.device for x in named.values()}
    if len(dtypes) > 1 or len(devices) > 1:
        raise param_error(
            "s",
            owner,
            "of one dtype and device with the other inputs",
            Described(f"dtypes {sorted(map(str, dtypes))} on {sorted(map(str, devices))}"),
        )


def _steps(T: int, causal: bool, like: torch.Tensor) -> torch.Tensor:
    """The count t of positions each row averages over: 1..T (causal) or T everywhere, (1, T, 1)."""
    if causal:
        return torch.arange(1, T + 1, dtype=like.dtype, device=like.device).view(1, T, 1)
    return torch.full((1, T, 1), float(T), dtype=like.dtype, device=like.device)


def zero_sum_weights(
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None = None,
    causal: bool = True,
) -> torch.Tensor:
    r"""The explicit ZeroS weights :math:`r_{t,i}`, shape (B, H, T, T) (0 above the diagonal when
    causal).

    Args:
        s: radial logits (B, T, H).
        gate1, gateh: the activated gates :math:`\sigma^1, \sigma^h\in[0,1]`, (B, T, H).
        gate0: the first-layer zero-order gate :math:`\sigma^0\in[-1,1]`, (B, T, H), or None.
        causal: prefix sums (True) or sums over the whole sequence.

    Computed as :math:`\sigma^h p + (\sigma^1-\sigma^h)\delta^1 + (\sigma^0-\sigma^h)/t`, the same
    value as the definition with fewer cancellations. Each row sums to :math:`\sigma^0` (to 0
    without it).
    """
    _check_inputs("zero_sum_weights", s, gate1, gateh, gate0)
    B, T, H = s.shape
    st = s.transpose(1, 2)  # (B, H, T)
    keys = st.unsqueeze(-2).expand(B, H, T, T)  # s_i along the last axis
    if causal:
        mask = torch.ones(T, T, dtype=torch.bool, device=s.device).tril()
        p = torch.softmax(keys.masked_fill(~mask, float("-inf")), dim=-1)
        mean = torch.cumsum(st, dim=-1) / _steps(T, True, s).view(1, 1, T)
    else:
        mask = None
        p = torch.softmax(keys, dim=-1)
        mean = st.mean(dim=-1, keepdim=True).expand(B, H, T)
    t = _steps(T, causal, s).view(1, 1, T, 1)
    delta1 = (keys - mean.unsqueeze(-1)) / t

    def per_row(g: torch.Tensor) -> torch.Tensor:
        return g.transpose(1, 2).unsqueeze(-1)  # (B, H, T, 1)

    g1, gh = per_row(gate1), per_row(gateh)
    g0 = per_row(gate0) if gate0 is not None else 0.0
    r = gh * p + (g1 - gh) * delta1 + (g0 - gh) / t
    return r.masked_fill(~mask, 0.0) if mask is not None else r


def _naive(q, k, v, s, g1, gh, g0, causal):
    r = zero_sum_weights(s, g1, gh, g0, causal)  # (B, H, T, T)
    cos = torch.einsum("bthd,bihd->bhti", q, k)
    return torch.einsum("bhti,bihd->bthd", r * cos, v)


def _coefficients(E, P, g1, gh, g0, t):
    """alpha, beta, gamma of r = alpha e^s + beta s + gamma (all (B, T, H))."""
    alpha = gh / E
    beta = (g1 - gh) / t
    gamma = -(beta * P + gh) / t
    if g0 is not None:
        gamma = gamma + g0 / t
    return alpha, beta, gamma


def _scan(q, k, v, s, g1, gh, g0, causal):
    B, T, H, d = q.shape
    m = s.detach().amax(dim=1, keepdim=True)  # one shift per (batch, head)
    if causal:
        spread = (m - torch.cummax(s.detach(), dim=1).values).amax()
        if spread > SCAN_RANGE_LIMIT:
            raise ValueError(
                f"The scan backend shifts all logits by one maximum; here they span {spread:.0f} "
                f"> {SCAN_RANGE_LIMIT:.0f} below it, and early prefix sums would underflow. Use "
                "backend='chunk' (or 'auto', which does)."
            )
    w = torch.exp(s.double() - m.double())  # float64 whatever the input dtype
    kv = torch.einsum("bthd,bthe->bthde", k, v)
    if causal:
        F_ = torch.cumsum(w[..., None, None] * kv.double(), dim=1)
        E = torch.cumsum(w, dim=1)
        G = torch.cumsum(s[..., None, None] * kv, dim=1)
        Hs = torch.cumsum(kv, dim=1)
        P = torch.cumsum(s, dim=1)
    else:
        F_ = (w[..., None, None] * kv.double()).sum(1, keepdim=True)
        E = w.sum(1, keepdim=True)
        G = (s[..., None, None] * kv).sum(1, keepdim=True)
        Hs = kv.sum(1, keepdim=True)
        P = s.sum(1, keepdim=True)
    t = _steps(T, causal, s)
    alpha, beta, gamma = _coefficients(
        E, P.double(), g1.double(), gh.double(), g0 if g0 is None else g0.double(), t.double()
    )
    state_e = (alpha[..., None, None] * F_).to(q.dtype)
    state = (
        state_e + beta.to(q.dtype)[..., None, None] * G + gamma.to(q.dtype)[..., None, None] * Hs
    )
    return torch.einsum("bthd,bthde->bthe", q, state)


def _chunk(q, k, v, s, g1, gh, g0, causal, chunk_size):
    if not causal:
        return _global_states(q, k, v, s, g1, gh, g0)
    B, T, H, d = q.shape
    out = []
    # carried states, F and E scaled by exp(-m_run)
    F_ = q.new_zeros(B, H, d, d)
    G = q.new_zeros(B, H, d, d)
    Hs = q.new_zeros(B, H, d, d)
    E = q.new_zeros(B, H)
    P = q.new_zeros(B, H)
    m_run = q.new_full((B, H), float("-inf"))
    for start in range(0, T, chunk_size):
        stop = min(start + chunk_size, T)
        C = stop - start
        qc, kc, vc = (x[:, start:stop].transpose(1, 2) for x in (q, k, v))  # (B, H, C, d)
        sc = s[:, start:stop].transpose(1, 2)  # (B, H, C)
        mask = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
        # per-row running max over everything seen so far (detached: it cancels in alpha F)
        sd = sc.detach()
        m_row = torch.maximum(m_run.unsqueeze(-1), torch.cummax(sd, dim=-1).values)  # (B, H, C)
        carry = torch.exp(m_run.unsqueeze(-1) - m_row)  # rescales carried F, E per row
        we = torch.exp(sc.unsqueeze(-2) - m_row.unsqueeze(-1)).masked_fill(~mask, 0.0)  # (B,H,C,C)
        cos = (qc @ kc.transpose(-1, -2)).masked_fill(~mask, 0.0)
        num_e = (we * cos) @ vc + carry.unsqueeze(-1) * (qc @ F_)
        E_row = carry * E.unsqueeze(-1) + we.sum(-1)
        num_g = (sc.unsqueeze(-2) * cos) @ vc + qc @ G
        num_h = cos @ vc + qc @ Hs
        P_row = P.unsqueeze(-1) + torch.cumsum(sc, dim=-1)
        t = torch.arange(start + 1, stop + 1, dtype=q.dtype, device=q.device)
        rows = (
            gx[:, start:stop].transpose(1, 2) if gx is not None else None for gx in (g1, gh, g0)
        )
        alpha, beta, gamma = _coefficients(E_row, P_row, *rows, t)
        o = alpha.unsqueeze(-1) * num_e + beta.unsqueeze(-1) * num_g + gamma.unsqueeze(-1) * num_h
        out.append(o.transpose(1, 2))
        # carry the states past this chunk
        m_new = torch.maximum(m_run, sd.amax(dim=-1))
        scale = torch.exp(m_run - m_new)
        wk = torch.exp(sc - m_new.unsqueeze(-1)).unsqueeze(-1) * kc  # (B, H, C, d)
        F_ = scale[..., None, None] * F_ + wk.transpose(-1, -2) @ vc
        E = scale * E + torch.exp(sc - m_new.unsqueeze(-1)).sum(-1)
        G = G + (sc.unsqueeze(-1) * kc).transpose(-1, -2) @ vc
        Hs = Hs + kc.transpose(-1, -2) @ vc
        P = P + sc.sum(-1)
        m_run = m_new
    return torch.cat(out, dim=1)


def _global_states(q, k, v, s, g1, gh, g0):
    """Non-causal: one set of states over the whole sequence, shifted by the global max."""
    T = q.shape[1]
    m = s.detach().amax(dim=1, keepdim=True)
    w = torch.exp(s - m)
    F_ = torch.einsum("bth,bthd,bthe->bhde", w, k, v)
    G = torch.einsum("bth,bthd,bthe->bhde", s, k, v)
    Hs = torch.einsum("bthd,bthe->bhde", k, v)
    alpha, beta, gamma = _coefficients(
        w.sum(1, keepdim=True), s.sum(1, keepdim=True), g1, gh, g0, float(T)
    )
    return (
        alpha.unsqueeze(-1) * torch.einsum("bthd,bhde->bthe", q, F_)
        + beta.unsqueeze(-1) * torch.einsum("bthd,bhde->bthe", q, G)
        + gamma.unsqueeze(-1) * torch.einsum("bthd,bhde->bthe", q, Hs)
    )


def _resolve_backend(backend: str, q: torch.Tensor, causal: bool) -> str:
    if backend != "auto":
        return backend
    from zeros.kernels.chunk_triton import triton_supported

    if q.is_cuda and causal and triton_supported(q):
        return "triton"
    # chunk at every length: on the CPU it is 5-24x faster than scan from T = 256 to 8192 (bench;
    # scan materialises (B, T, H, d, d) float64 states), and it has no range limit.
    return "chunk"


def zeros_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None = None,
    *,
    causal: bool = True,
    backend: Backend = "auto",
    chunk_size: int = 64,
) -> torch.Tensor:
    r"""ZeroS attention :math:`o_t=\sum_i r_{t,i}(\hat q_t\cdot\hat k_i)v_i`, before the LayerNorm.

    Args:
        q, k: queries and keys (B, T, H, d), RoPE already applied; normalised to unit length here.
        v: values (B, T, H, d).
        s: radial logits (B, T, H), one scalar per key.
        gate1, gateh: activated gates :math:`\sigma^1,\sigma^h\in[0,1]`, (B, T, H).
        gate0: zero-order gate :math:`\sigma^0\in[-1,1]` (first layer), (B, T, H), or None.
        causal: attend to the prefix (True) or the whole sequence.
        backend: ``"naive"``, ``"scan"``, ``"chunk"``, ``"triton"`` or ``"auto"`` (the Triton
            kernel for causal attention on CUDA when Triton is present, else ``chunk``).
        chunk_size: block length of ``chunk`` and ``triton``.

    Returns:
        (B, T, H, d), the dtype of ``q``.
    """
    owner = "zeros_attention"
    _check_inputs(owner, s, gate1, gateh, gate0, (q, k, v))
    check_choice("backend", owner, backend, BACKENDS)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise param_error("chunk_size", owner, "a positive integer", chunk_size)
    q = F.normalize(q, dim=-1)
    k = F.normalize(k, dim=-1)
    backend = _resolve_backend(backend, q, causal)
    if backend == "naive":
        return _naive(q, k, v, s, gate1, gateh, gate0, causal)
    if backend == "scan":
        return _scan(q, k, v, s, gate1, gateh, gate0, causal)
    if backend == "chunk":
        return _chunk(q, k, v, s, gate1, gateh, gate0, causal, chunk_size)
    if not causal:
        raise param_error("backend", owner, "'naive', 'scan' or 'chunk' when causal=False", backend)
    from zeros.kernels.chunk_triton import zeros_attention_triton

    return zeros_attention_triton(q, k, v, s, gate1, gateh, gate0, chunk_size=chunk_size)
