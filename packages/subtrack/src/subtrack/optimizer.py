r"""SubTrack++ and its GaLore-family baselines as one ``torch.optim.Optimizer``.

For a 2-D weight :math:`W \in \mathbb{R}^{m\times n}` of a low-rank group the basis lives on the
smaller side (:math:`d = \min(m, n)`); below the left case (:math:`m < n`), the right case works on
:math:`G^\top`. With basis :math:`P` (d x r), every step:

.. math::
    R = P^\top G,\quad M \leftarrow \beta_1 M + (1-\beta_1) R,\quad
    V \leftarrow \beta_2 V + (1-\beta_2) R\circ R,\quad N = \hat M / (\sqrt{\hat V} + \epsilon),

recovery scaling :math:`S = (G - P P^\top G)\,\mathrm{diag}(\phi)`,
:math:`\phi_j = \|N_{:,j}\| / (\|R_{:,j}\| + 10^{-8})` with the norm-growth limiter
:math:`\|S_t\| \le \gamma \|S_{t-1}\|`, and the update
:math:`W \leftarrow W - \mathrm{lr}(\alpha P N + S) - \mathrm{lr}\,\mathrm{wd}\,W`.
Every ``update_interval`` steps the basis moves: a geodesic step on the Grassmannian
(``method="subtrack"``) or a fresh truncated SVD (``"galore"``, ``"fira"``, ``"ldadam_like"``);
with ``projection_aware`` the moments are rotated into the new basis.

The method fixes the options of the baselines: GaLore (no rotation, no recovery), Fira (recovery
scaling with limiter), LDAdam-like (rotation, no recovery). ``"subtrack"`` reads
``projection_aware`` and ``recovery_scaling`` from the group (both on: SubTrack++; both off:
SubTrack-Grad). Groups without ``rank`` are plain AdamW.

Every hyperparameter is checked when the optimizer (or a group) is built: NaN and inf are
refused, and so are out-of-range values. ``step`` refuses a NaN or inf gradient before updating
any parameter, naming the group and the parameter (a mixed-precision loop skips such steps
itself, as ``torch.amp.GradScaler`` does, before calling ``step``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_real,
    describe,
    param_error,
)
from subtrack.grassmann import geodesic_step, rotate

__all__ = ["METHODS", "SubTrackAdamW", "make_param_groups", "optimizer_state_bytes"]

METHODS = ("subtrack", "galore", "fira", "ldadam_like")
_FIXED_FLAGS = {"galore": (False, False), "fira": (False, True), "ldadam_like": (True, False)}
_LOW_RANK_DEFAULTS: dict[str, Any] = {
    "update_interval": 200,
    "scale": 0.25,
    "subspace_lr": 10.0,
    "method": "subtrack",
    "projection_aware": True,
    "recovery_scaling": True,
    "norm_growth_limit": 1.01,
    "max_angle": None,
    "v_reset_scale": None,
    "residual_uses_scale": False,
}
_OWNER = "SubTrackAdamW"
_COMMON = ("lr", "betas", "eps", "weight_decay", "correct_bias")


def _common(owner: str, values: dict[str, Any]) -> dict[str, Any]:
    """The common hyperparameters present in ``values``, checked (and converted)."""
    out: dict[str, Any] = {}
    for key in ("lr", "eps", "weight_decay"):
        if key in values:
            out[key] = check_real(key, owner, values[key], low=0)
    if "betas" in values:
        betas = values["betas"]
        if isinstance(betas, (str, bytes)) or not isinstance(betas, Sequence):
            raise param_error(
                "betas", owner, "two numbers in [0, 1)", describe(betas), cls=TypeError
            )
        if len(betas) != 2:
            raise param_error("betas", owner, "two numbers in [0, 1)", tuple(betas))
        out["betas"] = tuple(
            check_real("betas", owner, b, low=0, high=1, high_open=True) for b in betas
        )
    if "correct_bias" in values:
        out["correct_bias"] = check_bool("correct_bias", owner, values["correct_bias"])
    return out


def _low_rank(owner: str, group: dict[str, Any]) -> dict[str, Any]:
    """The low-rank keys of ``group`` (defaults filled in), checked."""
    out = {
        "rank": check_int("rank", owner, group["rank"], low=1),
        "update_interval": check_int("update_interval", owner, group["update_interval"], low=1),
        "scale": check_real("scale", owner, group["scale"], low=0),
        "subspace_lr": check_real("subspace_lr", owner, group["subspace_lr"], low=0),
        "method": check_choice("method", owner, group["method"], METHODS),
        "norm_growth_limit": check_real(
            "norm_growth_limit", owner, group["norm_growth_limit"], low=1, finite=False
        ),
    }
    for key in ("projection_aware", "recovery_scaling", "residual_uses_scale"):
        out[key] = check_bool(key, owner, group[key])
    for key in ("max_angle", "v_reset_scale"):
        out[key] = None if group[key] is None else check_real(key, owner, group[key], low=0)
    return out


def _rank_fits_weights(owner: str, group: dict[str, Any]) -> None:
    """Every weight of a low-rank group is 2-D with ``rank <= min(m, n)``."""
    rank = group["rank"]
    for p in group["params"]:
        if p.ndim != 2:
            raise param_error(
                "params",
                owner,
                "2-D tensors in a group with 'rank'",
                Described(f"a {p.ndim}-D tensor of shape {tuple(p.shape)}"),
            )
        if rank > min(p.shape):
            raise param_error(
                "rank", owner, f"an integer in [1, {min(p.shape)}] for shape {tuple(p.shape)}", rank
            )


def _top_basis(G: Tensor, rank: int) -> Tensor:
    """Top-``rank`` left singular vectors of ``G`` (d x n), computed in float32 or wider."""
    work = G if G.dtype in (torch.float32, torch.float64) else G.float()
    U, _, _ = torch.linalg.svd(work, full_matrices=False)
    return U[:, :rank].to(G.dtype).contiguous()


class SubTrackAdamW(torch.optim.Optimizer):
    """AdamW whose low-rank groups (those with a ``rank`` key) keep moments in a tracked subspace.

    Common keys (constructor defaults, or per group): ``lr >= 0``, ``betas`` two numbers in
    [0, 1), ``eps >= 0``, ``weight_decay >= 0``, ``correct_bias``. Low-rank group keys: ``rank``
    (an integer in [1, min(m, n)] for every (m, n) weight of the group), ``update_interval=200``
    (>= 1), ``scale=0.25`` (alpha >= 0), ``subspace_lr=10.0`` (eta >= 0), ``method`` in
    :data:`METHODS`, ``projection_aware=True``, ``recovery_scaling=True``,
    ``norm_growth_limit=1.01`` (>= 1; inf: no limiter), ``max_angle=None`` (or >= 0),
    ``v_reset_scale=None`` (or >= 0; multiply the rotated second moment, official code:
    ``1 - beta2``), ``residual_uses_scale=False`` (official code: ``G - alpha P P^T G``). Every
    number must be finite unless said; NaN is always refused.

    State per low-rank parameter: ``P``, ``exp_avg``, ``exp_avg_sq`` (shaped like the low-rank
    gradient ``P^T G`` or ``G P``), ``step``, ``s_norm``. ``subspace_time_s`` accumulates the wall
    time spent computing bases (initial SVD, SVD refreshes, geodesic steps, moment rotations).

    >>> w = torch.nn.Parameter(torch.zeros(4, 6))
    >>> opt = SubTrackAdamW([{"params": [w], "rank": 2}], lr=1e-2)
    >>> w.grad = torch.ones(4, 6)
    >>> opt.step()
    >>> tuple(opt.state[w]["P"].shape), tuple(opt.state[w]["exp_avg"].shape)
    ((4, 2), (2, 6))
    """

    def __init__(
        self,
        params: Iterable[Any],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        correct_bias: bool = True,
    ) -> None:
        defaults = _common(
            _OWNER,
            dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, correct_bias=correct_bias),
        )
        super().__init__(params, defaults)
        self.subspace_time_s = 0.0

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Check the group's own keys, fill the low-rank defaults of a group with ``rank``."""
        owner = f"{_OWNER}.param_groups[{len(self.param_groups)}]"
        if not isinstance(param_group, dict):
            raise param_error("param_group", owner, "a dict", describe(param_group), cls=TypeError)
        param_group.update(_common(owner, {k: v for k, v in param_group.items() if k in _COMMON}))
        if "rank" in param_group:
            for key, value in _LOW_RANK_DEFAULTS.items():
                param_group.setdefault(key, value)
            param_group.update(_low_rank(owner, param_group))
        super().add_param_group(param_group)
        if "rank" in param_group:
            _rank_fits_weights(owner, self.param_groups[-1])

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """One optimisation step; ``closure`` re-evaluates the loss as in torch optimisers."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        self._refuse_bad_gradients()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if "rank" in group:
                    self._low_rank_step(p, group)
                else:
                    self._adamw_step(p, group)
        return loss

    def _refuse_bad_gradients(self) -> None:
        """Refuse sparse or non-finite gradients before any parameter moves."""
        for g, group in enumerate(self.param_groups):
            for i, p in enumerate(group["params"]):
                if p.grad is None:
                    continue
                name = f"param_groups[{g}].params[{i}].grad"
                if p.grad.is_sparse:
                    raise param_error(
                        name,
                        f"{_OWNER}.step",
                        "a dense gradient",
                        Described("a sparse gradient"),
                        cls=TypeError,
                    )
                if not bool(torch.isfinite(p.grad).all()):
                    raise param_error(
                        name,
                        f"{_OWNER}.step",
                        "finite (no NaN or inf; no parameter was updated)",
                        describe(p.grad),
                    )

    def _adamw_step(self, p: Tensor, group: dict[str, Any]) -> None:
        """torch.optim.AdamW's update (decoupled weight decay, bias-corrected moments)."""
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(p)
            state["exp_avg_sq"] = torch.zeros_like(p)
        state["step"] += 1
        beta1, beta2 = group["betas"]
        g = p.grad
        p.mul_(1.0 - group["lr"] * group["weight_decay"])
        state["exp_avg"].lerp_(g, 1.0 - beta1)
        state["exp_avg_sq"].mul_(beta2).addcmul_(g, g, value=1.0 - beta2)
        bc1, bc2 = self._bias_corrections(group, state["step"])
        denom = (state["exp_avg_sq"].sqrt() / math.sqrt(bc2)).add_(group["eps"])
        p.addcdiv_(state["exp_avg"], denom, value=-group["lr"] / bc1)

    @staticmethod
    def _bias_corrections(group: dict[str, Any], step: int) -> tuple[float, float]:
        if not group["correct_bias"]:
            return 1.0, 1.0
        beta1, beta2 = group["betas"]
        return 1.0 - beta1**step, 1.0 - beta2**step

    @staticmethod
    def _flags(group: dict[str, Any]) -> tuple[bool, bool]:
        """(projection_aware, recovery_scaling) for the group's method."""
        return _FIXED_FLAGS.get(
            group["method"], (group["projection_aware"], group["recovery_scaling"])
        )

    def _low_rank_step(self, p: Tensor, group: dict[str, Any]) -> None:
        right = p.shape[0] >= p.shape[1]
        G = p.grad.mT if right else p.grad  # left orientation: d x n with d the smaller side
        state = self.state[p]
        projection_aware, recovery_scaling = self._flags(group)
        t = state.get("step", 0)
        start = time.perf_counter()
        if not state:
            P = _top_basis(G, group["rank"])
            shape = (G.shape[1], group["rank"]) if right else (group["rank"], G.shape[1])
            state.update(
                P=P,
                exp_avg=torch.zeros(shape, dtype=p.dtype, device=p.device),
                exp_avg_sq=torch.zeros(shape, dtype=p.dtype, device=p.device),
                step=0,
                s_norm=0.0,
            )
        elif t % group["update_interval"] == 0:
            self._update_basis(state, G, group, projection_aware, right)
        self.subspace_time_s += time.perf_counter() - start
        P = state["P"]
        M = state["exp_avg"].mT if right else state["exp_avg"]
        V = state["exp_avg_sq"].mT if right else state["exp_avg_sq"]
        beta1, beta2 = group["betas"]
        state["step"] = t + 1
        R = P.mT @ G
        M.lerp_(R, 1.0 - beta1)
        V.mul_(beta2).addcmul_(R, R, value=1.0 - beta2)
        bc1, bc2 = self._bias_corrections(group, t + 1)
        N = (M / bc1) / ((V / bc2).sqrt() + group["eps"])
        update = group["scale"] * (P @ N)
        if recovery_scaling:
            update += self._recovery(state, G, P, R, N, group)
        p.mul_(1.0 - group["lr"] * group["weight_decay"])
        p.add_(update.mT if right else update, alpha=-group["lr"])

    def _update_basis(
        self,
        state: dict[str, Any],
        G: Tensor,
        group: dict[str, Any],
        projection_aware: bool,
        right: bool,
    ) -> None:
        P_old = state["P"]
        if group["method"] == "subtrack":
            P_new, _ = geodesic_step(P_old, G, group["subspace_lr"], group["max_angle"])
        else:
            P_new = _top_basis(G, group["rank"])
        state["P"] = P_new
        if not projection_aware:
            return
        M = state["exp_avg"].mT if right else state["exp_avg"]
        V = state["exp_avg_sq"].mT if right else state["exp_avg_sq"]
        M_new, V_new = rotate(M, V, P_new.mT @ P_old, "left")
        if group["v_reset_scale"] is not None:
            V_new = V_new * group["v_reset_scale"]
        state["exp_avg"] = (M_new.mT if right else M_new).contiguous()
        state["exp_avg_sq"] = (V_new.mT if right else V_new).contiguous()

    @staticmethod
    def _recovery(
        state: dict[str, Any], G: Tensor, P: Tensor, R: Tensor, N: Tensor, group: dict[str, Any]
    ) -> Tensor:
        """Fira-style recovery of the discarded gradient, with the norm-growth limiter."""
        back = P @ R
        if group["residual_uses_scale"]:
            back = group["scale"] * back
        phi = torch.linalg.vector_norm(N, dim=0) / (torch.linalg.vector_norm(R, dim=0) + 1e-8)
        S = (G - back) * phi
        norm = float(torch.linalg.matrix_norm(S))
        previous = state["s_norm"]
        limit = group["norm_growth_limit"]
        if previous > 0 and norm > limit * previous:
            S = S * (limit * previous / norm)
            norm = limit * previous
        state["s_norm"] = norm
        return S


