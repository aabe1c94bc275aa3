"""Validation of image batches shared by every public entry point (one wording, via paperkit)."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperkit import check_array, check_tensor, param_error

#: Largest image side accepted (a bound on the memory a call may plan).
MAX_SIDE = 256


def as_images(name: str, owner: str, value: Any) -> torch.Tensor:
    """A batch of images ``(N, C, H, W)`` with pixels in ``[0, 1]`` as a float32 tensor.

    Accepts a numpy array or a torch tensor of real numbers; refuses NaN/inf, size 0, another
    rank, more than 4 channels, a side above :data:`MAX_SIDE` and pixels outside ``[0, 1]``.
    """
    if isinstance(value, torch.Tensor):
        check_tensor(name, owner, value, ndim=4, dtype=None)
        if value.is_complex() or value.dtype == torch.bool:
            raise param_error(
                name, owner, "a real-valued tensor", f"dtype {value.dtype}", cls=TypeError
            )
        x = value.detach().to(torch.float32)
    else:
        x = torch.from_numpy(
            np.ascontiguousarray(check_array(name, owner, value, ndim=4), dtype=np.float32)
        )
    _, c, h, w = x.shape
    if c > 4 or h > MAX_SIDE or w > MAX_SIDE or h < 4 or w < 4:
        raise param_error(
            name,
            owner,
            f"images (N, C, H, W) with C <= 4 and 4 <= H, W <= {MAX_SIDE}",
            f"shape {tuple(x.shape)}",
        )
    if float(x.min()) < 0.0 or float(x.max()) > 1.0:
        raise param_error(
            name,
            owner,
            "pixel values in [0, 1]",
            f"values in [{float(x.min()):.4g}, {float(x.max()):.4g}]",
        )
    return x
