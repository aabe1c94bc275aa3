"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="flashbias",
    title="FlashBias: Fast Computation of Attention with Bias",
    arxiv="2505.12044",
    status="done",
    reproduce="flashbias.reproduce:reproduce",
    bench="flashbias.bench:bench",
    gpu=True,  # Triton kernels; `flashbias bench --device cuda` times them
)
