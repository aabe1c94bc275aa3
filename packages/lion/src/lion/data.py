r"""The two data sets of the reproduction, generated or loaded without a download.

- :func:`digits_images`: scikit-learn's 1,797 handwritten digits (8x8, 10 classes), upsampled
  bilinearly to ``upsample x upsample`` single-channel images in [0, 1], split in a stratified way.
- :func:`bidirectional_copy`: random tokens :math:`x\in\{0..V-1\}^N` labelled
  :math:`y_i=(x_{i-1}+x_{i+1})\bmod V` (with :math:`x_{-1}=x_N=0`): every label needs the token on
  each side of it, so a causal model can do no better than chance (:math:`1/V`) on it.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperkit import param_error

__all__ = ["bidirectional_copy", "digits_images"]


def digits_images(
    upsample: int = 16, *, test_fraction: float = 0.25, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x_train, y_train, x_test, y_test)``: images ``(n, 1, upsample, upsample)`` float32 in
    [0, 1] and int64 labels, a stratified split of ``test_fraction`` held out under ``seed``."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    if isinstance(upsample, bool) or not isinstance(upsample, int) or upsample < 8:
        raise param_error("upsample", "digits_images", "an integer >= 8", upsample)
    if not 0 < test_fraction < 1:
        raise param_error("test_fraction", "digits_images", "in (0, 1)", test_fraction)
    digits = load_digits()
    images = torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.0
    if upsample != 8:
        images = F.interpolate(images, size=(upsample, upsample), mode="bilinear")
    labels = torch.tensor(digits.target, dtype=torch.int64)
    train, test = train_test_split(
        torch.arange(len(labels)).numpy(),
        test_size=test_fraction,
        random_state=seed,
        stratify=labels.numpy(),
    )
    return images[train], labels[train], images[test], labels[test]


def bidirectional_copy(
    n: int, N: int, vocab: int = 8, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``n`` sequences of ``N`` tokens and their labels :math:`y_i=(x_{i-1}+x_{i+1})\bmod V`,
    both ``(n, N)`` int64."""
    for name, value, low in (("n", n, 1), ("N", N, 2), ("vocab", vocab, 2)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise param_error(name, "bidirectional_copy", f"an integer >= {low}", value)
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(vocab, (n, N), generator=g)
    padded = F.pad(tokens, (1, 1))
    labels = (padded[:, :-2] + padded[:, 2:]) % vocab
    return tokens, labels
