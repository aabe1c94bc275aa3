r"""Training AD-TP in three stages.

(i) :func:`train_teacher`: the full model with cross-entropy. (ii) The importance predictors on the
frozen backbone with :math:`L_{\mathrm{attr}}` against the teacher's Integrated-Gradients targets
(:func:`ig_targets`, computed once and cached in the loader). (iii) Everything jointly with

.. math::  L = \mathrm{CE} + \alpha\tau^2\mathrm{KL}(T\|S) + \beta L_{\mathrm{attr}}
           + \gamma L_{\mathrm{ssl}} + \eta(\hat F/F_{\mathrm{full}} - \phi)^2

in ``"soft"`` mode, the mask temperature :math:`T_m` annealed geometrically from 1.0 to 0.05.
Stages (ii) and (iii) are :func:`train_adtp`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Sampler, TensorDataset

from adtp.attribution import integrated_gradients, normalise_importance
from adtp.losses import attribution_loss, consistency_loss, distillation_loss, flops_loss
from adtp.model import PrunableEncoder
from paperkit import check_bool, check_choice, check_int, check_real, check_tensor, param_error

__all__ = ["ADTPConfig", "content_mask", "ig_targets", "make_loader", "train_adtp", "train_teacher"]


@dataclass(frozen=True)
class ADTPConfig:
    """Hyper-parameters of stages (ii) and (iii); the defaults are the method's
    (:math:`\\alpha=1, \\tau=2, \\beta=0.5, \\gamma=0.1, \\eta=2, \\tau_a=0.1`, :math:`T_m`
    1.0 to 0.05, 1 predictor epoch, 3 joint epochs). ``phi`` is the target FLOPs ratio."""

    phi: float = 0.3
    alpha: float = 1.0
    tau: float = 2.0
    beta: float = 0.5
    gamma: float = 0.1
    eta: float = 2.0
    tau_a: float = 0.1
    t_start: float = 1.0
    t_end: float = 0.05
    predictor_epochs: int = 1
    joint_epochs: int = 3
    lr: float = 1e-3
    predictor_lr: float = 3e-3
    seed: int = 0

    def __post_init__(self) -> None:
        owner = "ADTPConfig"
        check_real("phi", owner, self.phi, low=0, high=1, low_open=True)
        for name in ("alpha", "beta", "gamma", "eta"):
            check_real(name, owner, getattr(self, name), low=0)
        for name in ("tau", "tau_a", "t_start", "t_end", "lr", "predictor_lr"):
            check_real(name, owner, getattr(self, name), low=0, low_open=True)
        check_int("predictor_epochs", owner, self.predictor_epochs, low=0, high=10**4)
        check_int("joint_epochs", owner, self.joint_epochs, low=0, high=10**4)
        check_int("seed", owner, self.seed, low=0)

    def to_dict(self) -> dict:
        return asdict(self)


def content_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """Valid tokens other than [CLS] (first) and [SEP] (last valid): the prunable ones.

    >>> content_mask(torch.tensor([[True, True, True, False]])).tolist()
    [[False, True, False, False]]
    """
    lengths = attention_mask.sum(1, keepdim=True)
    positions = torch.arange(attention_mask.shape[1], device=attention_mask.device)[None]
    return attention_mask & (positions > 0) & (positions < lengths - 1)


def _check_data(owner: str, input_ids, attention_mask, labels) -> None:
    dims: dict = {}
    check_tensor("input_ids", owner, input_ids, shape=("B", "N"), dims=dims, dtype="int")
    check_tensor("attention_mask", owner, attention_mask, shape=("B", "N"), dims=dims, dtype="bool")
    check_tensor("labels", owner, labels, shape=("B",), dims=dims, dtype="int")
    if bool((labels < 0).any()) or bool((input_ids < 0).any()):
        raise param_error(
            "labels" if bool((labels < 0).any()) else "input_ids",
            owner,
            "non-negative",
            "a negative entry",
        )


def _trim(*tensors: torch.Tensor, mask: torch.Tensor) -> list[torch.Tensor]:
    """Drop the padding columns (last axis) no row of the batch uses (every mode is exact
    under it); (B,) tensors pass through."""
    width = int(mask.sum(1).max())
    return [t[..., :width] if t.ndim >= 2 else t for t in tensors]


class _LengthBuckets(Sampler):
    """Batches of similar lengths (less padding): each epoch shuffles, sorts chunks of 16
    batches by length, cuts them into batches and shuffles the batch order (seeded)."""

    def __init__(self, lengths: torch.Tensor, batch_size: int, seed: int) -> None:
        self.lengths, self.batch_size = lengths, batch_size
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        return -(-len(self.lengths) // self.batch_size)

    def __iter__(self):
        order = torch.randperm(len(self.lengths), generator=self.generator)
        chunk = 16 * self.batch_size
        batches = []
        for s in range(0, len(order), chunk):
            part = order[s : s + chunk]
            part = part[self.lengths[part].argsort(stable=True)]
            batches += [
                part[i : i + self.batch_size].tolist() for i in range(0, len(part), self.batch_size)
            ]
        for b in torch.randperm(len(batches), generator=self.generator).tolist():
            yield batches[b]


def make_loader(
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    labels: torch.Tensor,
    targets: torch.Tensor | None = None,
    *,
    batch_size: int = 64,
    seed: int = 0,
) -> DataLoader:
    """A shuffled loader (seeded) of ``(input_ids, attention_mask, labels, targets)`` batches of
    similar lengths;
    ``targets`` (B, N) or (B, K, N) are the IG targets (zeros where none were computed).
    NaN policy: NaN targets are refused."""
    owner = "make_loader"
    _check_data(owner, input_ids, attention_mask, labels)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
    seed = check_int("seed", owner, seed, low=0)
    if targets is None:
        targets = torch.zeros(attention_mask.shape)
    check_tensor("targets", owner, targets, ndim=(2, 3))
    if targets.shape[0] != input_ids.shape[0] or targets.shape[-1] != input_ids.shape[1]:
        raise param_error(
            "targets", owner, "of shape (B, N) or (B, K, N)", f"shape {tuple(targets.shape)}"
        )
    data = TensorDataset(input_ids, attention_mask, labels, targets)
    return DataLoader(data, batch_sampler=_LengthBuckets(attention_mask.sum(1), batch_size, seed))


def train_teacher(
    model: PrunableEncoder,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    labels: torch.Tensor,
    *,
    epochs: int = 5,
    lr: float = 1e-3,
    batch_size: int = 64,
    seed: int = 0,
) -> list[float]:
    """Stage (i): train ``model`` in ``"full"`` mode with cross-entropy (AdamW, cosine decay).
    Returns the mean loss per epoch. NaN policy: no float inputs."""
    owner = "train_teacher"
    if not isinstance(model, PrunableEncoder):
        raise param_error("model", owner, "a PrunableEncoder", type(model).__name__, cls=TypeError)
    _check_data(owner, input_ids, attention_mask, labels)
    epochs = check_int("epochs", owner, epochs, low=1, high=10**4)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    loader = make_loader(input_ids, attention_mask, labels, batch_size=batch_size, seed=seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, lr, total_steps=epochs * len(loader), pct_start=0.1
    )
    history = []
    model.train()
    for _ in range(epochs):
        total = 0.0
        for ids, mask, y, _ in loader:
            ids, mask = _trim(ids, mask, mask=mask)
            loss = F.cross_entropy(model.forward_embeddings(model.embed(ids), mask)["logits"], y)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            schedule.step()
            total += loss.item() * len(y)
        history.append(total / len(labels))
    model.eval()
    return history


def ig_targets(
    teacher: PrunableEncoder,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    labels: torch.Tensor,
    *,
    steps: int = 32,
    method: str = "riemann_right",
    ig_layer: str = "embedding",
    absolute: bool = False,
    batch_size: int = 64,
    internal_batch: int = 16,
) -> torch.Tensor:
    r"""The teacher's token-importance targets :math:`g_i = \max(\mathrm{IG}_i, 0)/\sum_j
    \max(\mathrm{IG}_j, 0)` over the content tokens, IG of the gold logit with the [PAD]
    baseline ([CLS], [SEP] kept). ``ig_layer="embedding"``: IG at the token embeddings, (B, N);
    ``"hidden"``: IG at the state entering each pruning layer (baseline: the state the all-[PAD]
    input reaches there), one target per layer, (B, K, N). ``absolute``: :math:`|\mathrm{IG}|`.
    NaN policy: no float inputs."""
    owner = "ig_targets"
    if not isinstance(teacher, PrunableEncoder):
        raise param_error(
            "teacher", owner, "a PrunableEncoder", type(teacher).__name__, cls=TypeError
        )
    _check_data(owner, input_ids, attention_mask, labels)
    check_choice("ig_layer", owner, ig_layer, ("embedding", "hidden"))
    absolute = check_bool("absolute", owner, absolute)
    steps = check_int("steps", owner, steps, low=1, high=10**4)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
    (out,) = _ig_targets_many(
        teacher,
        input_ids,
        attention_mask,
        labels,
        steps=steps,
        method=method,
        ig_layer=ig_layer,
        absolutes=(absolute,),
        batch_size=batch_size,
        internal_batch=internal_batch,
    )
    return out


def _ig_targets_many(
    teacher: PrunableEncoder,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    labels: torch.Tensor,
    *,
    steps: int,
    method: str,
    ig_layer: str,
    absolutes: tuple[bool, ...] = (False, True),
    batch_size: int = 64,
    internal_batch: int = 16,
) -> list[torch.Tensor]:
    """The targets of :func:`ig_targets` (arguments checked there) for each flag in
    ``absolutes`` from one IG pass: ``max(IG, 0)`` and ``|IG|`` normalised, for the ablations."""
    B, N = input_ids.shape
    K = len(teacher.prune_layers)
    outs = [torch.zeros((B, N) if ig_layer == "embedding" else (B, K, N)) for _ in absolutes]
    teacher.eval()
    flags = [p.requires_grad for p in teacher.parameters()]
    _requires_grad(teacher, False)  # IG needs the input gradient only
    try:
        for sl, ids, mask, layer, ig in _ig_batches(
            teacher,
            input_ids,
            attention_mask,
            labels,
            steps,
            method,
            ig_layer,
            batch_size,
            internal_batch,
        ):
            for out, absolute in zip(outs, absolutes, strict=True):
                target = normalise_importance(ig, content_mask(mask), absolute=absolute)
                if layer is None:
                    out[sl, : ids.shape[1]] = target
                else:
                    out[sl, layer, : ids.shape[1]] = target
    finally:
        for p, flag in zip(teacher.parameters(), flags, strict=True):
            p.requires_grad_(flag)
    return outs


def _ig_batches(
    teacher, input_ids, attention_mask, labels, steps, method, ig_layer, batch_size, internal_batch
):
    """Yield ``(rows, ids, mask, layer or None, raw IG (b, n))`` over length-sorted batches."""
    order = attention_mask.sum(1).argsort()  # similar lengths together: less padding
    for start in range(0, len(order), batch_size):
        sl = order[start : start + batch_size]
        mask = attention_mask[sl]
        (ids,) = _trim(input_ids[sl], mask=mask)
        mask = mask[:, : ids.shape[1]]
        content = content_mask(mask)
        keep = mask & ~content
        with torch.no_grad():
            embeds = teacher.embed(ids)
        pad = teacher.pad_embedding.detach()
        if ig_layer == "embedding":
            ig = integrated_gradients(
                lambda e, m: teacher.forward_embeddings(e, m)["logits"],
                embeds,
                labels[sl],
                baseline="pad",
                attention_mask=mask,
                steps=steps,
                method=method,
                internal_batch=internal_batch,
                pad_embedding=pad,
                keep_mask=keep,
            )
            yield sl, ids, mask, None, ig
            continue
        base = torch.where(content[..., None], pad.expand_as(embeds), embeds)
        with torch.no_grad():
            states, base_states = teacher._states(embeds, mask), teacher._states(base, mask)
        for k, p in enumerate(teacher.prune_layers):
            ig = integrated_gradients(
                lambda h, m, p=p: teacher.run_from(h, m, p),
                states[p],
                labels[sl],
                baseline=base_states[p],
                attention_mask=mask,
                steps=steps,
                method=method,
                internal_batch=internal_batch,
            )
            yield sl, ids, mask, k, ig


def _requires_grad(module: torch.nn.Module, flag: bool) -> None:
    for p in module.parameters():
        p.requires_grad_(flag)


def train_adtp(
    student: PrunableEncoder,
    teacher: PrunableEncoder,
    loader: Iterable,
    cfg: ADTPConfig | None = None,
) -> dict[str, list[float]]:
    r"""Stages (ii) and (iii) of AD-TP on ``student`` (usually a copy of ``teacher``).

    ``loader`` yields ``(input_ids, attention_mask, labels, ig_target)`` batches (see
    :func:`make_loader`; rows with an all-zero target skip :math:`L_{\mathrm{attr}}`), and can be
    iterated once per epoch. Stage (ii) trains the predictors alone on the frozen backbone for
    ``cfg.predictor_epochs``; stage (iii) trains everything in soft mode for
    ``cfg.joint_epochs``. Returns per-epoch means of each loss term and of the soft FLOPs ratio.
    NaN policy: a non-finite loss stops training with a ValueError.
    """
    owner = "train_adtp"
    for name, value in (("student", student), ("teacher", teacher)):
        if not isinstance(value, PrunableEncoder):
            raise param_error(name, owner, "a PrunableEncoder", type(value).__name__, cls=TypeError)
    cfg = ADTPConfig() if cfg is None else cfg
    if not isinstance(cfg, ADTPConfig):
        raise param_error("cfg", owner, "an ADTPConfig", type(cfg).__name__, cls=TypeError)
    if student.prune_layers != teacher.prune_layers:
        raise param_error("student", owner, "the teacher's prune_layers", student.prune_layers)
    torch.manual_seed(cfg.seed)
    teacher.eval()
    _requires_grad(teacher, False)
    history: dict[str, list[float]] = {"attr_stage2": []}
    optimiser = torch.optim.AdamW(student.predictors.parameters(), lr=cfg.predictor_lr)
    for _ in range(cfg.predictor_epochs):
        losses = []
        for ids, mask, _, target in loader:
            ids, mask, target = _trim(ids, mask, target, mask=mask)
            with torch.no_grad():
                states = student._states(student.embed(ids), mask)
            scores = [
                student.predictors[k].score(states[p]) for k, p in enumerate(student.prune_layers)
            ]
            loss = attribution_loss(scores, target, content_mask(mask), cfg.tau_a)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
        history["attr_stage2"].append(sum(losses) / max(len(losses), 1))
    steps_total = max(cfg.joint_epochs * len(loader), 1)
    optimiser = torch.optim.AdamW(student.parameters(), lr=cfg.lr, weight_decay=0.01)
    names = ("loss", "ce", "kd", "attr", "ssl", "flops", "flops_ratio")
    history.update({name: [] for name in names})
    step = 0
    student.train()
    for _ in range(cfg.joint_epochs):
        sums = dict.fromkeys(names, 0.0)
        batches = 0
        for ids, mask, y, target in loader:
            ids, mask, target = _trim(ids, mask, target, mask=mask)
            temperature = cfg.t_start * (cfg.t_end / cfg.t_start) ** (
                step / max(steps_total - 1, 1)
            )
            embeds = student.embed(ids)
            out = student.forward_embeddings(embeds, mask, "soft", temperature=temperature)
            with torch.no_grad():
                t_logits = teacher.forward_embeddings(teacher.embed(ids), mask)["logits"]
                full = student.forward_embeddings(embeds.detach(), mask)
            ratio = (
                out["expected_flops"].sum() / full["flops"].to(out["expected_flops"].dtype).sum()
            )
            terms = {
                "ce": F.cross_entropy(out["logits"], y),
                "kd": distillation_loss(out["logits"], t_logits, cfg.tau),
                "attr": attribution_loss(out["scores"], target, content_mask(mask), cfg.tau_a),
                "ssl": consistency_loss(out["cls_hidden"], full["cls_hidden"]),
                "flops": flops_loss(out["expected_flops"], full["flops"], cfg.phi),
            }
            loss = (
                terms["ce"]
                + cfg.alpha * terms["kd"]
                + cfg.beta * terms["attr"]
                + cfg.gamma * terms["ssl"]
                + cfg.eta * terms["flops"]
            )
            if not bool(torch.isfinite(loss)):
                raise param_error("loader", owner, "batches giving a finite loss", float(loss))
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            batches += 1
            for name, value in {**terms, "loss": loss, "flops_ratio": ratio}.items():
                sums[name] += value.item()
        for name in names:
            history[name].append(sums[name] / max(batches, 1))
    student.eval()
    _requires_grad(teacher, True)
    return history
