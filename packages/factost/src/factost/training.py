"""Training and evaluation: Stage-1 pre-training, Stage-2 few-shot adaptation, metrics.

* :func:`pretrain_backbone` pools univariate windows of every pre-training series (nodes are just
  samples), subsampled with a stride and a cap, and minimises the Stage-1 loss
  ``MSE_forecast + gamma sum_b MSE_band + w_key L_key`` (``TemporalBackbone.pretrain_loss``) with
  Adam; it then stores a bank of pooled latents for alignment and fills the replay buffer.
* :func:`adapt` trains a :class:`factost.FactoST` on the last ``shots`` fraction of a domain's
  training span: MAE (in units of the span's standard deviation) + ``w_align`` CORAL(adapted
  latents, bank) + a 20 % mix of replayed windows, Adam, early stopping on the validation MAE.
* :func:`evaluate`: MAE, RMSE, MAPE (over targets with ``|y| > 0.1 mean|y|``, so solar nights do
  not divide by zero) and inference CPU milliseconds per batch, for FactoST or any baseline.
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from factost.align import coral_loss
from factost.backbone import TemporalBackbone
from factost.data import STDomain
from factost.model import FactoST
from factost.replay import ReplayBuffer
from paperkit import check_choice, check_int, check_real, param_error

__all__ = ["adapt", "evaluate", "fit_forecaster", "pretrain_backbone", "series_windows"]

#: Pooled latents kept for alignment, and the replay fraction of an adaptation batch.
BANK_SIZE, REPLAY_FRACTION = 1024, 0.2


def series_windows(
    series: Sequence[tuple[Any, int]],
    input_len: int,
    horizon: int,
    stride: int = 4,
    owner: str = "series_windows",
) -> tuple[Tensor, Tensor, Tensor]:
    """Windows ``x (n, L)``, targets ``y (n, H)`` and domain ids ``(n,)`` of ``(series, id)``
    pairs (1-D float arrays; series shorter than ``L + H`` give none). Integer series are
    refused (TypeError), as are NaN/inf."""
    if not isinstance(series, (list, tuple)) or not series:
        raise param_error(
            "series", owner, "a non-empty list of (array, domain id)", series, cls=TypeError
        )
    xs, ys, ds = [], [], []
    for item in series:
        if not isinstance(item, tuple) or len(item) != 2:
            raise param_error("series", owner, "(array, domain id) pairs", item, cls=TypeError)
        s, dom = item
        s = np.asarray(s)
        if s.dtype.kind != "f":
            raise param_error("series", owner, "floating-point series", s.dtype, cls=TypeError)
        if s.ndim != 1 or not np.isfinite(s).all():
            raise param_error("series", owner, "1-D finite series", s.shape)
        check_int("series", owner, dom, low=0)
        if s.size < input_len + horizon:
            continue
        w = torch.from_numpy(s.astype(np.float32)).unfold(0, input_len + horizon, stride)
        xs.append(w[:, :input_len])
        ys.append(w[:, input_len:])
        ds.append(torch.full((w.shape[0],), int(dom), dtype=torch.long))
    if not xs:
        raise param_error(
            "series", owner, f"at least one series of >= {input_len + horizon} steps", len(series)
        )
    return torch.cat(xs), torch.cat(ys), torch.cat(ds)


def pretrain_backbone(
    backbone: TemporalBackbone,
    series: Sequence[tuple[Any, int]],
    epochs: int = 5,
    *,
    batch_size: int = 256,
    lr: float = 1e-3,
    stride: int = 4,
    max_windows: int = 30_000,
    mask_ratio: float = 0.4,
    gamma: float = 0.5,
    key_weight: float = 0.1,
    replay: ReplayBuffer | None = None,
    seed: int = 0,
    progress_fn: Callable[[int], None] | None = None,
) -> TemporalBackbone:
    """Stage-1 pre-training on pooled univariate windows of ``(series, domain id)`` pairs.

    Args:
        backbone: the model to train (in place); domain ids must be below its ``n_domains``.
        series: ``(1-D float array, domain id)`` pairs; NaN refused, integer series TypeError.
        epochs: passes over the (subsampled) windows.
        batch_size, lr: Adam's batch and step size.
        stride, max_windows: window stride and the cap on windows (a uniform subsample).
        mask_ratio, gamma, key_weight: masking of the reconstruction pass and loss weights.
        replay: buffer offered up to ``2 * capacity`` of the windows (memory replay).
        seed: seed of the subsample, the masks and the batches.
        progress_fn: called with each finished epoch's index.

    Returns the backbone in eval mode, with ``latent_bank`` holding pooled latents of up to 1024
    windows.
    """
    owner = "pretrain_backbone"
    if not isinstance(backbone, TemporalBackbone):
        raise param_error("backbone", owner, "a TemporalBackbone", backbone, cls=TypeError)
    epochs = check_int("epochs", owner, epochs, low=0, high=10_000)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=1_000_000)
    check_real("lr", owner, lr, low=0, low_open=True)
    stride = check_int("stride", owner, stride, low=1)
    max_windows = check_int("max_windows", owner, max_windows, low=1, high=10_000_000)
    check_real("mask_ratio", owner, mask_ratio, low=0, high=1, high_open=True)
    check_real("gamma", owner, gamma, low=0)
    check_real("key_weight", owner, key_weight, low=0)
    seed = check_int("seed", owner, seed, low=0)
    x, y, dom = series_windows(series, backbone.input_len, backbone.horizon, stride, owner)
    if backbone.pool is not None and int(dom.max()) >= backbone.pool.n_domains:
        raise param_error(
            "series", owner, f"domain ids below n_domains={backbone.pool.n_domains}", int(dom.max())
        )
    gen = torch.Generator().manual_seed(seed)
    if x.shape[0] > max_windows:
        keep = torch.randperm(x.shape[0], generator=gen)[:max_windows]
        x, y, dom = x[keep], y[keep], dom[keep]
    torch.manual_seed(seed)
    opt = torch.optim.Adam(backbone.parameters(), lr=lr)
    backbone.train()
    for epoch in range(epochs):
        order = torch.randperm(x.shape[0], generator=gen)
        for i in range(0, x.shape[0], batch_size):
            b = order[i : i + batch_size]
            loss = backbone.pretrain_loss(x[b], y[b], dom[b], mask_ratio, gamma, key_weight)
            opt.zero_grad()
            loss.backward()
            opt.step()
        if progress_fn is not None:
            progress_fn(epoch)
    backbone.eval()
    sample = torch.randperm(x.shape[0], generator=gen)
    with torch.no_grad():
        backbone.latent_bank = backbone.encode(x[sample[:BANK_SIZE]])["z"].mean(1)
    if replay is not None:
        b = sample[: 2 * replay.capacity]
        replay.add(x[b], y[b])
    return backbone


def _mae_scale(domain: STDomain, shots: float) -> float:
    start, end = domain.span("train", shots)
    return float(np.std(domain.values[start:end])) + 1e-6


def _tensors(domain: STDomain) -> tuple[Tensor, Tensor]:
    return torch.from_numpy(domain.coords), domain.edge_index


def fit_forecaster(
    model: nn.Module,
    domain: STDomain,
    shots: float = 0.1,
    epochs: int = 50,
    *,
    lr: float = 1e-3,
    batch_size: int = 8,
    patience: int = 5,
    extra_loss: Callable[[Tensor], Tensor] | None = None,
    seed: int = 0,
) -> nn.Module:
    """Few-shot training of any forecaster ``model(x, coords, time_feat, edge_index)`` with
    attributes ``input_len`` and ``horizon``: MAE on the shot windows (+ ``extra_loss(latents)``
    for models whose forward returns latents through ``predict``), Adam on the trainable
    parameters, early stopping on the validation MAE (the best state is restored). NaN in the
    domain's values would propagate into the loss (generated domains are finite)."""
    owner = "fit_forecaster"
    epochs = check_int("epochs", owner, epochs, low=0, high=10_000)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=100_000)
    patience = check_int("patience", owner, patience, low=1)
    check_real("lr", owner, lr, low=0, low_open=True)
    params = [p for p in model.parameters() if p.requires_grad]
    if not params or epochs == 0:
        return model
    L, H = model.input_len, model.horizon
    x, y, tf = domain.windows(L, H, "shots", shots)
    coords, edges = _tensors(domain)
    scale = _mae_scale(domain, shots)
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    opt = torch.optim.Adam(params, lr=lr)
    best, best_state, bad = math.inf, copy.deepcopy(model.state_dict()), 0
    for _ in range(epochs):
        model.train()
        order = torch.randperm(x.shape[0], generator=gen)
        for i in range(0, x.shape[0], batch_size):
            b = order[i : i + batch_size]
            if extra_loss is not None:
                pred, latents = model.predict(x[b], coords, tf[b], edges)
                loss = (pred - y[b]).abs().mean() / scale + extra_loss(latents)
            else:
                loss = (model(x[b], coords, tf[b], edges) - y[b]).abs().mean() / scale
            opt.zero_grad()
            loss.backward()
            opt.step()
        val = evaluate(model, domain, "val", shots=shots)["mae"]
        if val < best * (1 - 1e-6):
            best, best_state, bad = val, copy.deepcopy(model.state_dict()), 0
        else:
            bad += 1
            if bad >= patience:
                break
    model.load_state_dict(best_state)
    model.eval()
    return model