def make_param_groups(
    model: nn.Module,
    rank: int,
    targets: Sequence[str] = (
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    ),
    **group_kw: Any,
) -> list[dict[str, Any]]:
    """Split ``model``'s parameters: weights of ``nn.Linear`` modules named in ``targets`` go to a
    low-rank group (``rank`` and ``group_kw``), every other parameter to a plain AdamW group.

    ``model`` is an ``nn.Module``, ``rank`` a positive integer, ``targets`` a non-empty list of
    module names; ``group_kw`` are low-rank keys, checked when the optimizer is built.

    >>> model = torch.nn.Sequential()
    >>> model.add_module("q_proj", torch.nn.Linear(8, 8))
    >>> [sorted(g) for g in make_param_groups(model, rank=2)]
    [['params'], ['params', 'rank']]
    """
    owner = "make_param_groups"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "an nn.Module", describe(model), cls=TypeError)
    rank = check_int("rank", owner, rank, low=1)
    if (
        isinstance(targets, (str, bytes))
        or not isinstance(targets, Sequence)
        or not all(isinstance(t, str) for t in targets)
    ):
        raise param_error(
            "targets", owner, "a list of module names", describe(targets), cls=TypeError
        )
    if not targets:
        raise param_error("targets", owner, "a non-empty list of module names", Described("[]"))
    low_rank: list[nn.Parameter] = []
    for name, module in model.named_modules():
        if isinstance(module, nn.Linear) and name.rsplit(".", 1)[-1] in targets:
            low_rank.append(module.weight)
    chosen = {id(p) for p in low_rank}
    rest = [p for p in model.parameters() if id(p) not in chosen]
    groups: list[dict[str, Any]] = []
    if rest:
        groups.append({"params": rest})
    if low_rank:
        groups.append({"params": low_rank, "rank": rank, **group_kw})
    return groups


def optimizer_state_bytes(opt: torch.optim.Optimizer) -> int:
    """Bytes held by the tensors of an optimizer's state (bases and moments).

    >>> w = torch.nn.Parameter(torch.zeros(4, 6))
    >>> opt = SubTrackAdamW([{"params": [w], "rank": 2}])
    >>> w.grad = torch.ones(4, 6)
    >>> opt.step()
    >>> optimizer_state_bytes(opt)  # P (4 x 2) and two moments (2 x 6), float32
    128
    """
    if not isinstance(opt, torch.optim.Optimizer):
        raise param_error(
            "opt", "optimizer_state_bytes", "a torch.optim.Optimizer", describe(opt), cls=TypeError
        )
    return sum(
        v.numel() * v.element_size()
        for state in opt.state.values()
        for v in state.values()
        if isinstance(v, Tensor)
    )
