"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="mconformal",
    title="Class conditional conformal prediction for multiple inputs by p-value aggregation",
    arxiv="2507.07150",
    status="done",
    reproduce="mconformal.reproduce:reproduce",
    bench="mconformal.bench:bench",
    gpu=False,
)
