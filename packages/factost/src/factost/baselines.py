"""The baselines FactoST is compared with, all forecasters ``model(x (B, N, L), coords,
time_feat, edge_index) -> (B, N, H)`` with ``input_len`` and ``horizon`` attributes:

* :class:`HistoricalAverage`: per node and hour of day, the mean of the few-shot span;
* :class:`SeasonalNaive`: the value one period (24 h) earlier;
* :class:`BackboneOnly`: the pre-trained temporal backbone, zero-shot, node by node;
* :class:`BackboneFinetune`: a copy of the backbone fully fine-tuned, node by node (no adapter);
* :class:`STExpert`: a small Graph-WaveNet-style model (gated dilated TCN + diffusion over the
  prior and an adaptive adjacency) trained from scratch on the few-shot data;
* :class:`JointSTTransformer`: full attention over all ``N T_p`` space-time tokens, pre-trained
  jointly on the source ST domains (:func:`pretrain_joint`) -- the joint pre-training reference.
"""

from __future__ import annotations

import copy
import math
import time

import torch
from torch import Tensor, nn

from factost.backbone import TemporalBackbone
from factost.data import STDomain
from factost.graph import normalized_adjacency
from factost.spectral import RevIN
from paperkit import check_int, check_real, check_tensor, param_error

__all__ = [
    "BackboneFinetune",
    "BackboneOnly",
    "HistoricalAverage",
    "JointSTTransformer",
    "STExpert",
    "SeasonalNaive",
    "pretrain_joint",
]


def _check_x(
    owner: str, x: Tensor, input_len: int, n_nodes: int | None = None, like: nn.Module | None = None
) -> Tensor:
    """Refuse a bad ``x`` (B, N, L) (NaN included); cast it to ``like``'s parameter dtype."""
    check_tensor("x", owner, x, shape=(None, n_nodes, input_len))
    params = [] if like is None else list(like.parameters())
    return x.to(params[0].dtype) if params else x


class HistoricalAverage(nn.Module):
    """Per node and hour of day, the mean of the few-shot span (:meth:`fit`); the forecast of
    step ``h`` after a window ending at time of day ``tau`` is the mean of hour
    ``(24 tau + 1 + h) mod 24``.

    Args:
        input_len: window length the evaluation passes (unused by the forecast).
        horizon: forecast steps ``H``.

    NaN/inf in ``x`` are refused (every forecaster here checks ``x`` the same way).
    """

    def __init__(self, input_len: int, horizon: int) -> None:
        super().__init__()
        self.input_len = check_int("input_len", "HistoricalAverage", input_len, low=1)
        self.horizon = check_int("horizon", "HistoricalAverage", horizon, low=1)
        self.register_buffer("table", None)

    def fit(self, domain: STDomain, shots: float = 0.1) -> HistoricalAverage:
        """Hourly means ``(24, N)`` of ``domain``'s last ``shots`` of the training span."""
        if not isinstance(domain, STDomain):
            raise param_error(
                "domain", "HistoricalAverage.fit", "an STDomain", domain, cls=TypeError
            )
        start, end = domain.span("shots", shots)
        hours = torch.from_numpy(domain.time_feat[start:end, 0] * 24).round().long() % 24
        vals = torch.from_numpy(domain.values[start:end])
        overall = vals.mean(0)
        table = torch.stack(
            [vals[hours == h].mean(0) if bool((hours == h).any()) else overall for h in range(24)]
        )
        self.table = table
        return self

    def forward(
        self, x: Tensor, coords=None, time_feat: Tensor | None = None, edge_index=None
    ) -> Tensor:
        owner = "HistoricalAverage"
        if self.table is None:
            raise param_error("x", owner, "passed after fit", None)
        _check_x(owner, x, self.input_len, self.table.shape[1])
        check_tensor("time_feat", owner, time_feat, shape=(x.shape[0], 2))
        last = (time_feat[:, 0] * 24).round().long()
        hours = (last[:, None] + 1 + torch.arange(self.horizon)) % 24  # (B, H)
        return self.table[hours].permute(0, 2, 1).to(x.dtype)


