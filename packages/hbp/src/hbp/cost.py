r"""The per-pack time and memory model HBP optimises (card, "Cost model").

For a pack P with linear cost :math:`t(P)=\sum_{s\in P}\ell_s` and attention cost
:math:`a(P)=\sum_{s\in P}\ell_s^2` (block-diagonal, varlen attention), run on a sequence-parallel
(SP) group of degree k, with or without gradient checkpointing (ckpt):

.. math::

    \mathrm{time} = \frac{c_{lin} t + c_{attn} a}{k}(1 + 0.33\,\mathrm{ckpt})
                    + c_{comm}\, t\, \frac{k-1}{k}[k>1] + c_{fix},\qquad
    \mathrm{mem} = m_{tok}\frac{t}{k}(m_{ckpt}\ \text{if ckpt else}\ 1) + m_{static}.

The ``"8b"`` preset is derived from stated assumptions (see :data:`PRESET_8B_ASSUMPTIONS`), never
tuned toward the paper's speed-up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from paperkit import check_choice, param_error

__all__ = ["CKPT_OVERHEAD", "PRESET_8B_ASSUMPTIONS", "CostModel", "pack_stats"]

#: Extra compute of gradient checkpointing: one more forward pass, ~1/3 of forward + backward.
CKPT_OVERHEAD = 0.33

#: The assumptions behind ``CostModel.preset("8b")`` (an 8B dense decoder, Llama-3-8B shapes).
PRESET_8B_ASSUMPTIONS: dict[str, float] = {
    "params": 8.03e9,  # parameters N
    "d_model": 4096,
    "n_layers": 32,
    "d_kv": 1024,  # grouped-query attention: 8 KV heads of 128
    "vocab": 128256,
    "gpu_flops": 400e12,  # effective bf16 FLOP/s per GPU (about 40% MFU of a 989-TFLOP/s H100)
    "sp_bandwidth": 100e9,  # bytes/s per GPU for the sequence-parallel exchange
    "device_mem": 80e9,  # bytes per GPU
    "m_static": 6e9,  # bytes: ZeRO-3 shards of weights, grads, Adam (16 B x N / 32 GPUs) + buffers
    "c_fix": 0.01,  # seconds per pack: launches, synchronisation, optimizer share
}


def pack_stats(
    lengths: np.ndarray, packs: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-pack :math:`t(P)=\sum\ell_s` and :math:`a(P)=\sum\ell_s^2` (float64 arrays)."""
    sizes = np.fromiter((len(p) for p in packs), dtype=np.int64, count=len(packs))
    if sizes.size == 0:
        return np.zeros(0), np.zeros(0)
    flat = np.fromiter((i for p in packs for i in p), dtype=np.int64, count=int(sizes.sum()))
    ell = lengths[flat].astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return np.add.reduceat(ell, starts), np.add.reduceat(ell * ell, starts)


def _tokens(lengths: Any) -> tuple[np.ndarray, np.ndarray]:
    ell = np.asarray(lengths, dtype=np.float64)
    if ell.ndim == 1:
        return np.asarray(ell.sum()), np.asarray((ell * ell).sum())
    raise param_error("lengths", "CostModel", "a 1-D sequence of sample lengths", ell.shape)


