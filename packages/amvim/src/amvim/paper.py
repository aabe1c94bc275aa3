"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="amvim",
    title="Pruning-Robust Mamba with Asymmetric Multi-Scale Scanning Paths",
    arxiv=None,
    status="done",
    reproduce="amvim.reproduce:reproduce",
    bench="amvim.bench:bench",
    gpu=True,  # the Triton selective-scan kernel; `amvim bench --device cuda` times it
    link="https://openreview.net/forum?id=BZSTC2RMEd",
)