def adapt(
    model: FactoST,
    domain: STDomain,
    shots: float = 0.1,
    epochs: int = 50,
    replay: ReplayBuffer | None = None,
    *,
    lr: float = 1e-3,
    batch_size: int = 8,
    patience: int = 5,
    align_weight: float = 0.1,
    seed: int = 0,
) -> FactoST:
    r"""Stage-2 few-shot adaptation of a :class:`FactoST` to ``domain``.

    .. math:: \mathcal L = \mathrm{MAE}(\hat Y, Y)/s + w_{align}\,\mathrm{CORAL}(\bar z, \mathcal B)
              + \mathcal L_{replay}

    with ``s`` the standard deviation of the training span, ``\bar z`` the adapter's pooled
    latents, ``\mathcal B`` the backbone's ``latent_bank`` (when ``adapter.use_align``), and
    ``\mathcal L_{replay}`` the RevIN-unit MAE of replayed single series (20 % of each batch's
    series) through the model without node meta. Afterwards the domain's shot windows (per node)
    are offered to ``replay``.

    Args:
        model: the FactoST to train in place.
        domain: the target domain (:class:`factost.STDomain`).
        shots: fraction of the training span used, in ``(0, 1]``.
        epochs: at most this many epochs (early stopping with ``patience``).
        replay: a :class:`factost.ReplayBuffer`, or None (no replay).
        lr, batch_size, patience, align_weight, seed: optimiser and loss settings.

    Returns ``model`` (eval mode, best validation state). The domain's values are finite by
    construction (:func:`factost.make_st_domain`); NaN in a hand-made domain would propagate.
    """
    owner = "adapt"
    if not isinstance(model, FactoST):
        raise param_error("model", owner, "a FactoST", model, cls=TypeError)
    if not isinstance(domain, STDomain):
        raise param_error("domain", owner, "an STDomain", domain, cls=TypeError)
    shots = check_real("shots", owner, shots, low=0, high=1, low_open=True)
    if replay is not None and not isinstance(replay, ReplayBuffer):
        raise param_error("replay", owner, "a ReplayBuffer or None", replay, cls=TypeError)
    check_real("align_weight", owner, align_weight, low=0)
    bank = model.backbone.latent_bank
    use_align = model.adapter.use_align and bank is not None and align_weight > 0
    use_replay = replay is not None and len(replay) > 0
    n_series = batch_size * domain.n_nodes
    n_replay = max(1, round(REPLAY_FRACTION * n_series / (1 - REPLAY_FRACTION)))

    def extra(latents: Tensor) -> Tensor:
        loss = latents.new_zeros(())
        if use_align:
            loss = loss + align_weight * coral_loss(latents, bank)
        if use_replay:
            xr, yr = replay.sample(n_replay)
            pred, _ = model.predict(xr[:, None], nodes=False)
            std = xr.std(-1, keepdim=True) + 1e-5
            loss = loss + REPLAY_FRACTION * ((pred[:, 0] - yr) / std).abs().mean()
        return loss

    fit_forecaster(
        model,
        domain,
        shots,
        epochs,
        lr=lr,
        batch_size=batch_size,
        patience=patience,
        extra_loss=extra,
        seed=seed,
    )
    if replay is not None:
        x, y, _ = domain.windows(model.input_len, model.horizon, "shots", shots)
        replay.add(x.reshape(-1, x.shape[-1]), y.reshape(-1, y.shape[-1]))
    return model


