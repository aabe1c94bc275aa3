"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="gmmflowseg",
    title="GMM-based VAE model with Normalising Flow for effective stochastic segmentation",
    arxiv=None,
    status="done",
    reproduce="gmmflowseg.reproduce:reproduce",
    bench="gmmflowseg.bench:bench",
    gpu=False,
    link="https://openreview.net/forum?id=MxYvh8zpbR",
)
