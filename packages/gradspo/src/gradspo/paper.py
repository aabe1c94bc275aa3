"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="gradspo",
    title=(
        "A Gradient Guidance Perspective on Stepwise Preference Optimization for Diffusion Models"
    ),
    arxiv=None,  # NeurIPS 2025 poster, OpenReview d6lIOnvOX2; no arXiv version found
    status="done",
    reproduce="gradspo.reproduce:reproduce",
    bench="gradspo.bench:bench",
    gpu=False,
)