class SeasonalNaive(nn.Module):
    """``y_{t+h} = x_{t+h-p}`` for a period ``p`` (input windows of ``p`` steps; ``h >= p``
    repeats the last period).

    Args:
        horizon: forecast steps ``H``.
        period: season length ``p`` (default 24 hours).

    NaN/inf in ``x`` are refused.
    """

    def __init__(self, horizon: int, period: int = 24) -> None:
        super().__init__()
        self.horizon = check_int("horizon", "SeasonalNaive", horizon, low=1)
        self.input_len = check_int("period", "SeasonalNaive", period, low=1)

    def forward(self, x: Tensor, coords=None, time_feat=None, edge_index=None) -> Tensor:
        _check_x("SeasonalNaive", x, self.input_len)
        idx = torch.arange(self.horizon) % self.input_len
        return x[..., idx]


class BackboneOnly(nn.Module):
    """The pre-trained backbone applied to each node's window independently (zero-shot; the
    prompt is chosen by key matching).

    Args:
        backbone: a pre-trained :class:`factost.TemporalBackbone` (shared, not copied).

    NaN/inf in ``x`` are refused.
    """

    def __init__(self, backbone: TemporalBackbone) -> None:
        super().__init__()
        if not isinstance(backbone, TemporalBackbone):
            raise param_error(
                "backbone", type(self).__name__, "a TemporalBackbone", backbone, cls=TypeError
            )
        self.backbone = backbone
        self.input_len, self.horizon = backbone.input_len, backbone.horizon
        for p in self.backbone.parameters():
            p.requires_grad_(False)

    def forward(self, x: Tensor, coords=None, time_feat=None, edge_index=None) -> Tensor:
        x = _check_x(type(self).__name__, x, self.input_len, like=self.backbone)
        B, N, L = x.shape
        return self.backbone(x.reshape(B * N, L))["forecast"].reshape(B, N, -1)


class BackboneFinetune(BackboneOnly):
    """A copy of the backbone with every parameter trainable, applied node by node (fine-tuned
    with :func:`factost.training.fit_forecaster`; no spatial adapter)."""

    def __init__(self, backbone: TemporalBackbone) -> None:
        if not isinstance(backbone, TemporalBackbone):
            raise param_error(
                "backbone", "BackboneFinetune", "a TemporalBackbone", backbone, cls=TypeError
            )
        super().__init__(copy.deepcopy(backbone))
        for p in self.backbone.parameters():
            p.requires_grad_(True)


