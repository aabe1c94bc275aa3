r"""F-Adapter: frequency-adaptive bottleneck adapters inside the Fourier layer (paper, Sec. 4).

A bottleneck adapter with residual (zero-initialised up-projection, so it is the identity at
initialisation):

.. math:: \mathrm{Ad}(z) = z + s\,U\,\mathrm{GELU}(Dz + b_D) + b_U,
          \quad D: c \to d_b,\ U: d_b \to c,

is applied with the same weights to the real and to the imaginary part of a complex mode,
:math:`a + ib \mapsto \mathrm{Ad}(a) + i\,\mathrm{Ad}(b)`. F-Adapter gives every channel block and
every frequency band ``b`` its own adapter of width :math:`d_b` (:func:`fadapter.band_dims`:
wide for the energy-dominant low modes, narrow for high modes), at three places in the Fourier
layer: ``"in"`` (on :math:`X`'s kept modes), ``"mid"`` (on :math:`O_1`), ``"out"`` (on
:math:`O_2`). The vanilla adapter (:class:`AdapterAFNO2d`) uses one width for every mode.
Adapters are vectorised over blocks and over the modes of a band (one batched product per band
and position; no loop over modes).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from fadapter.bands import BAND_SHAPES, band_dims, band_index, kept_modes
from fadapter.fourier import spectral_mix
from fadapter.layers import AFNO2d, check_grid
from paperkit import check_choice, check_int, check_real, param_error

__all__ = [
    "POSITIONS",
    "AdapterAFNO2d",
    "BandAdapters",
    "FAdapterAFNO2d",
    "MLPAdapter",
    "PatchAdapter",
]

POSITIONS = ("in", "mid", "out")


def _check_positions(owner: str, positions: Sequence[str]) -> tuple[str, ...]:
    if isinstance(positions, str) or not isinstance(positions, (tuple, list)):
        raise param_error(
            "positions", owner, f"a tuple of names from {POSITIONS}", positions, cls=TypeError
        )
    for p in positions:
        check_choice("positions", owner, p, POSITIONS)
    if len(set(positions)) != len(positions):
        raise param_error("positions", owner, "names without repeats", tuple(positions))
    return tuple(positions)


class BandAdapters(nn.Module):
    r"""One bottleneck adapter per (channel block, band) on ``features`` channels.

    Parameters of band ``b``: ``down[b]`` (nb, c, d_b) with ``down_bias[b]`` (nb, d_b),
    ``up[b]`` (nb, d_b, c) and ``up_bias[b]`` (nb, c), the up-projection zero-initialised and
    the down-projection kaiming-uniform (:math:`a=\sqrt5`, as ``nn.Linear``). ``forward(z, sizes)``
    takes modes (B, M, nb, c) sorted by band, ``sizes[b]`` of them in band ``b``; a complex z
    maps to :math:`\mathrm{Ad}(\Re z) + i\,\mathrm{Ad}(\Im z)` with the same weights.
    """

    def __init__(
        self, num_blocks: int, features: int, dims: Sequence[int], scale: float = 1.0
    ) -> None:
        super().__init__()
        self.scale = scale
        self.dims = list(dims)
        self.down = nn.ParameterList()
        self.down_bias = nn.ParameterList()
        self.up = nn.ParameterList()
        self.up_bias = nn.ParameterList()
        for d in self.dims:
            down = torch.empty(num_blocks, features, d)
            for k in range(num_blocks):  # nn.Linear's default: kaiming_uniform(a=sqrt 5)
                nn.init.kaiming_uniform_(down[k].T, a=math.sqrt(5))
            self.down.append(nn.Parameter(down))
            self.down_bias.append(nn.Parameter(torch.zeros(num_blocks, d)))
            self.up.append(nn.Parameter(torch.zeros(num_blocks, d, features)))
            self.up_bias.append(nn.Parameter(torch.zeros(num_blocks, features)))

    def adapt(self, b: int, z: torch.Tensor) -> torch.Tensor:
        """Band ``b``'s adapters on real z (..., M, nb, c)."""
        h = F.gelu(torch.einsum("...mni,nid->...mnd", z, self.down[b]) + self.down_bias[b])
        return z + self.scale * torch.einsum("...mnd,ndo->...mno", h, self.up[b]) + self.up_bias[b]

    def forward(self, z: torch.Tensor, sizes: Sequence[int]) -> torch.Tensor:
        if z.is_complex():
            both = self.forward(torch.stack([z.real, z.imag]), sizes)
            return torch.complex(both[0], both[1])
        pieces = z.split(list(sizes), dim=-3)
        return torch.cat([self.adapt(b, p) for b, p in enumerate(pieces)], dim=-3)


