r"""AlphaDecay as per-module parameter groups: optimizers and a scheduler for any optimizer.

Every tracked module (see :func:`alphadecay.tracked_modules`) gets its own parameter group
(key ``"module"`` = its name); everything else (norms, embeddings, LM head, the dropped first
Linear) shares one group with ``"module": None`` and keeps the base decay :math:`\lambda`.
Before step 0 and then every ``update_every`` optimizer steps the exponents
:math:`\alpha_l` of the tracked weights are measured and each group's ``weight_decay`` is set to
:math:`\lambda_l` of :func:`alphadecay.assign_weight_decay`. Nothing else changes: with
``AlphaDecayAdamW`` the decay is decoupled (:math:`w \leftarrow w - \eta \lambda_l w`), with
``AlphaDecayAdam`` it is an L2 term added to the gradient (:math:`g \leftarrow g + \lambda_l w`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

from alphadecay.assign import Include, alphas_of, assign_weight_decay, scale_pair, select_modules
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_real,
    describe,
    param_error,
)

__all__ = ["AlphaDecayAdam", "AlphaDecayAdamW", "AlphaDecayScheduler", "module_param_groups"]


def adam_hyperparameters(
    owner: str, lr: Any, betas: Any, eps: Any
) -> tuple[float, tuple[float, float], float]:
    """``lr`` >= 0, ``betas`` a pair in [0, 1) and ``eps`` >= 0, all finite, checked for
    ``owner`` (before torch's own checks, whose messages do not name the argument)."""
    lr = check_real("lr", owner, lr, low=0)
    expected = "a pair (beta1, beta2) of reals in [0, 1)"
    if not isinstance(betas, (tuple, list)):
        raise param_error("betas", owner, expected, describe(betas), cls=TypeError)
    if len(betas) != 2:
        raise param_error("betas", owner, expected, Described(f"{len(betas)} values"))
    pair = tuple(check_real("betas", owner, b, low=0, high=1, high_open=True) for b in betas)
    eps = check_real("eps", owner, eps, low=0)
    return lr, pair, eps  # type: ignore[return-value]


def init_optimizer(
    self: torch.optim.Optimizer, parent: type[torch.optim.Optimizer], owner: str, params: Any, **kw
) -> None:
    """``parent.__init__(self, params, **kw)``, with an unusable ``params`` (not an iterable of
    tensors or groups, or empty) refused as a worded error naming ``params``."""
    if isinstance(params, torch.Tensor):
        raise param_error(
            "params",
            owner,
            "an iterable of tensors or parameter groups",
            Described("a single tensor"),
            cls=TypeError,
        )
    try:
        parent.__init__(self, params, **kw)
    except (TypeError, ValueError) as exc:
        raise param_error(
            "params",
            owner,
            "a non-empty iterable of tensors or parameter groups",
            Described(f"an argument torch refused ({exc})"),
            cls=type(exc),
        ) from exc


def module_param_groups(
    model: nn.Module,
    weight_decay: float,
    min_eigs: int = 50,
    drop_first_last: bool = True,
    include: Include | None = None,
) -> list[dict[str, Any]]:
    """Parameter groups for AlphaDecay: one per tracked module (``"module": name``) and one for
    the remaining parameters (``"module": None``), every group starting at ``weight_decay``
    (finite, >= 0)."""
    owner = "module_param_groups"
    weight_decay = check_real("weight_decay", owner, weight_decay, low=0)
    modules = select_modules(owner, model, min_eigs, drop_first_last, include)
    return _groups(model, modules, weight_decay)


def _groups(
    model: nn.Module, modules: dict[str, nn.Module], weight_decay: float
) -> list[dict[str, Any]]:
    seen: set[int] = set()
    groups = []
    for name, module in modules.items():
        params = [p for p in module.parameters() if id(p) not in seen]
        seen.update(id(p) for p in params)
        groups.append({"params": params, "module": name, "weight_decay": weight_decay})
    rest = [p for p in model.parameters() if id(p) not in seen]
    if rest:
        groups.append({"params": rest, "module": None, "weight_decay": weight_decay})
    return groups


@dataclass(frozen=True)
class _Config:
    owner: str
    base_wd: float
    s1: float
    s2: float
    update_every: int
    min_eigs: int
    fit: str
    fn: str
    xmin_pos: float
    drop_first_last: bool
    include: Include | None

    @classmethod
    def checked(cls, owner: str, wd_name: str, base_wd: Any, **kw: Any) -> _Config:
        """The settings, each checked for ``owner`` (``wd_name``: how the base decay is called
        there)."""
        s1, s2 = scale_pair(owner, kw["s1"], kw["s2"])
        return cls(
            owner=owner,
            base_wd=check_real(wd_name, owner, base_wd, low=0),
            s1=s1,
            s2=s2,
            update_every=check_int("update_every", owner, kw["update_every"], low=1),
            min_eigs=check_int("min_eigs", owner, kw["min_eigs"], low=1),
            fit=check_choice("fit", owner, kw["fit"], ("median", "ks")),
            fn=check_choice("fn", owner, kw["fn"], ("linear", "sqrt", "log2")),
            xmin_pos=check_real("xmin_pos", owner, kw["xmin_pos"], low=1, low_open=True),
            drop_first_last=check_bool("drop_first_last", owner, kw["drop_first_last"]),
            include=kw["include"],
        )

    def modules(self, model: Any) -> dict[str, nn.Linear]:
        return select_modules(self.owner, model, self.min_eigs, self.drop_first_last, self.include)

    def assign(
        self, model: nn.Module, groups: Iterable[dict[str, Any]]
    ) -> tuple[dict[str, float], dict[str, float]]:
        alphas = alphas_of(self.owner, self.modules(model), self.fit, self.xmin_pos, False)
        decays = assign_weight_decay(alphas, self.base_wd, self.s1, self.s2, self.fn)  # type: ignore[arg-type]
        for group in groups:
            group["weight_decay"] = decays.get(group.get("module"), self.base_wd)
        return alphas, decays


def _split_groups(optimizer: torch.optim.Optimizer, modules: dict[str, nn.Module]) -> None:
    """Move each tracked module's parameters into a group of its own (key ``"module"``) that
    copies the hyper-parameters of the group holding its weight; drop emptied groups."""
    groups = optimizer.param_groups
    for name, module in modules.items():
        ids = {id(p) for p in module.parameters()}
        source = next(
            (g for g in groups if any(id(p) == id(module.weight) for p in g["params"])), None
        )
        if source is None:
            continue
        moved = [p for g in groups for p in g["params"] if id(p) in ids]
        for g in groups:
            g["params"] = [p for p in g["params"] if id(p) not in ids]
        new = {k: v for k, v in source.items() if k != "params"}
        optimizer.add_param_group({**new, "params": moved, "module": name})
    groups[:] = [g for g in groups if g["params"]]
    for g in groups:
        g.setdefault("module", None)


class AlphaDecayScheduler:
    """AlphaDecay for any optimizer whose parameter groups carry ``"weight_decay"``.

    Groups that name a tracked module under ``"module"`` (built with :func:`module_param_groups`)
    get that module's decay. If no group does, each tracked module's parameters are first moved
    into a group of their own that copies the hyper-parameters of the group they came from (so
    ``AlphaDecayScheduler(model, torch.optim.SGD(model.parameters(), ...))`` works; build the
    scheduler before any learning-rate scheduler, which counts groups). Every other group gets
    ``base_wd`` (default: the optimizer's default ``weight_decay``). The decays are assigned
    when the scheduler is built (before step 0) and again after every ``update_every``-th call
    of :meth:`step`, which is called after ``optimizer.step()``. The settings are checked as in
    :class:`AlphaDecayAdamW` (``base_wd`` like ``weight_decay``), and so are non-finite weights.
    """

    def __init__(
        self,
        model: nn.Module,
        optimizer: torch.optim.Optimizer,
        base_wd: float | None = None,
        s1: float = 2 / 3,
        s2: float = 3.0,
        update_every: int = 500,
        min_eigs: int = 50,
        fit: Literal["median", "ks"] = "median",
        *,
        fn: Literal["linear", "sqrt", "log2"] = "linear",
        xmin_pos: float = 2,
        drop_first_last: bool = True,
        include: Include | None = None,
    ) -> None:
        owner = "AlphaDecayScheduler"
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise param_error(
                "optimizer", owner, "a torch.optim.Optimizer", describe(optimizer), cls=TypeError
            )
        if base_wd is None:
            base_wd = optimizer.defaults.get("weight_decay", 0.0)
        self.config = _Config.checked(
            owner,
            "base_wd",
            base_wd,
            s1=s1,
            s2=s2,
            update_every=update_every,
            min_eigs=min_eigs,
            fit=fit,
            fn=fn,
            xmin_pos=xmin_pos,
            drop_first_last=drop_first_last,
            include=include,
        )
        modules = self.config.modules(model)
        if not any(g.get("module") in modules for g in optimizer.param_groups):
            _split_groups(optimizer, modules)
        if not any(g.get("module") in modules for g in optimizer.param_groups):
            raise param_error(
                "optimizer",
                owner,
                "an optimizer over the parameters of the model's tracked modules",
                Described("an optimizer holding none of them"),
            )
        self.model = model
        self.optimizer = optimizer
        self.step_count = 0
        self.last_alphas: dict[str, float] = {}
        self.last_decays: dict[str, float] = {}
        self.refresh_weight_decay()

    def refresh_weight_decay(self) -> dict[str, float]:
        """Measure the exponents now and write the decays into the groups; return the decays."""
        self.last_alphas, self.last_decays = self.config.assign(
            self.model, self.optimizer.param_groups
        )
        return self.last_decays

    def step(self) -> None:
        """Count one optimizer step; refresh the decays every ``update_every`` steps."""
        self.step_count += 1
        if self.step_count % self.config.update_every == 0:
            self.refresh_weight_decay()

    def state_dict(self) -> dict[str, Any]:
        return {
            "step_count": self.step_count,
            "last_alphas": dict(self.last_alphas),
            "last_decays": dict(self.last_decays),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.step_count = int(state["step_count"])
        self.last_alphas = dict(state["last_alphas"])
        self.last_decays = dict(state["last_decays"])


class _AlphaDecayMixin:
    """Shared by :class:`AlphaDecayAdamW` and :class:`AlphaDecayAdam`."""

    param_groups: list[dict[str, Any]]

    def _setup(self, model: nn.Module, config: _Config) -> None:
        self.model = model
        self.config = config
        self.update_every = config.update_every
        self.alpha_step = 0
        self.last_alphas: dict[str, float] = {}
        self.last_decays: dict[str, float] = {}
        self.refresh_weight_decay()

    def refresh_weight_decay(self) -> dict[str, float]:
        """Measure the exponents now and write the decays into the groups; return the decays."""
        self.last_alphas, self.last_decays = self.config.assign(self.model, self.param_groups)
        return self.last_decays

    def step(self, closure: Callable[[], float] | None = None) -> Any:
        """Refresh the decays at steps 0, ``update_every``, ``2 * update_every``, ... (counted
        from construction), then take the optimizer's usual step."""
        if self.alpha_step % self.update_every == 0:
            self.refresh_weight_decay()
        loss = super().step(closure)  # type: ignore[misc]
        self.alpha_step += 1
        return loss

    def state_dict(self) -> dict[str, Any]:
        state = super().state_dict()  # type: ignore[misc]
        state["alphadecay"] = {
            "alpha_step": self.alpha_step,
            "last_alphas": dict(self.last_alphas),
            "last_decays": dict(self.last_decays),
        }
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        state_dict = dict(state_dict)
        extra = state_dict.pop("alphadecay", None)
        super().load_state_dict(state_dict)  # type: ignore[misc]
        if extra is not None:
            self.alpha_step = int(extra["alpha_step"])
            self.last_alphas = dict(extra["last_alphas"])
            self.last_decays = dict(extra["last_decays"])


def _init(
    self: Any,
    parent: type[torch.optim.Optimizer],
    model: nn.Module,
    lr: float,
    betas: tuple[float, float],
    eps: float,
    weight_decay: float,
    extra: dict[str, Any],
) -> None:
    owner = type(self).__name__
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", describe(model), cls=TypeError)
    lr, betas, eps = adam_hyperparameters(owner, lr, betas, eps)
    config = _Config.checked(owner, "weight_decay", weight_decay, **extra)
    groups = _groups(model, config.modules(model), config.base_wd)
    parent.__init__(self, groups, lr=lr, betas=betas, eps=eps, weight_decay=config.base_wd)
    self._setup(model, config)


class AlphaDecayAdamW(_AlphaDecayMixin, torch.optim.AdamW):
    r"""AdamW (decoupled decay :math:`w \leftarrow w - \eta \lambda_l w`) with AlphaDecay's
    per-module :math:`\lambda_l`.

    ``weight_decay`` is the base decay :math:`\lambda`; ``s1``/``s2`` scale the decay of the
    heaviest/lightest-tailed module; ``update_every`` is the re-assignment interval in optimizer
    steps; ``min_eigs`` the smallest ``min(m, n)`` of a tracked Linear; ``fit`` the power-law fit
    (``"median"`` Hill or ``"ks"``). Keyword-only: ``fn`` (``"linear"``, ``"sqrt"``, ``"log2"``),
    ``xmin_pos``, ``drop_first_last``, ``include``. Attributes: ``last_alphas``,
    ``last_decays``, ``alpha_step`` (saved in ``state_dict()``).

    Checked at construction, before torch's own checks: ``lr`` >= 0, ``betas`` a pair in
    [0, 1), ``eps`` >= 0, ``weight_decay`` >= 0, ``s1`` >= 0, ``s2`` >= ``s1`` (all finite
    reals), ``update_every`` and ``min_eigs`` positive integers, ``xmin_pos`` > 1. Tracked
    weights holding NaN or inf are refused at construction and at every refresh (``ValueError``
    naming ``model``); NaN gradients propagate into the weights, as in ``torch.optim.AdamW``.
    """

    def __init__(
        self,
        model: nn.Module,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.1,
        s1: float = 2 / 3,
        s2: float = 3.0,
        update_every: int = 500,
        min_eigs: int = 50,
        fit: Literal["median", "ks"] = "median",
        *,
        fn: Literal["linear", "sqrt", "log2"] = "linear",
        xmin_pos: float = 2,
        drop_first_last: bool = True,
        include: Include | None = None,
    ) -> None:
        extra = dict(
            s1=s1,
            s2=s2,
            update_every=update_every,
            min_eigs=min_eigs,
            fit=fit,
            fn=fn,
            xmin_pos=xmin_pos,
            drop_first_last=drop_first_last,
            include=include,
        )
        _init(self, torch.optim.AdamW, model, lr, betas, eps, weight_decay, extra)


class AlphaDecayAdam(_AlphaDecayMixin, torch.optim.Adam):
    r"""Adam with coupled L2 decay (:math:`g \leftarrow g + \lambda_l w`) and AlphaDecay's
    per-module :math:`\lambda_l`; the arguments, their checks and the NaN policy are those of
    :class:`AlphaDecayAdamW` (the paper's Adam runs use ``weight_decay`` around 1e-5)."""

    def __init__(
        self,
        model: nn.Module,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.1,
        s1: float = 2 / 3,
        s2: float = 3.0,
        update_every: int = 500,
        min_eigs: int = 50,
        fit: Literal["median", "ks"] = "median",
        *,
        fn: Literal["linear", "sqrt", "log2"] = "linear",
        xmin_pos: float = 2,
        drop_first_last: bool = True,
        include: Include | None = None,
    ) -> None:
        extra = dict(
            s1=s1,
            s2=s2,
            update_every=update_every,
            min_eigs=min_eigs,
            fit=fit,
            fn=fn,
            xmin_pos=xmin_pos,
            drop_first_last=drop_first_last,
            include=include,
        )
        _init(self, torch.optim.Adam, model, lr, betas, eps, weight_decay, extra)