class STExpert(nn.Module):
    r"""A small Graph-WaveNet-style expert, trained from scratch per domain.

    RevIN per node window; a 1x1 input convolution to ``C`` channels; per layer a gated dilated
    temporal convolution ``tanh(W_f * h) \odot \sigma(W_g * h)`` (kernel 2, dilation ``2^i``), a
    skip connection from its last step, and a graph convolution over the prior adjacency
    ``D^{-1}(A+I)`` and the adaptive one ``softmax(relu(E_1 E_2^T))``; the skips map to ``H``.

    Args:
        n_nodes: nodes ``N`` (fixed: the adaptive adjacency is per node).
        input_len, horizon: ``L`` and ``H``.
        channels: hidden channels ``C``.
        layers: gated TCN layers (their receptive field must fit in ``L``).

    NaN/inf in ``x`` are refused; ``edge_index`` is required.
    """

    def __init__(
        self, n_nodes: int, input_len: int, horizon: int, channels: int = 32, layers: int = 3
    ) -> None:
        super().__init__()
        owner = "STExpert"
        self.n_nodes = check_int("n_nodes", owner, n_nodes, low=1, high=100_000)
        self.input_len = check_int("input_len", owner, input_len, low=2, high=100_000)
        self.horizon = check_int("horizon", owner, horizon, low=1, high=100_000)
        C = check_int("channels", owner, channels, low=1, high=4096)
        check_int("layers", owner, layers, low=1, high=32)
        self.dilations = [2**i for i in range(layers)]
        if sum(self.dilations) >= input_len:
            raise param_error("layers", owner, f"few enough for input_len={input_len}", layers)
        self.revin = RevIN()
        self.inp = nn.Conv2d(1, C, 1)
        self.filt = nn.ModuleList(nn.Conv2d(C, C, (1, 2), dilation=(1, d)) for d in self.dilations)
        self.gate = nn.ModuleList(nn.Conv2d(C, C, (1, 2), dilation=(1, d)) for d in self.dilations)
        self.skip = nn.ModuleList(nn.Conv2d(C, C, 1) for _ in self.dilations)
        self.mix = nn.ModuleList(nn.Conv2d(3 * C, C, 1) for _ in self.dilations)
        self.e1 = nn.Parameter(torch.randn(n_nodes, 10) / math.sqrt(10))
        self.e2 = nn.Parameter(torch.randn(n_nodes, 10) / math.sqrt(10))
        self.out = nn.Sequential(nn.ReLU(), nn.Conv2d(C, C, 1), nn.ReLU(), nn.Conv2d(C, horizon, 1))

    def forward(
        self, x: Tensor, coords=None, time_feat=None, edge_index: Tensor | None = None
    ) -> Tensor:
        owner = "STExpert"
        x = _check_x(owner, x, self.input_len, self.n_nodes, like=self)
        if edge_index is None:
            raise param_error("edge_index", owner, "the prior graph (2, E)", None, cls=TypeError)
        prior = normalized_adjacency(edge_index, self.n_nodes).to(x.dtype)
        adaptive = torch.softmax(torch.relu(self.e1 @ self.e2.T), dim=1).to(x.dtype)
        xn, stats = self.revin.norm(x)
        h = self.inp(xn[:, None])  # (B, C, N, L)
        skip = 0
        for filt, gate, sk, mix in zip(self.filt, self.gate, self.skip, self.mix, strict=True):
            g = torch.tanh(filt(h)) * torch.sigmoid(gate(h))
            skip = skip + sk(g[..., -1:])
            diffused = [torch.einsum("bcnl,mn->bcml", g, a) for a in (prior, adaptive)]
            h = mix(torch.cat([g, *diffused], dim=1)) + h[..., -g.shape[-1] :]
        y = self.out(skip)[..., 0].transpose(1, 2)  # (B, N, H)
        return self.revin.denorm(y, stats)


