r"""Frequency bands of the kept Fourier modes and the per-band adapter widths (paper, Sec. 4).

The kept modes of a Fourier layer with ``modes = K`` are, with ``mode_set="symmetric"``, the
signed first-axis frequencies :math:`|k_x| < K` and :math:`0 \le k_y < K` (``2K-1`` by ``K``
modes of the ``rfft2`` grid); with ``mode_set="corner"`` only :math:`0 \le k_x, k_y < K`, as
the official code keeps them. ``B`` bands split the mode index range ``[0, K)`` at

.. math:: e_b = \lfloor bK/B \rfloor, \qquad b = 0, \dots, B,

and a kept mode belongs to band ``b`` when :math:`e_b \le \rho < e_{b+1}` with the Chebyshev
radius :math:`\rho = \max(|k_x|, k_y)` (``band_shape="radial"``). ``band_shape="square_diag"``
reproduces the official code, which only adapts the diagonal squares
:math:`[e_b, e_{b+1})^2` and drops every other kept mode (index ``-1``).

Each band gets a bottleneck width that shrinks with frequency (the power law of Sec. 4):

.. math:: c_b = \lfloor (e_b + e_{b+1})/2 \rfloor,\quad a_b = 1 - c_b/K,\quad
          d_b = \lfloor d_{min} + (d_{max} - d_{min})\, a_b^{p} \rfloor,

with :math:`d_{min} = \lfloor f_{min} d \rfloor` and :math:`d_{max} = \lfloor f_{max} d \rfloor`.
"""

from __future__ import annotations

import math

import torch

from paperkit import check_choice, check_int, check_real

__all__ = ["MODE_SETS", "BAND_SHAPES", "band_dims", "band_edges", "band_index", "kept_modes"]

MODE_SETS = ("symmetric", "corner")
BAND_SHAPES = ("radial", "square_diag")
#: Largest number of Fourier modes any function here accepts (sizes index tensors).
MAX_MODES = 4096


def _check_modes_bands(owner: str, modes: int, num_bands: int) -> tuple[int, int]:
    modes = check_int("modes", owner, modes, low=1, high=MAX_MODES)
    num_bands = check_int("num_bands", owner, num_bands, low=1, high=modes)
    return modes, num_bands


