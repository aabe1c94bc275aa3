"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="scbfgs",
    title=(
        "Affine-Invariant Global Non-Asymptotic Convergence Analysis of BFGS under Self-Concordance"
    ),
    arxiv="2507.00361",
    status="done",
    reproduce="scbfgs.reproduce:reproduce",
    bench="scbfgs.bench:bench",
    gpu=False,  # numpy and scipy only: `scbfgs bench --device cuda` is refused
)
