"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="idenergy",
    title="Towards Generalizable Detector for Generated Image",
    arxiv=None,  # no arXiv version; OpenReview MeawZGFIcT (NeurIPS 2025 poster)
    status="done",
    reproduce="idenergy.reproduce:reproduce",
    bench="idenergy.bench:bench",
    gpu=False,
)
