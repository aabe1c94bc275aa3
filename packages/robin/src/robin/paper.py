"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="robin",
    title=(
        "Diffusion-Based Hierarchical Graph Neural Networks for Simulating Nonlinear Solid "
        "Mechanics"
    ),
    arxiv="2506.06045",
    status="done",
    reproduce="robin.reproduce:reproduce",
    bench="robin.bench:bench",
)
