"""Registration with the ``papers`` command (imports nothing but paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="dartquant",
    title="DartQuant: Efficient Rotational Distribution Calibration for LLM Quantization",
    arxiv="2511.04063",
    status="done",
    reproduce="dartquant.reproduce:reproduce",
    bench="dartquant.bench:bench",
    gpu=False,
)
