"""Registration with the ``papers`` command (imports only paperkit)."""

from paperkit import Paper

PAPER = Paper(
    name="shadowopacity",
    title="Under the Shadow: Exploiting Opacity Variation for Fine-grained Shadow Detection",
    arxiv=None,
    status="done",
    reproduce="shadowopacity.reproduce:reproduce",
    bench="shadowopacity.bench:bench",
    link="https://tangyuan-x.github.io/UndertheShadow_website",
)
