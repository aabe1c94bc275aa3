r"""The per-pack time and memory model behind the settings of HBP's packing groups.

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

from hbp.data import sample_lengths
from hbp.packing import flat_packs
from paperkit import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_real,
    describe,
    param_error,
)

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


def stats_of(lengths: np.ndarray, packs: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Per-pack t(P) and a(P) of packs already checked (the package's inner loops call it)."""
    sizes = np.fromiter((len(p) for p in packs), dtype=np.int64, count=len(packs))
    if sizes.size == 0:
        return np.zeros(0), np.zeros(0)
    flat = np.fromiter((i for p in packs for i in p), dtype=np.int64, count=int(sizes.sum()))
    ell = lengths[flat].astype(np.float64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    return np.add.reduceat(ell, starts), np.add.reduceat(ell * ell, starts)


def pack_stats(
    lengths: Sequence[int] | np.ndarray, packs: Sequence[Sequence[int]]
) -> tuple[np.ndarray, np.ndarray]:
    r"""Per-pack :math:`t(P)=\sum_{s\in P}\ell_s` and :math:`a(P)=\sum_{s\in P}\ell_s^2` (float64).

    ``packs`` are non-empty lists of indices into ``lengths`` (positive integers; NaN cannot
    occur in integer lengths, floating lengths are refused).

    >>> t, a = pack_stats([3, 4, 5], [[0, 1], [2]])
    >>> t.tolist(), a.tolist()
    ([7.0, 5.0], [25.0, 25.0])
    """
    ell = sample_lengths("lengths", "pack_stats", lengths)
    flat_packs("packs", "pack_stats", packs, ell.size)
    return stats_of(ell, packs)


def cost_model(name: str, owner: str, value: Any) -> CostModel:
    """``value`` when it is a :class:`CostModel`, else the worded TypeError."""
    if not isinstance(value, CostModel):
        raise param_error(name, owner, "a CostModel", describe(value), cls=TypeError)
    return value


def _tokens(name: str, owner: str, lengths: Any) -> tuple[float, float]:
    ell = sample_lengths(name, owner, lengths).astype(np.float64)
    return float(ell.sum()), float((ell * ell).sum())


def _settings(owner: str, sp: Any, ckpt: Any) -> tuple[int, bool]:
    return check_int("sp", owner, sp, low=1), check_bool("ckpt", owner, ckpt)


@dataclass(frozen=True)
class CostModel:
    """Coefficients of the time (seconds) and memory (bytes) model of one pack.

    Every coefficient is a finite real number (NaN and inf are refused); the methods refuse
    NaN and inf in their inputs too.

    Attributes:
        c_lin: seconds per token (linear layers, forward + backward).
        c_attn: seconds per unit of :math:`\\sum\\ell^2` (causal attention, forward + backward).
        c_comm: seconds per token of the SP exchange at degree k, times (k - 1)/k.
        c_fix: seconds per pack.
        m_tok: activation bytes per token without checkpointing.
        m_static: bytes per device independent of the pack.
        m_ckpt: fraction of activation memory kept with gradient checkpointing, in (0, 1].
        device_mem: bytes available per device (more than ``m_static``).
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
        owner = "CostModel"
        for name in ("c_lin", "c_attn", "c_comm", "c_fix", "m_tok", "m_static"):
            object.__setattr__(self, name, check_real(name, owner, getattr(self, name), low=0))
        object.__setattr__(
            self, "m_ckpt", check_real("m_ckpt", owner, self.m_ckpt, low=0, low_open=True, high=1)
        )
        device_mem = check_real(
            "device_mem", owner, self.device_mem, low=self.m_static, low_open=True
        )
        object.__setattr__(self, "device_mem", device_mem)

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

        >>> round(CostModel.preset("8b").max_tokens(sp=1, ckpt=True))
        80924
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

    def seconds(self, t: Any, a: Any, sp: int, ckpt: bool) -> np.ndarray:
        """The time formula without argument checks (the package's inner loops call it)."""
        t, a = np.asarray(t, dtype=np.float64), np.asarray(a, dtype=np.float64)
        compute = (self.c_lin * t + self.c_attn * a) / sp * (1 + CKPT_OVERHEAD * bool(ckpt))
        comm = self.c_comm * t * (sp - 1) / sp
        return compute + comm + self.c_fix

    def time_from_stats(self, t: Any, a: Any, sp: int = 1, ckpt: bool = False) -> np.ndarray:
        """The time formula on precomputed t(P) and a(P) (non-negative scalars or arrays of one
        shape; NaN and inf refused)."""
        owner = "CostModel.time_from_stats"
        t = check_array("t", owner, t, kind="real")
        a = check_array("a", owner, a, kind="real")
        if a.shape != t.shape:
            raise param_error("a", owner, f"of the shape of 't' {t.shape}", describe(a))
        for name, x in (("t", t), ("a", a)):
            if np.any(x < 0):
                raise param_error(name, owner, "non-negative", float(x.min()))
        sp, ckpt = _settings(owner, sp, ckpt)
        return self.seconds(t, a, sp, ckpt)

    def pack_time(
        self, lengths: Sequence[int] | np.ndarray, sp: int = 1, ckpt: bool = False
    ) -> float:
        """Seconds to train one pack holding samples of these lengths on an SP group of ``sp``."""
        owner = "CostModel.pack_time"
        t, a = _tokens("lengths", owner, lengths)
        sp, ckpt = _settings(owner, sp, ckpt)
        return float(self.seconds(t, a, sp, ckpt))

    def memory(self, tokens: Any, sp: int = 1, ckpt: bool = False) -> np.ndarray:
        """Bytes per device for a pack of ``tokens`` tokens (non-negative; NaN and inf refused)."""
        owner = "CostModel.memory"
        tokens = check_array("tokens", owner, tokens, kind="real")
        if np.any(tokens < 0):
            raise param_error("tokens", owner, "non-negative", float(tokens.min()))
        sp, ckpt = _settings(owner, sp, ckpt)
        keep = self.m_ckpt if ckpt else 1.0
        return self.m_tok * tokens.astype(np.float64) / sp * keep + self.m_static

    def fits(self, tokens: Any, sp: int = 1, ckpt: bool = False) -> bool | np.ndarray:
        """Whether a pack of ``tokens`` tokens fits ``device_mem`` on each device."""
        ok = self.memory(tokens, sp, ckpt) <= self.device_mem
        return bool(ok) if np.ndim(ok) == 0 else ok

    def max_tokens(self, sp: int = 1, ckpt: bool = False) -> int:
        """The longest pack (tokens) that fits, for this SP degree and ckpt setting."""
        sp, ckpt = _settings("CostModel.max_tokens", sp, ckpt)
        keep = self.m_ckpt if ckpt else 1.0
        if self.m_tok == 0:
            raise param_error(
                "m_tok", "CostModel.max_tokens", "positive (memory grows with tokens)", self.m_tok
            )
        return int((self.device_mem - self.m_static) * sp / (self.m_tok * keep))

    def calibrate(
        self, measurements: Iterable[tuple[Sequence[int], int, bool, float]]
    ) -> CostModel:
        r"""Least-squares fit of the time coefficients to measured packs.

        ``measurements`` are at least 3 ``(lengths, sp, ckpt, seconds)`` with finite seconds
        >= 0. The model is linear in :math:`(c_{lin}, c_{attn}, c_{fix})` (and :math:`c_{comm}`
        when some sp > 1), so the fit is one ``lstsq``; negative coefficients are clipped to 0 and
        the rest refitted. The memory coefficients are kept.
        """
        rows, y = _design(measurements, "CostModel.calibrate")
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
        r"""Coefficient of determination :math:`R^2 = 1 - SS_{res}/SS_{tot}` on ``measurements``
        (NaN when every measured time is the same)."""
        rows, y = _design(measurements, "CostModel.score")
        pred = rows @ np.array([self.c_lin, self.c_attn, self.c_comm, self.c_fix])
        ss_tot = float(((y - y.mean()) ** 2).sum())
        return 1.0 - float(((y - pred) ** 2).sum()) / ss_tot if ss_tot > 0 else float("nan")


def _design(
    measurements: Iterable[tuple[Sequence[int], int, bool, float]], owner: str
) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``[t/k·(1+0.33 ckpt), a/k·(1+0.33 ckpt), t(k-1)/k, 1]`` and the measured seconds."""
    if isinstance(measurements, (str, bytes)) or not isinstance(measurements, Iterable):
        raise param_error(
            "measurements",
            owner,
            "(lengths, sp, ckpt, seconds) tuples",
            measurements,
            cls=TypeError,
        )
    rows, y = [], []
    for item in measurements:
        if not isinstance(item, (tuple, list)) or len(item) != 4:
            raise param_error("measurements", owner, "(lengths, sp, ckpt, seconds) tuples", item)
        lengths, sp, ckpt, seconds = item
        t, a = _tokens("measurements", owner, lengths)
        sp = check_int("measurements", owner, sp, low=1)
        ckpt = check_bool("measurements", owner, ckpt)
        seconds = check_real("measurements", owner, seconds, low=0)
        scale = (1 + CKPT_OVERHEAD * ckpt) / sp
        rows.append([t * scale, a * scale, t * (sp - 1) / sp, 1.0])
        y.append(seconds)
    if len(rows) < 3:
        raise param_error("measurements", owner, "at least 3 measurements", len(rows))
    return np.asarray(rows, dtype=np.float64), np.asarray(y, dtype=np.float64)
