"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="zrdetr",
    title="ZR-DETR: Zoom-Aware Probabilistic DETR for Anatomical Structure Detection",
    arxiv=None,
    status="done",
    reproduce="zrdetr.reproduce:reproduce",
    bench="zrdetr.bench:bench",
    link="https://neurips.cc/virtual/2025/papers.html?search=ZR-DETR",
)