class JointSTTransformer(nn.Module):
    r"""Joint space-time Transformer: one token per (node, patch) with full attention over all
    :math:`N T_p` tokens, i.e. cost :math:`O((N T_p)^2 d)` per layer.

    Tokens: linear patch embedding of the RevIN-normalised window + temporal positional
    embedding + a linear map of the node's random Fourier coordinate features. Head: per node,
    flatten its ``T_p`` tokens, linear to ``H``, de-normalise.

    Args:
        input_len, horizon, patch: ``L``, ``H``, ``P`` (``P`` divides ``L``).
        d_model, layers, heads: Transformer size.
        coord_dim: dimension of node coordinates.
        dropout: encoder dropout.

    NaN/inf in ``x`` and ``coords`` are refused.
    """

    def __init__(
        self,
        input_len: int,
        horizon: int,
        patch: int,
        d_model: int = 64,
        layers: int = 2,
        heads: int = 4,
        coord_dim: int = 2,
        dropout: float = 0.1,
    ) -> None:
        super().__init__()
        owner = "JointSTTransformer"
        self.input_len = check_int("input_len", owner, input_len, low=2, high=100_000)
        self.horizon = check_int("horizon", owner, horizon, low=1, high=100_000)
        self.patch = check_int("patch", owner, patch, low=1, high=input_len)
        if input_len % patch:
            raise param_error(
                "input_len", owner, f"divisible by the 'patch' parameter ({patch})", input_len
            )
        check_int("d_model", owner, d_model, low=1, high=8192)
        check_int("layers", owner, layers, low=1, high=64)
        check_int("heads", owner, heads, low=1, high=d_model)
        if d_model % heads:
            raise param_error("heads", owner, f"a divisor of d_model={d_model}", heads)
        self.coord_dim = check_int("coord_dim", owner, coord_dim, low=1, high=64)
        check_real("dropout", owner, dropout, low=0, high=1, high_open=True)
        self.n_tokens = input_len // patch
        self.revin = RevIN()
        self.embed = nn.Linear(patch, d_model)
        self.pos = nn.Parameter(0.02 * torch.randn(self.n_tokens, d_model))
        self.register_buffer(
            "rff", torch.randn(coord_dim, 4, generator=torch.Generator().manual_seed(0))
        )
        self.space = nn.Linear(8, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model, heads, 2 * d_model, dropout, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(self.n_tokens * d_model, horizon)

    def forward(
        self, x: Tensor, coords: Tensor | None = None, time_feat=None, edge_index=None
    ) -> Tensor:
        owner = "JointSTTransformer"
        x = _check_x(owner, x, self.input_len, like=self)
        B, N, _ = x.shape
        xn, stats = self.revin.norm(x)
        tok = self.embed(xn.unfold(-1, self.patch, self.patch)) + self.pos  # (B, N, T_p, d)
        if coords is not None:
            check_tensor("coords", owner, coords, shape=(N, self.coord_dim))
            proj = 2 * math.pi * coords.to(x.dtype) @ self.rff.to(x.dtype)
            tok = tok + self.space(torch.cat([proj.sin(), proj.cos()], -1))[None, :, None]
        h = self.norm(self.encoder(tok.reshape(B, N * self.n_tokens, -1)))
        y = self.head(h.reshape(B, N, -1))
        return self.revin.denorm(y, stats)


def pretrain_joint(
    model: JointSTTransformer,
    domains: list[STDomain],
    epochs: int = 5,
    *,
    time_limit: float | None = None,
    batch_size: int = 8,
    lr: float = 1e-3,
    stride: int = 4,
    seed: int = 0,
) -> float:
    """Joint pre-training on the source ST domains' training windows (all nodes at once, MSE in
    RevIN units), for ``epochs`` or until ``time_limit`` seconds of this process's CPU time
    (``time.process_time``, steady on a shared machine); returns the CPU seconds spent.
    The domains' values are finite by construction."""
    owner = "pretrain_joint"
    if not isinstance(model, JointSTTransformer):
        raise param_error("model", owner, "a JointSTTransformer", model, cls=TypeError)
    if (
        not isinstance(domains, list)
        or not domains
        or not all(isinstance(d, STDomain) for d in domains)
    ):
        raise param_error("domains", owner, "a non-empty list of STDomain", domains, cls=TypeError)
    epochs = check_int("epochs", owner, epochs, low=0, high=10_000)
    if time_limit is not None:
        check_real("time_limit", owner, time_limit, low=0, low_open=True)
    batches = []
    for d in domains:
        x, y, _ = d.windows(model.input_len, model.horizon, "train", stride=stride)
        coords = torch.from_numpy(d.coords)
        batches += [
            (x[i : i + batch_size], y[i : i + batch_size], coords)
            for i in range(0, len(x), batch_size)
        ]
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    start = time.process_time()
    for _ in range(epochs):
        for j in torch.randperm(len(batches), generator=gen).tolist():
            x, y, coords = batches[j]
            mean, std = x.mean(-1, keepdim=True), x.std(-1, unbiased=False, keepdim=True) + 1e-5
            pred = (model(x, coords) - mean) / std
            loss = torch.mean((pred - (y - mean) / std) ** 2)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if time_limit is not None and time.process_time() - start > time_limit:
                model.eval()
                return time.process_time() - start
    model.eval()
    return time.process_time() - start
