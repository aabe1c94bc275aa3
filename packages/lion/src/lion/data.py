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

from paperkit import check_int, check_memory, check_real

__all__ = ["bidirectional_copy", "digits_images"]


def digits_images(
    upsample: int = 16, *, test_fraction: float = 0.25, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(x_train, y_train, x_test, y_test)``: images ``(n, 1, upsample, upsample)`` float32 in
    [0, 1] and int64 labels, a stratified split of ``test_fraction`` held out under ``seed``.
    An ``upsample`` whose images would not fit in memory is refused before loading."""
    owner = "digits_images"
    upsample = check_int("upsample", owner, upsample, low=8)
    check_memory("upsample", owner, upsample, 2 * 4 * 1797 * upsample**2)  # images, resized copy
    check_real("test_fraction", owner, test_fraction, low=0, high=1, low_open=True, high_open=True)
    seed = check_int("seed", owner, seed, low=0)
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

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
    both ``(n, N)`` int64; ``n`` sequences whose tokens would not fit in memory are refused."""
    owner = "bidirectional_copy"
    n = check_int("n", owner, n, low=1)
    N = check_int("N", owner, N, low=2)
    vocab = check_int("vocab", owner, vocab, low=2)
    seed = check_int("seed", owner, seed, low=0)
    check_memory("n", owner, n, 4 * 8 * n * (N + 2))  # tokens, padded copy, sums, labels
    g = torch.Generator().manual_seed(seed)
    tokens = torch.randint(vocab, (n, N), generator=g)
    padded = F.pad(tokens, (1, 1))
    labels = (padded[:, :-2] + padded[:, 2:]) % vocab
    return tokens, labels
