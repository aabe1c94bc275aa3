"""Registration with the ``papers`` command."""

from paperkit import Paper

PAPER = Paper(
    name="dictpfl",
    title="DictPFL: Efficient and Private Federated Learning on Encrypted Gradients",
    arxiv="2510.21086",
    status="done",
    reproduce="dictpfl.reproduce:reproduce",
    bench="dictpfl.bench:bench",
    gpu=False,  # HE runs on the CPU (SEAL through TenSEAL): `--device cuda` is refused
)
