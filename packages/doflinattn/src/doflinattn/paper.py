"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="doflinattn",
    title=(
        "Degrees of Freedom for Linear Attention: Distilling Softmax Attention with Optimal "
        "Feature Efficiency"
    ),
    arxiv="2507.03340",
    status="done",
    reproduce="doflinattn.reproduce:reproduce",
    bench="doflinattn.bench:bench",
    gpu=True,  # the Triton causal linear-attention kernel
)
