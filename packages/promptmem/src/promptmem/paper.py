"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="promptmem",
    title="Prompt Tuning Transformers for Data Memorization",
    arxiv=None,
    status="done",
    reproduce="promptmem.reproduce:reproduce",
    bench="promptmem.bench:bench",
    gpu=False,
    link="https://openreview.net/forum?id=M5GLj4Fgvp",
)