def band_edges(modes: int, num_bands: int = 4) -> list[int]:
    """The band boundaries :math:`e_b = \\lfloor bK/B \\rfloor`, ``b = 0..B``.

    NaN policy: no float inputs. Raises ValueError when ``num_bands > modes``.

    >>> band_edges(32, 4)
    [0, 8, 16, 24, 32]
    """
    modes, num_bands = _check_modes_bands("band_edges", modes, num_bands)
    return [b * modes // num_bands for b in range(num_bands + 1)]


def band_dims(
    modes: int,
    num_bands: int = 4,
    adapter_dim: int = 32,
    power: float = 2.0,
    min_dim_factor: float = 0.5,
    max_dim_factor: float = 2.0,
) -> list[int]:
    r"""The bottleneck width :math:`d_b` of each band (non-increasing in ``b``).

    :math:`d_b = \lfloor d_{min} + (d_{max}-d_{min})(1 - c_b/K)^p \rfloor` with the band centre
    :math:`c_b` (module docstring); a width that would round to 0 is raised to 1 so every
    adapter has a bottleneck. NaN policy: NaN or inf ``power`` / factors are refused.

    >>> band_dims(32)
    [52, 34, 22, 16]
    >>> band_dims(8, adapter_dim=4)
    [6, 4, 2, 2]
    """
    owner = "band_dims"
    modes, num_bands = _check_modes_bands(owner, modes, num_bands)
    adapter_dim = check_int("adapter_dim", owner, adapter_dim, low=1, high=2**16)
    power = check_real("power", owner, power, low=0)
    lo = check_real("min_dim_factor", owner, min_dim_factor, low=0, low_open=True, high=64)
    hi = check_real("max_dim_factor", owner, max_dim_factor, low=lo, high=64)
    d_min, d_max = math.floor(lo * adapter_dim), math.floor(hi * adapter_dim)
    edges = band_edges(modes, num_bands)
    dims = []
    for b in range(num_bands):
        centre = (edges[b] + edges[b + 1]) // 2
        alpha = 1.0 - centre / modes
        dims.append(max(1, math.floor(d_min + (d_max - d_min) * alpha**power)))
    return dims


def kept_modes(
    height: int, modes: int, mode_set: str = "symmetric"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Rows, columns and signed first-axis frequencies of the kept modes on an ``rfft2`` grid
    with ``height`` rows, in row-major order of :func:`band_index`'s table.

    ``symmetric``: :math:`k_x = -(K-1), \\dots, K-1` (row ``k_x mod height``), ``corner``:
    :math:`k_x = 0..K-1`; columns :math:`k_y = 0..K-1`. NaN policy: no float inputs.

    >>> rows, cols, kx = kept_modes(8, 2)
    >>> rows.tolist(), cols.tolist(), kx.tolist()
    ([7, 7, 0, 0, 1, 1], [0, 1, 0, 1, 0, 1], [-1, -1, 0, 0, 1, 1])
    """
    owner = "kept_modes"
    modes = check_int("modes", owner, modes, low=1, high=MAX_MODES)
    check_choice("mode_set", owner, mode_set, MODE_SETS)
    low = 2 * modes - 1 if mode_set == "symmetric" else modes
    height = check_int("height", owner, height, low=low)
    start = -(modes - 1) if mode_set == "symmetric" else 0
    kx = torch.arange(start, modes).repeat_interleave(modes)
    cols = torch.arange(modes).repeat(kx.numel() // modes)
    return kx % height, cols, kx


def band_index(
    modes: int, num_bands: int, mode_set: str = "symmetric", band_shape: str = "radial"
) -> torch.Tensor:
    """The band of every kept mode, as a long table.

    ``symmetric``: shape ``(2K-1, K)``, row ``r`` is :math:`k_x = r - (K-1)`, column
    :math:`k_y`; ``corner``: shape ``(K, K)``, row :math:`k_x`. ``radial`` bands use the
    Chebyshev radius :math:`\\max(|k_x|, k_y)` and cover every kept mode once;
    ``square_diag`` marks the modes outside the diagonal squares with ``-1`` (dropped).
    NaN policy: no float inputs. Raises ValueError when ``num_bands > modes``.

    >>> band_index(4, 2, "corner").tolist()
    [[0, 0, 1, 1], [0, 0, 1, 1], [1, 1, 1, 1], [1, 1, 1, 1]]
    >>> band_index(4, 2, "corner", "square_diag").tolist()
    [[0, 0, -1, -1], [0, 0, -1, -1], [-1, -1, 1, 1], [-1, -1, 1, 1]]
    """
    owner = "band_index"
    modes, num_bands = _check_modes_bands(owner, modes, num_bands)
    check_choice("mode_set", owner, mode_set, MODE_SETS)
    check_choice("band_shape", owner, band_shape, BAND_SHAPES)
    edges = torch.tensor(band_edges(modes, num_bands))
    start = -(modes - 1) if mode_set == "symmetric" else 0
    kx = torch.arange(start, modes).abs()[:, None]
    ky = torch.arange(modes)[None, :]

    def band_of(k: torch.Tensor) -> torch.Tensor:
        return torch.bucketize(k, edges[1:], right=True)

    if band_shape == "radial":
        return band_of(torch.maximum(kx, ky).expand(-1, modes)).long()
    bx, by = band_of(kx).expand(-1, modes), band_of(ky).expand(kx.shape[0], -1)
    return torch.where(bx == by, bx, torch.full_like(bx, -1)).long()