def evaluate(
    model: nn.Module,
    domain: STDomain,
    split: str = "test",
    *,
    batch_size: int = 32,
    shots: float = 0.1,
) -> dict[str, float]:
    """MAE, RMSE, MAPE (%) and inference ms per batch of ``batch_size`` windows on ``split``
    (CPU time of this process, ``time.process_time``: steady on a shared machine, and equal to
    the compute time with one torch thread).

    ``model(x (B, N, L), coords, time_feat, edge_index) -> (B, N, H)`` with attributes
    ``input_len`` and ``horizon`` (every model and baseline of the package). The domain's values
    are finite by construction.
    """
    owner = "evaluate"
    if not isinstance(domain, STDomain):
        raise param_error("domain", owner, "an STDomain", domain, cls=TypeError)
    check_choice("split", owner, split, ("shots", "train", "val", "test"))
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=100_000)
    if not hasattr(model, "input_len") or not callable(model):
        raise param_error(
            "model", owner, "a forecaster with input_len and horizon", model, cls=TypeError
        )
    x, y, tf = domain.windows(model.input_len, model.horizon, split, shots)
    coords, edges = _tensors(domain)
    was_training = getattr(model, "training", False)
    if isinstance(model, nn.Module):
        model.eval()
    preds, seconds = [], 0.0
    with torch.no_grad():
        for i in range(0, x.shape[0], batch_size):
            t0 = time.process_time()
            preds.append(model(x[i : i + batch_size], coords, tf[i : i + batch_size], edges))
            seconds += time.process_time() - t0
    if isinstance(model, nn.Module):
        model.train(was_training)
    err = torch.cat(preds).double() - y.double()
    big = y.abs() > 0.1 * y.abs().mean()
    return {
        "mae": float(err.abs().mean()),
        "rmse": float(err.pow(2).mean().sqrt()),
        "mape": float(100 * (err.abs()[big] / y.abs()[big]).mean()),
        "infer_ms": 1000 * seconds / math.ceil(x.shape[0] / batch_size),
    }
