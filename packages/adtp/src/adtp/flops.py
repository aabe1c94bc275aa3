r"""The FLOPs counter of a transformer encoder (multiply-accumulates counted as 2 FLOPs).

One encoder layer on :math:`n` tokens with hidden size :math:`D` and feed-forward size :math:`F`
costs the four :math:`D\times D` projections (Q, K, V, output), the two :math:`n\times n`
attention products (:math:`QK^\top` and :math:`PV`) and the two feed-forward matrices:

.. math::  \mathrm{FLOPs}(n) = 2\,(4nD^2 + 2n^2D + 2nDF).

Token pruning lowers :math:`n` layer by layer; the encoder's total is the sum over layers of the
surviving counts (softmax, LayerNorm and biases are left out, as is usual in the token-pruning
literature; the importance predictors and the token retainer are counted apart by
:func:`aux_flops`).
"""

from __future__ import annotations

from collections.abc import Sequence

from paperkit import check_int, param_error

__all__ = ["aux_flops", "encoder_flops", "layer_flops"]


def layer_flops(n, dim: int, ffn: int):
    r"""FLOPs of one layer on ``n`` tokens: :math:`2(4nD^2 + 2n^2D + 2nDF)`.

    ``n`` may be an int, a float or a tensor (the soft token counts of training, so that the
    expected FLOPs stay differentiable); no argument checks (an internal building block of
    :func:`encoder_flops` and of the training loss).

    >>> layer_flops(128, 768, 3072)
    1862270976
    """
    return 2 * (4 * n * dim * dim + 2 * n * n * dim + 2 * n * dim * ffn)


def encoder_flops(tokens_per_layer: Sequence[int], dim: int, ffn: int) -> int:
    r"""FLOPs of an encoder whose layer :math:`l` runs on ``tokens_per_layer[l]`` tokens.

    :math:`\sum_l 2(4n_lD^2 + 2n_l^2D + 2n_lDF)`. BERT-base (12 layers, D=768, F=3072) at
    n=128 costs about 22.3 GFLOPs.

    NaN policy: the counts are integers (a NaN is refused as a non-integer).

    >>> round(encoder_flops([128] * 12, 768, 3072) / 1e9, 1)
    22.3
    """
    owner = "encoder_flops"
    dim = check_int("dim", owner, dim, low=1)
    ffn = check_int("ffn", owner, ffn, low=1)
    if isinstance(tokens_per_layer, (str, bytes)) or not isinstance(tokens_per_layer, Sequence):
        raise param_error(
            "tokens_per_layer", owner, "a sequence of integers", type(tokens_per_layer).__name__
        )
    if len(tokens_per_layer) == 0:
        raise param_error("tokens_per_layer", owner, "a non-empty sequence", "[]")
    counts = [check_int("tokens_per_layer", owner, n, low=0) for n in tokens_per_layer]
    return int(sum(layer_flops(n, dim, ffn) for n in counts))


def aux_flops(n: int, dim: int, hidden: int, num_prune_layers: int, features: int) -> int:
    r"""FLOPs of the importance predictors (one :math:`D\to h\to 1` MLP per pruning layer on at
    most ``n`` tokens) and of the retainer (one ``features``:math:`\to h\to K` MLP): an upper
    bound, reported apart from :func:`encoder_flops`. Internal; no argument checks.

    >>> aux_flops(64, 64, 64, 5, 130)
    2679680
    """
    predictors = num_prune_layers * n * 2 * (dim * hidden + hidden)
    retainer = 2 * (features * hidden + hidden * num_prune_layers)
    return int(predictors + retainer)