class FAdapterAFNO2d(nn.Module):
    r"""An :class:`AFNO2d` with F-Adapter's per-block, per-band adapters (paper, Sec. 4).

    Build it with :meth:`from_layer`; the wrapped layer (``.base``) is shared, not copied.
    The kept modes are split into bands by :func:`fadapter.band_index` (``band_shape="radial"``:
    every kept mode in one band, so the layer is exactly the base layer at initialisation;
    ``"square_diag"``: the official code's diagonal squares, the other kept modes dropped).
    Band widths :math:`d_b` come from :func:`fadapter.band_dims`; the ``"mid"`` adapters act on
    ``c·hidden_factor`` channels. Trainable parameters per layer:
    :math:`\sum_{pos}\sum_{blocks}\sum_b (2 c_{pos} d_b + d_b + c_{pos})`.

    Shapes: x (B, H, W, width) → (B, H, W, width). NaN policy: NaN or inf in x is refused.

    >>> layer = AFNO2d(16, num_blocks=2, modes=8)
    >>> adapted = FAdapterAFNO2d.from_layer(layer, adapter_dim=4)
    >>> adapted.dims, sum(p.numel() for p in adapted.adapters.parameters())  # 3 x 2 x 270
    ([6, 4, 2, 2], 1620)
    >>> x = torch.randn(1, 16, 16, 16)
    >>> bool(torch.equal(adapted(x), layer(x)))  # the identity at initialisation
    True
    """

    def __init__(
        self,
        base: AFNO2d,
        dims: Sequence[int],
        num_bands: int,
        positions: Sequence[str],
        band_shape: str,
        scale: float,
    ) -> None:
        super().__init__()
        self.base = base
        self.dims = list(dims)
        self.num_bands = num_bands
        self.positions = tuple(positions)
        self.band_shape = band_shape
        c, h = base.block_size, base.hidden_factor
        self.adapters = nn.ModuleDict(
            {
                p: BandAdapters(base.num_blocks, c * h if p == "mid" else c, dims, scale)
                for p in self.positions
            }
        )
        bands = band_index(base.modes, num_bands, base.mode_set, band_shape).flatten()
        order = torch.cat([torch.nonzero(bands == b).flatten() for b in range(num_bands)])
        self.register_buffer("order", order, persistent=False)
        self.sizes = [int((bands == b).sum()) for b in range(num_bands)]

    @classmethod
    def from_layer(
        cls,
        layer: AFNO2d,
        adapter_dim: int = 32,
        num_bands: int = 4,
        power: float = 2.0,
        min_dim_factor: float = 0.5,
        max_dim_factor: float = 2.0,
        positions: Sequence[str] = POSITIONS,
        band_shape: str = "radial",
        scale: float = 1.0,
    ) -> FAdapterAFNO2d:
        """Wrap ``layer`` with F-Adapter (defaults of the paper: ``adapter_dim=32``, ``power=2``,
        4 bands, width factors 0.5 and 2). Raises ValueError when ``num_bands > layer.modes``
        or ``adapter_dim < 1``. NaN policy: NaN or inf hyperparameters are refused."""
        owner = "FAdapterAFNO2d.from_layer"
        if not isinstance(layer, AFNO2d):
            raise param_error("layer", owner, "an AFNO2d", type(layer).__name__, cls=TypeError)
        num_bands = check_int("num_bands", owner, num_bands, low=1, high=layer.modes)
        check_int("adapter_dim", owner, adapter_dim, low=1, high=2**16)
        dims = band_dims(layer.modes, num_bands, adapter_dim, power, min_dim_factor, max_dim_factor)
        positions = _check_positions(owner, positions)
        check_choice("band_shape", owner, band_shape, BAND_SHAPES)
        scale = check_real("scale", owner, scale)
        return cls(layer, dims, num_bands, positions, band_shape, scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        base = self.base
        check_grid(type(self).__name__, x, base.width, base.modes, base.mode_set, base.w1.dtype)
        rows, cols, _ = kept_modes(x.shape[1], base.modes, base.mode_set)
        order = self.order
        rows, cols = rows.to(x.device)[order], cols.to(x.device)[order]

        def adapt(position: str, re: torch.Tensor, im: torch.Tensor):
            if position not in self.adapters:
                return re, im
            both = self.adapters[position](torch.stack([re, im]), self.sizes)
            return both[0], both[1]

        return spectral_mix(x, *base.weights(), rows, cols, adapt)


class AdapterAFNO2d(nn.Module):
    r"""An :class:`AFNO2d` with the vanilla adapter: one bottleneck adapter of width ``d`` per
    channel block and position, the same for every kept mode (the paper's "Adapter" baseline).

    Trainable parameters per layer: :math:`\sum_{pos}\sum_{blocks} (2 c_{pos} d + d + c_{pos})`.
    Shapes: x (B, H, W, width) → same. NaN policy: NaN or inf in x is refused.

    >>> layer = AFNO2d(16, num_blocks=2, modes=4)
    >>> x = torch.randn(1, 8, 8, 16)
    >>> bool(torch.equal(AdapterAFNO2d.from_layer(layer, adapter_dim=3)(x), layer(x)))
    True
    """

    def __init__(self, base: AFNO2d, dim: int, positions: Sequence[str], scale: float) -> None:
        super().__init__()
        self.base, self.dim, self.positions = base, dim, tuple(positions)
        c, h = base.block_size, base.hidden_factor
        self.adapters = nn.ModuleDict(
            {
                p: BandAdapters(base.num_blocks, c * h if p == "mid" else c, [dim], scale)
                for p in self.positions
            }
        )

    @classmethod
    def from_layer(
        cls,
        layer: AFNO2d,
        adapter_dim: int = 32,
        positions: Sequence[str] = POSITIONS,
        scale: float = 1.0,
    ) -> AdapterAFNO2d:
        """Wrap ``layer`` with vanilla adapters of width ``adapter_dim``.
        NaN policy: a NaN or inf ``scale`` is refused."""
        owner = "AdapterAFNO2d.from_layer"
        if not isinstance(layer, AFNO2d):
            raise param_error("layer", owner, "an AFNO2d", type(layer).__name__, cls=TypeError)
        adapter_dim = check_int("adapter_dim", owner, adapter_dim, low=1, high=2**16)
        positions = _check_positions(owner, positions)
        scale = check_real("scale", owner, scale)
        return cls(layer, adapter_dim, positions, scale)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        base = self.base
        check_grid(type(self).__name__, x, base.width, base.modes, base.mode_set, base.w1.dtype)
        rows, cols = base.modes_on(x.shape[1], x.device)

        def adapt(position: str, re: torch.Tensor, im: torch.Tensor):
            if position not in self.adapters:
                return re, im
            ad = self.adapters[position]
            return ad.adapt(0, re), ad.adapt(0, im)

        return spectral_mix(x, *base.weights(), rows, cols, adapt)


def _bottleneck(width: int, adapter_dim: int) -> tuple[nn.Linear, nn.Linear]:
    """Down-projection (kaiming-uniform as ``nn.Linear``, zero bias); zero up-projection."""
    down = nn.Linear(width, adapter_dim)
    nn.init.zeros_(down.bias)
    up = nn.Linear(adapter_dim, width)
    nn.init.zeros_(up.weight)
    nn.init.zeros_(up.bias)
    return down, up


class PatchAdapter(nn.Module):
    r"""A bottleneck adapter after a patch embedding (a 1x1-convolution bottleneck on the
    channel-last tokens): :math:`e(x) + s\,U\,\mathrm{GELU}(D e(x) + b_D) + b_U`, ``U`` zero.

    NaN policy: as the wrapped embedding.
    """

    def __init__(self, embed: nn.Linear, adapter_dim: int, scale: float = 1.0) -> None:
        super().__init__()
        self.embed, self.scale = embed, scale
        self.down, self.up = _bottleneck(embed.out_features, adapter_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = self.embed(x)
        return e + self.scale * self.up(F.gelu(self.down(e)))


class MLPAdapter(nn.Module):
    r"""A bottleneck adapter in parallel with a block's channel MLP, as the official F-Adapter
    and Adapter models place one beside every block's MLP (``BlockAdapter.mlp_adapter``):

    .. math:: \mathrm{MLP}(x) + s\,U\,\mathrm{GELU}(D x + b_D) + b_U, \quad U = 0 \text{ at init}.

    ``mlp`` is an ``nn.Sequential`` whose first layer is an ``nn.Linear`` (its input width is the
    adapter's). Shapes: (..., width) → (..., width). NaN policy: as the wrapped MLP.

    >>> mlp = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 6))
    >>> x = torch.randn(2, 6)
    >>> bool(torch.equal(MLPAdapter(mlp, 3)(x), mlp(x)))  # the MLP alone at initialisation
    True
    """

    def __init__(self, mlp: nn.Sequential, adapter_dim: int, scale: float = 1.0) -> None:
        super().__init__()
        self.mlp, self.scale = mlp, scale
        self.down, self.up = _bottleneck(mlp[0].in_features, adapter_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.mlp(x) + self.scale * self.up(F.gelu(self.down(x)))
