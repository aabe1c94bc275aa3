r"""The circuit's constants: :class:`CircuitConfig` and its checks.

Units: seconds for times, Hz for rates, the KC membrane potential in units of its threshold
(rest 0, threshold :math:`\theta = 1`, reset 0). Every update uses the exact decay factor
:math:`\alpha_x = e^{-\Delta t/\tau_x}` of its time constant.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from paperkit import check_bool, check_int, check_real, param_error

__all__ = ["CircuitConfig", "check_config"]

#: Upper bound on ``n_kc`` and on ``steps + pre_steps``: sizes beyond these are refused before work.
MAX_KC = 200_000
MAX_STEPS = 1_000_000


@dataclass
class CircuitConfig:
    r"""Constants of the ORN -> PN -> KC (+APL, +SFA) circuit (the paper's model, Sec. 2).

    Attributes:
        n_orn: glomeruli (ORN types), one uniglomerular PN each.
        n_kc: Kenyon cells.
        pn_per_kc: distinct PN inputs per KC (drawn uniformly without replacement).
        dt: time step (s).
        steps: odor-window steps; KC spikes are counted over this window.
        pre_steps: spontaneous (pre-odor) steps before the window.
        tau_m, tau_s, tau_a, tau_apl: membrane, synaptic, adaptation and APL time constants (s).
        theta: KC spike threshold (rest and reset are 0).
        refractory: absolute refractory period (s); :math:`v` is held at reset during it.
        w_pk: PN -> KC synaptic weight (the charge of one PN spike); None: calibrated so that
            the control circuit's coding level is 25% (:func:`flyolf.calibrate`).
        g_li: APL feedback gain :math:`g_{LI}` (lateral inhibition).
        g_sfa: adaptation increment :math:`g_{SFA}` per KC spike.
        pn_normalization: PN rates by divisive normalisation (else ORN rates pass through).
        seed: seed of the PN -> KC connectivity (and of the calibration odors).
    """

    n_orn: int = 50
    n_kc: int = 2000
    pn_per_kc: int = 7
    dt: float = 1e-3
    steps: int = 100
    pre_steps: int = 20
    tau_m: float = 0.02
    tau_s: float = 0.005
    tau_a: float = 0.1
    tau_apl: float = 0.01
    theta: float = 1.0
    refractory: float = 0.002
    w_pk: float | None = None
    g_li: float = 0.0
    g_sfa: float = 0.0
    pn_normalization: bool = True
    seed: int = 0

    def __post_init__(self) -> None:
        check_config(self, "CircuitConfig", name="")

    def replace(self, **changes) -> CircuitConfig:
        """A copy with some fields changed."""
        return CircuitConfig(**{**asdict(self), **changes})


def check_config(cfg: CircuitConfig, owner: str, name: str = "cfg") -> CircuitConfig:
    """Check every field of ``cfg`` (worded errors name ``'cfg.<field>'``, or ``'<field>'`` when
    ``name`` is empty, as in the constructor); return it. Fields may be changed after
    construction, so every entry point checks its config again.

    >>> cfg = CircuitConfig()
    >>> cfg.dt = 0.05
    >>> check_config(cfg, "f")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: The 'cfg.dt' parameter of f must be smaller than min(tau_m, ...) = 0.005. ...
    """
    if not isinstance(cfg, CircuitConfig):
        raise param_error(name, owner, "a CircuitConfig", type(cfg).__name__, cls=TypeError)
    f = f"{name}." if name else ""
    check_int(f + "n_orn", owner, cfg.n_orn, low=1, high=10_000)
    check_int(f + "n_kc", owner, cfg.n_kc, low=1, high=MAX_KC)
    check_int(f + "pn_per_kc", owner, cfg.pn_per_kc, low=1)
    if cfg.pn_per_kc > cfg.n_orn:
        raise param_error(f + "pn_per_kc", owner, f"at most n_orn = {cfg.n_orn}", cfg.pn_per_kc)
    check_int(f + "steps", owner, cfg.steps, low=1, high=MAX_STEPS)
    check_int(f + "pre_steps", owner, cfg.pre_steps, low=0, high=MAX_STEPS)
    taus = {}
    for tau in ("tau_m", "tau_s", "tau_a", "tau_apl"):
        taus[tau] = check_real(f + tau, owner, getattr(cfg, tau), low=0, low_open=True)
    dt = check_real(f + "dt", owner, cfg.dt, low=0, low_open=True)
    if dt >= min(taus.values()):
        raise param_error(
            f + "dt",
            owner,
            f"smaller than min(tau_m, tau_s, tau_a, tau_apl) = {min(taus.values()):g}",
            dt,
        )
    check_real(f + "theta", owner, cfg.theta, low=0, low_open=True)
    check_real(f + "refractory", owner, cfg.refractory, low=0)
    if cfg.w_pk is not None:
        check_real(f + "w_pk", owner, cfg.w_pk, low=0)
    check_real(f + "g_li", owner, cfg.g_li, low=0)
    check_real(f + "g_sfa", owner, cfg.g_sfa, low=0)
    check_bool(f + "pn_normalization", owner, cfg.pn_normalization)
    check_int(f + "seed", owner, cfg.seed, low=0)
    return cfg


def decay(dt: float, tau: float) -> float:
    r"""The exact decay factor :math:`e^{-\Delta t/\tau}` of one step.

    >>> round(decay(1e-3, 0.02), 6)
    0.951229
    """
    return math.exp(-dt / tau)


def refractory_steps(cfg: CircuitConfig) -> int:
    """Steps a KC is held at reset after a spike: ``round(refractory / dt)``."""
    return int(round(cfg.refractory / cfg.dt))
