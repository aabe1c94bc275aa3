"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="eosgd",
    title="Convergence Rates for Gradient Descent on the Edge of Stability in Overparametrised "
    "Least Squares",
    arxiv="2510.17506",
    status="done",
    reproduce="eosgd.reproduce:reproduce",
    bench="eosgd.bench:bench",
    gpu=False,
)
