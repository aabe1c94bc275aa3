"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="fedrw",
    title="FedRW: Efficient Privacy-Preserving Data Reweighting for Enhancing Federated Learning "
    "of Language Models",
    arxiv="2511.07505",
    status="done",
    reproduce="fedrw.reproduce:reproduce",
    bench="fedrw.bench:bench",
    gpu=False,
)