@dataclass(frozen=True)
class CostModel:
    """Coefficients of the time (seconds) and memory (bytes) model of one pack.

    Attributes:
        c_lin: seconds per token (linear layers, forward + backward).
        c_attn: seconds per unit of :math:`\\sum\\ell^2` (causal attention, forward + backward).
        c_comm: seconds per token of the SP exchange at degree k, times (k - 1)/k.
        c_fix: seconds per pack.
        m_tok: activation bytes per token without checkpointing.
        m_static: bytes per device independent of the pack.
        m_ckpt: fraction of activation memory kept with gradient checkpointing.
        device_mem: bytes available per device.
    """

    c_lin: float
    c_attn: float
    c_comm: float
    c_fix: float
    m_tok: float
    m_static: float
    m_ckpt: float
    device_mem: float

    def __post_init__(self) -> None:
        for name in ("c_lin", "c_attn", "c_comm", "c_fix", "m_tok", "m_static"):
            value = getattr(self, name)
            if not np.isfinite(value) or value < 0:
                raise param_error(name, "CostModel", "a finite non-negative number", value)
        if not 0 < self.m_ckpt <= 1:
            raise param_error("m_ckpt", "CostModel", "in (0, 1]", self.m_ckpt)
        if not self.device_mem > self.m_static:
            raise param_error("device_mem", "CostModel", "larger than m_static", self.device_mem)

    @classmethod
    def preset(cls, name: str = "8b") -> CostModel:
        r"""The ``"8b"`` preset from :data:`PRESET_8B_ASSUMPTIONS` (F = GPU FLOP/s, B = bandwidth):

        - :math:`c_{lin} = 6N/F` (forward + backward FLOPs per token of a dense model);
        - :math:`c_{attn} = 6\,d\,L/F`: causal attention costs :math:`2\ell^2 d L` FLOPs forward
          (QKᵀ and AV, half the pairs), times 3 with the backward;
        - :math:`c_{comm} = 3\cdot 2\cdot 2 d_{kv} L / B`: ring attention receives the other
          devices' K and V (bf16) once forward and twice backward (K, V and their gradients);
        - :math:`m_{tok} = 34\,d\,L` bytes (Korthikanti et al. 2022, flash attention);
        - :math:`m_{ckpt} = (2dL + 34d + 4V)/(34dL)`: layer inputs, one layer recomputed and the
          fp32 logits stay.
        """
        check_choice("name", "CostModel.preset", name, ("8b",))
        p = PRESET_8B_ASSUMPTIONS
        d, L = p["d_model"], p["n_layers"]
        return cls(
            c_lin=6 * p["params"] / p["gpu_flops"],
            c_attn=6 * d * L / p["gpu_flops"],
            c_comm=3 * 2 * 2 * p["d_kv"] * L / p["sp_bandwidth"],
            c_fix=p["c_fix"],
            m_tok=34 * d * L,
            m_static=p["m_static"],
            m_ckpt=(2 * d * L + 34 * d + 4 * p["vocab"]) / (34 * d * L),
            device_mem=p["device_mem"],
        )

    def time_from_stats(self, t: Any, a: Any, sp: int = 1, ckpt: bool = False) -> np.ndarray:
        """The time formula on precomputed t(P) and a(P) (scalars or arrays)."""
        _check_sp(sp, "CostModel.time_from_stats")
        t, a = np.asarray(t, dtype=np.float64), np.asarray(a, dtype=np.float64)
        compute = (self.c_lin * t + self.c_attn * a) / sp * (1 + CKPT_OVERHEAD * bool(ckpt))
        comm = self.c_comm * t * (sp - 1) / sp
        return compute + comm + self.c_fix

    def pack_time(
        self, lengths: Sequence[int] | np.ndarray, sp: int = 1, ckpt: bool = False
    ) -> float:
        """Seconds to train one pack holding samples of these lengths on an SP group of ``sp``."""
        t, a = _tokens(lengths)
        return float(self.time_from_stats(t, a, sp, ckpt))

    def memory(self, tokens: Any, sp: int = 1, ckpt: bool = False) -> np.ndarray:
        """Bytes per device for a pack of ``tokens`` tokens."""
        _check_sp(sp, "CostModel.memory")
        keep = self.m_ckpt if ckpt else 1.0
        return self.m_tok * np.asarray(tokens, dtype=np.float64) / sp * keep + self.m_static

    def fits(self, tokens: Any, sp: int = 1, ckpt: bool = False) -> bool | np.ndarray:
        """Whether a pack of ``tokens`` tokens fits ``device_mem`` on each device."""
        ok = self.memory(tokens, sp, ckpt) <= self.device_mem
        return bool(ok) if np.ndim(ok) == 0 else ok

    def max_tokens(self, sp: int = 1, ckpt: bool = False) -> int:
        """The longest pack (tokens) that fits, for this SP degree and ckpt setting."""
        _check_sp(sp, "CostModel.max_tokens")
        keep = self.m_ckpt if ckpt else 1.0
        return int((self.device_mem - self.m_static) * sp / (self.m_tok * keep))

    def calibrate(
        self, measurements: Iterable[tuple[Sequence[int], int, bool, float]]
    ) -> CostModel:
        r"""Least-squares fit of the time coefficients to measured packs.

        ``measurements`` are ``(lengths, sp, ckpt, seconds)``. The model is linear in
        :math:`(c_{lin}, c_{attn}, c_{fix})` (and :math:`c_{comm}` when some sp > 1), so the fit is
        one ``lstsq``; negative coefficients are clipped to 0 and the rest refitted. The memory
        coefficients are kept.
        """
        rows, y = _design(measurements)
        use_comm = bool(np.any(rows[:, 2] > 0))
        cols = [0, 1, 2, 3] if use_comm else [0, 1, 3]
        active = list(cols)
        coef = np.zeros(4)
        while active:
            sol, *_ = np.linalg.lstsq(rows[:, active], y, rcond=None)
            if np.all(sol >= 0):
                coef[active] = sol
                break
            active = [c for c, s in zip(active, sol, strict=True) if s > 0]
        names = ["c_lin", "c_attn", "c_comm", "c_fix"]
        updates = {names[c]: float(coef[c]) for c in cols}
        return replace(self, **updates)

    def score(self, measurements: Iterable[tuple[Sequence[int], int, bool, float]]) -> float:
        r"""Coefficient of determination :math:`R^2 = 1 - SS_{res}/SS_{tot}` on ``measurements``."""
        rows, y = _design(measurements)
        pred = rows @ np.array([self.c_lin, self.c_attn, self.c_comm, self.c_fix])
        ss_tot = float(((y - y.mean()) ** 2).sum())
        return 1.0 - float(((y - pred) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")


def _design(
    measurements: Iterable[tuple[Sequence[int], int, bool, float]],
) -> tuple[np.ndarray, np.ndarray]:
    rows, y = [], []
    for lengths, sp, ckpt, seconds in measurements:
        t, a = _tokens(lengths)
        scale = (1 + CKPT_OVERHEAD * bool(ckpt)) / sp
        rows.append([t * scale, a * scale, t * (sp - 1) / sp, 1.0])
        y.append(seconds)
    if len(rows) < 3:
        raise param_error(
            "measurements", "CostModel.calibrate", "at least 3 measurements", len(rows)
        )
    return np.asarray(rows, dtype=np.float64), np.asarray(y, dtype=np.float64)


def _check_sp(sp: Any, owner: str) -> None:
    if isinstance(sp, bool) or not isinstance(sp, (int, np.integer)) or sp < 1:
        raise param_error("sp", owner, "a positive integer", sp)
